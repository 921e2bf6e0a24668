/**
 * Code that Bash deny and ask rules cannot see: a command form (see `PermissionRule.CommandForm`) that runs code
 * written in another language on the command line (`python3 -c`, `perl -e`, `awk 'BEGIN{system(…)}'`,
 * `sed 'e …'`, `gdb -ex`, `vim -c`), reads it from stdin (`python3 -`, `at`), or sets a variable naming a program
 * another command runs (`PAGER=…`, `GIT_SSH_COMMAND=…`). `rm` inside `os.system("rm -rf x")` is not a shell word, so
 * no rule can match it; the permission pipeline asks for such a command whenever Bash deny or ask rules exist.
 * Each finding says which option carries the code.
 */
import type { CommandForm } from "../PermissionRule.js"
import { scriptProblem } from "./commands/SedCommand.js"
import { type Interpreter, interpreterFor } from "./Interpreters.js"

const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

const unknownWord = (name: string) => `\`${name}\` with a word known only when the shell runs (it may be code)`

const carries = (name: string, option: string, language: string) =>
  `\`${name} ${option}\` runs ${language} code given on the command line`

/** Code given to an interpreter: hidden unless the interpreter says this code is plain text handling. */
const codeFinding = (it: Interpreter, name: string, option: string, code: string | null | undefined) => {
  if (code === null || code === undefined) return unknownWord(name)
  if (it.risky === undefined) return carries(name, option, it.language)
  const risky = it.risky(code)
  return risky === undefined ? undefined : `\`${name} ${option}\` runs ${it.language} code that uses ${risky}`
}

interface Scan {
  known: boolean
  info: boolean
  fileProgram: boolean
}

/** Reads one short-option cluster; a finding, "stop" (a module or file runs), or "next" with how many words used. */
const scanCluster = (
  it: Interpreter,
  name: string,
  args: ReadonlyArray<string | null>,
  at: number,
  scan: Scan
): string | { readonly skip: number } | "stop" => {
  const word = args[at] as string
  const letters = Array.from(word.slice(1))
  for (let j = 0; j < letters.length; j++) {
    const letter = letters[j]
    const rest = letters.slice(j + 1).join("")
    const value = rest !== "" ? rest : args[at + 1]
    if (it.codeLetters?.includes(letter) === true) {
      return codeFinding(it, name, `-${letter}`, value) ?? { skip: rest !== "" ? 1 : 2 }
    }
    if (it.stdinLetters?.includes(letter) === true) {
      return `\`${name} -${letter}\` reads ${it.language} code from stdin (or loads it) as it runs`
    }
    const attached = it.attachedValues?.[letter]
    if (attached !== undefined) {
      j += attached.exec(rest)?.[0].length ?? 0
      continue
    }
    if (it.runsNamed?.includes(`-${letter}`) === true) return "stop"
    if (it.programOperand?.fileOptions.includes(`-${letter}`) === true) scan.fileProgram = true
    if (it.valueLetters?.includes(letter) === true) return { skip: rest !== "" ? 1 : 2 }
    if (it.flagLetters?.includes(letter) !== true) scan.known = false
  }
  return { skip: 1 }
}

/** Why an interpreter's words carry code the rules cannot see, or undefined (a script file, `--version`). */
const interpreterFinding = (it: Interpreter, name: string, args: ReadonlyArray<string | null>) => {
  const scan: Scan = { known: true, info: false, fileProgram: false }
  for (let at = 0; at < args.length; at++) {
    const word = args[at]
    if (word === null) return unknownWord(name)
    if (at === 0 && it.evalSubcommands?.includes(word) === true) return carries(name, word, it.language)
    if (word === "--" || word === "-") {
      const script = word === "--" ? args[at + 1] : "-"
      if (script === null) return unknownWord(name)
      if (it.programOperand !== undefined && !scan.fileProgram && script !== undefined) {
        return codeFinding(it, name, "program", script)
      }
      if (script === undefined || script === "-") break
      return undefined
    }
    if (it.info?.includes(word) === true) {
      scan.info = true
      continue
    }
    const [head, attached] = word.startsWith("-") && word.includes("=") ? word.split(/=(.*)/s) : [word, undefined]
    if (it.codeWords?.includes(head) === true) {
      const found = codeFinding(it, name, head, attached ?? args[at + 1])
      if (found !== undefined) return found
      if (attached === undefined) at++
      continue
    }
    if (it.programOperand?.fileOptions.includes(head) === true) scan.fileProgram = true
    if (it.valueWords?.includes(head) === true || it.programOperand?.fileOptions.includes(head) === true) {
      if (attached === undefined) at++
      continue
    }
    if (it.runsNamed?.includes(head) === true) return undefined
    if (word.startsWith("--")) {
      scan.known = false
      continue
    }
    if (word.startsWith("-") && word.length > 1) {
      const step = scanCluster(it, name, args, at, scan)
      if (step === "stop") return undefined
      if (typeof step === "string") return step
      at += step.skip - 1
      continue
    }
    // The first operand: awk's program text, or a script file whose words are its own.
    if (it.programOperand !== undefined && !scan.fileProgram) return codeFinding(it, name, "program", word)
    if (scan.known) return undefined
  }
  if (it.programOperand !== undefined || scan.info) return undefined
  return it.stdin === true ? `\`${name}\` reads ${it.language} code from stdin` : undefined
}

