/**
 * The paths a Bash command line reads and writes, resolved as the shell and the OS would before any rule is
 * checked: brace expansion, `~`, `$HOME`/`$PWD`, globs matched against the file system, input and output
 * redirections, `cd`/`pushd` and `env -C` earlier in the line, option values naming paths (`-t DIR`,
 * `--target-directory=DIR`), then symlinks (a dangling link is its target). What cannot be known without running
 * the line (another variable, `~user`, `cd "$x"`) is reported as unresolved, never guessed.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as CommandEffect from "../../domain/shell/CommandEffect.js"
import { compile } from "../../domain/shell/CommandTable.js"
import * as CommandTables from "../../domain/shell/CommandTables.js"
import * as LinkFollowing from "../../domain/shell/LinkFollowing.js"
import * as ListedNames from "../../domain/shell/ListedNames.js"
import { pathSegments, type Segment, wordSegments } from "../../domain/shell/PathGlob.js"
import * as PathLists from "../../domain/shell/PathLists.js"
import * as Expansion from "../../domain/shell/ShellExpansion.js"
import type { PathStep } from "../../services/ShellAnalyzer.js"
import * as PathResolver from "./PathResolver.js"
import * as TreeChanges from "./TreeChanges.js"

export type { ChangedWrite } from "./TreeChanges.js"

import { isInput } from "./XargsCommand.js"

/**
 * What a command does to a path: reads its contents, reads only its name and metadata (`ls`, `stat`, `test -f`,
 * `git status`), or writes it.
 */
export type Access = "read" | "names" | "write"

/** One path a command line reads or writes. */
export interface BashPath {
  /** The path as the command names it (after expansion, before resolving symlinks). */
  readonly given: string
  readonly access: Access
  /** Read by a git command that prints only what git stores (tracked files and history) under it. */
  readonly tracked?: boolean | undefined
  /** What the searcher reading this tree leaves out (hidden, gitignored files). */
  readonly skips?: CommandEffect.Skips | undefined
  /** Its resolved forms: as the OS follows it (symlink, then `..`) and with `..` applied first. */
  readonly forms: ReadonlyArray<string>
  /** A directory read with its contents (`grep -r`, `cp -r`, unknown commands): what lies under it is read too. */
  readonly recursive: boolean
  /** For a glob, its absolute segments: rules it could match are checked even when no file matches yet. */
  readonly glob?: ReadonlyArray<Segment> | undefined
  /**
   * A file the program reads without any word naming it (its own configuration: `git config -l` prints
   * `~/.gitconfig`): checked against Read rules, but it does not take the command outside the working directories.
   */
  readonly implicit?: boolean | undefined
  /** Named by a command no table describes: a guess (every operand counts), not a path known to be read. */
  readonly guessed?: boolean | undefined
  /** The target of a file redirection (`> f`, `< f`). */
  readonly redirect?: boolean | undefined
  /** Stands for the names a lister prints, which `xargs` hands to the command (see ListedNames.ts). */
  readonly listed?: Listed | undefined
  /** The index of the line's step (a command or a redirection, in order) that names it. */
  readonly step?: number | undefined
  /**
   * A tree the command walks without following the symbolic links inside it (`cp -r`, `grep -r`, `rg`): what those
   * links point to is not read (see LinkFollowing.keepsLinks).
   */
  readonly keepsLinks?: LinkFollowing.KeptLinks | undefined
  /**
   * Read by a command that fails outside a git repository before reading anything (`git grep`): the directory it
   * runs in (its repository, if any, is the one that counts).
   */
  readonly repositoryOnly?: string | undefined
}

/** How the names a lister prints reach the command `xargs` runs. */
export interface Listed {
  /** xargs splits them at blanks and reads quotes: a name holding one may become other names. */
  readonly split: boolean
  /** They are relative to the repository's top (`git diff --name-only`), read from the command's directory. */
  readonly fromTop: boolean
}

/** A path that cannot be known without running the line. */
export interface UnresolvedPath {
  readonly given: string
  readonly access: Access
  readonly reason: string
  /** Named by a command no table describes (see `BashPath.guessed`). */
  readonly guessed?: boolean | undefined
}

