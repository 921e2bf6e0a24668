/**
 * Tables of the commands that look at files and directories: listing, printing, metadata, path names. Every
 * option listed here only reads; an option that is not listed is unknown, and unknown is never read-only.
 */
import type { CommandTable, View } from "../CommandTable.js"

const version = ["--help", "--version"]

/** Reads `.` recursively when no path operand is given. */
const recursiveWithoutOperand =
  (...recursive: ReadonlyArray<string>) =>
  (view: View): boolean =>
    view.operands.length === 0 && (recursive.length === 0 || recursive.some(view.has))

export const ls: CommandTable = {
  names: true,
  options: [
    "-a, --all",
    "-A, --almost-all",
    "--author",
    "-b, --escape",
    "--block-size=SIZE",
    "-B, --ignore-backups",
    "-c",
    "-C",
    "--color[=WHEN]",
    "-d, --directory",
    "-D, --dired",
    "-f",
    "-F",
    "--classify[=WHEN]",
    "--file-type",
    "--format=WORD",
    "--full-time",
    "-g",
    "--group-directories-first",
    "-G, --no-group",
    "-h, --human-readable",
    "--si",
    "-H, --dereference-command-line",
    "--dereference-command-line-symlink-to-dir",
    "--hide=PATTERN",
    "--hyperlink[=WHEN]",
    "--indicator-style=WORD",
    "-i, --inode",
    "-I, --ignore=PATTERN",
    "-k, --kibibytes",
    "-l",
    "-L, --dereference",
    "-m",
    "-n, --numeric-uid-gid",
    "-N, --literal",
    "-o",
    "-p",
    "-q, --hide-control-chars",
    "--show-control-chars",
    "-Q, --quote-name",
    "--quoting-style=WORD",
    "-r, --reverse",
    "-R, --recursive",
    "-s, --size",
    "-S",
    "--sort=WORD",
    "--time=WORD",
    "--time-style=TIME",
    "-t",
    "-T, --tabsize=N",
    "-u",
    "-U",
    "-v",
    "-w, --width=N",
    "-x",
    "-X",
    "-Z, --context",
    "--zero",
    "-1",
    ...version
  ],
  operands: { rest: "read" },
  inert: true,
  implicitRead: recursiveWithoutOperand("-R")
}

