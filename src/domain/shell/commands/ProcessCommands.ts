/**
 * Commands that list processes: `ps`, `pgrep`, `pidof`. None of them writes a file or runs a program; their words
 * are process names, patterns and formats, never commands (`pgrep -f rm` looks for processes, it does not run rm).
 */
import { type CommandTable, type CustomCommand, readsNothing } from "../CommandTable.js"

/**
 * `ps` in both its syntaxes (`ps aux`, `ps -ef`, `ps -C node -o pid,cmd`): procps' ps has no option that names a
 * file or a program to run, so every word is text.
 */
export const ps: CustomCommand = { interpret: () => readsNothing }

/** `pidof NAME…`: names of programs to look up, never run. */
export const pidof: CommandTable = {
  options: [
    "-s",
    "-c",
    "-n",
    "-q",
    "-w",
    "-x",
    "-z",
    "-o, --omit-pid=LIST",
    "-S, --separator=SEP",
    "-h, --help",
    "-V, --version"
  ],
  operands: { rest: "text" },
  inert: true
}

/** `pgrep PATTERN`; its only path is `-F FILE`, a file of process ids it reads. */
export const pgrep: CommandTable = {
  options: [
    "-d, --delimiter=SEP",
    "-l, --list-name",
    "-a, --list-full",
    "-v, --inverse",
    "-w, --lightweight",
    "-c, --count",
    "-f, --full",
    "-g, --pgroup=LIST",
    "-G, --group=LIST",
    "-i, --ignore-case",
    "-n, --newest",
    "-o, --oldest",
    "-O, --older=N",
    "-P, --parent=LIST",
    "-s, --session=LIST",
    "-t, --terminal=LIST",
    "-u, --euid=LIST",
    "-U, --uid=LIST",
    "-x, --exact",
    "-A, --ignore-ancestors",
    "-F, --pidfile=FILE",
    "-L, --logpidfile",
    "-r, --runstates=LIST",
    "--ns=N",
    "--nslist=LIST",
    "-h, --help",
    "-V, --version"
  ],
  operands: { rest: "text" }
}