/** Everything a command line does to paths. */
export interface BashPaths {
  readonly paths: ReadonlyArray<BashPath>
  readonly unresolved: ReadonlyArray<UnresolvedPath>
  /** Writes whose target an earlier command of the line may have replaced (see TreeChanges.ts). */
  readonly afterChange: ReadonlyArray<TreeChanges.ChangedWrite>
  /** Reads of contents whose path an earlier command of the line may have replaced (a new link may lead anywhere). */
  readonly readAfterChange: ReadonlyArray<TreeChanges.ChangedWrite>
}

/** What resolution needs besides the line. */
export interface Options {
  readonly cwd: string
  readonly home: string
  readonly user?: string | undefined
}

/** The most directories a line's `cd`s may leave a command in before its relative paths count as unresolved. */
const maxDirectories = 16
/** The most paths one glob may match before it counts as unresolved. */
const maxGlobMatches = 10_000

/** The directory a command may run in; `undefined` stands for one only known at run time. */
type Directory = string | undefined

const shortCluster = (args: ReadonlyArray<string>, letters: RegExp, long: RegExp): boolean =>
  args.some((arg) => (arg.startsWith("--") ? long.test(arg) : arg.startsWith("-") && letters.test(arg.slice(1))))

/** True when the command reads the contents of a directory it names (not only its names). */
const readsContents = (name: string, args: ReadonlyArray<string>, known: boolean): boolean => {
  if (!known) return true
  switch (name) {
    case "grep":
    case "egrep":
    case "fgrep":
      return shortCluster(args, /[rRd]/, /^--(?:r|de|di)/) || args.includes("recurse")
    case "cp":
      return shortCluster(args, /[rRa]/, /^--(?:r|a)/)
    case "rg":
    case "git":
      return true
    default:
      return false
  }
}

interface Collected {
  readonly paths: Array<BashPath>
  readonly unresolved: Array<UnresolvedPath>
}

