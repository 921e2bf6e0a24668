/**
 * Options that make a program run code given on the command line or in a file it names — `git grep -O CMD`,
 * `sed -f SCRIPT` (whose `e` command runs a shell), `make -E TEXT`, `ssh -o ProxyCommand=CMD`, `ssh -F CONFIG`,
 * `rg --pre CMD`, `find -exec`, `tar --to-command`, `rsync -e`. A prefix allow rule names a program, not the code
 * such an option runs: `Bash(rg:*)` never covers `rg --pre ./x`, which asks and names the option. Long options are
 * matched with GNU abbreviations (`make --ev=…`, `rg --pr`), short ones inside clusters (`sed -nf`, `rsync -avze`).
 */

import { gitCodeUses, gitCommandKey, gitIndirectKey } from "./GitCodeOptions.js"

interface CodeOptionTable {
  /** Long options (without `--`) whose value or effect runs code. */
  readonly long?: ReadonlyArray<string>
  /** Short option letters, also found inside a cluster. */
  readonly short?: string
  /** Whole words (`find -exec`). */
  readonly words?: ReadonlyArray<string>
  /** `-o KEY=VALUE` options whose key names a command (ssh). */
  readonly configKeys?: RegExp
  /** Operands that give the program code to run (`make SHELL=CMD`: the shell its recipes run in). */
  readonly assignments?: RegExp
}

/** ssh options naming a program it runs or a library it loads (`PKCS11Provider`, `XAuthLocation`, `Include`). */
const sshKeys =
  /^(proxycommand|localcommand|permitlocalcommand|knownhostscommand|remotecommand|pkcs11provider|securitykeyprovider|xauthlocation|include)\b/i
/** make variables that choose the shell recipes run in, or add options (`MAKEFLAGS=--eval=…`). */
const makeVariables = /^(SHELL|\.SHELLFLAGS|MAKEFLAGS|MFLAGS|GNUMAKEFLAGS|MAKESHELL)\s*[:+?!]?=/

const awkOptions: CodeOptionTable = { long: ["file", "exec", "include", "load"], short: "fEil" }

const tables: Readonly<Record<string, CodeOptionTable>> = {
  sed: { long: ["file"], short: "f" },
  gsed: { long: ["file"], short: "f" },
  make: { long: ["eval"], short: "E", assignments: makeVariables },
  gmake: { long: ["eval"], short: "E", assignments: makeVariables },
  ssh: { short: "FI", configKeys: sshKeys },
  scp: { short: "FSD", configKeys: sshKeys },
  sftp: { short: "FSD", configKeys: sshKeys },
  rg: { long: ["pre", "hostname-bin"] },
  find: { words: ["-exec", "-execdir", "-ok", "-okdir"] },
  tar: {
    long: [
      "to-command",
      "use-compress-program",
      "checkpoint-action",
      "info-script",
      "new-volume-script",
      "rsh-command",
      "rmt-command"
    ],
    short: "IF"
  },
  rsync: { long: ["rsh", "rsync-path"], short: "e" },
  sort: { long: ["compress-program"] },
  man: { long: ["pager", "html"], short: "PH" },
  zip: { long: ["unzip-command"], words: ["-TT"] },
  // a program file (`-f`, gawk's `-E`, `-i`) or a shared library (`-l`): code the rule does not see
  awk: awkOptions,
  gawk: awkOptions,
  mawk: awkOptions,
  nawk: awkOptions
}

/** The table for a command's words, and where its own arguments start (`git grep` after git's options). */
const tableOf = (argv: ReadonlyArray<string>): readonly [CodeOptionTable, number] | undefined => {
  const name = argv[0]
  if (name === undefined) return undefined
  const base = name.slice(name.lastIndexOf("/") + 1)
  return Object.hasOwn(tables, base) ? [tables[base], 1] : undefined
}

/** git's options before the subcommand that take the next word as their value. */
const gitValued = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"])

/**
 * The option of a git subcommand that runs code (GitCodeOptions.ts), a long option it does not have (a newer git
 * may give it a meaning), or a configuration value given with `clone -c` that is a command.
 */
const gitCodeOption = (argv: ReadonlyArray<string>): string | undefined => {
  let at = 1
  while (at < argv.length && argv[at].startsWith("-")) at += gitValued.has(argv[at]) ? 2 : 1
  const subcommand = argv[at]
  if (subcommand === undefined) return undefined
  const args = argv.slice(at + 1)
  const use = gitCodeUses(subcommand, args).find((found) => {
    if (found.value !== "config") return true
    const text = found.attached ?? args[found.at] ?? ""
    const key = text.split("=")[0]
    return gitCommandKey.test(key) || gitIndirectKey.test(key)
  })
  return use === undefined
    ? undefined
    : use.value === "unknown"
      ? `${use.option} (not in armature's table: it may)`
      : use.option
}

/** The option of a command that runs code given to it, as written; undefined when it has none. */
export const codeRunningOption = (argv: ReadonlyArray<string>): string | undefined => {
  if (argv[0] !== undefined && argv[0].slice(argv[0].lastIndexOf("/") + 1) === "git") return gitCodeOption(argv)
  const found = tableOf(argv)
  if (found === undefined) return undefined
  const [table, start] = found
  for (let at = start; at < argv.length; at++) {
    const word = argv[at]
    if (word === "--") return undefined
    if (table.words?.includes(word) === true) return word
    if (table.assignments?.test(word) === true) return word.split("=")[0]
    if (word.startsWith("--")) {
      const name = word.slice(2).split("=")[0]
      if (name.length >= 2 && (table.long ?? []).some((long) => long.startsWith(name))) return word.split("=")[0]
      continue
    }
    if (!word.startsWith("-") || word === "-") continue
    const letters = word.slice(1)
    for (let i = 0; i < letters.length; i++) {
      const letter = letters[i]
      if (table.short?.includes(letter) === true) return `-${letter}`
      if (letter === "o" && table.configKeys !== undefined) {
        const value = letters.slice(i + 1) !== "" ? letters.slice(i + 1) : (argv[at + 1] ?? "")
        if (table.configKeys.test(value.trim())) return `-o ${value.split(/[=\s]/)[0]}`
        break
      }
    }
  }
  return undefined
}
