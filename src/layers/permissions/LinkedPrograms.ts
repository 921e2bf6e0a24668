/**
 * Programs given by a path that is a symbolic link (`./del` → `/bin/rm`, `./p` → `/usr/bin/perl`): the analysis
 * names the program by the path as written, while the kernel runs the link's target. Each such command is read a
 * second time with the target in place of the path, so deny and ask rules, the wrappers (`./t` → `timeout`), the
 * shells (`./s -c '…'`) and the hidden-code tables see the program that runs. A relative path in a line that changes
 * directory is resolved from every directory the line names; where one is not known (`cd "$d"`, `cd -`, `popd`), the
 * program is not known either and the line is not enumerable.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import type { CommandForm } from "../../domain/PermissionRule.js"
import type { ShellAnalysis, SimpleCommand } from "../../services/ShellAnalyzer.js"

const directoryChanges = new Set(["cd", "pushd", "popd"])

/** A `cd` operand whose directory is plain text (no expansion, tilde, glob or option). */
const plainDirectory = /^[^-$`~*?[{\\][^$`*?[{\\]*$/

/**
 * The directories relative program paths may be resolved from: the working directory and every directory a `cd` or
 * `pushd` of the line names (in any order, since a failed `cd` leaves the directory as it was); undefined for one
 * not known.
 */
const directoriesOf = (commands: ReadonlyArray<SimpleCommand>, cwd: string): ReadonlyArray<string> | undefined => {
  const directories = [cwd]
  for (const command of commands) {
    const [name, ...args] = command.argv
    if (name === undefined || !directoryChanges.has(name)) continue
    const operands = args.filter((arg) => arg !== "--" && arg !== "-P" && arg !== "-L")
    if (name === "popd" || operands.length !== 1 || !plainDirectory.test(operands[0])) return undefined
    for (const from of [...directories]) directories.push(Path.resolve(from, operands[0]))
    if (directories.length > 64) return undefined
  }
  return directories
}

/** Shell text for a form's words: each quoted, a word known only at run time as an unset variable's expansion. */
const lineOf = (form: CommandForm): string =>
  form.map((word) => (word === null ? '"$__unknown"' : `'${word.replace(/'/g, `'\\''`)}'`)).join(" ")

/**
 * The analysis with the forms of each program reached through a symbolic link read again with the link's target,
 * and not enumerable where a relative program path cannot be resolved.
 */
export const resolveLinkedPrograms = (
  analysis: ShellAnalysis,
  cwd: string,
  analyze: (command: string) => ShellAnalysis
): Effect.Effect<ShellAnalysis, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const heads = analysis.commands.flatMap((command) =>
      command.forms.flatMap((form) => (typeof form[0] === "string" && form[0].includes("/") ? [form[0]] : []))
    )
    if (heads.length === 0) return analysis
    const fs = yield* FileSystem.FileSystem
    const directories = directoriesOf(analysis.commands, cwd)
    const opaque: Array<string> = []
    const targetsOf = (head: string) =>
      Effect.gen(function* () {
        if (directories === undefined && !Path.isAbsolute(head)) {
          opaque.push(`\`${head}\`, a program path relative to a directory known only when the line runs`)
          return []
        }
        const targets: Array<string> = []
        for (const directory of Path.isAbsolute(head) ? ["/"] : (directories ?? [])) {
          const real = yield* fs.realPath(Path.resolve(directory, head)).pipe(Effect.option)
          if (real._tag === "Some" && Path.basename(real.value) !== Path.basename(head)) targets.push(real.value)
        }
        return targets
      })
    const extra = new Map<SimpleCommand, Array<CommandForm>>()
    for (const command of analysis.commands) {
      for (const form of command.forms) {
        const head = form[0]
        if (typeof head !== "string" || !head.includes("/")) continue
        for (const target of yield* targetsOf(head)) {
          const reread = analyze(lineOf([target, ...form.slice(1)]))
          opaque.push(...(reread.opaque ?? []))
          const forms = reread.parsed ? reread.commands.flatMap((c) => c.forms) : [[target, ...form.slice(1)]]
          extra.set(command, [...(extra.get(command) ?? []), ...forms])
        }
      }
    }
    if (extra.size === 0 && opaque.length === 0) return analysis
    const allOpaque = [...new Set([...(analysis.opaque ?? []), ...opaque])]
    return {
      ...analysis,
      commands: analysis.commands.map((command) => {
        const forms = extra.get(command)
        return forms === undefined ? command : { ...command, forms: [...command.forms, ...forms] }
      }),
      ...(allOpaque.length > 0 ? { opaque: allOpaque } : {})
    }
  })