/** Resolves the paths of a line's steps. */
export const resolve = (
  steps: ReadonlyArray<PathStep>,
  options: Options
): Effect.Effect<BashPaths, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const resolver = yield* PathResolver.make
    const fs = yield* FileSystem.FileSystem
    const out: Collected = { paths: [], unresolved: [] }
    const seen = new Set<string>()
    const env = (cwd: Directory): Expansion.Environment => ({ home: options.home, cwd, user: options.user })

    /** Expanded absolute words waiting for the file system (globs, symlinks), in order. */
    const pending: Array<
      readonly [Expansion.Template, Access, boolean, Follows | undefined, boolean, boolean, Extra | undefined]
    > = []
    /** Set once the line may have turned on `dotglob` (`shopt -s dotglob`, `GLOBIGNORE=…`): globs then match dot names. */
    let dotglob = false
    /** Set once the line may have turned on `globstar`: an unquoted `**` then walks whole trees, which is not followed. */
    let globstar = false
    /** Trees a link-following reader walks, with what is unknown about them unless they hold no link. */
    const linkFreeCandidates: Array<readonly [string, Collected["unresolved"][number]]> = []

    /** Adds the path(s) one template names, relative to each directory it may be in. */
    const addTemplate: AddTemplate = (template, dirs, access, recursive, follows, tracked = false, extra) => {
      const guess = extra?.guessed === true ? { guessed: true } : {}
      const words = Expansion.expandBraces(template)
      if (words === undefined) {
        out.unresolved.push({
          given: Expansion.display(template),
          access,
          reason: "too many brace expansions",
          ...guess
        })
        return
      }
      for (const word of words) {
        for (const dir of dirs) {
          const expanded = Expansion.expandWord(word, env(dir))
          if (expanded._tag === "Unresolved") {
            out.unresolved.push({ given: Expansion.display(word), access, reason: expanded.reason, ...guess })
            continue
          }
          const text = Expansion.display(expanded.template)
          if (
            globstar &&
            expanded.template.some((piece) => piece._tag === "Text" && !piece.quoted && piece.text.includes("**"))
          ) {
            out.unresolved.push({
              given: text,
              access,
              reason: "`**` walks whole trees once globstar is set",
              ...guess
            })
            continue
          }
          if (!text.startsWith("/") && dir === undefined) {
            out.unresolved.push({ given: text, access, reason: "the directory it is relative to is unknown", ...guess })
            continue
          }
          const absolute: Expansion.Template = text.startsWith("/")
            ? expanded.template
            : [{ _tag: "Text", text: `${dir}/`, quoted: true }, ...expanded.template]
          // The directory a repository-only command runs in, from the one it is started in.
          const { repositoryOnly, ...rest } = extra ?? {}
          const runs =
            repositoryOnly === undefined || dir === undefined
              ? {}
              : { repositoryOnly: Path.resolve(dir, repositoryOnly) }
          pending.push([absolute, access, recursive, follows, tracked, dotglob, { ...rest, ...runs, step: stepIndex }])
        }
      }
    }

    const addPath = (
      raw: string,
      access: Access,
      recursive: boolean,
      glob?: ReadonlyArray<Segment>,
      follows?: Follows,
      tracked = false,
      extra?: Extra
    ) =>
      Effect.gen(function* () {
        const skips = extra?.skips
        const key = `${extra?.step ?? ""}:${access}${recursive ? "+" : ""}${tracked ? "t" : ""}${extra?.implicit === true ? "i" : ""}${extra?.guessed === true ? "g" : ""}${extra?.redirect === true ? "r" : ""}${extra?.listed === undefined ? "" : "l"}${extra?.keepsLinks === undefined ? "" : `k${extra.keepsLinks.config ?? ""}`}${extra?.repositoryOnly === undefined ? "" : `o${extra.repositoryOnly}`}${follows === undefined ? "" : `>${follows.access}`}\0${raw}`
        if (glob === undefined && seen.has(key)) return
        seen.add(key)
        const normalized = Path.resolve(raw)
        const first = yield* resolver.resolve(raw)
        const forms = new Set([first, normalized === raw ? first : yield* resolver.resolve(normalized)])
        if ([raw, normalized, ...forms].some(PathResolver.isProcessPath)) {
          out.unresolved.push({ given: raw, access, reason: "a /proc/<pid> path depends on the process that opens it" })
          return
        }
        out.paths.push({
          given: raw,
          access,
          forms: [...forms],
          recursive,
          glob,
          ...(tracked ? { tracked } : {}),
          ...(skips === undefined ? {} : { skips }),
          ...(extra?.implicit === true ? { implicit: true } : {}),
          ...(extra?.guessed === true ? { guessed: true } : {}),
          ...(extra?.redirect === true ? { redirect: true } : {}),
          ...(extra?.listed === undefined ? {} : { listed: extra.listed }),
          ...(extra?.step === undefined ? {} : { step: extra.step }),
          ...(extra?.keepsLinks === undefined ? {} : { keepsLinks: extra.keepsLinks }),
          ...(extra?.repositoryOnly === undefined ? {} : { repositoryOnly: extra.repositoryOnly })
        })
        // A tree walked through its links: what lies under it may be anywhere. Only a path known to be a regular
        // file is exempt (one that does not exist yet may be a directory by the time the command runs).
        if (follows !== undefined) {
          const info = yield* Effect.option(fs.stat(first))
          if (info._tag === "None" || info.value.type !== "File") {
            const unknown = {
              given: raw,
              access: follows.access,
              reason: `${follows.command} follows the symbolic links under it, so what it ${follows.access === "read" ? "reads" : "changes"} there is only known at run time`
            }
            // A tree read through its links that holds no link now reads only itself, unless the line writes first.
            if (follows.access === "read" && info._tag === "Some" && info.value.type === "Directory") {
              linkFreeCandidates.push([first, unknown])
            } else out.unresolved.push(unknown)
          }
        }
      })

    const addExpanded = (
      absolute: Expansion.Template,
      access: Access,
      recursive: boolean,
      follows: Follows | undefined,
      tracked: boolean,
      dots: boolean,
      extra: Extra | undefined
    ) =>
      Effect.gen(function* () {
        const raw = Expansion.display(absolute)
        if (!Expansion.hasGlob(absolute)) {
          return yield* addPath(raw, access, recursive, undefined, follows, tracked, extra)
        }
        const segments = lexical(wordSegments(absolute, "", dots))
        const matches = yield* expandGlob(segments, dots)
        if (matches === undefined) {
          out.unresolved.push({ given: raw, access, reason: "the glob matches too many paths" })
          return
        }
        // No match: bash passes the word as written.
        const found = matches.length === 0 ? [raw] : matches
        // A name starting with `-` becomes an option of the command, which may read a file's contents.
        const as: Access =
          access === "names" && found.some((match) => Path.basename(match).startsWith("-")) ? "read" : access
        // The rules' anchors have their symlinks resolved: so has the literal start of the glob.
        const literal = segments.findIndex((s) => s._tag !== "Name")
        const prefix = segments.slice(0, literal).map((s) => (s._tag === "Name" ? s.name : ""))
        const glob = [...pathSegments(yield* resolver.resolve(`/${prefix.join("/")}`)), ...segments.slice(literal)]
        for (const match of found) yield* addPath(match, as, recursive, glob, follows, tracked, extra)
      })

    const expandGlob = (segments: ReadonlyArray<Segment>, dots: boolean) =>
      Effect.gen(function* () {
        let frontier = ["/"]
        for (const segment of segments) {
          if (segment._tag !== "Pattern") {
            frontier = frontier.map((f) => join(f, segment._tag === "Name" ? segment.name : "*"))
            continue
          }
          const next: Array<string> = []
          for (const dir of frontier) {
            const names = yield* resolver.list(yield* resolver.resolve(dir))
            for (const name of names ?? []) {
              if (
                name.startsWith(".") &&
                !segment.source.startsWith("\\.") &&
                !(dots && name !== "." && name !== "..")
              ) {
                continue
              }
              if (segment.regex.test(name)) next.push(join(dir, name))
            }
            if (next.length > maxGlobMatches) return undefined
          }
          frontier = next
        }
        return frontier
      })

    let dirs: Array<Directory> = [options.cwd]
    let stepIndex = -1
    for (const step of steps) {
      stepIndex++
      if (step._tag === "Redirect") {
        const access = step.operator.startsWith("<") ? "read" : "write"
        addTemplate(step.target, dirs, access, false, undefined, false, { redirect: true })
        if (step.operator === "<>") addTemplate(step.target, dirs, "write", false, undefined, false, { redirect: true })
        continue
      }
      if (step.words.some((word) => /dotglob|GLOBIGNORE/.test(Expansion.display(word)))) dotglob = true
      if (step.words.some((word) => /globstar/.test(Expansion.display(word)))) globstar = true
      const commandDirs = commandDirectories(step, dirs)
      addCommand(step.words, commandDirs, addTemplate, env(commandDirs[0]), step.input, step.backupSuffixAssigned)
      const head = Expansion.plainText(step.words[0] ?? [])
      if (head === "cd" || head === "pushd") dirs = changeDirectory(step.words.slice(1), commandDirs, dirs)
    }
    for (const [absolute, access, recursive, follows, tracked, dots, extra] of pending) {
      yield* addExpanded(absolute, access, recursive, follows, tracked, dots, extra)
    }
    const lineWrites = out.paths.some((p) => p.access === "write") || out.unresolved.some((u) => u.access === "write")
    const budget = { left: maxLinkWalk }
    for (const [tree, unknown] of linkFreeCandidates) {
      if (lineWrites || !holdsNoLink(tree, budget)) out.unresolved.push(unknown)
    }
    return {
      ...out,
      afterChange: TreeChanges.afterChanges(steps, out.paths),
      readAfterChange: TreeChanges.readsAfterChanges(steps, out.paths)
    }

    function commandDirectories(step: Extract<PathStep, { _tag: "Command" }>, current: ReadonlyArray<Directory>) {
      if (step.chdirUnknown !== undefined) return [undefined]
      if (step.chdir === undefined) return [...current]
      addTemplate(step.chdir, current, "read", false)
      return targets(step.chdir, current)
    }

    function changeDirectory(args: ReadonlyArray<Expansion.Template>, from: Array<Directory>, all: Array<Directory>) {
      const operands = args.filter((a) => {
        const text = Expansion.plainText(a)
        return text === undefined || !/^-[LPe@]+$/.test(text)
      })
      const target: Expansion.Template = operands[0] ?? [{ _tag: "Text", text: options.home, quoted: true }]
      const next = [...new Set([...all, ...targets(target, from)])]
      return next.length > maxDirectories ? [undefined] : next
    }

    /** The directories a `cd`/`env -C` operand leads to from each directory (unknown when it is not resolvable). */
    function targets(template: Expansion.Template, from: ReadonlyArray<Directory>): Array<Directory> {
      const words = Expansion.expandBraces(template)
      if (words === undefined || words.length !== 1 || Expansion.hasGlob(words[0])) return [undefined]
      return from.map((dir) => {
        const expanded = Expansion.expandWord(words[0], env(dir))
        if (expanded._tag === "Unresolved") return undefined
        const text = Expansion.display(expanded.template)
        if (text === "-") return undefined
        if (text.startsWith("/")) return Path.resolve(text)
        return dir === undefined ? undefined : Path.resolve(dir, text)
      })
    }
  })

