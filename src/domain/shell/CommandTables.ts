/**
 * Every command Armature understands, by name: the read-only commands' tables and the tables of the commands that
 * write by design. A command that is not here is unknown, and unknown is never read-only.
 */
import type { CommandTable, CustomCommand } from "./CommandTable.js"
import { awk } from "./commands/AwkCommand.js"
import * as FileCommands from "./commands/FileCommands.js"
import { find } from "./commands/FindCommand.js"
import { git } from "./commands/GitCommand.js"
import { jq } from "./commands/JqCommand.js"
import * as ProcessCommands from "./commands/ProcessCommands.js"
import * as SearchCommands from "./commands/SearchCommands.js"
import { sed } from "./commands/SedCommand.js"
import * as ShellSettings from "./commands/ShellSettings.js"
import * as SystemCommands from "./commands/SystemCommands.js"
import { doubleBracket, test } from "./commands/TestCommand.js"
import * as TextCommands from "./commands/TextCommands.js"
import * as WriteCommands from "./commands/WriteCommands.js"
import { yq } from "./commands/YqCommand.js"

/** A command's knowledge: a table for the interpreter, or its own interpreter. */
export type Command = CommandTable | CustomCommand

const { anyText, npm, ...systemTables } = SystemCommands
const { exportVariables, ...shellSettings } = ShellSettings

/** The commands by name. */
export const commands: ReadonlyMap<string, Command> = new Map<string, Command>([
  ...Object.entries(FileCommands),
  ...Object.entries(TextCommands),
  ...Object.entries(SearchCommands),
  ...Object.entries(systemTables).filter(([name]) => name !== "npmSubcommand"),
  ...Object.entries(WriteCommands),
  ...Object.entries(ProcessCommands),
  ...Object.entries(shellSettings),
  ["export", exportVariables],
  ["egrep", SearchCommands.grep],
  ["fgrep", SearchCommands.grep],
  ["echo", anyText],
  ["true", anyText],
  ["false", anyText],
  [":", anyText],
  ["npm", npm],
  ["awk", awk],
  ["gawk", awk],
  ["mawk", awk],
  ["find", find],
  ["git", git],
  ["jq", jq],
  ["yq", yq],
  ["sed", sed],
  ["test", test],
  ["[", test],
  ["[[", doubleBracket]
] as ReadonlyArray<readonly [string, Command]>)

/** The knowledge of a command by its name as typed (`/usr/bin/ls` is not `ls`: its path may be anything). */
export const lookup = (name: string): Command | undefined => commands.get(name)
