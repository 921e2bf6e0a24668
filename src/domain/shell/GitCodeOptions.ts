/**
 * The options of git subcommands that make git run a program: a transport command (`--upload-pack`,
 * `--receive-pack`, `--exec`), a pager (`grep -O`), a command after each commit (`rebase -x`), a hook directory
 * (`clone --template`), configuration given on the line (`clone -c`), a server or browser (`instaweb --httpd`,
 * `daemon --access-hook`), a filter (`filter-branch --tree-filter`, `--setup`), and the operand words that run a
 * command (`bisect run`, `submodule foreach`).
 *
 * git's builtins accept any unambiguous prefix of a long option (`ls-remote --u=CMD` is `--upload-pack=CMD`), and
 * a prefix that is ambiguous today may be unique in another git version. So a word is taken for a code option when
 * it is a prefix of one (of one letter or more) and is not exactly the name of another option the subcommand has
 * (`send-email --to` is not `--to-cmd`). For subcommands whose whole option list is written here (`known`, from
 * git 2.39), a long option that is no prefix of any of them is unknown: a prefix allow rule does not cover it.
 */

/** What an option's value is to git. */
export type CodeValue =
  /** Shell code (`--upload-pack`, `rebase --exec`, `grep -O`). */
  | "shell"
  /** A program run by name or path, without a shell (`daemon --access-hook`, `instaweb --browser`). */
  | "program"
  /** `KEY=VALUE` configuration, code when the key names a command (`clone -c core.fsmonitor=…`). */
  | "config"
  /** A place git runs code from, so any code may run (`clone --template=DIR` copies DIR's hooks). */
  | "opaque"

export interface GitCodeTable {
  /** Long options (without `--`) that run code, with what their value is. */
  readonly long: Readonly<Record<string, CodeValue>>
  /** Short letters that run code, with what their value is. */
  readonly short?: Readonly<Record<string, CodeValue>>
  /** Short letters that take a value but run nothing (so the rest of their cluster is not read as options). */
  readonly valued?: string
  /** Short letters whose value is only ever attached (`grep -O` alone uses the configured pager). */
  readonly attachedOnly?: string
  /** The first operand that makes git run the words after it (`bisect run`, `submodule foreach`). */
  readonly runWord?: string
  /** Long options that exist beside the code ones; with `complete`, every long option of the subcommand. */
  readonly known?: ReadonlyArray<string>
  /** True when `known` lists every long option (git 2.39 `--git-completion-helper-all`). */
  readonly complete?: boolean
}

const withNegations = (names: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...names,
  ...names.filter((name) => !name.startsWith("no-")).map((name) => `no-${name}`)
]

const words = (text: string): ReadonlyArray<string> => text.split(/\s+/).filter((name) => name !== "")

const transport = { "upload-pack": "shell", exec: "shell" } as const

const fetchOptions = words(`verbose quiet all set-upstream append atomic upload-pack force multiple tags jobs prefetch
  prune prune-tags recurse-submodules dry-run write-fetch-head keep update-head-ok progress depth shallow-since
  shallow-exclude deepen unshallow refetch submodule-prefix recurse-submodules-default update-shallow refmap
  server-option ipv4 ipv6 negotiation-tip negotiate-only filter auto-maintenance auto-gc show-forced-updates
  write-commit-graph stdin`)

const pullOptions = words(`verbose quiet progress recurse-submodules rebase stat summary log signoff squash commit edit
  cleanup ff ff-only verify verify-signatures autostash strategy strategy-option gpg-sign allow-unrelated-histories
  all append upload-pack force tags prune jobs dry-run keep depth shallow-since shallow-exclude deepen unshallow
  update-shallow refmap server-option ipv4 ipv6 negotiation-tip show-forced-updates set-upstream`)

const pushOptions = words(`verbose quiet repo all mirror delete tags dry-run porcelain force force-with-lease
  force-if-includes recurse-submodules thin receive-pack exec set-upstream progress prune no-verify follow-tags
  signed atomic push-option ipv4 ipv6 verify`)

