/**
 * The forms of commands that programs run from their options or operands, as shell code or as words: `ssh HOST CMD`
 * and `ssh -o ProxyCommand=CMD`, `tar --to-command=CMD` and `-I CMD`, `rsync -e CMD`, `zip -TT CMD`, `man -P CMD`,
 * `parallel CMD ::: …`, `npx CMD`/`npm exec CMD`, `gdb --args CMD`, and git's commands in configuration values
 * (`-c core.sshCommand=CMD`, `-c alias.x='!CMD'`, `git config alias.x …`) and subcommands (`bisect run`,
 * `rebase --exec`, `submodule foreach`, `filter-branch --tree-filter`, `--upload-pack`). Deny and ask rules see
 * those commands as they see the line's own.
 */
import type { CommandForm } from "../../domain/PermissionRule.js"
import { gitCodeTable, gitCodeUses, gitCommandKey, gitIndirectKey } from "../../domain/shell/GitCodeOptions.js"
import type { Word } from "./ShellWords.js"
import { literalWord } from "./WrapperParse.js"

/** How the caller turns words into forms: as a command's words, or as shell code (joined with blanks). */
export interface FormMakers {
  readonly words: (words: ReadonlyArray<Word>) => ReadonlyArray<CommandForm>
  readonly code: (words: ReadonlyArray<Word>) => ReadonlyArray<CommandForm>
}

const code = (make: FormMakers, text: string | Word) => make.code([typeof text === "string" ? literalWord(text) : text])

/** A long option's value when `word` spells `--name` (or a prefix of at least 3 letters) with `=value` or alone. */
const longValue = (
  args: ReadonlyArray<Word>,
  at: number,
  names: ReadonlyArray<string>
): { readonly value: Word | undefined; readonly used: number } | undefined => {
  const word = args[at].value
  if (!word.startsWith("--")) return undefined
  const eq = word.indexOf("=")
  const given = word.slice(2, eq === -1 ? undefined : eq)
  if (given.length < 3 || !names.some((name) => name.startsWith(given))) return undefined
  if (eq !== -1) return { value: { ...args[at], value: word.slice(eq + 1) }, used: 1 }
  return { value: args[at + 1], used: 2 }
}

/**
 * Walks `-x` clusters and `--long` options: `short` maps value-taking letters to whether their value is a command,
 * `long` lists the long options whose value is a command. Returns the forms of every command value.
 */
const optionCommands = (
  args: ReadonlyArray<Word>,
  short: Readonly<Record<string, boolean>>,
  long: ReadonlyArray<string>,
  make: FormMakers,
  valuePrefix?: Readonly<Record<string, string>>
): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  for (let at = 0; at < args.length; at++) {
    const word = args[at]
    if (word.value === "--") break
    const found = longValue(args, at, long)
    if (found !== undefined) {
      const name = long.find((n) => n.startsWith(word.value.slice(2).split("=")[0]))!
      const prefix = valuePrefix?.[name]
      const value = found.value
      if (value === undefined) out.push([null])
      else if (!value.literal) out.push([null])
      else if (prefix === undefined) out.push(...code(make, value))
      else if (value.value.startsWith(prefix)) out.push(...code(make, value.value.slice(prefix.length)))
      at += found.used - 1
      continue
    }
    if (!word.value.startsWith("-") || word.value.startsWith("--") || word.value.length < 2) continue
    const letters = word.value.slice(1)
    for (let j = 0; j < letters.length; j++) {
      const isCommand = short[letters[j]]
      if (isCommand === undefined) continue
      const rest = letters.slice(j + 1)
      const value = rest !== "" ? literalWord(rest) : args[at + 1]
      if (rest === "") at++
      if (isCommand) out.push(...(value === undefined || !value.literal ? [[null]] : code(make, value)))
      break
    }
  }
  return out
}

/** `ssh -o Key=value` keys whose value is a command run on this machine (or the remote one). */
const sshCommandKeys = /^(proxycommand|localcommand|knownhostscommand|remotecommand)\s*(=|\s)\s*(.*)$/is

const sshOption = (value: Word | undefined, make: FormMakers): ReadonlyArray<CommandForm> => {
  if (value === undefined) return []
  if (!value.literal) return [[null]]
  const match = sshCommandKeys.exec(value.value)
  return match === null ? [] : code(make, match[3])
}

const sshValued = "BbcDEeFIiJLlmOopQRSWw"

/** `ssh [options] HOST [options] [COMMAND …]`: the remote command is the words joined; `-o` may name commands. */
const sshForms = (args: ReadonlyArray<Word>, make: FormMakers): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  let host = false
  for (let at = 0; at < args.length; at++) {
    const word = args[at]
    if (!word.literal) return [...out, [null]]
    if (word.value === "--" && !host) continue
    if (word.value.startsWith("-") && word.value.length > 1) {
      const letters = word.value.slice(1)
      for (let j = 0; j < letters.length; j++) {
        if (!sshValued.includes(letters[j])) continue
        const rest = letters.slice(j + 1)
        const value = rest !== "" ? literalWord(rest) : args[++at]
        if (letters[j] === "o") out.push(...sshOption(value, make))
        break
      }
      continue
    }
    if (!host) {
      host = true
      continue
    }
    return [...out, ...make.code(args.slice(at))]
  }
  return out
}

