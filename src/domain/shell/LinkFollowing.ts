/**
 * Commands that walk a directory tree and follow the symbolic links they meet inside it (`cp -rL`, `grep -R`,
 * `rsync -L`, `tar -h`, `zip`, `diff -r`, `find -L`, `chown -RL`): what such a command reads (or, for `chown`,
 * changes) is wherever those links point, which only the file system knows when the command runs. The permission
 * policy treats a directory operand of such a command as a path only known at run time. The spellings are data.
 */

/** When one command follows links inside the trees it walks. */
export interface LinkFollowing {
  /** Short option letters that make it follow links (`L` of `cp -rL`), found in any cluster. */
  readonly short?: string
  /** Long options that make it follow links; an abbreviation of one counts too (`--deref`). */
  readonly long?: ReadonlyArray<string>
  /** Whole words that make it follow links (`find -L`, `find … -follow`). */
  readonly words?: ReadonlyArray<string>
  /** It follows links unless told otherwise (`zip`, `diff -r`, `scp -r`). */
  readonly always?: boolean
  /** With `always`: the exact words that stop it. */
  readonly unless?: ReadonlyArray<string>
  /** It walks trees only with one of these letters or long options (`diff -r`, `ls -R`, `scp -r`). */
  readonly requires?: { readonly short: string; readonly long: ReadonlyArray<string> }
  /** The first argument may be a cluster without its dash (`tar chf out.tar dir`). */
  readonly bareCluster?: boolean
  /** What following a link does: reads through it, or changes what it points to (`chown -RL`). */
  readonly access: "read" | "write"
  /**
   * An environment variable naming a configuration file whose options the command adds to its own
   * (`RIPGREP_CONFIG_PATH` may hold `--follow`): set, the command may follow links whatever its words say.
   */
  readonly config?: string
}

const recursive = { short: "rR", long: ["--recursive"] }

/** The commands, by name. */
export const linkFollowing: ReadonlyMap<string, LinkFollowing> = new Map<string, LinkFollowing>([
  ["cp", { short: "L", long: ["--dereference"], access: "read" }],
  ["rsync", { short: "Lk", long: ["--copy-links", "--copy-dirlinks", "--copy-unsafe-links"], access: "read" }],
  ["tar", { short: "h", long: ["--dereference"], bareCluster: true, access: "read" }],
  ["gtar", { short: "h", long: ["--dereference"], bareCluster: true, access: "read" }],
  ["bsdtar", { short: "hL", long: ["--dereference"], bareCluster: true, access: "read" }],
  ["cpio", { short: "L", long: ["--dereference"], access: "read" }],
  ["pax", { short: "L", access: "read" }],
  ["zip", { always: true, unless: ["-y", "--symlinks"], access: "read" }],
  ["7z", { always: true, unless: ["-snl"], access: "read" }],
  ["7za", { always: true, unless: ["-snl"], access: "read" }],
  ["scp", { always: true, requires: { short: "r", long: [] }, access: "read" }],
  [
    "diff",
    { always: true, unless: ["--no-dereference"], requires: { short: "r", long: ["--recursive"] }, access: "read" }
  ],
  ["grep", { short: "R", long: ["--dereference-recursive"], access: "read" }],
  ["egrep", { short: "R", long: ["--dereference-recursive"], access: "read" }],
  ["fgrep", { short: "R", long: ["--dereference-recursive"], access: "read" }],
  ["rg", { short: "L", long: ["--follow"], access: "read", config: "RIPGREP_CONFIG_PATH" }],
  ["ag", { short: "f", long: ["--follow"], access: "read" }],
  ["ack", { long: ["--follow"], access: "read" }],
  ["fd", { short: "L", long: ["--follow"], access: "read" }],
  ["fdfind", { short: "L", long: ["--follow"], access: "read" }],
  ["find", { words: ["-L", "-follow"], access: "read" }],
  ["du", { short: "L", long: ["--dereference"], access: "read" }],
  ["ls", { short: "L", long: ["--dereference"], requires: { short: "R", long: ["--recursive"] }, access: "read" }],
  ["tree", { short: "l", access: "read" }],
  ["chown", { short: "L", requires: recursive, access: "write" }],
  ["chgrp", { short: "L", requires: recursive, access: "write" }],
  ["chmod", { short: "L", requires: recursive, access: "write" }]
])

const hasShort = (args: ReadonlyArray<string>, letters: string, bare: boolean): boolean =>
  args.some((arg, at) => {
    const cluster = arg.startsWith("-") && !arg.startsWith("--") ? arg.slice(1) : bare && at === 0 ? arg : ""
    return [...letters].some((letter) => cluster.includes(letter))
  })

/** A long option given in full, with a value, or abbreviated (`--deref` for `--dereference`). */
const hasLong = (args: ReadonlyArray<string>, options: ReadonlyArray<string>): boolean =>
  args.some((arg) => {
    if (!arg.startsWith("--") || arg.length <= 2) return false
    const name = arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg
    return options.some((option) => option.startsWith(name))
  })

/**
 * How the command follows links inside the trees it walks, given its name (a base name) and arguments: `read` or
 * `write`, or undefined when it does not (or is not known to). A word only known at run time (`"$flags"`) may be
 * any option, so it counts as one that follows links.
 */
export const followsLinks = (
  name: string,
  args: ReadonlyArray<{ readonly value: string; readonly literal: boolean }>
): "read" | "write" | undefined => {
  const entry = linkFollowing.get(name)
  if (entry === undefined) return undefined
  const values = args.map((a) => a.value)
  const opaque = args.some((a) => !a.literal)
  if (entry.requires !== undefined) {
    const walks =
      hasShort(values, entry.requires.short, entry.bareCluster === true) || hasLong(values, entry.requires.long)
    if (!walks && !opaque) return undefined
  }
  if (opaque) return entry.access
  if (entry.always === true) return (entry.unless ?? []).some((u) => values.includes(u)) ? undefined : entry.access
  const follows =
    (entry.short !== undefined && hasShort(values, entry.short, entry.bareCluster === true)) ||
    (entry.long !== undefined && hasLong(values, entry.long)) ||
    (entry.words ?? []).some((w) => values.includes(w))
  return follows ? entry.access : undefined
}

/** How a command that walks trees without following the links inside them can still be made to follow them. */
export interface KeptLinks {
  /** The environment variable naming a configuration file that may add a link-following option. */
  readonly config?: string | undefined
}

/**
 * For a command this table describes that, as its words say, does not follow the symbolic links it meets inside
 * the trees it walks (`cp -r` and `cp -a` copy them as links, `grep -r` and `rg` skip them): what can still make it
 * follow them (a configuration variable). Undefined when it follows them, is not described, or a word is only
 * known at run time. A link named on the command line is another matter (`grep -r x link` follows it): the caller
 * resolves operands through their links.
 */
export const keepsLinks = (
  name: string,
  args: ReadonlyArray<{ readonly value: string; readonly literal: boolean }>
): KeptLinks | undefined => {
  const entry = linkFollowing.get(name)
  if (entry === undefined || args.some((a) => !a.literal)) return undefined
  if (followsLinks(name, args) !== undefined) return undefined
  return entry.config === undefined ? {} : { config: entry.config }
}
