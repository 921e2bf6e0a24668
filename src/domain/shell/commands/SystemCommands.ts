/**
 * Tables of the commands that print facts about the system, the shell or the environment (`date`, `id`, `uname`,
 * `env` alone, `type`, `command -v`), the shell's own no-ops (`true`, `:`, `echo`, `printf` without `-v`) and
 * version queries (`node --version`, `npm --version`).
 */
import { type CommandTable, type CustomCommand, readsNothing, type View } from "../CommandTable.js"
import * as TableInterpreter from "../TableInterpreter.js"

const version = ["--help", "--version"]

/** `echo`, `true`, `false`, `:`: every word is text, whatever it looks like (`echo -x` prints `-x`). */
export const anyText: CustomCommand = { interpret: () => readsNothing }

/** The shell's `printf`, whose only option is `-v VAR` (assigns a variable): no options at all here. */
export const printf: CommandTable = {
  options: [],
  refused: ["-v NAME"],
  operands: { rest: "text" },
  stopAtOperand: true
}

export const sleep: CommandTable = { options: version, operands: { rest: "text" }, inert: true }

const onlyFormats = (view: View): string | undefined =>
  view.operands.some((operand) => !operand.value.startsWith("+"))
    ? "date with an operand that is not +FORMAT sets the clock"
    : undefined

/** `date` without `-s/--set`; an operand other than `+FORMAT` sets the clock too. */
export const date: CommandTable = {
  refused: ["-s, --set=TEXT"],
  options: [
    "-d, --date=TEXT",
    "--debug",
    "-f, --file=FILE",
    "-I[WORD]",
    "--iso-8601[=WORD]",
    "-R, --rfc-email",
    "--rfc-3339=WORD",
    "-r, --reference=FILE",
    "-u, --utc, --universal",
    ...version
  ],
  operands: { rest: "text" },
  check: onlyFormats
}

export const which: CommandTable = { options: ["-a", "-s"], operands: { rest: "text" }, inert: true }

/** The shell's `type`. */
export const type: CommandTable = { options: ["-a", "-f", "-p", "-P", "-t"], operands: { rest: "text" }, inert: true }

/** The shell's `command`, only as `command -v NAME` or `command -V NAME` (otherwise it runs NAME). */
export const command: CommandTable = {
  options: ["-p", "-v", "-V"],
  operands: { rest: "text" },
  stopAtOperand: true,
  check: (view) => (view.has("-v") || view.has("-V") ? undefined : "command runs its operand")
}

export const id: CommandTable = {
  options: [
    "-a",
    "-Z, --context",
    "-g, --group",
    "-G, --groups",
    "-n, --name",
    "-r, --real",
    "-u, --user",
    "-z, --zero",
    ...version
  ],
  operands: { rest: "text" },
  inert: true
}

export const whoami: CommandTable = { options: version, operands: { rest: "none" }, inert: true }

export const groups: CommandTable = { options: version, operands: { rest: "text" }, inert: true }

export const uname: CommandTable = {
  options: [
    "-a, --all",
    "-s, --kernel-name",
    "-n, --nodename",
    "-r, --kernel-release",
    "-v, --kernel-version",
    "-m, --machine",
    "-p, --processor",
    "-i, --hardware-platform",
    "-o, --operating-system",
    ...version
  ],
  operands: { rest: "none" },
  inert: true
}

/** `hostname` that prints: no operand (an operand sets the name), no `-b`/`-F` (set it from a file or a default). */
export const hostname: CommandTable = {
  refused: ["-b, --boot", "-F, --file=FILE"],
  options: [
    "-a, --alias",
    "-A, --all-fqdns",
    "-d, --domain",
    "-f, --fqdn, --long",
    "-i, --ip-address",
    "-I, --all-ip-addresses",
    "-s, --short",
    "-y, --yp, --nis",
    "-v, --verbose",
    "-V, --version",
    "-h, --help"
  ],
  operands: { rest: "none" }
}

export const nproc: CommandTable = { options: ["--all", "--ignore=N", ...version], operands: { rest: "none" } }

export const uptime: CommandTable = {
  options: ["-p, --pretty", "-s, --since", "-h, --help", "-V, --version"],
  operands: { rest: "none" },
  inert: true
}

export const locale: CommandTable = {
  options: ["-a, --all-locales", "-m, --charmaps", "-c, --category-name", "-k, --keyword-name", "-v, --verbose"],
  operands: { rest: "text" },
  inert: true
}

const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/

/**
 * `env` printing the environment: options and `NAME=VALUE` words only. With a command after them it is a wrapper,
 * judged as the command it runs (never by this table).
 */
export const env: CommandTable = {
  refused: [
    "-S, --split-string=TEXT",
    "-C, --chdir=DIR",
    "-a, --argv0=TEXT",
    "--default-signal[=LIST]",
    "--ignore-signal[=LIST]",
    "--block-signal[=LIST]",
    "--list-signal-handling",
    "-v, --debug"
  ],
  options: ["-i, --ignore-environment", "-0, --null", "-u, --unset=NAME", ...version],
  operands: { rest: "text" },
  stopAtOperand: true,
  check: (view) => (view.operands.every((operand) => assignment.test(operand.value)) ? undefined : "env runs a command")
}

export const printenv: CommandTable = {
  options: ["-0, --null", ...version],
  operands: { rest: "text" },
  inert: true
}

/** `node`, only asking for its version or usage. */
export const node: CommandTable = {
  options: ["-v, --version", "-h, --help"],
  operands: { rest: "none" },
  check: (view) => (view.args.length === 1 ? undefined : "node runs code unless it only prints its version")
}

/** `python`/`python3`, only asking for the version. */
export const python: CommandTable = {
  options: ["-V, --version"],
  operands: { rest: "none" },
  check: (view) => (view.args.length === 1 ? undefined : "python runs code unless it only prints its version")
}

export const python3 = python

export const free: CommandTable = {
  options: [
    "-b, --bytes",
    "-k, --kibi",
    "-m, --mebi",
    "-g, --gibi",
    "--tebi",
    "--pebi",
    "--kilo",
    "--mega",
    "--giga",
    "--tera",
    "--peta",
    "-h, --human",
    "--si",
    "-l, --lowmem",
    "-t, --total",
    "-s, --seconds=N",
    "-c, --count=N",
    "-w, --wide",
    "-v, --committed",
    "--help",
    "-V, --version"
  ],
  operands: { rest: "none" },
  inert: true
}

/**
 * `npm --version` only. Every other npm command may contact the registry or write: even `npm ls` writes a debug log
 * under `~/.npm/_logs`, and with `--global` (or a workspace configuration) it checks what the registry says, so no
 * listing form is read-only (issue 31).
 */
export const npm: CustomCommand = {
  interpret: (args) => {
    const first = args[0]
    if (args.length === 1 && first.literal && ["-v", "--version"].includes(first.value)) return readsNothing
    return TableInterpreter.notKnown("npm may contact the registry or write files (its logs, the cache, packages)")
  }
}
