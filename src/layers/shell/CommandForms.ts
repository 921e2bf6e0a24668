/**
 * Every spelling of a simple command that deny and ask rules must see: the words as written, the command by its base
 * name (`/bin/rm` is `rm`), the command each wrapper runs (`env`, `timeout`, `sudo`, `xargs`, `busybox`,
 * `find -exec`, …), `git`'s subcommand after its global options, and the commands in code given as a string
 * (`bash -c '…'`, `eval`). Where that cannot be known before the shell runs, a form holds unknown words (`null`)
 * that a rule may match whatever they are; `[null]` matches every rule.
 */
import type { CommandForm, FormWord } from "../../domain/PermissionRule.js"
import { lookup } from "../../domain/shell/CommandTables.js"
import { interpreterFor } from "../../domain/shell/Interpreters.js"
import * as NpmCommands from "../../domain/shell/NpmCommands.js"
import * as OptionParser from "../../domain/shell/OptionParser.js"
import { type FormMakers, gitGlobalConfigForms, gitSubcommandForms, runnerForms, runners } from "./RunnerForms.js"
import type { Word } from "./ShellWords.js"
import { literalWord, parseWrapper, type WrapperParse } from "./WrapperParse.js"
import {
  findActions,
  gitGlobalOptions,
  shellOptionsWithArgument,
  shells,
  type Wrapper,
  wrappers
} from "./WrapperTables.js"

/** The forms of the commands in a piece of shell code (`bash -c CODE`); `[null]` when it cannot be analysed. */
export type CodeForms = (code: string) => ReadonlyArray<CommandForm>

/** A form that matches every rule: a command known only when the shell runs. */
export const anything: CommandForm = [null]

/** How many forms one simple command may produce before it is treated as `anything` (nesting, suffixes). */
const budgetPerCommand = 256

/** How many start positions an unknown wrapper option leaves open before it is treated as `anything`. */
const maxSuffixes = 32

interface Context {
  readonly code: CodeForms
  budget: number
}

export const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

const formWord = (word: Word): FormWord => (word.literal && !word.glob ? word.value : null)

/** A word only known at run time (a file name `find` puts in, the input `xargs` adds). */
const unknownWord: Word = { value: "", literal: false, glob: false, template: [{ _tag: "Opaque", text: "…" }] }

const formsOf = (words: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  if (words.length === 0) return []
  if (--context.budget < 0) return [anything]
  const base = words.map(formWord)
  const head = base[0]
  if (head === null) return [base]
  const name = basename(head)
  const out: Array<CommandForm> = [base]
  if (name !== head) out.push([name, ...base.slice(1)])
  if (name === "npm" || name === "pnpm" || name === "yarn" || name === "bun") {
    out.push(...packageManagerForms(name, words.slice(1), context))
    return out
  }
  out.push(...afterLeadingOptions(name, base.slice(1)))
  out.push(...innerForms(name, words.slice(1), context))
  return out
}

/**
 * A program's own options before its subcommand (`npm --loglevel=silent publish`, `docker --context x push`,
 * `cargo +nightly publish`) of a program with subcommands: a rule naming `npm publish` sees the command without them. Each later word that is not
 * an option may be the subcommand (an option before it may have taken the words between as its value), so each gives
 * a form `NAME WORD …`; at most a few.
 */
const afterLeadingOptions = (name: string, args: ReadonlyArray<FormWord>): ReadonlyArray<CommandForm> => {
  const first = args[0]
  if (!withSubcommands.has(name) || first === null || first === undefined || !/^[-+]./.test(first)) return []
  const out: Array<CommandForm> = []
  for (let at = 1; at < args.length && at <= 4; at++) {
    const word = args[at]
    if (word === null) {
      if (out.length === 0) out.push([name, null])
      break
    }
    if (/^[-+]./.test(word)) continue
    out.push([name, ...args.slice(at)])
  }
  return out
}

/** How many words after npm's or pnpm's leading options may be the subcommand (an option may take the words before). */
const maxSubcommandStarts = 4

/**
 * The package managers as they read their subcommand: each word that may be it (the first word, or after leading
 * options each later word that is not an option) gives the form `NAME COMMAND …` with the command it runs (`npm pub`
 * is `npm publish`, `npm i` is `npm install`, `pnpm rm` is `pnpm remove`; NpmCommands.ts; yarn and bun as written),
 * and the commands it starts: `npm exec`/`npm x`/`npm exe`, `pnpm exec`/`pnpm dlx`, `yarn exec`/`yarn dlx` and
 * `bun x` run their operands, `npm explore PKG -- CMD` runs CMD in a shell, pnpm runs a word that is none of its
 * commands as a program (`pnpm curl …`), and `--shell`/`--script-shell` name the shell npm runs scripts with. A
 * subcommand known only at run time may be any of these.
 */
