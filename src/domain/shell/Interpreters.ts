/**
 * Interpreters as data: for each language runtime, the options that take code on the command line (`python3 -c`,
 * `perl -e`, `node --eval`), the options that only print information, the options that take a value, and whether
 * it reads its program from stdin when given no script. Deny rules for Bash commands cannot see into such code, so
 * a command carrying it needs approval whenever such rules exist (`HiddenCode.ts`).
 */

/** How one interpreter reads its arguments. */
export interface Interpreter {
  readonly language: string
  /** Short option letters whose value (the rest of the cluster or the next word) is code: `c` for `python3 -c`. */
  readonly codeLetters?: string
  /** Long (or single-dash long) options whose value is code: `--eval`, `-Command`. */
  readonly codeWords?: ReadonlyArray<string>
  /** Short option letters that take a value that is not code (`-W error`, `-I dir`): the cluster ends there. */
  readonly valueLetters?: string
  /** Long options that take the next word as their value (when not written `--name=value`). */
  readonly valueWords?: ReadonlyArray<string>
  /** Short letters that are plain flags. A cluster with any other letter is unknown: every later word is read. */
  readonly flagLetters?: string
  /**
   * Short option letters that make the interpreter read code from stdin as it runs, whatever else it is given:
   * `python3 -i` (a prompt once the script ends), `perl -d` (the debugger's prompt, or `-d:Mod` loading a module).
   */
  readonly stdinLetters?: string
  /** Short option letters whose value is optional and attached: the characters it takes (perl's `-CSD`). */
  readonly attachedValues?: Readonly<Record<string, RegExp>>
  /** Options that end the options and run a module or file given as their value (`python3 -m http.server`). */
  readonly runsNamed?: ReadonlyArray<string>
  /** Options with which nothing runs (`--version`). */
  readonly info?: ReadonlyArray<string>
  /** With no script operand (or `-` as the script) the program is read from stdin. */
  readonly stdin?: boolean
  /** The first operand is the program text itself (awk), unless a program file option is given. */
  readonly programOperand?: { readonly fileOptions: ReadonlyArray<string> }
  /** A subcommand whose operand is code (`deno eval CODE`). */
  readonly evalSubcommands?: ReadonlyArray<string>
  /**
   * Code that only transforms text is let through when this says nothing: awk's `{print $1}` runs no command, while
   * `system()`, pipes to commands and `getline` from a command or file do.
   */
  readonly risky?: (code: string) => string | undefined
}

const info = ["--version", "-V", "--help", "-h", "-v", "-version", "-help"]

const python: Interpreter = {
  language: "Python",
  codeLetters: "c",
  stdinLetters: "i",
  valueLetters: "WXQ",
  flagLetters: "bBdEhIOPqsSuvVx3",
  runsNamed: ["-m"],
  valueWords: ["--check-hash-based-pycs"],
  info: ["--version", "-V", "--help", "-h", "--help-env", "--help-xoptions", "--help-all"],
  stdin: true
}

const perl: Interpreter = {
  language: "Perl",
  // `-M'Mod;code'` and `-m'Mod;code'` insert their value into a `use` statement: both are code
  codeLetters: "eEMm",
  stdinLetters: "d",
  attachedValues: { C: /^[0-9IOESioDALa]*/, x: /^.*/ },
  valueLetters: "ID",
  flagLetters: "aclnpsStTuUvwWXi0123456789",
  info,
  stdin: true
}

const ruby: Interpreter = {
  language: "Ruby",
  codeLetters: "e",
  valueLetters: "IrCEFxKTW0",
  flagLetters: "acdhlnpsSuvwy",
  valueWords: ["--encoding", "--external-encoding", "--internal-encoding"],
  info,
  stdin: true
}

const node: Interpreter = {
  language: "JavaScript",
  codeLetters: "ep",
  codeWords: ["--eval", "--print"],
  valueLetters: "rC",
  flagLetters: "icv",
  valueWords: ["--require", "--import", "--loader", "--experimental-loader", "--input-type", "--conditions", "--title"],
  info: ["--version", "-v", "--help", "-h", "--v8-options"],
  stdin: true
}