/**
 * A long option of GNU sed as getopt reads it: the full name or any prefix of it (`--expr`, `--e`, `--fi`). `--f` is
 * ambiguous to sed (`--file`, `--follow-symlinks`) and taken as `--file` here; `--s` and `--sa` as not `--sandbox`.
 */
const sedLong = (word: string): "expression" | "file" | "line-length" | "sandbox" | undefined => {
  const head = word.split("=")[0]
  if (head.length < 3) return undefined
  if ("--expression".startsWith(head)) return "expression"
  if ("--file".startsWith(head)) return "file"
  if ("--line-length".startsWith(head)) return "line-length"
  return head.length >= 5 && "--sandbox".startsWith(head) ? "sandbox" : undefined
}

/**
 * `sed`: its script may run commands (`e`, `s///e`), read files no word names (`r`, `R`) or write them (`w`, `W`,
 * `s///w`) unless `--sandbox`; a script read from a file (`-f`, `--file`) is not seen at all.
 */
const sedFinding = (args: ReadonlyArray<string | null>): string | undefined => {
  const scripts: Array<string | null> = []
  let file = false
  let operand: string | null | undefined
  for (let at = 0; at < args.length; at++) {
    const word = args[at]
    if (word === null) return unknownWord("sed")
    if (word === "--") {
      operand ??= args[at + 1]
      break
    }
    if (word.startsWith("--")) {
      const long = sedLong(word)
      if (long === "sandbox") return undefined
      const value = word.includes("=") ? word.slice(word.indexOf("=") + 1) : long === undefined ? "" : args[++at]
      if (long === "file") file = true
      else if (long === "expression") scripts.push(value ?? null)
    } else if (word.startsWith("-") && word.length > 1) {
      // a cluster: `-i` takes the rest as its suffix, `-l` a number, `-e`/`-f` the rest or the next word
      for (let j = 1; j < word.length; j++) {
        const letter = word[j]
        if (letter === "i") break
        if (letter === "l") {
          if (j === word.length - 1) at++
          break
        }
        if (letter === "e" || letter === "f") {
          const rest = word.slice(j + 1)
          const value = rest !== "" ? rest : args[++at]
          if (letter === "f") file = true
          else scripts.push(value ?? null)
          break
        }
      }
    } else if (operand === undefined) {
      operand = word
    }
  }
  if (file) return "`sed -f` runs a script read from a file, which may run commands or read and write files"
  if (scripts.length === 0) scripts.push(operand ?? "")
  if (scripts.includes(null)) return unknownWord("sed")
  const script = scripts.join("\n")
  return /[erRwW]/.test(script) && scriptProblem(script) !== undefined
    ? "`sed` with a script that may run commands or read or write files (`e`, `r`, `R`, `w`, `W`, `s///e`, `s///w`)"
    : undefined
}