const packageManagerForms = (
  name: "npm" | "pnpm" | "yarn" | "bun",
  args: ReadonlyArray<Word>,
  context: Context
): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  const optionLike = (word: Word) => word.literal && /^[-+]./.test(word.value)
  let starts = 0
  for (let at = 0; at < args.length && starts < maxSubcommandStarts; at++) {
    const word = args[at]
    if (at > 0 && !optionLike(args[0])) break
    if (optionLike(word)) continue
    starts++
    const rest = args.slice(at + 1)
    if (!word.literal || word.glob) {
      out.push([name, null], ...suffixForms(args, at + 1, context))
      break
    }
    const command =
      name === "npm"
        ? NpmCommands.canonical(word.value)
        : name === "pnpm"
          ? NpmCommands.pnpmCanonical(word.value)
          : word.value
    if (at > 0 || (command !== undefined && command !== word.value)) {
      out.push([name, command ?? word.value, ...rest.map(formWord)])
    }
    if (command === "exec" || command === "dlx" || (command === "x" && name !== "pnpm")) {
      out.push(...runnerForms("npx", rest, makers(context)))
    } else if (name === "npm" && command === "explore") out.push(...exploreForms(rest, context))
    else if (name === "pnpm" && command === undefined) out.push(...formsOf(args.slice(at), context))
  }
  if (name === "npm") out.push(...npmShellForms(args, context))
  return out
}

/** `npm explore PKG [--] CMD…`: the words after the package, joined, run as a script in the package's directory. */
const exploreForms = (args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  const at = args.findIndex((word) => !word.literal || !word.value.startsWith("-"))
  if (at === -1) return []
  const code = [...args.slice(at + 1)]
  const separator = code.findIndex((word) => word.literal && word.value === "--")
  if (separator !== -1) code.splice(separator, 1)
  return code.length === 0 ? [] : codeForms(code, context)
}

