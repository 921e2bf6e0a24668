import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as AgentDefinition from "../../../src/domain/AgentDefinition.js"
import * as AgentLoop from "../../../src/layers/agent/AgentLoop.js"
import type { ModelRequest } from "../../../src/services/LanguageModel.js"
import { ScriptedLanguageModel, TestEngine } from "../../../src/testing/index.js"

const tempDir = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bg-agent-")))
const { text, toolUse, turn } = ScriptedLanguageModel

const helper: AgentDefinition.AgentDefinition = {
  name: "helper",
  description: "Helps",
  tools: undefined,
  model: undefined,
  prompt: "You are the helper.",
  source: "options"
}
const agents = { definitions: [AgentDefinition.generalPurpose, helper] }

/** The text of a request's last message. */
const lastText = (request: ModelRequest): string => JSON.stringify(request.messages.at(-1))

/** The id in a launch notice of the request's last message. */
const agentIdOf = (request: ModelRequest): string => /agent_[0-9a-f]{8}/.exec(lastText(request))?.[0] ?? "none"

/** The working directory a request's system prompt gives. */
const cwdOf = (request: ModelRequest): string =>
  /Working directory: (.*)/.exec(ScriptedLanguageModel.systemText(request))?.[1] ?? "none"

const sh = (cwd: string, command: string) => ChildProcess.execSync(command, { cwd, encoding: "utf8" })

const gitRepo = () => {
  const dir = tempDir()
  sh(
    dir,
    "git init -q -b main && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m start && echo one > a.txt"
  )
  return dir
}