/** Programs whose option carries code in their own language or a command they run later. */
const codeOptions: Readonly<Record<string, { readonly options: ReadonlyArray<string>; readonly language: string }>> = {
  gdb: {
    options: ["-ex", "--ex", "-iex", "--iex", "-eval-command", "--eval-command", "-init-eval-command"],
    language: "gdb"
  },
  lldb: {
    options: ["-o", "-O", "-k", "-K", "--one-line", "--one-line-before-file", "--source-quietly"],
    language: "lldb"
  },
  vim: { options: ["-c", "--cmd", "+"], language: "Vim" },
  emacs: { options: ["--eval", "-eval", "--execute", "-execute", "-f", "--funcall"], language: "Emacs Lisp" },
  make: { options: ["--eval", "-E"], language: "make" },
  nc: { options: ["-e", "-c", "--exec", "--sh-exec", "--lua-exec"], language: "a program it starts" },
  nodemon: { options: ["-x", "--exec"], language: "a command it starts" },
  // options whose value is a program the command runs (on each file searched, as a compressor, as a password prompt)
  rg: { options: ["--pre", "--hostname-bin"], language: "a program it runs" },
  sort: { options: ["--compress-program"], language: "a program it runs" },
  wget: { options: ["--use-askpass"], language: "a program it runs" },
  aria2c: {
    options: [
      "--on-download-complete",
      "--on-download-start",
      "--on-download-error",
      "--on-download-pause",
      "--on-download-stop",
      "--on-bt-download-complete"
    ],
    language: "a program it runs"
  },
  "ssh-keygen": { options: ["-D"], language: "a shared library it loads" },
  "ssh-add": { options: ["-s", "-S"], language: "a shared library it loads" },
  sftp: { options: ["-b"], language: "sftp batch commands (whose `!` runs a shell command)" },
  xterm: { options: ["-e"], language: "a command it starts" }
}

const aliases: Readonly<Record<string, string>> = {
  vi: "vim",
  nvim: "vim",
  ex: "vim",
  view: "vim",
  vimdiff: "vim",
  gvim: "vim",
  gmake: "make",
  ncat: "nc",
  netcat: "nc"
}

