/**
 * Children started for a call (Bash, hooks, background shells) run git with `safe.bareRepository=explicit`, so a
 * directory that looks like a bare repository is not used implicitly (its config could run code).
 */
import { execFile } from "node:child_process"
import * as Path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ProcessGroup from "../../../src/layers/process/ProcessGroup.js"
import { tempDir } from "../../fixtures/ProcessTestKit.js"

const run = promisify(execFile)

describe("git in children of a call", () => {
  it("appends safe.bareRepository after the GIT_CONFIG entries already given", () => {
    expect(ProcessGroup.childEnvironment({ PATH: "/bin" }, "t")).toEqual({
      PATH: "/bin",
      ARMATURE_CALL: "t",
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "safe.bareRepository",
      GIT_CONFIG_VALUE_0: "explicit"
    })
    const given = { GIT_CONFIG_COUNT: "2", GIT_CONFIG_KEY_0: "a.b", GIT_CONFIG_VALUE_0: "1" }
    expect(ProcessGroup.childEnvironment(given, "t")).toMatchObject({
      GIT_CONFIG_COUNT: "3",
      GIT_CONFIG_KEY_0: "a.b",
      GIT_CONFIG_KEY_2: "safe.bareRepository",
      GIT_CONFIG_VALUE_2: "explicit"
    })
  })

  it.scoped("a bare repository in the project is refused unless named explicitly", () =>
    Effect.gen(function* () {
      const dir = tempDir("armature-git-bare-")
      yield* Effect.promise(() => run("git", ["init", "--quiet", "--bare", Path.join(dir, "fake")]))
      // Without the setting, git uses the directory as a repository (the control: the danger is real here).
      const plain = yield* Effect.promise(() =>
        run("git", ["-C", "fake", "rev-parse", "--is-bare-repository"], { cwd: dir })
      )
      expect(plain.stdout.trim()).toBe("true")
      const handle = yield* ProcessGroup.spawn({
        file: "git",
        args: ["-C", "fake", "rev-parse", "--is-bare-repository"],
        cwd: dir,
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      handle.child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8")
      })
      const exit = yield* handle.exited
      yield* handle.closed
      expect(exit.code).not.toBe(0)
      expect(stderr).toContain("safe.bareRepository")
    })
  )
})