/** The most entries looked at, over all trees of a line, when checking that a tree holds no symbolic link. */
const maxLinkWalk = 20_000

/** True when the tree under `root` holds no symbolic link (false when unreadable or too large to tell). */
const holdsNoLink = (root: string, budget: { left: number }): boolean => {
  const queue = [root]
  while (queue.length > 0) {
    const dir = queue.shift() as string
    let entries: Array<Fs.Dirent>
    try {
      entries = Fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return false
    }
    budget.left -= entries.length
    if (budget.left < 0) return false
    for (const entry of entries) {
      if (entry.isSymbolicLink()) return false
      if (entry.isDirectory()) queue.push(Path.join(dir, entry.name))
    }
  }
  return true
}

/** `..` applied lexically to glob segments (the glob is matched against the names it leads to). */
const lexical = (segments: ReadonlyArray<Segment>): ReadonlyArray<Segment> => {
  const out: Array<Segment> = []
  for (const segment of segments) {
    if (segment._tag === "Name" && segment.name === "..") out.pop()
    else out.push(segment)
  }
  return out
}

const join = (dir: string, name: string): string => (dir === "/" ? `/${name}` : `${dir}/${name}`)

/** A command that follows the links inside the trees it walks (see `LinkFollowing`), and what it does through them. */
interface Follows {
  readonly command: string
  readonly access: "read" | "write"
}

