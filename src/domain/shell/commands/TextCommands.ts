/**
 * Tables of the text filters: commands that read files (or standard input) and print a transformation of them.
 * Only options that neither write a file nor run a program are listed (`sort -o`, `sort --compress-program`,
 * `uniq IN OUT` are left out or marked as writes).
 */
import type { CommandTable } from "../CommandTable.js"

const version = ["--help", "--version"]

/** `sort` without `-o/--output`, `--compress-program`, `-T` (temporary files) and `--files0-from` (a list). */
export const sort: CommandTable = {
  refused: ["-o, --output=OUT", "--compress-program=PROGRAM", "-T, --temporary-directory=TARGET", "--files0-from=FILE"],
  options: [
    "-b, --ignore-leading-blanks",
    "-d, --dictionary-order",
    "-f, --ignore-case",
    "-g, --general-numeric-sort",
    "-i, --ignore-nonprinting",
    "-M, --month-sort",
    "-h, --human-numeric-sort",
    "-n, --numeric-sort",
    "-R, --random-sort",
    "--random-source=FILE",
    "-r, --reverse",
    "--sort=WORD",
    "-V, --version-sort",
    "--batch-size=N",
    "-c",
    "--check[=WORD]",
    "-C",
    "--debug",
    "-k, --key=KEY",
    "-m, --merge",
    "-s, --stable",
    "-S, --buffer-size=SIZE",
    "-t, --field-separator=SEP",
    "-u, --unique",
    "-z, --zero-terminated",
    "--parallel=N",
    ...version
  ],
  operands: { rest: "read" }
}

/** `uniq [IN [OUT]]`: the second operand is written. */
export const uniq: CommandTable = {
  options: [
    "-c, --count",
    "-d, --repeated",
    "-D",
    "--all-repeated[=WORD]",
    "-f, --skip-fields=N",
    "--group[=WORD]",
    "-i, --ignore-case",
    "-s, --skip-chars=N",
    "-u, --unique",
    "-z, --zero-terminated",
    "-w, --check-chars=N",
    ...version
  ],
  operands: { leading: ["read", "write"], rest: "none" }
}

