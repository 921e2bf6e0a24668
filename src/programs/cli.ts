/**
 * The `armature` command tree, built with @effect/cli.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Command } from "@effect/cli"
import { Effect, HashSet } from "effect"
import * as Argv from "./Argv.js"
import * as ExecCommand from "./ExecCommand.js"
import * as McpCommand from "./McpCommand.js"
import * as PermissionsCommand from "./PermissionsCommand.js"
import * as RunCommand from "./RunCommand.js"
import * as SandboxCommand from "./SandboxCommand.js"
import * as ServeCommand from "./ServeCommand.js"
import * as SessionsCommand from "./SessionsCommand.js"
import * as TimelineCommand from "./TimelineCommand.js"
import * as ToolsCommand from "./ToolsCommand.js"

/** The commands, in the order `--help` lists them. */
const commands = [
  ExecCommand.command,
  ToolsCommand.command,
  PermissionsCommand.command,
  RunCommand.command,
  SessionsCommand.resume,
  SessionsCommand.sessions,
  ServeCommand.command,
  McpCommand.command,
  SandboxCommand.command,
  TimelineCommand.command
] as const

/** The root command. */
export const root = Command.make("armature").pipe(
  Command.withDescription("Run an LLM agent's tool calls: permissions, hooks and a streaming executor"),
  Command.withSubcommands(commands)
)

/** A command's name (each of ours has one). */
const nameOf = (command: Argv.AnyCommand): string => [...HashSet.values(Command.getNames(command))][0] ?? ""

/** The flags of every command path, read from the commands themselves (for `Argv.prepare`). */
export const table: Argv.CommandTable = Argv.commandTable(
  commands.map((command) => [nameOf(command), command] as const)
)

/** The package's version, from the nearest package.json above this module (in the sources and in the bundle). */
const packageVersion = (): string => {
  let dir = import.meta.dirname
  for (let depth = 0; depth < 5; depth++) {
    try {
      const pkg = JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8")) as { version?: unknown }
      if (typeof pkg.version === "string") return pkg.version
    } catch {
      // no package.json here: look in the parent
    }
    dir = Path.dirname(dir)
  }
  return "unknown"
}

/** The version printed by `--version`. */
export const version = packageVersion()

/** Runs the CLI on argv; `onStart` runs once the command line has been parsed, just before the command itself. */
export const run = (onStart: Effect.Effect<void> = Effect.void) =>
  Command.run(
    Command.transformHandler(root, (effect) => Effect.zipRight(onStart, effect)),
    { name: "armature", version }
  )
