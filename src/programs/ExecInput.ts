/**
 * Parses `armature exec` input (SPEC §10): a JSON array of tool_use blocks, an assistant message, or JSON Lines.
 * From a stream of lines, JSON Lines are handed on one by one as they arrive; a document spanning several lines
 * is read whole. Every error names the line (and the field).
 */
import { Effect, Schema, Stream } from "effect"
import type { ToolUse } from "../domain/Blocks.js"
import { InvalidInputError } from "../domain/Errors.js"

const describeValue = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "array" : typeof u)

/** Checks one tool_use object; `where` names its place, e.g. "line 3" or "line 1, item 2". */
export const toToolUse = (u: unknown, where: string): Effect.Effect<ToolUse, InvalidInputError> => {
  const fail = (message: string) => Effect.fail(new InvalidInputError({ message: `${where}: ${message}` }))
  if (typeof u !== "object" || u === null || Array.isArray(u)) {
    return fail(`expected a tool_use object, got ${describeValue(u)}`)
  }
  const block = u as Record<string, unknown>
  if (block.type !== undefined && block.type !== "tool_use") {
    return fail(`field "type" must be "tool_use", got ${JSON.stringify(block.type)}`)
  }
  if (typeof block.id !== "string" || block.id === "") return fail(`tool_use has no "id" (a non-empty string)`)
  if (typeof block.name !== "string" || block.name === "") {
    return fail(`tool_use ${block.id} has no "name" (a non-empty string)`)
  }
  if (block.input !== undefined && (typeof block.input !== "object" || block.input === null)) {
    return fail(`field "input" of tool_use ${block.id} must be an object, got ${describeValue(block.input)}`)
  }
  return Effect.succeed({ type: "tool_use", id: block.id, name: block.name, input: block.input ?? {} })
}

const parseJson = (text: string, where: string): Effect.Effect<unknown, InvalidInputError> =>
  Schema.decodeUnknown(Schema.parseJson())(text).pipe(
    Effect.mapError(
      (e) =>
        new InvalidInputError({
          message: `${where}: invalid JSON (${e.message.split("\n").pop()?.trim() ?? "parse error"})`
        })
    )
  )

/** Extracts the tool_use blocks of a whole document: an array of blocks or an assistant message. */
const fromDocument = (doc: unknown, firstLine: number): Effect.Effect<ReadonlyArray<ToolUse>, InvalidInputError> => {
  const where = `line ${firstLine}`
  if (Array.isArray(doc)) return Effect.forEach(doc, (item, i) => toToolUse(item, `${where}, item ${i + 1}`))
  if (typeof doc === "object" && doc !== null && "role" in doc) {
    const message = doc as { role: unknown; content?: unknown }
    if (message.role !== "assistant") {
      return Effect.fail(
        new InvalidInputError({
          message: `${where}: field "role" must be "assistant", got ${JSON.stringify(message.role)}`
        })
      )
    }
    if (!Array.isArray(message.content)) {
      return Effect.fail(new InvalidInputError({ message: `${where}: field "content" must be an array of blocks` }))
    }
    return Effect.forEach(
      message.content.map((block, i) => [block, i] as const).filter(([block]) => isToolUseLike(block)),
      ([block, i]) => toToolUse(block, `${where}, content[${i}]`)
    )
  }
  return Effect.map(toToolUse(doc, where), (u) => [u])
}

const isToolUseLike = (u: unknown): boolean =>
  typeof u === "object" && u !== null && (u as { type?: unknown }).type === "tool_use"

/**
 * Turns input lines into tool_use blocks. JSON Lines are emitted as each line arrives; an array, an assistant
 * message, or a JSON document spread over several lines is read to the end first. Duplicate ids are refused
 * with the line that repeats them.
 */
export const parseLines = <E>(lines: Stream.Stream<string, E>): Stream.Stream<ToolUse, E | InvalidInputError> =>
  Stream.suspend(() => {
    let mode: "unknown" | "lines" | "document" = "unknown"
    let lineNo = 0
    let docStart = 0
    const buffer: Array<string> = []
    const seen = new Map<string, string>()

    const unique = (use: ToolUse, where: string): Effect.Effect<ToolUse, InvalidInputError> => {
      const earlier = seen.get(use.id)
      if (earlier !== undefined) {
        return Effect.fail(
          new InvalidInputError({ message: `${where}: duplicate tool_use id ${use.id} (first used at ${earlier})` })
        )
      }
      seen.set(use.id, where)
      return Effect.succeed(use)
    }

    const onLine = (line: string): Effect.Effect<ReadonlyArray<ToolUse>, InvalidInputError> =>
      Effect.suspend(() => {
        lineNo++
        const trimmed = line.trim()
        if (mode === "document") {
          buffer.push(line)
          return Effect.succeed([])
        }
        if (trimmed === "") return Effect.succeed([])
        if (mode === "unknown") {
          if (trimmed.startsWith("[")) {
            mode = "document"
            docStart = lineNo
            buffer.push(line)
            return Effect.succeed([])
          }
          const single = safeParse(trimmed)
          if (single === undefined || (typeof single === "object" && single !== null && "role" in single)) {
            mode = "document"
            docStart = lineNo
            buffer.push(line)
            return Effect.succeed([])
          }
          mode = "lines"
        }
        const where = `line ${lineNo}`
        return parseJson(trimmed, where).pipe(
          Effect.flatMap((u) => toToolUse(u, where)),
          Effect.flatMap((u) => unique(u, where)),
          Effect.map((u) => [u])
        )
      })

    const atEnd: Effect.Effect<ReadonlyArray<ToolUse>, InvalidInputError> = Effect.suspend(() => {
      if (mode !== "document") return Effect.succeed([])
      return parseJson(buffer.join("\n"), `line ${docStart}`).pipe(
        Effect.flatMap((doc) => fromDocument(doc, docStart)),
        Effect.flatMap((uses) => Effect.forEach(uses, (u, i) => unique(u, `line ${docStart}, item ${i + 1}`)))
      )
    })

    return lines.pipe(Stream.mapEffect(onLine), Stream.concat(Stream.fromEffect(atEnd)), Stream.flattenIterables)
  })

const safeParse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