const tables: Readonly<Record<string, GitCodeTable>> = {
  "ls-remote": {
    long: transport,
    known: withNegations(words("quiet upload-pack exec tags heads refs get-url sort exit-code symref server-option")),
    complete: true
  },
  "fetch-pack": { long: transport },
  fetch: { long: { "upload-pack": "shell" }, valued: "joy", known: withNegations(fetchOptions), complete: true },
  pull: { long: { "upload-pack": "shell" }, valued: "sXj", known: withNegations(pullOptions), complete: true },
  push: {
    long: { "receive-pack": "shell", exec: "shell" },
    valued: "o",
    known: withNegations(pushOptions),
    complete: true
  },
  "send-pack": {
    long: { "receive-pack": "shell", exec: "shell" },
    known: withNegations(
      words(`verbose quiet receive-pack exec remote all dry-run mirror force signed push-option progress thin atomic
        stateless-rpc stdin helper-status force-with-lease force-if-includes`)
    ),
    complete: true
  },
  archive: {
    long: { exec: "shell" },
    valued: "o",
    known: withNegations(words("output remote exec format prefix add-file add-virtual-file worktree-attributes list"))
  },
  clone: {
    long: { "upload-pack": "shell", template: "opaque", config: "config" },
    short: { u: "shell", c: "config" },
    valued: "bojs",
    known: withNegations(
      words(`verbose quiet progress reject-shallow no-checkout bare naked mirror local no-hardlinks shared
        recurse-submodules recursive jobs template reference reference-if-able dissociate origin branch upload-pack
        depth shallow-since shallow-exclude single-branch no-tags shallow-submodules separate-git-dir config
        server-option ipv4 ipv6 filter also-filter-submodules remote-submodules sparse bundle-uri checkout hardlinks
        tags`)
    ),
    complete: true
  },
  grep: {
    long: { "open-files-in-pager": "shell" },
    short: { O: "shell" },
    valued: "efABCm",
    attachedOnly: "O",
    known: withNegations(
      words(`cached no-index untracked exclude-standard recurse-submodules invert-match ignore-case word-regexp text
        textconv recursive max-depth extended-regexp basic-regexp fixed-strings perl-regexp line-number column
        full-name files-with-matches name-only files-without-match null only-matching count color break heading
        context before-context after-context threads show-function function-context and or not quiet all-match
        open-files-in-pager ext-grep max-count index`)
    ),
    complete: true
  },
  rebase: {
    long: { exec: "shell" },
    short: { x: "shell" },
    valued: "sXC",
    known: withNegations(
      words(`onto keep-base no-verify quiet verbose no-stat signoff committer-date-is-author-date reset-author-date
        ignore-date ignore-whitespace whitespace force-rebase no-ff continue skip abort quit edit-todo
        show-current-patch apply merge interactive preserve-merges rerere-autoupdate empty keep-empty autosquash
        update-refs gpg-sign autostash exec allow-empty-message rebase-merges fork-point strategy strategy-option
        root reschedule-failed-exec reapply-cherry-picks verify stat ff`)
    ),
    complete: true
  },
  difftool: {
    long: { extcmd: "shell" },
    short: { x: "shell" },
    valued: "t",
    known: withNegations(
      words("gui dir-diff no-prompt prompt symlinks tool tool-help trust-exit-code extcmd no-index index")
    ),
    complete: true
  },
  daemon: { long: { "access-hook": "program" } },
  instaweb: {
    long: { httpd: "shell", browser: "program" },
    short: { d: "shell", b: "program" },
    valued: "pm",
    known: words("local port httpd browser module-path stop start restart"),
    complete: true
  },
  "filter-branch": {
    long: {
      setup: "shell",
      "env-filter": "shell",
      "tree-filter": "shell",
      "index-filter": "shell",
      "parent-filter": "shell",
      "msg-filter": "shell",
      "commit-filter": "shell",
      "tag-name-filter": "shell"
    }
  },
  "send-email": {
    long: {
      "sendmail-cmd": "shell",
      "to-cmd": "shell",
      "cc-cmd": "shell",
      "header-cmd": "shell",
      "smtp-server": "program"
    },
    known: words("to cc bcc smtp-server-port smtp-server-option")
  },
  bisect: { long: {}, runWord: "run" },
  submodule: { long: {}, runWord: "foreach" }
}