export const cat: CommandTable = {
  options: [
    "-A, --show-all",
    "-b, --number-nonblank",
    "-e",
    "-E, --show-ends",
    "-n, --number",
    "-s, --squeeze-blank",
    "-t",
    "-T, --show-tabs",
    "-u",
    "-v, --show-nonprinting",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

export const tac: CommandTable = {
  options: ["-b, --before", "-r, --regex", "-s, --separator=TEXT", ...version],
  operands: { rest: "read" },
  inert: true
}

export const head: CommandTable = {
  options: [
    "-c, --bytes=N",
    "-n, --lines=N",
    "-q, --quiet, --silent",
    "-v, --verbose",
    "-z, --zero-terminated",
    ...version
  ],
  operands: { rest: "read" },
  numeric: true,
  inert: true
}

export const tail: CommandTable = {
  options: [
    "-c, --bytes=N",
    "-f",
    "--follow[=WORD]",
    "-F",
    "-n, --lines=N",
    "--max-unchanged-stats=N",
    "--pid=N",
    "-q, --quiet, --silent",
    "--retry",
    "-s, --sleep-interval=N",
    "-v, --verbose",
    "-z, --zero-terminated",
    ...version
  ],
  operands: { rest: "read" },
  numeric: true,
  inert: true
}

export const wc: CommandTable = {
  refused: ["--files0-from=FILE"],
  options: [
    "-c, --bytes",
    "-m, --chars",
    "-l, --lines",
    "-L, --max-line-length",
    "-w, --words",
    "--total=WHEN",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

export const stat: CommandTable = {
  names: true,
  options: [
    "-L, --dereference",
    "-f, --file-system",
    "--cached=MODE",
    "-c, --format=FORMAT",
    "--printf=FORMAT",
    "-t, --terse",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

/**
 * `file` without `-C` (compiles a magic file, writing it), `-m` (parses any file as magic), `-f` (reads a list). It
 * prints a file's type, never its contents: what Read rules protect is not printed (names and metadata only).
 */
export const file: CommandTable = {
  names: true,
  refused: [
    "-C, --compile",
    "-m, --magic-file=FILE",
    "-f, --files-from=FILE",
    "-p, --preserve-date",
    "-S, --no-sandbox"
  ],
  options: [
    "-b, --brief",
    "-c, --checking-printout",
    "-d",
    "-e, --exclude=TYPE",
    "--exclude-quiet=TYPE",
    "-E",
    "-F, --separator=SEP",
    "-h, --no-dereference",
    "-i, --mime",
    "--apple",
    "--extension",
    "--mime-type",
    "--mime-encoding",
    "-k, --keep-going",
    "-l, --list",
    "-L, --dereference",
    "-n, --no-buffer",
    "-N, --no-pad",
    "-P, --parameter=TEXT",
    "-r, --raw",
    "-s, --special-files",
    "-z, --uncompress",
    "-Z, --uncompress-noreport",
    "-0, --print0",
    "-v, --version",
    "--help"
  ],
  operands: { rest: "read" }
}

export const du: CommandTable = {
  names: true,
  refused: ["--files0-from=FILE"],
  options: [
    "-0, --null",
    "-a, --all",
    "--apparent-size",
    "-B, --block-size=SIZE",
    "-b, --bytes",
    "-c, --total",
    "-D, --dereference-args",
    "-d, --max-depth=N",
    "-H",
    "-h, --human-readable",
    "--inodes",
    "-k",
    "-L, --dereference",
    "-l, --count-links",
    "-m",
    "-P, --no-dereference",
    "-S, --separate-dirs",
    "--si",
    "-s, --summarize",
    "-t, --threshold=SIZE",
    "--time[=WORD]",
    "--time-style=TIME",
    "-X, --exclude-from=FILE",
    "--exclude=PATTERN",
    "-x, --one-file-system",
    ...version
  ],
  operands: { rest: "read" },
  inert: true,
  implicitRead: recursiveWithoutOperand()
}

export const df: CommandTable = {
  names: true,
  options: [
    "-a, --all",
    "-B, --block-size=SIZE",
    "-h, --human-readable",
    "-H, --si",
    "-i, --inodes",
    "-k",
    "-l, --local",
    "--no-sync",
    "--output[=LIST]",
    "-P, --portability",
    "--sync",
    "--total",
    "-t, --type=TYPE",
    "-T, --print-type",
    "-x, --exclude-type=TYPE",
    "-v",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

/** `tree` without `-o` (writes its output to a file) and `-R` (writes an index file into every directory). */
export const tree: CommandTable = {
  names: true,
  refused: ["-o OUT", "-R", "--fromfile", "--fromtabfile", "--hintro=FILE", "--houtro=FILE"],
  options: [
    "-a",
    "-d",
    "-l",
    "-f",
    "-x",
    "-L N",
    "-P PATTERN",
    "-I PATTERN",
    "--gitignore",
    "--gitfile=FILE",
    "--ignore-case",
    "--matchdirs",
    "--metafirst",
    "--prune",
    "--info",
    "--infofile=FILE",
    "--noreport",
    "--charset=TEXT",
    "--filelimit=N",
    "--timefmt=FORMAT",
    "-q",
    "-N",
    "-Q",
    "-p",
    "-u",
    "-g",
    "-s",
    "-h",
    "--si",
    "--du",
    "-D",
    "--inodes",
    "--device",
    "-F",
    "-v",
    "-t",
    "-c",
    "-U",
    "-r",
    "--dirsfirst",
    "--filesfirst",
    "--sort=WORD",
    "-i",
    "-A",
    "-S",
    "-n",
    "-C",
    "-X",
    "-J",
    "-H TEXT",
    "-T TEXT",
    "--nolinks",
    ...version
  ],
  operands: { rest: "read" },
  implicitRead: recursiveWithoutOperand()
}

export const basename: CommandTable = {
  options: ["-a, --multiple", "-s, --suffix=TEXT", "-z, --zero", ...version],
  operands: { rest: "text" },
  inert: true
}

export const dirname: CommandTable = {
  options: ["-z, --zero", ...version],
  operands: { rest: "text" },
  inert: true
}

export const realpath: CommandTable = {
  names: true,
  options: [
    "-e, --canonicalize-existing",
    "-m, --canonicalize-missing",
    "-L, --logical",
    "-P, --physical",
    "-q, --quiet",
    "--relative-to=DIR",
    "--relative-base=DIR",
    "-s, --strip, --no-symlinks",
    "-z, --zero",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

export const readlink: CommandTable = {
  names: true,
  options: [
    "-f, --canonicalize",
    "-e, --canonicalize-existing",
    "-m, --canonicalize-missing",
    "-n, --no-newline",
    "-q, --quiet",
    "-s, --silent",
    "-v, --verbose",
    "-z, --zero",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

/** The shell's `pwd`. */
export const pwd: CommandTable = { options: ["-L", "-P"], operands: { rest: "none" }, inert: true }

/** The shell's `cd`: the operand is a directory (read); `-` is the previous directory. */
export const cd: CommandTable = {
  names: true,
  options: ["-L", "-P", "-e", "-@"],
  operands: { leading: ["read"], rest: "none" },
  stopAtOperand: true,
  inert: true
}

/** The shell's `pushd`: a directory, or `+N`/`-N` to rotate the stack. */
export const pushd: CommandTable = {
  names: true,
  options: ["-n"],
  operands: { leading: ["read"], rest: "none" },
  numeric: true,
  stopAtOperand: true,
  inert: true
}

/** The shell's `popd`: `+N`/`-N` remove an entry of the stack; `-n` leaves the directory as it is. */
export const popd: CommandTable = {
  options: ["-n"],
  operands: { leading: ["text"], rest: "none" },
  numeric: true,
  stopAtOperand: true,
  inert: true
}

/**
 * `less` as a pager of files (with no terminal it prints them): only options that change how it shows them.
 * Options that name a log file (`-o`, `-O`), key bindings (`-k`, `--lesskey-*`), initial commands (`+cmd`), or
 * reset an option (`-+X`) are not in the table.
 */
export const less: CommandTable = {
  options: [
    "-F, --quit-if-one-screen",
    "-R",
    "-r, --raw-control-chars",
    "-X, --no-init",
    "-N",
    "-n, --line-numbers",
    "-S, --chop-long-lines",
    "-i, --ignore-case",
    "-I",
    "-M",
    "-m, --long-prompt",
    "-e, --quit-at-eof",
    "-E",
    "-K, --quit-on-intr",
    "-q, --quiet, --silent",
    "-Q",
    "-s, --squeeze-blank-lines",
    "-w, --hilite-unread",
    "-W",
    "-x, --tabs=N",
    "-z, --window=N",
    "-V, --version",
    "--help"
  ],
  operands: { rest: "read" },
  numeric: true,
  // `+cmd` runs less commands at start (`!` among them runs a shell command).
  check: (view) =>
    view.operands.some((operand) => operand.value.startsWith("+")) ? "less +cmd runs commands" : undefined
}

/** `xxd` dumping a file: `xxd IN OUT` writes OUT, `-r` turns a dump back into bytes (not in the table). */
export const xxd: CommandTable = {
  options: [
    "-a",
    "-b",
    "-C",
    "-c N",
    "-d",
    "-E",
    "-e",
    "-g N",
    "-h",
    "-i",
    "-l N",
    "-n NAME",
    "-o N",
    "-p",
    "-u",
    "-R WHEN",
    "-v"
  ],
  operands: { leading: ["read", "write"], rest: "none" }
}
