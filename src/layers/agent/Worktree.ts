/**
 * The git worktree of a sub-agent launched with `isolation: "worktree"` (docs/agents.md): a checkout of the
 * repository's HEAD on a branch of its own, in the system's temporary directory, where the agent works without
 * touching the parent's files. When the agent is done (or stopped) the worktree and its branch are removed, unless
 * the agent changed something there (uncommitted changes or new commits): then they are kept and their place told.
 */
import * as ChildProcess from "node:child_process"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Option, Schema, type Scope } from "effect"

/** A git command failed (its stderr, or why it could not run, is in the message). */
export class GitFailed extends Schema.TaggedError<GitFailed>()("GitFailed", {
  message: Schema.String,
  cwd: Schema.String,
  args: Schema.Array(Schema.String)
}) {}

/** No worktree could be made: `cwd` is not in a git repository, or the repository has no commit yet. */
export class WorktreeUnavailable extends Schema.TaggedError<WorktreeUnavailable>()("WorktreeUnavailable", {
  message: Schema.String,
  cwd: Schema.String,
  reason: Schema.Literal("not-a-repository", "no-commit")
}) {}

/** An agent's worktree. */
export interface Worktree {
  /** Where the agent starts: the worktree's counterpart of the parent's working directory. */
  readonly cwd: string
  readonly path: string
  readonly branch: string
  /** The worktree's path when the agent changed something in it (it is then kept), else none. */
  readonly kept: Effect.Effect<Option.Option<string>>
}

/** Runs git with these arguments in `cwd`; its stdout, or a failure with its stderr. */
export const git = (cwd: string, args: ReadonlyArray<string>): Effect.Effect<string, GitFailed> =>
  Effect.async<string, GitFailed>((resume) => {
    const child = ChildProcess.execFile(
      "git",
      [...args],
      { cwd, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resume(
          error === null
            ? Effect.succeed(stdout)
            : Effect.fail(
                new GitFailed({
                  cwd,
                  args: [...args],
                  message: `git ${args.join(" ")} failed in ${cwd}: ${(stderr || error.message).trim()}`
                })
              )
        )
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** Whether the worktree holds changes: uncommitted files, or commits on its branch beyond where it started. */
const changed = (path: string, base: string) =>
  Effect.gen(function* () {
    const status = yield* git(path, ["status", "--porcelain"])
    if (status.trim() !== "") return true
    const head = (yield* git(path, ["rev-parse", "HEAD"])).trim()
    return head !== base
  }).pipe(Effect.orElseSucceed(() => true))

/**
 * Adds a worktree of the repository holding `cwd` for the agent `id`, removed with the scope unless changed. Fails
 * with a clear message when `cwd` is not in a git repository or the repository has no commit yet.
 */
export const acquire = (
  cwd: string,
  id: string
): Effect.Effect<Worktree, GitFailed | WorktreeUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const top = yield* git(cwd, ["rev-parse", "--show-toplevel"]).pipe(
      Effect.map((out) => out.trim()),
      Effect.mapError(
        () =>
          new WorktreeUnavailable({
            cwd,
            reason: "not-a-repository",
            message: `isolation "worktree" needs a git repository, and ${cwd} is not in one. Call Agent without isolation, or from inside a repository.`
          })
      )
    )
    const base = yield* git(top, ["rev-parse", "--verify", "HEAD"]).pipe(
      Effect.map((out) => out.trim()),
      Effect.mapError(
        () =>
          new WorktreeUnavailable({
            cwd,
            reason: "no-commit",
            message: `isolation "worktree" needs a commit to check out, and the repository ${top} has none yet.`
          })
      )
    )
    const path = Path.join(Os.tmpdir(), `armature-worktree-${id}`)
    const branch = `armature/${id}`
    yield* Effect.acquireRelease(git(top, ["worktree", "add", "-b", branch, path, base]), () =>
      Effect.gen(function* () {
        if (yield* changed(path, base)) return
        yield* git(top, ["worktree", "remove", "--force", path])
        yield* git(top, ["branch", "-D", branch])
      }).pipe(Effect.ignore)
    )
    const relative = Path.relative(top, cwd)
    return {
      cwd: relative.startsWith("..") ? path : Path.join(path, relative),
      path,
      branch,
      kept: Effect.map(changed(path, base), (yes) => (yes ? Option.some(path) : Option.none()))
    }
  })