export const cut: CommandTable = {
  options: [
    "-b, --bytes=LIST",
    "-c, --characters=LIST",
    "-d, --delimiter=SEP",
    "-f, --fields=LIST",
    "-n",
    "--complement",
    "-s, --only-delimited",
    "--output-delimiter=TEXT",
    "-z, --zero-terminated",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

export const tr: CommandTable = {
  options: ["-c, -C, --complement", "-d, --delete", "-s, --squeeze-repeats", "-t, --truncate-set1", ...version],
  operands: { rest: "text" },
  inert: true
}

export const nl: CommandTable = {
  options: [
    "-b, --body-numbering=TEXT",
    "-d, --section-delimiter=TEXT",
    "-f, --footer-numbering=TEXT",
    "-h, --header-numbering=TEXT",
    "-i, --line-increment=N",
    "-l, --join-blank-lines=N",
    "-n, --number-format=FORMAT",
    "-p, --no-renumber",
    "-s, --number-separator=TEXT",
    "-v, --starting-line-number=N",
    "-w, --number-width=N",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

export const seq: CommandTable = {
  options: ["-f, --format=FORMAT", "-s, --separator=TEXT", "-w, --equal-width", ...version],
  operands: { rest: "text" },
  numeric: true,
  inert: true
}

export const column: CommandTable = {
  options: [
    "-t, --table",
    "-n, --table-name=NAME",
    "-O, --table-order=LIST",
    "-N, --table-columns=LIST",
    "-l, --table-columns-limit=N",
    "-E, --table-noextreme=LIST",
    "-d, --table-noheadings",
    "-e, --table-header-repeat",
    "-H, --table-hide=LIST",
    "-R, --table-right=LIST",
    "-T, --table-truncate=LIST",
    "-W, --table-wrap=LIST",
    "-L, --keep-empty-lines",
    "-J, --json",
    "-r, --tree=NAME",
    "-i, --tree-id=NAME",
    "-p, --tree-parent=NAME",
    "-c, --output-width=N",
    "-o, --output-separator=TEXT",
    "-s, --separator=SEP",
    "-x, --fillrows",
    "-h, --help",
    "-V, --version"
  ],
  operands: { rest: "read" },
  inert: true
}

export const comm: CommandTable = {
  options: [
    "-1",
    "-2",
    "-3",
    "--check-order",
    "--nocheck-order",
    "--output-delimiter=TEXT",
    "--total",
    "-z, --zero-terminated",
    ...version
  ],
  operands: { leading: ["read", "read"], rest: "none" },
  inert: true
}

export const cmp: CommandTable = {
  options: [
    "-b, --print-bytes",
    "-i, --ignore-initial=TEXT",
    "-l, --verbose",
    "-n, --bytes=N",
    "-s, --quiet, --silent",
    ...version
  ],
  operands: { leading: ["read", "read"], rest: "text" },
  inert: true
}

export const diff: CommandTable = {
  options: [
    "--normal",
    "-q, --brief",
    "-s, --report-identical-files",
    "-c",
    "-C N",
    "--context[=N]",
    "-u",
    "-U N",
    "--unified[=N]",
    "-e, --ed",
    "-n, --rcs",
    "-y, --side-by-side",
    "-W, --width=N",
    "--left-column",
    "--suppress-common-lines",
    "-p, --show-c-function",
    "-F, --show-function-line=PATTERN",
    "--label=TEXT",
    "-t, --expand-tabs",
    "-T, --initial-tab",
    "--tabsize=N",
    "--suppress-blank-empty",
    "-r, --recursive",
    "--no-dereference",
    "-N, --new-file",
    "--unidirectional-new-file",
    "--ignore-file-name-case",
    "--no-ignore-file-name-case",
    "-x, --exclude=PATTERN",
    "-X, --exclude-from=FILE",
    "-S, --starting-file=TEXT",
    "--from-file=FILE",
    "--to-file=FILE",
    "-i, --ignore-case",
    "-E, --ignore-tab-expansion",
    "-Z, --ignore-trailing-space",
    "-b, --ignore-space-change",
    "-w, --ignore-all-space",
    "-B, --ignore-blank-lines",
    "-I, --ignore-matching-lines=PATTERN",
    "-a, --text",
    "--strip-trailing-cr",
    "-D, --ifdef=NAME",
    "--line-format=FORMAT",
    "--old-line-format=FORMAT",
    "--new-line-format=FORMAT",
    "--unchanged-line-format=FORMAT",
    "--old-group-format=FORMAT",
    "--new-group-format=FORMAT",
    "--unchanged-group-format=FORMAT",
    "--changed-group-format=FORMAT",
    "-d, --minimal",
    "--horizon-lines=N",
    "--speed-large-files",
    "--color[=WHEN]",
    "--palette=TEXT",
    "-v, --version",
    "--help"
  ],
  operands: { rest: "read" },
  inert: true
}

export const paste: CommandTable = {
  options: ["-d, --delimiters=LIST", "-s, --serial", "-z, --zero-terminated", ...version],
  operands: { rest: "read" },
  inert: true
}

export const fold: CommandTable = {
  options: ["-b, --bytes", "-s, --spaces", "-w, --width=N", ...version],
  operands: { rest: "read" },
  numeric: true,
  inert: true
}

export const expand: CommandTable = {
  options: ["-i, --initial", "-t, --tabs=LIST", ...version],
  operands: { rest: "read" },
  numeric: true,
  inert: true
}

export const unexpand: CommandTable = {
  options: ["-a, --all", "--first-only", "-t, --tabs=LIST", ...version],
  operands: { rest: "read" },
  numeric: true,
  inert: true
}

export const fmt: CommandTable = {
  options: [
    "-c, --crown-margin",
    "-p, --prefix=TEXT",
    "-s, --split-only",
    "-t, --tagged-paragraph",
    "-u, --uniform-spacing",
    "-w, --width=N",
    "-g, --goal=N",
    ...version
  ],
  operands: { rest: "read" },
  numeric: true,
  inert: true
}

export const rev: CommandTable = {
  options: ["-0, --zero", "-h, --help", "-V, --version"],
  operands: { rest: "read" },
  inert: true
}

export const tsort: CommandTable = { options: version, operands: { rest: "read" }, inert: true }

export const numfmt: CommandTable = {
  options: [
    "--debug",
    "-d, --delimiter=SEP",
    "--field=LIST",
    "--format=FORMAT",
    "--from=WORD",
    "--from-unit=N",
    "--grouping",
    "--header[=N]",
    "--invalid=MODE",
    "--padding=N",
    "--round=WORD",
    "--suffix=TEXT",
    "--unit-separator=SEP",
    "--to=WORD",
    "--to-unit=N",
    "-z, --zero-terminated",
    ...version
  ],
  operands: { rest: "text" },
  inert: true
}

/** `expr`: arithmetic and string operations on its operands, nothing else. */
export const expr: CommandTable = { options: version, operands: { rest: "text" }, numeric: true, inert: true }

export const od: CommandTable = {
  options: [
    "-A, --address-radix=TEXT",
    "--endian=TEXT",
    "-j, --skip-bytes=N",
    "-N, --read-bytes=N",
    "-S N",
    "--strings[=N]",
    "-t, --format=TYPE",
    "-v, --output-duplicates",
    "-w[N]",
    "--width[=N]",
    "-a",
    "-b",
    "-c",
    "-d",
    "-f",
    "-i",
    "-l",
    "-o",
    "-s",
    "-x",
    "--traditional",
    ...version
  ],
  operands: { rest: "read" },
  inert: true
}

export const hexdump: CommandTable = {
  options: [
    "-b, --one-byte-octal",
    "-c, --one-byte-char",
    "-C, --canonical",
    "-d, --two-bytes-decimal",
    "-o, --two-bytes-octal",
    "-x, --two-bytes-hex",
    "-e, --format=FORMAT",
    "-f, --format-file=FILE",
    "-L[WHEN]",
    "--color[=WHEN]",
    "-n, --length=N",
    "-s, --skip=N",
    "-v, --no-squeezing",
    "-h, --help",
    "-V, --version"
  ],
  operands: { rest: "read" },
  inert: true
}

/** Checksums, without `-c/--check` (which reads the files a list names). */
const checksum: CommandTable = {
  refused: ["-c, --check", "--ignore-missing", "--quiet", "--status", "--strict", "-w, --warn"],
  options: ["-b, --binary", "--tag", "-t, --text", "-z, --zero", ...version],
  operands: { rest: "read" },
  inert: true
}

export const sha256sum = checksum
export const sha1sum = checksum
export const sha512sum = checksum
export const md5sum = checksum
export const b2sum = checksum
export const cksum = checksum

export const base64: CommandTable = {
  options: ["-d, --decode", "-i, --ignore-garbage", "-w, --wrap=N", ...version],
  operands: { rest: "read" },
  inert: true
}

/** `strings`, whose `@FILE` operands would read further options from a file: refused. */
export const strings: CommandTable = {
  options: [
    "-a, --all",
    "-d, --data",
    "-f, --print-file-name",
    "-n, --bytes=N",
    "-t, --radix=TYPE",
    "-o",
    "-e, --encoding=TYPE",
    "-T, --target=NAME",
    "-w, --include-all-whitespace",
    "-s, --output-separator=TEXT",
    "-U, --unicode=WORD",
    "-v, -V, --version",
    "--help"
  ],
  operands: { rest: "read" },
  numeric: true,
  check: (view) =>
    view.operands.some((operand) => operand.value.startsWith("@"))
      ? "strings @FILE reads options from a file"
      : undefined
}

/** `join FILE1 FILE2`: prints lines of both files joined on a field. */
export const join: CommandTable = {
  options: [
    "-a N",
    "-e TEXT",
    "-i, --ignore-case",
    "-j N",
    "-o FORMAT",
    "-t SEP",
    "-v N",
    "-1 N",
    "-2 N",
    "--check-order",
    "--nocheck-order",
    "--header",
    "-z, --zero-terminated",
    ...version
  ],
  operands: { leading: ["read", "read"], rest: "none" },
  inert: true
}
