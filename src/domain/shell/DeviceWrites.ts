/**
 * Writes to devices and kernel files by a Bash command (issue 28 class 6). As root, `mv README.md /dev/null`
 * replaces the null device, `cp x /dev/sda` overwrites a disk, `echo 1 > /proc/sys/…` changes the kernel: such a
 * write asks in every mode, bypassPermissions included, as a file tool's write of a device does. What stays free is
 * writing *into* a harmless sink: a redirection to `/dev/null`, `/dev/stdout`, `/dev/stderr`, `/dev/tty` or
 * `/dev/fd/N`, and `tee`, `dd` or a plain `cp` writing one of those in place. A command that replaces, removes or
 * links the entry itself (`mv`, `rm`, `ln`, `install`, `rsync`, `cp -T`, `cp --remove-destination`, …) is not
 * writing into it. Files in `/dev/shm/` are ordinary files in a memory file system.
 */

/** Devices whose contents a write cannot change. */
const sink = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)$/

/** Programs that write an operand's contents in place, opening the existing entry (a device stays a device). */
const inPlace = new Set(["tee", "dd", "cp"])

/** Programs that replace, remove, link or change the metadata of the entries they write (a device named to one is changed). */
const replacing = new Set([
  "mv",
  "rm",
  "ln",
  "link",
  "unlink",
  "install",
  "ginstall",
  "rsync",
  "scp",
  "shred",
  "mknod",
  // they change the entry's owner, mode or attributes: `chmod 000 /dev/null` as root breaks every program using it
  "chmod",
  "chown",
  "chgrp",
  "setfacl",
  "chattr",
  "chcon",
  "setfattr"
])

/** cp options after which the destination entry may be removed, renamed or linked rather than opened. */
const replacingCp =
  /^(?:-[^-]*[TlsbfPdau]|--(?:no-target|remove|link|symbolic|backup|force|no-deref|archive|update|preserve))/

/** True for a path under `/dev`, `/proc` or `/sys` that a write may change the system through. */
const systemPath = (path: string): boolean =>
  /^\/(?:dev|proc|sys)(?:\/|$)/.test(path) && !/^\/dev\/(?:shm|tcp|udp)\/[^/]/.test(path)

/**
 * Why a Bash write of this resolved path needs approval (a device or kernel file), or undefined. `program` and
 * `args` are the writing command's (undefined for a redirection).
 */
export const reason = (
  path: string,
  writer: {
    readonly given: string
    readonly redirect: boolean
    readonly guessed: boolean
    readonly program?: string | undefined
    readonly args?: ReadonlyArray<string>
  }
): string | undefined => {
  if (!systemPath(path)) return undefined
  const args = writer.args ?? []
  if (writer.program === "dd" && args.includes(`if=${writer.given}`) && !args.includes(`of=${writer.given}`))
    return undefined
  if (sink.test(path)) {
    if (writer.redirect) return undefined
    const program = writer.program ?? ""
    if (inPlace.has(program) && !(program === "cp" && args.some((arg) => replacingCp.test(arg)))) return undefined
    if (writer.guessed && !replacing.has(program)) return undefined
  }
  return `${path} is a device or kernel file (writing or replacing one as root changes the system)`
}
