/**
 * The `armature` command tree, built with @effect/cli.
 */
import { Command } from "@effect/cli"
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

const commands = [
  ["exec", ExecCommand.command],
  ["tools", ToolsCommand.command],
  ["permissions", PermissionsCommand.command],
  ["run", RunCommand.command],
  ["resume", SessionsCommand.resume],
  ["sessions", SessionsCommand.sessions],
  ["serve", ServeCommand.command],
  ["mcp", McpCommand.command],
  ["sandbox", SandboxCommand.command],
  ["timeline", TimelineCommand.command]
] as const

/** The root command. */
export const root = Command.make("armature").pipe(
  Command.withDescription("Run an LLM agent's tool calls: permissions, hooks and a streaming executor"),
  Command.withSubcommands([
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
  ])
)

/** The flags of every command path, read from the commands themselves (for `Argv.prepare`). */
export const table: Argv.CommandTable = Argv.commandTable(commands)

/** The version printed by `--version`. */
export const version = "0.1.0"

/** Runs the CLI on argv. */
export const run = Command.run(root, { name: "armature", version })