const awk: Interpreter = {
  language: "awk",
  codeLetters: "e",
  codeWords: ["--source", "--exec"],
  valueLetters: "FvfEil",
  flagLetters: "bcCdDgMnNOpPrsStz",
  valueWords: ["--field-separator", "--assign", "--file", "--include", "--load"],
  info: ["--version", "-V", "--help", "-h", "-W", "-Wversion"],
  programOperand: { fileOptions: ["-f", "--file", "-E", "--exec"] },
  risky: (code) => {
    // gawk's `@` forms: `@load`, `@include` and the indirect call `@f()`, which calls the function (`system` too)
    // named by f's value; ARGV and ARGC name the files the program goes on to read.
    const found = /\bsystem\s*\(|(?<!\|)\|(?!\|)|\bgetline\b|@[A-Za-z_]*|\bclose\s*\(|\bARG[VC]\b/.exec(code)
    return found === null ? undefined : `\`${found[0].replace(/\s*\($/, "(")}\``
  }
}

const lua: Interpreter = {
  language: "Lua",
  codeLetters: "el",
  flagLetters: "iEW",
  info: ["-v", "--version", "-h"],
  stdin: true
}

const powershell: Interpreter = {
  language: "PowerShell",
  codeWords: ["-c", "-Command", "-command", "-EncodedCommand", "-e", "-ec", "-encodedcommand", "--command"],
  info: ["-Version", "-v", "--version", "-Help", "-h", "-?"],
  stdin: true
}

/** The interpreters by command name (version-suffixed names like `python3.12` are matched by `interpreterFor`). */
export const interpreters: Readonly<Record<string, Interpreter>> = {
  python,
  python2: python,
  python3: python,
  pypy: python,
  pypy3: python,
  perl,
  ruby,
  node,
  nodejs: node,
  bun: { ...node, stdin: false },
  deno: { language: "JavaScript", codeWords: ["--eval"], info, evalSubcommands: ["eval"] },
  php: { language: "PHP", codeLetters: "rBRE", valueLetters: "cdFz", flagLetters: "aehilmnqsvHw", info, stdin: true },
  lua,
  luajit: lua,
  Rscript: { language: "R", codeLetters: "e", info: ["--version", "--help"] },
  R: { language: "R", codeLetters: "e", info: ["--version", "--help"], stdin: true },
  julia: { language: "Julia", codeLetters: "eE", codeWords: ["--eval", "--print"], info, stdin: true },
  tclsh: { language: "Tcl", stdin: true },
  wish: { language: "Tcl", stdin: true },
  expect: { language: "Tcl", codeLetters: "c", valueLetters: "f", flagLetters: "bdDinN", info, stdin: true },
  osascript: { language: "AppleScript", codeLetters: "e", valueLetters: "ls", info, stdin: true },
  pwsh: powershell,
  powershell,
  jshell: { language: "Java", info, stdin: true },
  groovy: { language: "Groovy", codeLetters: "e", info },
  scala: { language: "Scala", codeLetters: "e", info },
  elixir: { language: "Elixir", codeLetters: "e", codeWords: ["--eval"], info },
  erl: { language: "Erlang", codeWords: ["-eval", "-s", "-run"], info },
  guile: { language: "Scheme", codeLetters: "c", codeWords: ["--eval"], info },
  racket: { language: "Racket", codeLetters: "e", codeWords: ["--eval"], info },
  sbcl: { language: "Lisp", codeWords: ["--eval", "--load"], info, stdin: true },
  ghc: { language: "Haskell", codeLetters: "e", info },
  // Calculators, macro processors and clients whose languages have a shell escape: dc's `!`, m4's `syscmd`/
  // `esyscmd`, gnuplot's and octave's `system`, lftp's `!`.
  dc: {
    language: "dc",
    codeLetters: "e",
    codeWords: ["--expression"],
    valueLetters: "f",
    valueWords: ["--file"],
    info,
    stdin: true
  },
  m4: { language: "m4", valueLetters: "DUIdloF", flagLetters: "EePQsgGi", info, stdin: true },
  gnuplot: { language: "gnuplot", codeLetters: "e", info, stdin: true },
  octave: { language: "Octave", codeWords: ["--eval"], info, stdin: true },
  lftp: { language: "lftp", codeLetters: "ce", valueLetters: "pufU", info, stdin: true },
  gawk: awk,
  awk,
  mawk: awk,
  nawk: awk
}

/** The interpreter a command name runs: by name, or a version-suffixed name (`python3.12`, `perl5.36`). */
export const interpreterFor = (name: string): Interpreter | undefined => {
  if (Object.hasOwn(interpreters, name)) return interpreters[name]
  const base = /^([A-Za-z]+?)[0-9.]+$/.exec(name)?.[1]
  return base !== undefined && Object.hasOwn(interpreters, base) ? interpreters[base] : undefined
}