/** What else is known of a path besides its access: a searcher's skips, an implicit file, a guessed operand. */
interface Extra {
  readonly skips?: CommandEffect.Skips | undefined
  readonly implicit?: boolean | undefined
  readonly guessed?: boolean | undefined
  readonly redirect?: boolean | undefined
  readonly listed?: Listed | undefined
  readonly step?: number | undefined
  readonly keepsLinks?: LinkFollowing.KeptLinks | undefined
  /** Relative to the command's directory until `addTemplate` resolves it against each directory. */
  readonly repositoryOnly?: string | undefined
}

type AddTemplate = (
  template: Expansion.Template,
  dirs: ReadonlyArray<Directory>,
  access: Access,
  recursive: boolean,
  follows?: Follows,
  tracked?: boolean,
  extra?: Extra
) => void

/** The words of one command after brace expansion, as the command tables see them. */
const argWords = (templates: ReadonlyArray<Expansion.Template>, env: Expansion.Environment) => {
  const words: Array<{ readonly template: Expansion.Template; readonly arg: CommandEffect.ArgWord }> = []
  for (const template of templates) {
    const expanded = Expansion.expandBraces(template) ?? [template]
    for (const word of expanded) {
      const resolved = Expansion.expandWord(word, env)
      const text = Expansion.plainText(resolved._tag === "Resolved" ? resolved.template : word)
      words.push({
        template: word,
        arg: {
          value: text ?? Expansion.display(word),
          literal: resolved._tag === "Resolved" && text !== undefined,
          glob: Expansion.hasGlob(word)
        }
      })
    }
  }
  return words
}