/** `npm --shell=PROGRAM`, `--script-shell PROGRAM`: the program npm runs scripts and `explore` with. */
const npmShellForms = (args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> =>
  args.flatMap((word, at) => {
    const option = /^--(?:script-)?shell(?:=(.*))?$/s.exec(word.value)
    if (option === null || !word.literal) return []
    const value = option[1] !== undefined ? literalWord(option[1]) : args[at + 1]
    return value === undefined ? [] : formsOf([value], context)
  })

/** Programs whose first operand is a subcommand (git has its own reading, `gitForms`). */
const withSubcommands: ReadonlySet<string> = new Set([
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "deno",
  "docker",
  "podman",
  "kubectl",
  "helm",
  "cargo",
  "rustup",
  "go",
  "gh",
  "glab",
  "pip",
  "pip3",
  "poetry",
  "uv",
  "pdm",
  "conda",
  "terraform",
  "tofu",
  "aws",
  "gcloud",
  "az",
  "dotnet",
  "brew",
  "apt",
  "apt-get",
  "dnf",
  "yum",
  "systemctl",
  "hg",
  "svn",
  "nix",
  "heroku",
  "vercel",
  "netlify",
  "fly",
  "flyctl",
  "firebase",
  "twine",
  "gem",
  "bundle"
])

/** The forms of the command a wrapper, shell, `find` or `git` runs; none for an ordinary command. */
const innerForms = (name: string, args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  switch (name) {
    case "find":
      return findForms(args, context)
    case "git":
      return gitForms(args, context)
    case "busybox":
      return args.length > 0 && !args[0].value.startsWith("-") ? formsOf(args, context) : []
    case "eval":
      return codeForms(args, context)
    case "source":
    case ".":
      return [anything]
    case "trap": {
      // `trap [-lp] [--] ACTION SIGNAL…`: the action is code run later (`trap -- 'rm x' EXIT`).
      const start = args.findIndex((word) => !word.literal || !/^(?:-[lp]+|--)$/.test(word.value))
      return start === -1 ? [] : codeForms(args.slice(start, start + 1), context)
    }
    case "mapfile":
    case "readarray":
    case "compgen":
    case "complete":
      return callbackForms(args, context)
    case "coproc":
      // `coproc [NAME] COMMAND` (tree-sitter reads `coproc c { …; }` as words): the command may start at any word.
      return suffixForms(args, 0, context)
    case "jobs": {
      // `jobs -x COMMAND ARGS…` runs the command.
      const at = args.findIndex((word) => word.value === "-x")
      return at === -1 ? [] : formsOf(args.slice(at + 1), context)
    }
    case "enable":
      // `enable -f FILE NAME` loads a builtin NAME from a shared object: it may do anything.
      return args.some((word) => !word.literal || /^-[A-Za-z]*f/.test(word.value)) ? [anything] : []
    case "alias":
      // `alias r=rm` makes `r` run `rm` (where aliases are expanded): the value is code.
      return args.flatMap((word) => {
        const eq = word.value.indexOf("=")
        if (eq === -1) return []
        return word.literal ? context.code(word.value.slice(eq + 1)) : [anything]
      })
    case "hash": {
      // `hash -p /bin/rm r` (also `-p/bin/rm`, `-rp /bin/rm`) makes `r` run /bin/rm.
      const at = args.findIndex((word) => !word.literal || /^-[dlrt]*p/.test(word.value))
      if (at === -1) return []
      if (!args[at].literal) return [anything]
      const attached = args[at].value.replace(/^-[dlrt]*p/, "")
      if (attached !== "") return formsOf([literalWord(attached)], context)
      return at + 1 >= args.length ? [] : formsOf(args.slice(at + 1, at + 2), context)
    }
  }
  if (shells.has(name)) return shellForms(args, context)
  const wrapper = Object.hasOwn(wrappers, name) ? wrappers[name] : undefined
  if (wrapper !== undefined) return wrapperForms(wrapper, args, context)
  // An interpreter runs a script it is given (`python3 deploy.sh`): a rule naming the script sees it.
  if (interpreterFor(name) !== undefined) return possibleWrapperForms(args, context)
  if (runners.has(name) || lookup(name) !== undefined || leaves.has(name))
    return runnerForms(name, args, makers(context))
  return possibleWrapperForms(args, context)
}

/**
 * Programs known not to run a command named by their words (builtins and common build tools); any other program
 * not in the tables may be a wrapper (`setarch x86_64 rm x`, `ssh-agent rm x`, `bwrap --bind / / rm x`).
 */
const leaves: ReadonlySet<string> = new Set([
  "cd",
  "pushd",
  "popd",
  "dirs",
  "printf",
  "read",
  "set",
  "shift",
  "exit",
  "return",
  "break",
  "continue",
  "export",
  "local",
  "declare",
  "typeset",
  "readonly",
  "unset",
  "type",
  "wait",
  "kill",
  "umask",
  "ulimit",
  "shopt",
  "getopts",
  "let",
  "fg",
  "bg",
  "disown",
  "times",
  "help",
  "history",
  "caller",
  "logout",
  "suspend",
  "bind",
  "fc",
  "make",
  "gmake",
  "cargo",
  "rustc",
  "go",
  "tsc",
  "gcc",
  "g++",
  "cc",
  "clang",
  "javac",
  "mvn",
  "gradle",
  "pip",
  "pip3",
  "curl",
  "wget",
  "mkdir",
  "touch"
])

/** Words a program cannot execute: the builtins that read a file as code exist only inside a shell. */
const notPrograms: ReadonlySet<string> = new Set([".", "source"])

/**
 * A program not in the tables: it may run a command from any of its words, so each word that could name a program
 * starts a form (`./NAME` too for a bare name: a script it may run from the working directory).
 */
const possibleWrapperForms = (args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  let starts = 0
  for (let at = 0; at < args.length; at++) {
    const word = args[at]
    if (word.literal && /^-[^=]+=./s.test(word.value)) {
      // `--entrypoint=/bin/rm`, `--on-done=rm`: an option's value may name the program it runs
      if (++starts > maxSuffixes) return [...out, anything]
      out.push(...formsOf([literalWord(word.value.slice(word.value.indexOf("=") + 1)), ...args.slice(at + 1)], context))
      continue
    }
    if (word.literal && (word.value.startsWith("-") || word.value.includes("=") || word.value === "")) continue
    // A program runs another by executing a file: `.` and `source` are only shell builtins (`npx eslint .`).
    if (word.literal && notPrograms.has(word.value)) continue
    if (++starts > maxSuffixes) return [...out, anything]
    const rest = args.slice(at)
    out.push(...formsOf(rest, context))
    if (word.literal && !word.glob) out.push(...scriptAliases(word.value, rest))
  }
  return out
}

/** A script named as an operand (`bash deploy.sh`) is also `./deploy.sh` to a rule, and `./x` is also `x`. */
const scriptAliases = (name: string, words: ReadonlyArray<Word>): ReadonlyArray<CommandForm> => {
  const rest = words.slice(1).map(formWord)
  if (name.startsWith("./")) return [[name.slice(2), ...rest]]
  return name.includes("/") ? [] : [[`./${name}`, ...rest]]
}

/** The form makers `RunnerForms.ts` uses, over this command's budget. */
const makers = (context: Context): FormMakers => ({
  words: (words) => formsOf(words, context),
  code: (words) => codeForms(words, context)
})

/**
 * `mapfile -C CODE`, `compgen -C CODE`, `complete -C CODE`: the code is run later as a command, with words appended
 * (the line's index and text, the word being completed).
 */
const callbackForms = (args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  args.forEach((word, at) => {
    if (!word.literal) return
    const cluster = /^-([A-Za-z]*?)C(.*)$/s.exec(word.value)
    if (cluster === null) return
    const value = cluster[2] !== "" ? literalWord(cluster[2]) : args[at + 1]
    if (value === undefined) return
    for (const form of codeForms([value], context)) out.push(form, [...form, null])
  })
  return out
}

/** Forms of code in words joined by spaces (`eval a b`, `bash -c CODE`). */
const codeForms = (words: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> =>
  words.every((word) => word.literal) ? context.code(words.map((word) => word.value).join(" ")) : [anything]

/** A script operand that is the shell's stdin or another open descriptor: the code comes from the input. */
const descriptorScript = /^(?:-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(?:self|thread-self|\d+)\/fd\/\d+)$/

/**
 * A shell running `-c CODE` or reading code from stdin; a script file's contents are its own. Short options are read
 * as clusters the way bash reads them: `c` makes the first operand the code, `s` reads the code from stdin whatever
 * the operands (`bash -s -- a b <<< CODE`), and each `o`/`O` takes the next word (`bash -euo pipefail -c CODE`).
 */
const shellForms = (args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  let inline = false
  let stdin = false
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value
    if (!args[i].literal) return [anything]
    if (shellOptionsWithArgument.has(value)) i++
    else if (/^[-+][A-Za-z]+$/.test(value)) {
      const letters = value.slice(1)
      if (value.startsWith("-") && letters.includes("c")) inline = true
      if (value.startsWith("-") && letters.includes("s")) stdin = true
      // `-k`: `NAME=value` words anywhere become variables of the commands (`bash -kc 'git fetch GIT_SSH_COMMAND=…'`)
      if (letters.includes("k")) return [anything]
      i += (letters.match(/[oO]/g) ?? []).length
    } else if (value === "--") {
      if (i + 1 >= args.length) return stdin ? [anything] : []
      if (inline) return codeForms([args[i + 1]], context)
      if (stdin || descriptorScript.test(args[i + 1].value)) return [anything]
      return [args.slice(i + 1).map(formWord), ...scriptAliases(args[i + 1].value, args.slice(i + 1))]
    } else if (value === "-") return [anything]
    else if (!value.startsWith("-") && !value.startsWith("+")) {
      if (inline) return codeForms([args[i]], context)
      if (stdin || descriptorScript.test(value)) return [anything]
      // A script file: its contents are its own, but a rule naming the script (`Bash(./deploy.sh:*)`) sees it.
      return [args.slice(i).map(formWord), ...scriptAliases(value, args.slice(i))]
    }
  }
  return args.some((word) => word.value === "--version" || word.value === "--help") ? [] : [anything]
}

/** The forms of every suffix of `args` from `from` on: a command that may start at any of those words. */
const suffixForms = (args: ReadonlyArray<Word>, from: number, context: Context): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  const end = Math.min(args.length, from + maxSuffixes)
  for (let at = from; at < end; at++) out.push(...formsOf(args.slice(at), context))
  if (args.length > end) out.push(anything)
  return out
}

