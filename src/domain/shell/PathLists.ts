/**
 * Options that make a command read the names of the files it works on from a file or from its input
 * (`wc --files0-from=F`, `tar -T F`, `rsync --files-from=F`, `file -f F`, `zip -@`, `git add --pathspec-from-file=F`):
 * the paths it then reads or writes are only known at run time, so no Read or Edit rule and no working-directory
 * check can be applied to them. The spellings are data.
 */

/** Long options that, on any command, name a file (or `-`, the input) holding the paths to work on. */
export const pathListLongOptions: ReadonlyArray<string> = ["--files0-from", "--files-from", "--pathspec-from-file"]

/** Commands whose short options (in any cluster, `tar cfT out.tar list`) or exact words read a list of paths. */
export const pathListCommands: ReadonlyMap<
  string,
  { readonly short?: string; readonly words?: ReadonlyArray<string> }
> = new Map([
  ["tar", { short: "T" }],
  ["gtar", { short: "T" }],
  ["bsdtar", { short: "T" }],
  ["file", { short: "f" }],
  ["zip", { words: ["-@", "--names-stdin"] }],
  ["cpio", { short: "op", words: ["--create", "--pass-through"] }],
  ["pax", { short: "w" }]
])

/**
 * The option by which this command reads the list of its paths from a file or its input, or undefined. A word only
 * known at run time may be such an option for a command that has one.
 */
export const pathListOption = (
  name: string,
  args: ReadonlyArray<{ readonly value: string; readonly literal: boolean }>,
  /** True for a long option the command has under that exact name (rg's `--files` is no abbreviation). */
  exact: (option: string) => boolean = () => false
): string | undefined => {
  const entry = pathListCommands.get(name)
  for (const [at, arg] of args.entries()) {
    const value = arg.value
    if (!arg.literal && entry !== undefined) return value
    if (value === "--") break
    if (value.startsWith("--") && value.length > 2) {
      const option = value.includes("=") ? value.slice(0, value.indexOf("=")) : value
      const long = exact(option)
        ? pathListLongOptions.find((o) => o === option)
        : pathListLongOptions.find((o) => o.startsWith(option) && option.length >= 7)
      if (long !== undefined) return long
    }
    if (entry === undefined) continue
    if (entry.words?.includes(value) === true) return value
    const cluster =
      value.startsWith("-") && !value.startsWith("--") ? value.slice(1) : name.endsWith("tar") && at === 0 ? value : ""
    const letter = [...(entry.short ?? "")].find((l) => cluster.includes(l))
    if (letter !== undefined) return `-${letter}`
  }
  return undefined
}