/** Adds what one simple command reads and writes, as its table says (every operand both ways when unknown). */
const addCommand = (
  templates: ReadonlyArray<Expansion.Template>,
  dirs: ReadonlyArray<Directory>,
  add: AddTemplate,
  env: Expansion.Environment,
  input?: Extract<PathStep, { _tag: "Command" }>["input"],
  backupSuffixAssigned?: boolean
): void => {
  if (templates.length === 0) return
  // `command cp …` and `builtin cp …` run their operand: the paths are the operand's (`command -v NAME` names none)
  const head = Expansion.plainText(templates[0])
  if (head === "command" || head === "builtin") {
    let at = 1
    while (head === "command" && Expansion.plainText(templates[at] ?? []) === "-p") at++
    const next = Expansion.plainText(templates[at] ?? [])
    if (next !== "-v" && next !== "-V") {
      addCommand(templates.slice(at), dirs, add, env, undefined, backupSuffixAssigned)
      return
    }
  }
  const words = argWords(templates, env)
  const effect = CommandEffect.describeWords(words.map((w) => w.arg))
  const name = words[0].arg.value.slice(words[0].arg.value.lastIndexOf("/") + 1)
  const args = words.slice(1).map((w) => w.arg.value)
  const recursive = readsContents(name, args, effect.known)
  const through = LinkFollowing.followsLinks(
    name,
    words.slice(1).map((w) => w.arg)
  )
  const follows: Follows | undefined = through === undefined ? undefined : { command: name, access: through }
  const kept =
    effect.known && recursive
      ? LinkFollowing.keepsLinks(
          name,
          words.slice(1).map((w) => w.arg)
        )
      : undefined
  const walk = {
    ...(kept === undefined ? {} : { keepsLinks: kept }),
    ...(effect.repositoryOnly === undefined ? {} : { repositoryOnly: effect.repositoryOnly })
  }
  // Operands and implicit reads of a command that reads only names, or only what git stores; an option's value
  // naming a file is read for its contents.
  const readAccess = (o?: CommandEffect.PathOperand): Access =>
    effect.known && effect.names === true && o?.option !== true ? "names" : "read"
  const tracked = (o?: CommandEffect.PathOperand): boolean =>
    effect.known && effect.tracked === true && o?.option !== true
  const operand = (o: CommandEffect.PathOperand, access: Access, recursiveRead: boolean, via?: Follows) => {
    const word = words[o.index]
    if (word === undefined) return
    if (
      input !== undefined &&
      isInput(word.template) &&
      access !== "write" &&
      listedInput(input, dirs, access, add, env)
    )
      return
    const prefix = word.arg.value.slice(0, word.arg.value.length - o.value.length)
    const template = Expansion.dropPrefix(word.template, prefix) ?? [{ _tag: "Opaque", text: word.arg.value }]
    add(template, dirs, access, recursiveRead, via, access === "read" && tracked(o), {
      skips: effect.skips,
      guessed: !effect.known,
      ...(access === "write" ? {} : walk)
    })
  }
  // The trees a link-following command walks are its sources (reads); `chown -RL` changes what its operands hold.
  const walked = (access: "read" | "write") => (follows?.access === "write" || access === "read" ? follows : undefined)
  // Paths named in a file or the input (`--files0-from=F`, `tar -T F`): known only when the command runs.
  const table = CommandTables.lookup(name)
  const longOptions = table !== undefined && "options" in table ? compile(table).parser.long : {}
  const list = PathLists.pathListOption(
    name,
    words.slice(1).map((w) => w.arg),
    (option) => Object.hasOwn(longOptions ?? {}, option.slice(2))
  )
  if (list !== undefined) {
    const listed: Expansion.Template = [{ _tag: "Opaque", text: `the files ${name} ${list} names` }]
    add(listed, dirs, "read", true)
    if (!effect.readOnly) add(listed, dirs, "write", false)
  }
  for (const o of effect.reads) operand(o, readAccess(o), recursive, walked("read"))
  for (const o of effect.writes) operand(o, "write", false, follows?.access === "write" ? follows : undefined)
  addBackups(name, words, effect, (template) => add(template, dirs, "write", false), backupSuffixAssigned === true)
  for (const implicit of effect.implicitReads ?? [])
    add([{ _tag: "Text", text: implicit, quoted: true }], dirs, readAccess(), true, walked("read"), tracked(), {
      skips: effect.skips,
      ...walk
    })
  for (const file of effect.implicitWrites ?? []) {
    const text = file.startsWith("~/") ? `${env.home}/${file.slice(2)}` : file
    add([{ _tag: "Text", text, quoted: true }], dirs, "write", false)
  }
  for (const file of effect.implicitFiles ?? []) {
    const text = file.startsWith("~/") ? `${env.home}/${file.slice(2)}` : file
    add([{ _tag: "Text", text, quoted: true }], dirs, "read", false, undefined, false, { implicit: true })
  }
  if (!effect.known) addOptionValues(words, dirs, add)
}