/**
 * The forms of the shell code a wrapper's code option carries (`flock -c CMD`, `su -c CMD`, or such an option first
 * in place of the command: `flock FILE -c CMD`); undefined when there is none. The option's word is looked at as
 * written: a value known only at run time may be any code.
 */
const wrappedCode = (
  names: ReadonlyArray<string>,
  args: ReadonlyArray<Word>,
  parsed: Extract<WrapperParse, { _tag: "Command" }>,
  command: ReadonlyArray<Word>,
  context: Context
): ReadonlyArray<CommandForm> | undefined => {
  const given = parsed.options.flatMap((option) =>
    option._tag === "Option" && names.includes(option.name) ? [option] : []
  )
  if (given.length > 0) {
    if (args.slice(0, parsed.start).some((word) => !word.literal)) return [anything]
    // A flag (`entr -s`) makes the command words the code; an option with a value carries the code itself.
    return given.flatMap((option) =>
      option.value === undefined ? (command.length > 0 ? codeForms(command, context) : []) : context.code(option.value)
    )
  }
  const first = command[0]
  if (first?.literal !== true || !names.includes(first.value)) return undefined
  return command.length > 1 ? codeForms(command.slice(1, 2), context) : [anything]
}

const wrapperForms = (wrapper: Wrapper, args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  const parsed = parseWrapper(wrapper, args)
  switch (parsed._tag) {
    case "NoCommand":
      return []
    case "Opaque":
      return [anything]
    case "Unknown":
      return suffixForms(args, parsed.from, context)
    case "Split":
      return --context.budget < 0 ? [anything] : wrapperForms(wrapper, parsed.args, context)
  }
  const command = args.slice(parsed.start)
  if (wrapper.code !== undefined) {
    const code = wrappedCode(wrapper.code, args, parsed, command, context)
    if (code !== undefined) return code
  }
  if (wrapper.joined === true) return command.length > 0 ? codeForms(command, context) : []
  if (wrapper.appends !== true) return formsOf(command, context)
  const replaced = parsed.options.flatMap((option) =>
    option._tag === "Option" && wrapper.replace?.includes(option.name) === true ? [option.value ?? "{}"] : []
  )
  const words = command.map((word) =>
    replaced.some((text) => text !== "" && word.value.includes(text)) ? unknownWord : word
  )
  // The input's words are arguments of the command: to `env`, `eval` or `find` they may be a command or code. With a
  // replace string (`-I`), each input line goes only where the string stands, as one word, and nothing is appended.
  const run = words.length > 0 ? words : [literalWord("echo")]
  return formsOf(replaced.length > 0 ? run : [...run, unknownWord], context)
}