/** `scp`/`sftp`: `-o` options as ssh's, `-S PROGRAM` and `-D PROGRAM` run a program. */
const copyForms = (args: ReadonlyArray<Word>, make: FormMakers): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  for (let at = 0; at < args.length; at++) {
    const word = args[at].value
    const letter = /^-([oSD])(.*)$/s.exec(word)
    if (letter === null) continue
    const value = letter[2] !== "" ? literalWord(letter[2]) : args[++at]
    if (letter[1] === "o") out.push(...sshOption(value, make))
    else out.push(...(value === undefined || !value.literal ? [[null]] : make.words([value])))
  }
  return out
}

const separators = new Set([":::", "::::", ":::+", "::::+"])

/** `parallel [options] CMD … ::: ARGS`: the command words, or each argument as a command when none is given. */
const parallelForms = (args: ReadonlyArray<Word>, make: FormMakers): ReadonlyArray<CommandForm> => {
  const split = args.findIndex((word) => separators.has(word.value))
  const before = split === -1 ? args : args.slice(0, split)
  const first = before.findIndex((word) => !word.value.startsWith("-"))
  const out: Array<CommandForm> = []
  // The arguments are appended to the command line (all of them, as the jobs' words may be any of them); from
  // stdin when there is no `:::`. Options may take values, so the command may start at any word that is not one.
  const appended = split === -1 ? [literalWord("…")] : args.slice(split + 1).filter((w) => !separators.has(w.value))
  for (let at = Math.max(first, 0); first !== -1 && at < before.length; at++) {
    if (!before[at].value.startsWith("-")) out.push(...make.code([...before.slice(at), ...appended]))
  }
  if (first === -1) {
    if (split === -1) return [[null]]
    for (const word of args.slice(split + 1)) if (!separators.has(word.value)) out.push(...code(make, word))
  }
  return out
}

/** `npx [options] CMD …`, `npm exec|x [options] -- CMD …`, `-c CMD`: the command a package runner starts. */
const packageRunnerForms = (args: ReadonlyArray<Word>, make: FormMakers): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  for (let at = 0; at < args.length; at++) {
    const word = args[at].value
    if (word === "-c" || word === "--call") {
      const value = args[++at]
      out.push(...(value === undefined ? [] : code(make, value)))
      continue
    }
    if (word.startsWith("--call=")) {
      out.push(...code(make, word.slice(7)))
      continue
    }
    if (word === "-p" || word === "--package") {
      at++
      continue
    }
    if (word === "--") return [...out, ...make.words(args.slice(at + 1))]
    if (word.startsWith("-")) continue
    return [...out, ...make.words(args.slice(at))]
  }
  return out
}

/** The forms of a git configuration value that git runs as a command (`!` marks shell code in aliases/helpers). */
export const gitConfigForms = (key: string, value: string, make: FormMakers): ReadonlyArray<CommandForm> => {
  if (gitIndirectKey.test(key)) return value === "/dev/null" ? [] : [[null]]
  if (!gitCommandKey.test(key)) return []
  if (/^alias\./i.test(key) && !value.startsWith("!")) return code(make, `git ${value}`)
  return code(make, value.startsWith("!") ? value.slice(1) : value)
}

/** `git -c KEY=VALUE`, `--config-env=KEY=ENV`: configuration values that are commands. */
export const gitGlobalConfigForms = (args: ReadonlyArray<Word>, make: FormMakers): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  for (let at = 0; at < args.length; at++) {
    const word = args[at].value
    const env = /^--config-env(?:=(.*))?$/s.exec(word)
    const text =
      word === "-c"
        ? args[++at]
        : env !== null
          ? env[1] !== undefined
            ? literalWord(env[1])
            : args[++at]
          : word.startsWith("-c")
            ? literalWord(word.slice(2))
            : undefined
    if (text === undefined) continue
    if (!text.literal) return [...out, [null]]
    const eq = text.value.indexOf("=")
    const key = eq === -1 ? text.value : text.value.slice(0, eq)
    if (env !== null) out.push(...(gitCommandKey.test(key) ? [[null]] : []))
    else out.push(...gitConfigForms(key, eq === -1 ? "" : text.value.slice(eq + 1), make))
  }
  return out
}

/** The commands a git subcommand runs from its own arguments. */
export const gitSubcommandForms = (
  subcommand: string,
  args: ReadonlyArray<Word>,
  make: FormMakers
): ReadonlyArray<CommandForm> => {
  const word = (w: Word): string | null => (w.literal ? w.value : null)
  // `ext::CMD` as a remote runs CMD (`% ` is a space, `%%` a percent sign) wherever git takes a URL.
  const transports = args.flatMap((w) =>
    w.literal && w.value.startsWith("ext::")
      ? code(
          make,
          w.value.slice(5).replace(/%(.)/g, (_, c: string) => (c === " " ? " " : c === "%" ? "%" : ""))
        )
      : []
  )
  return [...transports, ...ownForms(subcommand, args, make, word)]
}

