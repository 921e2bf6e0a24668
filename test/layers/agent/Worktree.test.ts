import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as AgentDefinition from "../../../src/domain/AgentDefinition.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as Worktree from "../../../src/layers/agent/Worktree.js"
import * as Agent from "../../../src/layers/tools/Agent.js"
import { makeContext, tempDir } from "../../fixtures/ProcessTestKit.js"

const acquire = (cwd: string) => Effect.scoped(Effect.flip(Worktree.acquire(cwd, "agent_test")))

describe("Worktree and the Agent tool fail with typed failures (real git)", () => {
  it.effect("outside a repository, and in a repository without a commit, no worktree can be made", () =>
    Effect.gen(function* () {
      const outside = tempDir("armature-worktree-none-")
      expect(yield* acquire(outside)).toEqual(
        new Worktree.WorktreeUnavailable({
          cwd: outside,
          reason: "not-a-repository",
          message: `isolation "worktree" needs a git repository, and ${outside} is not in one. Call Agent without isolation, or from inside a repository.`
        })
      )
      const empty = tempDir("armature-worktree-empty-")
      ChildProcess.execFileSync("git", ["init", "-q"], { cwd: empty })
      const noCommit = yield* acquire(empty)
      expect(noCommit).toMatchObject({ _tag: "WorktreeUnavailable", reason: "no-commit", cwd: empty })
      expect(noCommit.message).toBe(
        `isolation "worktree" needs a commit to check out, and the repository ${empty} has none yet.`
      )
    })
  )

  it.effect("a failing git command is a GitFailed with its arguments, directory and stderr", () =>
    Effect.gen(function* () {
      const dir = tempDir("armature-worktree-git-")
      const failed = yield* Effect.flip(Worktree.git(dir, ["rev-parse", "--show-toplevel"]))
      expect(failed).toMatchObject({ _tag: "GitFailed", cwd: dir, args: ["rev-parse", "--show-toplevel"] })
      expect(failed.message).toMatch(/^git rev-parse --show-toplevel failed in .*: fatal: not a git repository/)
    })
  )

  it.effect("Agent: an unknown type is an UnknownAgentType; a sub-agent's failure reaches the model as declared", () =>
    Effect.gen(function* () {
      const outside = tempDir("armature-worktree-agent-")
      // the spawn of an isolated agent: its worktree is acquired first, and outside a repository that fails
      const tool = yield* Agent.make([AgentDefinition.generalPurpose], (_definition, _input, ctx) =>
        Effect.scoped(Effect.as(Worktree.acquire(ctx.cwd, "agent_spawned"), "never"))
      )
      const { ctx } = yield* makeContext("toolu_agent_1", outside)
      const unknown = yield* Effect.flip(tool.call({ description: "d", prompt: "p", subagent_type: "nobody" }, ctx))
      expect(unknown).toEqual(
        new Agent.UnknownAgentType({ agentType: "nobody", message: "Agent type 'nobody' not found" })
      )
      const isolated = yield* Effect.flip(tool.call({ description: "d", prompt: "p", isolation: "worktree" }, ctx))
      expect(isolated._tag).toBe("WorktreeUnavailable")
      for (const failure of [unknown, isolated]) {
        expect(Schema.is(Agent.Failure)(failure)).toBe(true)
        expect(Tool.failureText(tool, failure)).toBe(failure.message)
        expect(Tool.isTransient(failure)).toBe(false)
      }
      expect(Fs.existsSync(Path.join(outside, ".git"))).toBe(false)
    })
  )
})