/** Commands that keep a backup of each file they replace (`-b`, `--backup`, `-S SUFFIX`, `--suffix=SUFFIX`). */
const backupCommands = new Set(["cp", "mv", "ln", "install", "ginstall", "gcp", "gmv", "gln"])
/** Their short options that take a value (the rest of a cluster, or the next word). */
const backupValued = new Set(["t", "m", "o", "g"])

/**
 * The backups `cp -b`, `mv --backup`, `ln -S SUFFIX`, `install -b` make: each replaced file is renamed to its name
 * plus the suffix (`cp -b -S rc a .bash` turns the old `.bash` into `.bashrc`), so that name is written too: for a
 * destination file, and for each source's name inside a destination that is a directory. The suffix is `-S`'s
 * value, or `~`, or whatever `SIMPLE_BACKUP_SUFFIX` holds when the line assigns it (only known at run time).
 */
const addBackups = (
  name: string,
  words: ReadonlyArray<{ readonly template: Expansion.Template; readonly arg: CommandEffect.ArgWord }>,
  effect: CommandEffect.CommandEffect,
  write: (template: Expansion.Template) => void,
  suffixAssigned: boolean
): void => {
  if (!backupCommands.has(name)) return
  let on = false
  let suffix: Expansion.Template | undefined
  for (let i = 1; i < words.length; i++) {
    const value = words[i].arg.value
    if (value === "--") break
    if (value.startsWith("--")) {
      const eq = value.indexOf("=")
      const given = value.slice(2, eq === -1 ? undefined : eq)
      if (given.length >= 2 && "backup".startsWith(given)) on = !/^=(none|off)$/.test(value.slice(eq === -1 ? 0 : eq))
      else if (given.length >= 2 && "suffix".startsWith(given)) {
        on = true
        suffix = eq === -1 ? words[++i]?.template : Expansion.dropPrefix(words[i].template, value.slice(0, eq + 1))
      } else if (given.length >= 2 && "target-directory".startsWith(given) && eq === -1) i++
      continue
    }
    if (!value.startsWith("-") || value.length < 2) continue
    for (let j = 1; j < value.length; j++) {
      const letter = value[j]
      if (letter === "b") on = true
      else if (letter === "S") {
        on = true
        const rest = value.slice(j + 1)
        suffix =
          rest !== ""
            ? (Expansion.dropPrefix(words[i].template, value.slice(0, j + 1)) ?? [{ _tag: "Opaque", text: rest }])
            : words[++i]?.template
        break
      } else if (backupValued.has(letter)) {
        if (j === value.length - 1) i++
        break
      }
    }
  }
  if (!on) return
  const tail: Expansion.Template =
    suffix ??
    (suffixAssigned ? [{ _tag: "Opaque", text: "$SIMPLE_BACKUP_SUFFIX" }] : [{ _tag: "Text", text: "~", quoted: true }])
  const template = (o: CommandEffect.PathOperand) => words[o.index]?.template
  const sources = effect.reads.flatMap((o) => {
    const text = Expansion.plainText(template(o) ?? [])
    return text === undefined
      ? [[{ _tag: "Opaque", text: o.value }] as Expansion.Template]
      : [
          [
            {
              _tag: "Text",
              text: text.replace(/\/+$/, "").slice(text.replace(/\/+$/, "").lastIndexOf("/") + 1),
              quoted: true
            }
          ] as Expansion.Template
        ]
  })
  for (const o of effect.writes) {
    const destination = template(o)
    if (destination === undefined) continue
    write([...destination, ...tail])
    for (const source of sources) write([...destination, { _tag: "Text", text: "/", quoted: true }, ...source, ...tail])
  }
}

