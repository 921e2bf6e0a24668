/**
 * Tables of the commands that change files by design (`cp`, `mv`, `touch`, `mkdir`, which acceptEdits mode
 * allows inside the working directories, and `tee`, `rm`, `rmdir`, `ln`). They are never read-only; their tables
 * say exactly which words are read and which are written, including `-t DIR`/`--target-directory=DIR`, so the
 * permission policy can check each path against the Read and Edit rules.
 */
import type { CommandTable } from "../CommandTable.js"

const version = ["--help", "--version"]

/** With `-t DIR` every operand is a source; otherwise the last operand is the destination. */
const intoDestination = { role: "write", unless: ["-t"] } as const

export const cp: CommandTable = {
  options: [
    "-a, --archive",
    "--attributes-only",
    "--backup[=WORD]",
    "-b",
    "--copy-contents",
    "-d",
    "--debug",
    "-f, --force",
    "-i, --interactive",
    "-H",
    "-l, --link",
    "-L, --dereference",
    "-n, --no-clobber",
    "-P, --no-dereference",
    "-p",
    "--preserve[=LIST]",
    "--no-preserve=LIST",
    "--parents",
    "-R, -r, --recursive",
    "--reflink[=WHEN]",
    "--remove-destination",
    "--sparse=WHEN",
    "--strip-trailing-slashes",
    "-s, --symbolic-link",
    "-S, --suffix=TEXT",
    "-t, --target-directory=TARGET",
    "-T, --no-target-directory",
    "-u",
    "--update[=WORD]",
    "-v, --verbose",
    "-x, --one-file-system",
    "-Z",
    "--context[=TEXT]",
    ...version
  ],
  operands: { rest: "read", destination: intoDestination },
  writes: true
}

/** `mv`: every source is read and removed (a move), the destination written. */
export const mv: CommandTable = {
  options: [
    "--backup[=WORD]",
    "-b",
    "--debug",
    "-f, --force",
    "-i, --interactive",
    "-n, --no-clobber",
    "--no-copy",
    "--strip-trailing-slashes",
    "-S, --suffix=TEXT",
    "-t, --target-directory=TARGET",
    "-T, --no-target-directory",
    "-u",
    "--update[=WORD]",
    "-v, --verbose",
    "-Z, --context",
    ...version
  ],
  operands: { rest: "move", destination: intoDestination },
  writes: true
}

/** `ln`: the link targets are read (a hard link exposes them under a new name), the link names written. */
export const ln: CommandTable = {
  options: [
    "--backup[=WORD]",
    "-b",
    "-d, -F, --directory",
    "-f, --force",
    "-i, --interactive",
    "-L, --logical",
    "-n, --no-dereference",
    "-P, --physical",
    "-r, --relative",
    "-s, --symbolic",
    "-S, --suffix=TEXT",
    "-t, --target-directory=TARGET",
    "-T, --no-target-directory",
    "-v, --verbose",
    ...version
  ],
  operands: { rest: "read", destination: intoDestination },
  writes: true
}

export const touch: CommandTable = {
  options: [
    "-a",
    "-c, --no-create",
    "-d, --date=TEXT",
    "-f",
    "-h, --no-dereference",
    "-m",
    "-r, --reference=FILE",
    "-t TEXT",
    "--time=WORD",
    ...version
  ],
  operands: { rest: "write" },
  writes: true
}

export const mkdir: CommandTable = {
  options: ["-m, --mode=MODE", "-p, --parents", "-v, --verbose", "-Z", "--context[=TEXT]", ...version],
  operands: { rest: "write" },
  writes: true
}

export const tee: CommandTable = {
  options: ["-a, --append", "-i, --ignore-interrupts", "-p", "--output-error[=MODE]", ...version],
  operands: { rest: "write" },
  writes: true
}

export const rm: CommandTable = {
  options: [
    "-f, --force",
    "-i",
    "-I",
    "--interactive[=WHEN]",
    "--one-file-system",
    "--no-preserve-root",
    "--preserve-root[=WORD]",
    "-r, -R, --recursive",
    "-d, --dir",
    "-v, --verbose",
    ...version
  ],
  operands: { rest: "write" },
  writes: true
}

export const rmdir: CommandTable = {
  options: ["--ignore-fail-on-non-empty", "-p, --parents", "-v, --verbose", ...version],
  operands: { rest: "write" },
  writes: true
}
