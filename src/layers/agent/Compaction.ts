/**
 * The managed context window (docs/agents.md). Auto-compaction: when a turn's input tokens pass the threshold, the
 * PreCompact hooks run, the model is asked for a summary of the conversation so far (a request with no tools), and
 * the loop continues from a short history — the summary, the user's request, the todo list, and the last assistant
 * message with the tool results it is waiting for. The transcript gets a `compact_boundary` line followed by the
 * short history, so `--resume` starts from there. Micro-compaction: in each request, tool results older than the
 * most recent few and longer than a size are replaced by a stub naming the file that holds them in full.
 */
import { Effect, Stream } from "effect"
import { contentText, type ToolResult } from "../../domain/Blocks.js"
import {
  type AssistantContent,
  addUsage,
  emptyUsage,
  type Message,
  type ModelRequest,
  type Usage,
  type UserContent
} from "../../services/LanguageModel.js"
import type { TranscriptError } from "../../services/Transcript.js"
import * as TodoWrite from "../tools/TodoWrite.js"
import type { CompactionOptions } from "./AgentEvent.js"
import type { RunContext } from "./RunContext.js"

/** The context window assumed when none is given. */
const defaultContextWindow = 200_000

/** The share of the window past which a conversation is compacted by default. */
const defaultThresholdRatio = 0.8

/** The input tokens past which a run compacts (0: never). */
export const thresholdOf = (options: CompactionOptions | undefined): number =>
  options?.threshold ?? Math.floor((options?.contextWindow ?? defaultContextWindow) * defaultThresholdRatio)

/** The input tokens of a turn: uncached, cache writes and cache reads. */
const inputTokensOf = (usage: Usage): number =>
  usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens

/** The system prompt of a compaction request; it also marks the request as one (see `isCompactionRequest`). */
const compactionSystemPrompt =
  "You are summarizing a conversation between a user and a coding agent so that the agent can continue the work " +
  "from the summary alone, with its earlier messages gone."

/** The instruction sent as the last user text of a compaction request. */
const compactionInstruction = `Write a summary of the conversation so far, to continue the task from it. \
Include: the user's requests and intent; what was done (files read, changed or created, with their paths, and \
commands run); the important findings and decisions; errors met and how they were fixed; what remains to be done and \
the next step. Answer with the summary only.`

/** Whether a request is a compaction request (for scripted models). */
export const isCompactionRequest = (request: ModelRequest): boolean =>
  request.system.some((block) => block.text === compactionSystemPrompt)

const isToolResults = (message: Message | undefined): boolean =>
  message !== undefined &&
  message.role === "user" &&
  typeof message.content !== "string" &&
  message.content.some((b) => b.type === "tool_result")

