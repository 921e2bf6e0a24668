/**
 * Lets options follow positional arguments (`armature exec batch.json --output json`): @effect/cli reads a
 * command's options before its arguments, so the tokens after the subcommand path are reordered options-first.
 */

/** Flags that take no value; every other `--name` (or `-x`) takes the next token unless written `--name=value`. */
const booleanFlags = new Set(["--json", "--help", "-h", "--version", "--wizard", "--verbose"])

/** Words that name subcommands, read before any option. */
const commandWords = new Set([
  "exec",
  "tools",
  "list",
  "schema",
  "search",
  "permissions",
  "check",
  "run",
  "mcp",
  "serve"
])

/** Reorders `argv` (as `process.argv`: node, script, then the user's tokens) so options precede arguments. */
export const optionsFirst = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const head = argv.slice(0, 2)
  const tokens = argv.slice(2)
  let i = 0
  const path: Array<string> = []
  while (i < tokens.length && commandWords.has(tokens[i])) path.push(tokens[i++])
  const options: Array<string> = []
  const positionals: Array<string> = []
  while (i < tokens.length) {
    const token = tokens[i++]
    if (token === "--") {
      positionals.push(...tokens.slice(i))
      break
    }
    if (token.startsWith("-") && token !== "-") {
      options.push(token)
      const takesValue = !booleanFlags.has(token) && !token.includes("=")
      if (takesValue && i < tokens.length) options.push(tokens[i++])
    } else {
      positionals.push(token)
    }
  }
  return [...head, ...path, ...options, ...positionals]
}