/**
 * The words `xargs` reads from a lister's output (see ListedNames.ts), as the paths under the lister's starting
 * points, read with their contents (and only what git tracks when the lister lists that). False when the input is
 * not a lister's: the words are then unknown.
 */
const listedInput = (
  input: NonNullable<Extract<PathStep, { _tag: "Command" }>["input"]>,
  dirs: ReadonlyArray<Directory>,
  access: Access,
  add: AddTemplate,
  env: Expansion.Environment
): boolean => {
  const words = argWords(input.producer, env)
  const listing = ListedNames.listing(words.map((w) => w.arg))
  if (listing === undefined) return false
  const listed: Listed = { split: input.split, fromTop: listing.fromTop }
  const extra = { listed, ...(listing.skips === undefined ? {} : { skips: listing.skips }) }
  const tracked = access === "read" && listing.tracked
  if (listing.roots.length === 0)
    add([{ _tag: "Text", text: ".", quoted: true }], dirs, access, true, undefined, tracked, extra)
  for (const root of listing.roots) {
    const word = words[root.index]
    if (word === undefined) return false
    add(word.template, dirs, access, true, undefined, tracked, extra)
  }
  return true
}

/**
 * For a command no table describes, the values attached to its options (`--dir=/etc`, `-C/etc`) may be paths too:
 * they are checked as reads and writes like its operands.
 */
const addOptionValues = (
  words: ReadonlyArray<{ readonly template: Expansion.Template; readonly arg: CommandEffect.ArgWord }>,
  dirs: ReadonlyArray<Directory>,
  add: AddTemplate
): void => {
  for (const word of words.slice(1)) {
    const value = word.arg.value
    const prefixes = new Set<string>()
    if (value.startsWith("-") && value !== "-" && value !== "--") {
      const prefix = value.startsWith("--") ? value.slice(0, value.indexOf("=") + 1) : value.slice(0, 2)
      if (prefix !== "") prefixes.add(prefix)
    }
    // `KEY=PATH` operands (`dd if=FILE of=FILE`), and `@FILE`, `<FILE`, `NAME@FILE` values (`curl -d @FILE`,
    // `-F f=<FILE`, `--data-urlencode name@FILE`): whatever follows `=`, `@` or `<` may be a path too.
    const equals = value.indexOf("=")
    if (equals >= 0) prefixes.add(value.slice(0, equals + 1))
    for (const prefix of [...prefixes, ""]) {
      const rest = value.slice(prefix.length)
      if (rest.startsWith("@") || rest.startsWith("<")) prefixes.add(`${prefix}${rest[0]}`)
    }
    const at = value.indexOf("@")
    if (at >= 0) prefixes.add(value.slice(0, at + 1))
    for (const prefix of prefixes) {
      if (prefix.length === value.length) continue
      const template = Expansion.dropPrefix(word.template, prefix)
      if (template === undefined) continue
      add(template, dirs, "read", true, undefined, false, { guessed: true })
      add(template, dirs, "write", false, undefined, false, { guessed: true })
    }
  }
}
