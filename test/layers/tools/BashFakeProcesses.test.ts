import { Readable } from "node:stream"
import { finished } from "node:stream/promises"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as CommandHookRunner from "../../../src/layers/hooks/CommandHookRunner.js"
import * as ProcessBackgroundShells from "../../../src/layers/process/ProcessBackgroundShells.js"
import * as FsResultStore from "../../../src/layers/results/FsResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Bash from "../../../src/layers/tools/Bash.js"
import { type Handle, Processes, type SpawnOptions } from "../../../src/services/Processes.js"
import { makeContext, tempDir } from "../../fixtures/ProcessTestKit.js"

/** A Processes service that starts nothing: it records each spawn and answers with canned output and exit code. */
const fakeProcesses = (spawned: Array<SpawnOptions>, stdout: string, code: number) =>
  Layer.succeed(Processes, {
    spawn: (options) =>
      Effect.sync((): Handle => {
        spawned.push(options)
        const out = Readable.from([Buffer.from(stdout)])
        const err = Readable.from([])
        return {
          pid: 4242,
          tag: "fake",
          stdin: null,
          stdout: out,
          stderr: err,
          exited: Effect.succeed({ code, signal: null }),
          // as with a real child: closed once both output streams have been read to their end
          closed: Effect.promise(() => Promise.all([finished(out), finished(err)])).pipe(Effect.orDie, Effect.asVoid),
          kill: Effect.void,
          isAlive: () => false,
          canaryText: () => "",
          endedCleanly: () => true
        }
      }),
    killAll: () => Effect.void,
    findDescendants: () => [],
    groupExists: () => false,
    defaultKillGraceMs: 0
  })

const stateDir = tempDir("armature-fake-processes-")
const spawned: Array<SpawnOptions> = []

const Services = Layer.mergeAll(
  TreeSitterShellAnalyzer.layer,
  FsResultStore.layerDir(stateDir),
  ProcessBackgroundShells.layerDir(stateDir),
  SessionLive.layer({ cwd: stateDir, stateDir })
).pipe(Layer.provideMerge(Layer.merge(NodeFileSystem.layer, fakeProcesses(spawned, "canned output\n", 0))))

layer(Services, { excludeTestServices: true })("Bash and hooks over a fake Processes service", (it) => {
  describe("Bash", () => {
    it.effect("spawns /bin/bash -c through the service in the call's context and returns its output", () =>
      Effect.gen(function* () {
        const bash = yield* Bash.make
        const { ctx } = yield* makeContext("toolu_fake_1", stateDir)
        const before = spawned.length
        const out = yield* bash.call({ command: "echo not-run" }, ctx)
        expect(out).toBe("canned output")
        expect(spawned.length).toBe(before + 1)
        const options = spawned[spawned.length - 1]
        expect(options?.file).toBe("/bin/bash")
        expect(options?.args[0]).toBe("-c")
        expect(options?.args[1]).toContain("echo not-run")
        expect(options?.cwd).toBe(stateDir)
      })
    )

    it.effect("a non-zero exit from the fake is a failure whose text names the code", () =>
      Effect.gen(function* () {
        const bash = yield* Bash.make
        const { ctx } = yield* makeContext("toolu_fake_2", stateDir)
        const failed: Array<SpawnOptions> = []
        const result = yield* Effect.either(
          bash.call({ command: "make" }, ctx).pipe(Effect.provide(fakeProcesses(failed, "", 2)))
        )
        expect(result._tag).toBe("Left")
        if (result._tag === "Left") expect(result.left.message).toContain("Exit code 2")
        expect(failed.map((o) => o.args[1]?.endsWith("make"))).toEqual([true])
      })
    )
  })

  describe("command hooks", () => {
    it.effect("a hook runs /bin/sh -c through the service", () =>
      Effect.gen(function* () {
        const before = spawned.length
        const result = yield* CommandHookRunner.run({
          command: "./hook.sh",
          cwd: stateDir,
          env: {},
          input: "{}",
          timeoutSeconds: 5
        })
        expect(result).toStrictEqual(
          CommandHookRunner.CommandHookResult.Exited({ code: 0, stdout: "canned output\n", stderr: "" })
        )
        expect(spawned.slice(before).map((o) => [o.file, ...o.args])).toEqual([["/bin/sh", "-c", "./hook.sh"]])
      })
    )
  })
})