describe("Agent in the background, with a model and in a worktree (library, scripted model)", () => {
  it.effect(
    "run_in_background returns a launch notice at once; the answer reaches a later request as a notification",
    () => {
      const dir = tempDir()
      const gate = Path.join(dir, "go")
      return Effect.gen(function* () {
        const requests = yield* ScriptedLanguageModel.ScriptedRequests
        const result = yield* AgentLoop.run({ prompt: "delegate", agents })
        expect(result).toMatchObject({ subtype: "success", result: "got it" })
        const main = (yield* requests.all).filter((r) => !ScriptedLanguageModel.systemText(r).includes("helper."))
        expect(main).toHaveLength(3)
        // the call's result is the launch notice, sent while the agent still waited for the gate
        expect(lastText(main[1]!)).toContain("Background agent launched: agent_")
        expect(lastText(main[1]!)).not.toContain("gate passed")
        const note = lastText(main[2]!)
        expect(note).toContain("<task-notification>")
        expect(note).toContain(`<task-id>${agentIdOf(main[1]!)}</task-id>`)
        expect(note).toContain("<status>completed</status>")
        expect(note).toContain("<result>gate passed, found it</result>")
      }).pipe(
        Effect.provide(
          TestEngine.layer({
            cwd: dir,
            allowAll: true,
            script: [
              turn(
                toolUse("Agent", { description: "d", prompt: "find", subagent_type: "helper", run_in_background: true })
              ),
              () => {
                // the agent cannot end before this second request: it waits for this file
                Fs.writeFileSync(gate, "")
                return turn(text("launched it, waiting"))
              },
              (request) => turn(text(lastText(request).includes("found it") ? "got it" : "lost"))
            ],
            lanes: ScriptedLanguageModel.lanes({
              subagents: {
                "You are the helper.": [
                  turn(toolUse("Bash", { command: `while [ ! -f ${gate} ]; do sleep 0.05; done; echo gate passed` })),
                  (request) =>
                    turn(text(`${lastText(request).includes("gate passed") ? "gate passed" : "?"}, found it`))
                ]
              }
            })
          })
        )
      )
    }
  )

  it.effect("run_in_background false runs in the foreground; model picks the sub-agent's model", () =>
    Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({ prompt: "delegate", agents })
      expect(result).toMatchObject({ subtype: "success", result: "done" })
      const all = yield* requests.all
      const sub = all.find((r) => ScriptedLanguageModel.systemText(r).includes("You are the helper."))!
      expect(sub.model).toBe("claude-opus-4-5")
      expect(lastText(all.at(-1)!)).toContain("the answer")
      expect(lastText(all.at(-1)!)).not.toContain("launched")
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          script: [
            turn(
              toolUse("Agent", {
                description: "d",
                prompt: "p",
                subagent_type: "helper",
                run_in_background: false,
                model: "opus"
              })
            ),
            turn(text("done"))
          ],
          lanes: ScriptedLanguageModel.lanes({ subagents: { "You are the helper.": [turn(text("the answer"))] } })
        })
      )
    )
  )

  it.effect("BashOutput reads a running background agent by its id and KillShell stops it (no notification)", () =>
    Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({ prompt: "delegate", agents })
      expect(result).toMatchObject({ subtype: "success", result: "stopped it" })
      const main = (yield* requests.all).filter((r) => !ScriptedLanguageModel.systemText(r).includes("helper."))
      expect(main).toHaveLength(4)
      expect(lastText(main[2]!)).toContain("Status: running")
      expect(lastText(main[3]!)).toContain("Stopped background agent agent_")
      expect(JSON.stringify(main[3]!.messages)).not.toContain("<task-id>")
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          allowAll: true,
          script: [
            turn(toolUse("Agent", { description: "d", prompt: "p", subagent_type: "helper", run_in_background: true })),
            (request) => turn(toolUse("BashOutput", { bash_id: agentIdOf(request) })),
            (request) =>
              turn(toolUse("KillShell", { shell_id: /agent_[0-9a-f]{8}/.exec(JSON.stringify(request.messages))![0] })),
            turn(text("stopped it"))
          ],
          lanes: ScriptedLanguageModel.lanes({
            subagents: { "You are the helper.": [turn(toolUse("Bash", { command: "sleep 600" })), turn(text("late"))] }
          })
        })
      )
    )
  )

  it.effect(
    "interrupting the parent while it waits for a background agent interrupts the agent and its process",
    () => {
      const dir = tempDir()
      const pidFile = Path.join(dir, "pid")
      const started = Stream.fromEffect(
        Effect.promise(async () => {
          while (!Fs.existsSync(pidFile) || Fs.readFileSync(pidFile, "utf8").trim() === "") {
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        })
      )
      return Effect.gen(function* () {
        const result = yield* AgentLoop.run({ prompt: "delegate", agents, interrupts: started })
        expect(result.subtype).toBe("interrupted")
        const pid = Number(Fs.readFileSync(pidFile, "utf8").trim())
        const alive = () => {
          try {
            process.kill(pid, 0)
            return true
          } catch {
            return false
          }
        }
        expect(alive()).toBe(false)
      }).pipe(
        Effect.provide(
          TestEngine.layer({
            cwd: dir,
            allowAll: true,
            script: [
              turn(
                toolUse("Agent", { description: "d", prompt: "p", subagent_type: "helper", run_in_background: true })
              ),
              turn(text("waiting for it"))
            ],
            lanes: ScriptedLanguageModel.lanes({
              subagents: {
                "You are the helper.": [turn(toolUse("Bash", { command: `echo $$ > ${pidFile}; exec sleep 600` }))]
              }
            })
          })
        )
      )
    }
  )

  it.effect("isolation worktree: the agent works in a worktree of its own, kept when changed, removed when not", () => {
    const repo = gitRepo()
    return Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({ prompt: "delegate", agents })
      expect(result).toMatchObject({ subtype: "success", result: "done" })
      const all = yield* requests.all
      const subs = all.filter((r) => ScriptedLanguageModel.systemText(r).includes("You are the helper."))
      const writerCwd = cwdOf(subs[0]!)
      expect(writerCwd).not.toBe(repo)
      expect(writerCwd).toContain("armature-worktree-agent_")
      // the parent's checkout is untouched; the worktree holds the new file and is kept, and says so
      expect(Fs.existsSync(Path.join(repo, "new.txt"))).toBe(false)
      expect(Fs.readFileSync(Path.join(writerCwd, "new.txt"), "utf8")).toBe("made in a worktree\n")
      const results = JSON.stringify(all.at(-1)!.messages)
      expect(results).toContain(`kept because it changed files there`)
      // the second agent changed nothing: its worktree and branch are gone
      const readerCwd = cwdOf(subs.at(-1)!)
      expect(readerCwd).not.toBe(writerCwd)
      expect(Fs.existsSync(readerCwd)).toBe(false)
      const worktrees = sh(repo, "git worktree list --porcelain")
      expect(worktrees).toContain(writerCwd)
      expect(worktrees).not.toContain(readerCwd)
      sh(repo, `git worktree remove --force ${writerCwd}`)
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: repo,
          allowAll: true,
          script: [
            turn(
              toolUse("Agent", { description: "w", prompt: "write", subagent_type: "helper", isolation: "worktree" })
            ),
            turn(
              toolUse("Agent", { description: "r", prompt: "read", subagent_type: "helper", isolation: "worktree" })
            ),
            turn(text("done"))
          ],
          lanes: ScriptedLanguageModel.lanes({
            subagents: {
              "You are the helper.": [
                (request) =>
                  turn(
                    toolUse("Write", {
                      file_path: Path.join(cwdOf(request), "new.txt"),
                      content: "made in a worktree\n"
                    })
                  ),
                turn(text("wrote it")),
                turn(text("read nothing"))
              ]
            }
          })
        })
      )
    )
  })

  it.effect("isolation worktree outside a git repository fails the call with a clear reason", () =>
    Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      yield* AgentLoop.run({ prompt: "delegate", agents })
      const last = lastText((yield* requests.all).at(-1)!)
      expect(last).toContain('isolation \\"worktree\\" needs a git repository')
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          script: [
            turn(toolUse("Agent", { description: "w", prompt: "p", subagent_type: "helper", isolation: "worktree" })),
            turn(text("done"))
          ]
        })
      )
    )
  )
})
