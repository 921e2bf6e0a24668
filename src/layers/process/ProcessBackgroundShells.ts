/**
 * Background shells as process groups writing to `<state dir>/bash/{id}.log`: the child gets the log
 * file as stdout and stderr, so output never passes through this process and memory stays flat. Every shell is
 * killed when the layer's scope closes.
 */
import * as Crypto from "node:crypto"
import * as Path from "node:path"
import { TextDecoder } from "node:util"
import { FileSystem } from "@effect/platform"
import { Effect, Exit, Layer, Option, Scope } from "effect"
import {
  BackgroundShells,
  type ShellInfo,
  ShellLogFailed,
  type ShellOutput,
  UnknownShell
} from "../../services/BackgroundShells.js"
import { Processes } from "../../services/Processes.js"
import { Session } from "../../services/Session.js"

/** The most new output one read returns, in bytes; older new output is skipped (it stays in the log). */
export const maxReadBytes = 30_000

interface Entry {
  info: ShellInfo
  offset: number
  decoder: TextDecoder
  readonly scope: Scope.CloseableScope
}

const failure = (message: string, path: string) => (e: { readonly message: string }) =>
  new ShellLogFailed({ message: `${message}: ${e.message}`, path })

/** Builds the service; shells live in scopes of their own, all closed (in parallel) with the caller's scope. */
export const make = (stateDir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const processes = yield* Processes
    const dir = Path.join(stateDir, "bash")
    const shells = new Map<string, Entry>()

    const close = (entry: Entry) => Scope.close(entry.scope, Exit.void)
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...shells.values()], close, { concurrency: "unbounded", discard: true })
    )

    const lookup = (id: string) =>
      Effect.suspend(() => {
        const entry = shells.get(id)
        return entry === undefined
          ? Effect.fail(
              new UnknownShell({
                id,
                message: `No background shell with ID: ${id}. Use the ID returned by Bash with run_in_background.`
              })
            )
          : Effect.succeed(entry)
      })

    const start = <E = never>(
      command: string,
      cwd: string,
      wrap?: ((command: string) => Effect.Effect<string, E, Scope.Scope>) | undefined
    ) =>
      Effect.gen(function* () {
        yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError(failure(`Could not create ${dir}`, dir)))
        const id = `bash_${Crypto.randomBytes(4).toString("hex")}`
        const logPath = Path.join(dir, `${id}.log`)
        const scope = yield* Scope.make()
        const entry = yield* Effect.gen(function* () {
          const log = yield* fs
            .open(logPath, { flag: "w" })
            .pipe(Effect.mapError(failure(`Could not open ${logPath}`, logPath)))
          // Wrapped in this scope: the sandbox's per-command state lives until the shell is killed.
          const line = wrap === undefined ? command : yield* wrap(command)
          const handle = yield* processes.spawn({
            file: "/bin/bash",
            args: ["-c", line],
            cwd,
            stdio: ["ignore", log.fd, log.fd],
            // KillShell and the end of the session are not on a hot path: always look for escaped descendants.
            onRelease: "always"
          })
          const made: Entry = {
            info: { id, command, cwd, pid: handle.pid, logPath, status: { _tag: "running" } },
            offset: 0,
            decoder: new TextDecoder(),
            scope
          }
          yield* Effect.forkIn(
            Effect.flatMap(handle.exited, (exit) =>
              Effect.sync(() => {
                if (made.info.status._tag === "running") {
                  made.info = {
                    ...made.info,
                    status: { _tag: "completed", exitCode: exit.code, signal: exit.signal }
                  }
                }
              })
            ),
            scope
          )
          return made
        }).pipe(
          Scope.extend(scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        shells.set(id, entry)
        return entry.info
      })

    const read = (id: string, filter?: RegExp) =>
      Effect.gen(function* () {
        const entry = yield* lookup(id)
        // Read the status first: output written before the exit is then surely in the file.
        const info = entry.info
        const size = Number(
          (yield* fs.stat(info.logPath).pipe(Effect.mapError(failure("Could not read the log", info.logPath)))).size
        )
        let from = entry.offset
        let skippedBytes = 0
        if (size - from > maxReadBytes) {
          skippedBytes = size - maxReadBytes - from
          from = size - maxReadBytes
          entry.decoder = new TextDecoder()
        }
        const bytes =
          size > from
            ? yield* Effect.scoped(
                Effect.gen(function* () {
                  const file = yield* fs.open(info.logPath, { flag: "r" })
                  yield* file.seek(from, "start")
                  return yield* file.readAlloc(size - from)
                })
              ).pipe(
                Effect.map(Option.getOrElse(() => new Uint8Array(0))),
                Effect.mapError(failure("Could not read the log", info.logPath))
              )
            : new Uint8Array(0)
        entry.offset = from + bytes.length
        let text = entry.decoder.decode(bytes, { stream: true })
        if (skippedBytes > 0) text = text.replace(/^\uFFFD+/, "")
        let filteredLines = 0
        if (filter !== undefined && text.length > 0) {
          const lines = text.replace(/\n$/, "").split("\n")
          const kept = lines.filter((line) => filter.test(line))
          filteredLines = lines.length - kept.length
          text = kept.length === 0 ? "" : `${kept.join("\n")}\n`
        }
        return { info, text, skippedBytes, filteredLines } satisfies ShellOutput
      })

    const kill = (id: string) =>
      Effect.gen(function* () {
        const entry = yield* lookup(id)
        const wasRunning = entry.info.status._tag === "running"
        if (wasRunning) entry.info = { ...entry.info, status: { _tag: "killed" } }
        yield* close(entry)
        return { info: entry.info, wasRunning }
      })

    return BackgroundShells.of({
      start,
      read,
      kill,
      list: Effect.sync(() => [...shells.values()].map((e) => e.info))
    })
  })

/** The service under the session's state directory. Requires Session, Processes and FileSystem. */
export const layer = Layer.scoped(
  BackgroundShells,
  Effect.flatMap(Session, (session) => make(session.stateDir))
)

/** The service under a given state directory. Requires Processes and FileSystem. */
export const layerDir = (stateDir: string) => Layer.scoped(BackgroundShells, make(stateDir))
