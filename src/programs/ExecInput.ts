/**
 * Parses `armature exec` input: a JSON array of tool_use blocks, an assistant message, or JSON Lines; a block may
 * carry `depends_on: [ids]` (an Armature extension: it starts after those calls have results).
 * From a stream of lines, JSON Lines are handed on one by one as they arrive; a document spanning several lines
 * is read whole. Every error names the line (and the field).
 */
import { Effect, Stream } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import type { ToolCall } from "../domain/ExecutorEvent.js"

const describeValue = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "array" : typeof u)

/** Checks one tool_use object; `where` names its place, e.g. "line 3" or "line 1, item 2". */
export const toToolUse = (u: unknown, where: string): Effect.Effect<ToolCall, InvalidInputError> => {
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
  const deps = block.depends_on
  if (deps !== undefined && (!Array.isArray(deps) || deps.some((d) => typeof d !== "string" || d === ""))) {
    return fail(`field "depends_on" of tool_use ${block.id} must be an array of tool_use ids`)
  }
  const use = { type: "tool_use" as const, id: block.id, name: block.name, input: block.input ?? {} }
  return Effect.succeed(deps === undefined ? use : { ...use, depends_on: deps as ReadonlyArray<string> })
}

/** Where, in `text`, a JSON.parse error points: its stated position, or the first unexpected token outside strings. */
const errorOffset = (text: string, message: string): number | undefined => {
  const stated = /at position (\d+)/.exec(message)
  if (stated !== null) return Number(stated[1])
  const token = /^Unexpected token '(.)'/.exec(message)?.[1]
  if (token === undefined) return /end of JSON input/.test(message) ? text.length : undefined
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === token) return i
  }
  return undefined
}

/** A JSON.parse message as `line N, column M: …` (line counted from `firstLine`, column from 1). */
export const describeJsonError = (text: string, message: string, firstLine: number): string => {
  const what = message.replace(/ in JSON at position \d+.*$/, "").replace(/, ".*" is not valid JSON$/s, "")
  const offset = errorOffset(text, message)
  if (offset === undefined) return `line ${firstLine}: invalid JSON: ${what}`
  const before = text.slice(0, offset).split("\n")
  return `line ${firstLine + before.length - 1}, column ${(before.at(-1)?.length ?? 0) + 1}: invalid JSON: ${what}`
}

const parseJson = (text: string, firstLine: number): Effect.Effect<unknown, InvalidInputError> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) =>
      new InvalidInputError({
        message: describeJsonError(text, e instanceof Error ? e.message : String(e), firstLine)
      })
  })

/** Extracts the tool_use blocks of a whole document: an array of blocks or an assistant message. */
const fromDocument = (doc: unknown, firstLine: number): Effect.Effect<ReadonlyArray<ToolCall>, InvalidInputError> => {
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
export const parseLines = <E>(lines: Stream.Stream<string, E>): Stream.Stream<ToolCall, E | InvalidInputError> =>
  Stream.suspend(() => {
    let mode: "unknown" | "lines" | "document" = "unknown"
    let lineNo = 0
    let docStart = 0
    const buffer: Array<string> = []
    const seen = new Map<string, string>()

    const unique = (use: ToolCall, where: string): Effect.Effect<ToolCall, InvalidInputError> => {
      const earlier = seen.get(use.id)
      if (earlier !== undefined) {
        return Effect.fail(
          new InvalidInputError({ message: `${where}: duplicate tool_use id ${use.id} (first used at ${earlier})` })
        )
      }
      seen.set(use.id, where)
      return Effect.succeed(use)
    }

    const onLine = (line: string): Effect.Effect<ReadonlyArray<ToolCall>, InvalidInputError> =>
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
        return parseJson(line, lineNo).pipe(
          Effect.flatMap((u) => toToolUse(u, where)),
          Effect.flatMap((u) => unique(u, where)),
          Effect.map((u) => [u])
        )
      })

    const atEnd: Effect.Effect<ReadonlyArray<ToolCall>, InvalidInputError> = Effect.suspend(() => {
      if (mode !== "document") return Effect.succeed([])
      return parseJson(buffer.join("\n"), docStart).pipe(
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