const ownForms = (
  subcommand: string,
  args: ReadonlyArray<Word>,
  make: FormMakers,
  word: (w: Word) => string | null
): ReadonlyArray<CommandForm> => {
  switch (subcommand) {
    // Plumbing and contrib commands that push: a rule naming `git push` also sees them as `git push …`.
    case "send-pack":
    case "http-push":
      return [["git", "push", ...args.map(word)], ...tableForms(subcommand, args, make)]
    case "subtree": {
      const at = args.findIndex((w) => !w.literal || w.value === "push")
      return at === -1 ? [] : [["git", "push", ...args.slice(at + (args[at].literal ? 1 : 0)).map(word)]]
    }
    case "config": {
      const operands = args.filter((word) => !word.value.startsWith("-")).map((word) => word.value)
      const [key, value] = operands[0] === "set" || operands[0] === "add" ? operands.slice(1) : operands
      if (args.some((word) => !word.literal)) return [[null]]
      return key === undefined || value === undefined ? [] : gitConfigForms(key, value, make)
    }
    default:
      return tableForms(subcommand, args, make)
  }
}

/** The forms of the code options of a subcommand in GitCodeOptions' tables (abbreviations included). */
const tableForms = (subcommand: string, args: ReadonlyArray<Word>, make: FormMakers): ReadonlyArray<CommandForm> =>
  // a subcommand without a table (an alias, a newer command): the transport options any of them may pass on
  gitCodeTable(subcommand) === undefined
    ? optionCommands(args, {}, ["upload-pack", "receive-pack", "exec"], make)
    : gitCodeUses(
        subcommand,
        args.map((w) => (w.literal ? w.value : null))
      ).flatMap((use): ReadonlyArray<CommandForm> => {
        const value = use.attached !== undefined ? literalWord(use.attached) : args[use.at]
        switch (use.value) {
          case "unknown":
          case "configured":
            return []
          case "opaque":
            return [[null]]
          case "words": {
            const rest = args.slice(use.at)
            if (subcommand === "bisect") return make.words(rest)
            // `submodule foreach` hands its command to a shell in each submodule
            const command = rest.filter((word) => word.value !== "--recursive" && word.value !== "-q")
            return command.length > 0 ? make.code(command) : []
          }
          default:
            if (value === undefined || !value.literal) return [[null]]
            if (use.value === "shell") return code(make, value)
            if (use.value === "program") return make.words([value])
            return gitConfigForms(
              value.value.split("=")[0],
              value.value.includes("=") ? value.value.slice(value.value.indexOf("=") + 1) : "",
              make
            )
        }
      })

/** The programs `runnerForms` knows. */
export const runners: ReadonlySet<string> = new Set([
  "ssh",
  "scp",
  "sftp",
  "tar",
  "rsync",
  "zip",
  "man",
  "parallel",
  "npx",
  "bunx",
  "npm",
  "pnpm",
  "yarn",
  "gdb"
])

/** The forms of the commands `name` runs from its options or operands; none for other programs. */
export const runnerForms = (name: string, args: ReadonlyArray<Word>, make: FormMakers): ReadonlyArray<CommandForm> => {
  switch (name) {
    case "ssh":
      return sshForms(args, make)
    case "scp":
    case "sftp":
      return copyForms(args, make)
    case "tar":
      return optionCommands(
        args,
        {
          I: true,
          F: true,
          b: false,
          C: false,
          f: false,
          g: false,
          H: false,
          K: false,
          L: false,
          N: false,
          T: false,
          V: false,
          X: false
        },
        [
          "to-command",
          "use-compress-program",
          "info-script",
          "new-volume-script",
          "rsh-command",
          "rmt-command",
          "checkpoint-action"
        ],
        make,
        { "checkpoint-action": "exec=" }
      )
    case "rsync":
      return optionCommands(args, { e: true, B: false, f: false, M: false, T: false }, ["rsh", "rsync-path"], make)
    case "zip":
      return optionCommands(
        args.map((word) => (word.value === "-TT" ? { ...word, value: "--unzip-command" } : word)),
        {},
        ["unzip-command"],
        make
      )
    case "man":
      return optionCommands(
        args,
        { P: true, H: true, p: false, M: false, S: false, L: false, m: false, C: false, e: false, R: false },
        ["pager", "html"],
        make
      )
    case "parallel":
      return parallelForms(args, make)
    case "npx":
    case "bunx":
      return packageRunnerForms(args, make)
    case "npm":
    case "pnpm":
    case "yarn":
      return ["exec", "x", "dlx"].includes(args[0]?.value ?? "") ? packageRunnerForms(args.slice(1), make) : []
    case "gdb": {
      const at = args.findIndex((word) => word.value === "--args")
      return at === -1 ? [] : make.words(args.slice(at + 1))
    }
    default:
      return []
  }
}
