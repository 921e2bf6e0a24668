/**
 * Test support for the file tools: temp directories, a tool context, and a runner that maps a call to the result a
 * model would see (validation errors wrapped in `<tool_use_error>`, call failures as their message).
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Either, Schema } from "effect"
import type { ToolResultContent } from "../../../src/domain/Blocks.js"
import * as Tool from "../../../src/domain/Tool.js"

/** A temporary directory removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "armature-files-"))),
  (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
)

/** A tool context rooted at `cwd`. */
export const contextFor = (cwd: string): Effect.Effect<Tool.ToolContext> =>
  Effect.map(Tool.makeSessionState, (state) => ({
    toolUseId: "toolu_test",
    cwd,
    permissionMode: "default" as const,
    progress: () => Effect.void,
    interrupted: Effect.never,
    state
  }))

/** What the model sees for one call. */
export interface Outcome {
  readonly content: ToolResultContent
  readonly isError: boolean
}

/**
 * Decodes, validates and calls a tool the way the per-call pipeline does; a tool that needs a FileSystem gets Node's,
 * its other requirements are left to the test.
 */
export const run = <R>(
  // biome-ignore lint/suspicious/noExplicitAny: any tool
  tool: Tool.Tool<any, any, any, R>,
  raw: unknown,
  cwd: string
): Effect.Effect<Outcome, never, Exclude<R, FileSystem.FileSystem>> =>
  Effect.gen(function* () {
    const ctx = yield* contextFor(cwd)
    const decoded = yield* Effect.either(Schema.decodeUnknown(tool.input)(raw))
    if (Either.isLeft(decoded)) return { content: `InputValidationError: ${decoded.left.message}`, isError: true }
    const valid = yield* Effect.either(tool.validate(decoded.right, ctx))
    if (Either.isLeft(valid))
      return { content: `<tool_use_error>${valid.left.message}</tool_use_error>`, isError: true }
    const called = yield* Effect.either(tool.call(decoded.right, ctx))
    if (Either.isLeft(called)) return { content: Tool.failureText(tool, called.left), isError: true }
    const output = Tool.isWithModifier(called.right) ? called.right.output : called.right
    return { content: tool.toResult(output), isError: false }
  }).pipe(Effect.provide(NodeFileSystem.layer))

/** Writes a file (creating parents). */
export const put = (path: string, content: string | Uint8Array) =>
  Effect.promise(async () => {
    await Fs.mkdir(Path.dirname(path), { recursive: true })
    await Fs.writeFile(path, content)
  })

/** Reads a file as text. */
export const text = (path: string) => Effect.promise(() => Fs.readFile(path, "utf8"))