/** `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`): `{}` is a file name known only at run time. */
const findForms = (args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  const out: Array<CommandForm> = []
  for (let at = 0; at < args.length; at++) {
    const word = args[at]
    if (!word.literal) {
      // A word known only at run time may be several words (an unquoted expansion, the input `xargs` appends), so
      // it may be a whole `-exec CMD ;` by itself: find may run anything.
      out.push(anything)
      break
    }
    if (!findActions.has(word.value)) continue
    const rest = args.slice(at + 1)
    const end = rest.findIndex((next) => next.literal && (next.value === ";" || next.value === "+"))
    const inner = (end === -1 ? rest : rest.slice(0, end)).map((next) =>
      next.value.includes("{}") ? unknownWord : next
    )
    out.push(...formsOf(inner, context))
    at += end === -1 ? rest.length : end + 1
  }
  return out
}

const configsAlias = (option: OptionParser.Parsed): boolean =>
  option._tag === "Option" &&
  (option.name === "-c" || option.name === "--config-env") &&
  (option.value ?? "").toLowerCase().startsWith("alias.")

/** `git [global options] SUBCOMMAND …` as `git SUBCOMMAND …`; an alias defined on the line may run anything. */
const gitForms = (args: ReadonlyArray<Word>, context: Context): ReadonlyArray<CommandForm> => {
  const parsed = OptionParser.parse(
    gitGlobalOptions,
    args.map((word) => word.value)
  )
  const unknown = parsed.items.find((item) => item._tag === "Unknown")
  if (unknown !== undefined) {
    return suffixForms(args, unknown.index + 1, context).map((form) => ["git", ...form])
  }
  const at = parsed.rest
  const own = at < args.length ? gitSubcommandForms(args[at].value, args.slice(at + 1), makers(context)) : []
  if (at === 0) return own
  const subcommand: CommandForm = ["git", ...args.slice(at).map(formWord)]
  const opaque = args.slice(0, at).some((word) => !word.literal)
  const configured = gitGlobalConfigForms(args.slice(0, at), makers(context))
  const forms = opaque || parsed.items.some(configsAlias) ? [subcommand, ["git", null]] : [subcommand]
  return [...forms, ...configured, ...own]
}

/**
 * The forms of one simple command (its words after leading assignments): `code` analyses code given as a string.
 * Always starts with the words as written.
 */
export const commandForms = (words: ReadonlyArray<Word>, code: CodeForms): ReadonlyArray<CommandForm> =>
  formsOf(words, { code, budget: budgetPerCommand })