const textOfUser = (message: Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n")

/** The messages of a compaction request: the conversation with the instruction added to its last user turn. */
const compactionMessages = (messages: ReadonlyArray<Message>): ReadonlyArray<Message> => {
  const last = messages.at(-1)
  const instruction: UserContent = { type: "text", text: compactionInstruction }
  if (last !== undefined && last.role === "user") {
    const content: ReadonlyArray<UserContent> =
      typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content
    return [...messages.slice(0, -1), { role: "user", content: [...content, instruction] }]
  }
  return [...messages, { role: "user", content: [instruction] }]
}

/**
 * The history a compacted run continues from: one user message with the summary, the user's last request and the
 * todo list; then, when the conversation was waiting on tool results, the last assistant message and those results
 * (the model needs them to go on, and the API needs each result to follow its call).
 */
export const shortHistory = (
  messages: ReadonlyArray<Message>,
  summary: string,
  todos: ReadonlyArray<TodoWrite.Todo>
): ReadonlyArray<Message> => {
  const prompts = messages.filter((m) => m.role === "user" && !isToolResults(m))
  const request = prompts.at(-1)
  const last = messages.at(-1)
  const waiting = isToolResults(last) && messages.at(-2)?.role === "assistant"
  const parts = [
    "This session is being continued from an earlier conversation that was compacted to save context. Its summary:",
    summary.trim(),
    request === undefined ? "" : `The user's latest request, as they wrote it:\n${textOfUser(request)}`,
    todos.length === 0 ? "" : `The todo list:\n${TodoWrite.render(todos)}`,
    waiting ? "Your last message and its tool results follow." : "Continue from where the conversation left off."
  ].filter((p) => p !== "")
  const opening: Message = { role: "user", content: [{ type: "text", text: parts.join("\n\n") }] }
  return waiting ? [opening, messages.at(-2)!, last!] : [opening]
}

/** Streams a compaction request and collects the summary's text and the usage. */
const summarize = (run: RunContext, messages: ReadonlyArray<Message>) => {
  const request: ModelRequest = {
    model: run.modelName,
    maxTokens: run.maxTokens,
    system: [{ type: "text", text: compactionSystemPrompt }],
    tools: [],
    messages: compactionMessages(messages)
  }
  return run.model.stream(request).pipe(
    Stream.runFold({ text: "", usage: emptyUsage }, (acc, event) => {
      if (event.type === "content_block" && event.block.type === "text") {
        return { ...acc, text: acc.text + String((event.block as AssistantContent & { text: string }).text) }
      }
      if (event.type === "message_delta") return { ...acc, usage: event.usage }
      return acc
    })
  )
}

/**
 * Compacts the run's conversation in place when the last turn's input tokens passed the threshold. A failed
 * summary request leaves the conversation as it was (the failure is reported as a hook-style system line).
 */
export const maybeCompact = (
  run: RunContext,
  messages: Array<Message>,
  usage: Usage
): Effect.Effect<void, TranscriptError> =>
  Effect.gen(function* () {
    const threshold = thresholdOf(run.options.compaction)
    const preTokens = inputTokensOf(usage)
    if (threshold <= 0 || preTokens <= threshold) return
    yield* run.runHook("PreCompact", { trigger: "auto", custom_instructions: null })
    const summary = yield* Effect.either(summarize(run, messages))
    if (summary._tag === "Left" || summary.right.text.trim() === "") {
      const reason = summary._tag === "Left" ? summary.left.message : "the summary was empty"
      return yield* run.onEvent({
        type: "system",
        subtype: "hook",
        session_id: run.session.id,
        message: `compaction skipped: ${reason}`
      })
    }
    run.tally.usage = addUsage(run.tally.usage, summary.right.usage)
    const todos = yield* run.session.state.get(TodoWrite.todosKey)
    const short = shortHistory(messages, summary.right.text, todos)
    yield* run.record({
      type: "system",
      subtype: "compact_boundary",
      session_id: run.session.id,
      compact_metadata: { trigger: "auto", pre_tokens: preTokens }
    })
    for (const message of short) {
      yield* run.record(
        message.role === "user"
          ? { type: "user", session_id: run.session.id, message }
          : {
              type: "assistant",
              session_id: run.session.id,
              message: { ...message, model: run.modelName, stop_reason: "tool_use", usage: emptyUsage }
            },
        false
      )
    }
    yield* run.transcript.sync
    messages.splice(0, messages.length, ...short)
  })

/** Micro-compaction's defaults: results of at least 2 000 characters, the 8 most recent kept whole. */
const defaultMicroMinChars = 2_000
const defaultMicroKeepRecent = 8

/** The file a persisted result names (`Full output saved to: PATH`), if it names one. */
const persistedPath = (text: string): string | undefined =>
  /saved to:?\s+(\S+)/i.exec(text)?.[1]?.replace(/[.,)]+$/, "")

/** The stub an old large result is replaced by in later requests, naming the file that keeps it whole. */
const stubOf = (result: ToolResult, path: string): ToolResult => ({
  ...result,
  content: `[Old tool result cleared to save context (${contentText(result.content).length} characters); the full text is in ${path}. Read it again if you need it.]`
})

/**
 * The messages of a request with micro-compaction applied: every tool result but the `keepRecent` latest whose text
 * is at least `minChars` long becomes a stub naming its file — the persisted result's, else the transcript (the
 * messages kept by the loop and the transcript are unchanged). Results without a file to name are left whole.
 */
export const microCompact = (
  messages: ReadonlyArray<Message>,
  options: CompactionOptions | undefined,
  transcriptPath: string
): ReadonlyArray<Message> => {
  const minChars = options?.microMinChars ?? defaultMicroMinChars
  const keep = options?.microKeepRecent ?? defaultMicroKeepRecent
  if (minChars <= 0) return messages
  const ids = messages.flatMap((m) =>
    m.role === "user" && typeof m.content !== "string"
      ? m.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : []))
      : []
  )
  const old = new Set(ids.slice(0, Math.max(0, ids.length - keep)))
  if (old.size === 0) return messages
  const stub = (b: ToolResult): ToolResult => {
    const text = contentText(b.content)
    if (!old.has(b.tool_use_id) || text.length < minChars) return b
    const path = persistedPath(text) ?? transcriptPath
    return path === "" ? b : stubOf(b, path)
  }
  return messages.map((m) =>
    m.role === "user" && typeof m.content !== "string"
      ? { role: "user", content: m.content.map((b) => (b.type === "tool_result" ? stub(b) : b)) }
      : m
  )
}