/** Words with a bang or pipe command inside a program's own language (`less +!cmd`, sqlite3's `.shell`). */
const embedded: Readonly<Record<string, RegExp>> = {
  less: /^\+.*[!|]/,
  more: /^\+.*!/,
  sqlite3: /\.(shell|system|once|output|load|import)\b|load_extension|\bedit\s*\(/i,
  psql: /\\!|\\o\s*\||\bprogram\b/i,
  mysql: /\bsystem\b|\\!/i,
  socat: /^(exec|system)[:,]/i,
  tmux: /^(new-session|new|new-window|neww|split-window|splitw|run-shell|run|send-keys|send|respawn-pane|respawnp|respawn-window|respawnw|if-shell|if|pipe-pane|pipep|display-popup|popup|source-file|source)$/
}

/** Programs that run a command read from stdin or from their operands whatever their options. */
const runsInput: Readonly<Record<string, (args: ReadonlyArray<string | null>) => string | undefined>> = {
  at: (args) =>
    args.some((w) => w === "-f" || w === "-l" || w === "-r" || w === "-d" || w === "-c")
      ? undefined
      : "`at` reads the commands it schedules from stdin",
  batch: (args) => (args.includes("-f") ? undefined : "`batch` reads the commands it schedules from stdin"),
  crontab: (args) =>
    args.some((w) => w === "-l" || w === "-r") ? undefined : "`crontab` installs commands to run later",
  screen: (args) =>
    args.some((w) => w === null || !w.startsWith("-") || w === "-X")
      ? "`screen` runs the command given to it"
      : undefined,
  hyperfine: (args) =>
    args.some((w) => w === null || !w.startsWith("-")) ? "`hyperfine` runs the commands given to it" : undefined,
  concurrently: (args) =>
    args.some((w) => w === null || !w.startsWith("-")) ? "`concurrently` runs the commands given to it" : undefined,
  ed: () => "`ed` reads editing commands from stdin, and its `!` runs a shell command",
  ex: () => "`ex` reads editor commands from stdin, and its `!` runs a shell command",
  vim: (args) => (args.some((w) => w === null || /^-[eEsS]+$/.test(w)) ? vimScripted : undefined),
  vi: (args) => (args.some((w) => w === null || /^-[eEsS]+$/.test(w)) ? vimScripted : undefined),
  nvim: (args) => (args.some((w) => w === null || /^-[eEsS]+$/.test(w)) ? vimScripted : undefined),
  sqlite3: (args) => (onlyInfo(args) ? undefined : dbShell("sqlite3", "`.shell`")),
  duckdb: (args) => (onlyInfo(args) ? undefined : dbShell("duckdb", "`.shell`")),
  psql: (args) => (onlyInfo(args) ? undefined : dbShell("psql", "`\\!`")),
  mysql: (args) => (onlyInfo(args) ? undefined : dbShell("mysql", "`system`")),
  mariadb: (args) => (onlyInfo(args) ? undefined : dbShell("mariadb", "`system`"))
}

const vimScripted = "`vim -e`/`-s` runs editor commands read from stdin or a script, and `!` runs a shell command"
const onlyInfo = (args: ReadonlyArray<string | null>): boolean =>
  args.length > 0 && args.every((w) => w === "--version" || w === "-V" || w === "--help" || w === "-help")
const dbShell = (name: string, shellEscape: string): string =>
  `\`${name}\` reads commands from stdin or its operands, and ${shellEscape} runs a shell command`

/** A path that is this process's stdin (or another open descriptor), as a program file. */
const stdinPath = (word: string | null): boolean =>
  word === null || /^(\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(self|thread-self|\d+)\/fd\/\d+)$/.test(word)

/** `-f /dev/stdin`, `--file=-` and the like: an interpreter's (or sed's) program read from a descriptor. */
const programFromDescriptor = (name: string, args: ReadonlyArray<string | null>): string | undefined => {
  const at = args.findIndex(
    (w, i) =>
      stdinPath(w) ||
      ((args[i - 1] === "-f" || args[i - 1] === "--file") && w === "-") ||
      (w !== null && /^(-f|--file=)/.test(w) && stdinPath(w.replace(/^(-f|--file=)/, "")))
  )
  return at === -1 ? undefined : `\`${name}\` reads its program from ${args[at] ?? "a word known only at run time"}`
}

/** What a table of code options says, or else what the program reads from its input. */
const fromInput = (name: string, args: ReadonlyArray<string | null>): string | undefined =>
  Object.hasOwn(runsInput, name) ? runsInput[name](args) : undefined

/** Modules of Python's standard library whose arguments are code (`python3 -m timeit STMT`, `-m pdb -c CMD`). */
const codeModules = new Set(["timeit", "pdb", "code", "trace", "cProfile", "profile"])

/** Modules that run a Python prompt reading code from stdin (`python3 -m asyncio <<EOF`). */
const replModules = new Set(["asyncio", "idlelib", "IPython", "bpython", "ptpython", "ptipython", "jupyter_console"])

/** Words of other programs that carry code: a value or module that is code, an output piped to a command. */
const carriedCode = (name: string, args: ReadonlyArray<string | null>): string | undefined => {
  const piped = (w: string | null, previous: string | null | undefined) =>
    w === null || /^(?:-o|--output=)[|!]/.test(w) || ((previous === "-o" || previous === "--output") && /^[|!]/.test(w))
  if ((name === "strace" || name === "ltrace") && args.some((w, at) => piped(w, args[at - 1]))) {
    return `\`${name} -o |CMD\` pipes its output to a shell command`
  }
  const it = interpreterFor(name)
  if (it?.language === "Python") {
    const at = args.findIndex((w) => w === "-m" || (w !== null && /^-[A-Za-z]*m./.test(w) && !w.startsWith("--")))
    const module = at === -1 ? undefined : args[at] === "-m" ? args[at + 1] : args[at]?.replace(/^-[A-Za-z]*m/, "")
    if (module === null || (module !== undefined && codeModules.has(module))) {
      return `\`${name} -m ${module ?? "…"}\` runs Python code given on the command line`
    }
    if (module !== undefined && replModules.has(module)) {
      return `\`${name} -m ${module}\` reads Python code from stdin`
    }
  }
  if (
    it?.language === "JavaScript" &&
    args.some(
      (w) =>
        w === null || /^(--import|--require|--loader|--experimental-loader|-r)?=?\s*data:/.test(w) || /^data:/.test(w)
    )
  ) {
    return `\`${name}\` loads a module written on the command line (\`data:\`)`
  }
  if (name === "git") {
    const at = args.indexOf("send-email")
    const option =
      at === -1
        ? undefined
        : args
            .slice(at + 1)
            .find((w) => w === null || /^--(sendmail-cmd|to-cmd|cc-cmd|header-cmd|smtp-server)\b/.test(w))
    if (option !== undefined)
      return `\`git send-email ${option === null ? "…" : option.split("=")[0]}\` runs a command it is given`
  }
  return undefined
}

/** Why this command form runs code that Bash rules cannot see, or undefined. */
export const hiddenCode = (form: CommandForm): string | undefined => {
  const head = form[0]
  if (head === null || head === undefined) return undefined
  const name = basename(head)
  const args = form.slice(1)
  const carried = carriedCode(name, args)
  if (carried !== undefined) return carried
  const it = interpreterFor(name)
  if (it !== undefined) return interpreterFinding(it, name, args) ?? programFromDescriptor(name, args)
  if (name === "sed" || name === "gsed") return sedFinding(args) ?? programFromDescriptor(name, args)
  const table = codeOptions[aliases[name] ?? name]
  if (table !== undefined) {
    for (const word of args) {
      if (word === null) return unknownWord(name)
      const option = table.options.find(
        (o) =>
          word === o ||
          word.startsWith(`${o}=`) ||
          (o === "+" && /^\+\D/.test(word)) ||
          // GNU abbreviations (`make --ev=…` is `--eval`) and a value attached to a short option (`make -E'…'`)
          (o.startsWith("--") && /^--[a-z][a-z-]+/.test(word) && o.startsWith(word.split("=")[0])) ||
          (/^-[A-Za-z]$/.test(o) && new RegExp(`^-[A-Za-z]*${o[1]}`).test(word))
      )
      if (option !== undefined) return `\`${name} ${option}\` runs ${table.language} code given on the command line`
    }
    if (
      name === "make" &&
      args.some((w, at) => (w === "-f" || w === "--file") && (args[at + 1] === "-" || args[at + 1] === "/dev/stdin"))
    ) {
      return "`make -f -` reads its makefile from stdin"
    }
    return fromInput(name, args)
  }
  const pattern = embedded[name]
  if (pattern !== undefined) {
    const word = args.find((w) => w === null || pattern.test(w))
    return word === undefined
      ? fromInput(name, args)
      : word === null
        ? unknownWord(name)
        : `\`${name}\` runs a command given in \`${word}\``
  }
  return fromInput(name, args)
}

/** Variables naming a program or code that the command (or a program it runs) executes. */
const commandVariable = new RegExp(
  "^(?:" +
    [
      "PAGER",
      "GIT_PAGER",
      "MANPAGER",
      "SYSTEMD_PAGER",
      "EDITOR",
      "VISUAL",
      "GIT_EDITOR",
      "GIT_SEQUENCE_EDITOR",
      "SUDO_EDITOR",
      "GIT_SSH",
      "GIT_SSH_COMMAND",
      "GIT_ASKPASS",
      "SSH_ASKPASS",
      "SUDO_ASKPASS",
      "GIT_EXTERNAL_DIFF",
      "GIT_PROXY_COMMAND",
      "GIT_EXEC_PATH",
      "GIT_CONFIG.*",
      "GIT_TEMPLATE_DIR",
      "LESSOPEN",
      "LESSCLOSE",
      "LESSKEY.*",
      "HOME",
      "XDG_CONFIG_HOME",
      "XDG_CONFIG_DIRS",
      "BASH_ENV",
      "BASH_CMDS",
      "BASH_ALIASES",
      "BASH_LOADABLES_PATH",
      "PS0",
      "PS1",
      "PS2",
      "PS3",
      "ENV",
      "PROMPT_COMMAND",
      "PS4",
      "SHELLOPTS",
      "BASHOPTS",
      "BASH_FUNC_.*",
      "LD_PRELOAD",
      "LD_LIBRARY_PATH",
      "LD_AUDIT",
      "DYLD_.*",
      "PYTHONSTARTUP",
      "PYTHONINSPECT",
      "NODE_OPTIONS",
      "PERL5OPT",
      "PERL5DB",
      "RUBYOPT",
      "TAR_OPTIONS",
      "RSYNC_RSH",
      "RSYNC_CONNECT_PROG",
      "ZIPOPT",
      "MAKEFLAGS",
      "GNUMAKEFLAGS",
      "MAKEFILES",
      "PARALLEL",
      "FZF_DEFAULT_COMMAND",
      "FZF_DEFAULT_OPTS",
      "BROWSER",
      // start-up files and configuration that run commands: zsh's `$ZDOTDIR/.zshenv`, the shell `script`/`screen`
      // start, `less` options (`+!cmd`), rg's and wget's configuration files (`--pre`, `use_askpass`), npm's
      // `script-shell`
      "ZDOTDIR",
      "SHELL",
      "LESS",
      "MORE",
      "RIPGREP_CONFIG_PATH",
      "WGETRC",
      "CURL_HOME",
      "TERMINAL",
      "SSH_ASKPASS_REQUIRE",
      "INPUTRC",
      "VIMINIT",
      "EXINIT",
      "MYVIMRC",
      "GNUPGHOME",
      "PYTHONPATH",
      "PYTHONHOME",
      "PYTHONBREAKPOINT",
      "RUBYLIB",
      "PERL5LIB",
      "PERLLIB",
      "NODE_PATH",
      "GCONV_PATH",
      "[Nn][Pp][Mm]_[Cc][Oo][Nn][Ff][Ii][Gg]_.*",
      "YARN_.*"
    ].join("|") +
    ")$"
)

/** Why assigning this variable around a command runs code the rules cannot see, or undefined. */
export const hiddenAssignment = (name: string): string | undefined =>
  commandVariable.test(name) ? `the assignment to ${name}, which names a program or code that runs` : undefined
