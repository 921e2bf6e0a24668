/**
 * @effect/cli's own complaints about a command line ("Missing argument <query>", "Received unknown argument:
 * 'Bash'", "Path 'x' must exist", "Expected to find option: '--output'") rewritten as one line that names the
 * command: `armature tools search: missing argument <query>`.
 */
import { HelpDoc } from "@effect/cli"
import { stripColour } from "./HelpText.js"

/** The problem @effect/cli described, as a short clause in lower case. */
const clause = (text: string): string => {
  const flat =
    stripColour(text)
      .split("\n")
      .map((line) => line.trim())
      .find((line) => line !== "") ?? "invalid command line"
  const rules: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray) => string]> = [
    [/^Expected to find option: '([^']+)'/, (m) => `missing option ${m[1]}`],
    [/^Received unknown argument: '([^']*)'/, (m) => `unexpected argument '${m[1]}'`],
    [/^Path '([^']*)' must exist/, (m) => `${m[1]}: no such file or directory`],
    [/^Path '([^']*)' must not exist/, (m) => `${m[1]}: already exists`]
  ]
  for (const [pattern, rewrite] of rules) {
    const match = pattern.exec(flat)
    if (match !== null) return rewrite(match)
  }
  return flat.charAt(0).toLowerCase() + flat.slice(1)
}

/** The one line for a command line @effect/cli rejected: `armature {command}: {problem}`. */
export const line = (commandPath: ReadonlyArray<string>, error: HelpDoc.HelpDoc): string =>
  `${commandPath.join(" ")}: ${clause(HelpDoc.toAnsiText(error))}`