/** Configuration keys whose value git runs as a command (`core.pager`, `alias.*` with `!`, filters, helpers). */
export const gitCommandKey =
  /^(core\.(sshcommand|pager|editor|fsmonitor|askpass|gitproxy)|sequence\.editor|diff\.external|gpg(\.[^.]+)?\.program|credential(\..+)?\.helper|pager\..+|alias\..+|.+\.(textconv|cmd|command|driver|clean|smudge|process|sendmailcmd)|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack)|sendemail\.(smtpserver|tocmd|cccmd|headercmd)|web\.browser|interactive\.difffilter|core\.alternaterefscommand|.+\.defaultkeycommand|(man|browser|difftool|mergetool)\..+\.path)$/i

/**
 * Keys that make git read configuration or hooks from a place the line names (`include.path`, `core.hooksPath`):
 * whatever that file or directory holds (an alias, a pager, a hook) may run, so any command may.
 */
export const gitIndirectKey = /^(include\.path|includeif\..+\.path|core\.hookspath)$/i

/** The table of a git subcommand's code options, undefined when it has none. */
export const gitCodeTable = (subcommand: string): GitCodeTable | undefined =>
  Object.hasOwn(tables, subcommand) ? tables[subcommand] : undefined

/**
 * What a long option name (without `--`, before `=`) means: the code option it may be (`code`), a name no option
 * of a complete table starts with (`unknown`), or nothing to worry about.
 */
export const resolveCodeLong = (
  table: GitCodeTable,
  given: string
):
  | { readonly _tag: "code"; readonly name: string; readonly value: CodeValue }
  | { readonly _tag: "unknown" }
  | { readonly _tag: "other" } => {
  if (Object.hasOwn(table.long, given)) return { _tag: "code", name: given, value: table.long[given] }
  if (given === "" || table.known?.includes(given) === true) return { _tag: "other" }
  const code = Object.keys(table.long).find((name) => name.startsWith(given))
  if (code !== undefined) return { _tag: "code", name: code, value: table.long[code] }
  if (table.complete === true && !(table.known ?? []).some((name) => name.startsWith(given))) return { _tag: "unknown" }
  return { _tag: "other" }
}

/** One finding: the option as written (`--u`, `-x`, `run`), what runs, and the words it used. */
export interface CodeUse {
  readonly option: string
  readonly name: string
  readonly value: CodeValue | "words" | "unknown" | "configured"
  /** Index (in the arguments) of the word holding the value, and the value's text when it is inside that word. */
  readonly at: number
  readonly attached?: string
}

/**
 * The code options among a git subcommand's arguments (the words after the subcommand), in order. Values given
 * as separate words are read from the next argument (`at`); attached ones are returned as text.
 */
export const gitCodeUses = (subcommand: string, args: ReadonlyArray<string | null>): ReadonlyArray<CodeUse> => {
  const table = gitCodeTable(subcommand)
  if (table === undefined) return []
  const out: Array<CodeUse> = []
  let operands = 0
  for (let at = 0; at < args.length; at++) {
    const word = args[at]
    if (word === null) continue
    if (word === "--") break
    if (word.startsWith("--")) {
      const eq = word.indexOf("=")
      const given = word.slice(2, eq === -1 ? undefined : eq)
      const found = resolveCodeLong(table, given)
      if (found._tag === "unknown") out.push({ option: word, name: given, value: "unknown", at })
      if (found._tag !== "code") continue
      if (eq !== -1)
        out.push({ option: `--${given}`, name: found.name, value: found.value, at, attached: word.slice(eq + 1) })
      else out.push({ option: word, name: found.name, value: found.value, at: ++at })
      continue
    }
    if (word.startsWith("-") && word.length > 1) {
      const letters = word.slice(1)
      for (let i = 0; i < letters.length; i++) {
        const letter = letters[i]
        const rest = letters.slice(i + 1)
        const value = table.short?.[letter]
        if (value !== undefined) {
          if (rest !== "") out.push({ option: `-${letter}`, name: letter, value, at, attached: rest })
          else if (table.attachedOnly?.includes(letter) === true)
            out.push({ option: `-${letter}`, name: letter, value: "configured", at })
          else out.push({ option: `-${letter}`, name: letter, value, at: ++at })
          break
        }
        if (table.valued?.includes(letter) === true) {
          if (rest === "") at++
          break
        }
      }
      continue
    }
    if (operands++ === 0 && table.runWord !== undefined && word === table.runWord) {
      out.push({ option: word, name: word, value: "words", at: at + 1 })
      break
    }
  }
  return out
}
