/**
 * Sampling on the client side: an MCP server asks Armature's language model to complete a conversation
 * (`sampling/createMessage`). The capability is declared only when the engine has a language model. Each request
 * goes through the server's policy (`sampling` in its `.mcp.json` entry, or `mcpSampling` in settings): "deny"
 * refuses, "allow" runs it, "ask" (the default) puts it to the Approver, and refuses when nobody can answer. A
 * refusal is a JSON-RPC error with a message saying why. Only text content is supported. See docs/mcp.md.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  ErrorCode
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, Option, Schema, Stream } from "effect"
import type { Approver } from "../../services/Approver.js"
import type { LanguageModel, Message, StopReason } from "../../services/LanguageModel.js"
import type { SamplingPolicy, SamplingRequest } from "../../services/McpClients.js"

/** The JSON-RPC error code of a sampling request the user or the policy refused (as in MCP's examples). */
const rejectedCode = -1

/**
 * A sampling request answered with a JSON-RPC error. The SDK sends an error's `code` and `message` as they are
 * (its own McpError would put "MCP error N:" in front of the message a second time on the server's side).
 */
export class SamplingError extends Schema.TaggedError<SamplingError>()("SamplingError", {
  code: Schema.Number,
  message: Schema.String
}) {}

/** What answering sampling requests needs: the model, the model name to ask for, and who approves. */
export interface Sampler {
  readonly model: LanguageModel["Type"]
  readonly modelName: string
  readonly approver: Option.Option<Approver["Type"]>
}

type Params = CreateMessageRequest["params"]

const textBlocksOf = (
  content: Params["messages"][number]["content"],
  index: number
): Either.Either<ReadonlyArray<string>, string> => {
  const blocks = Array.isArray(content) ? content : [content]
  const texts: Array<string> = []
  for (const block of blocks) {
    if (block.type !== "text") {
      return Either.left(`message ${index + 1} has ${block.type} content; Armature's sampling supports text only`)
    }
    texts.push(block.text)
  }
  return Either.right(texts)
}

/** The request as the model and the approver see it; anything but text content is an error saying which. */
const readRequest = (
  server: string,
  params: Params
): Either.Either<{ readonly request: SamplingRequest; readonly messages: ReadonlyArray<Message> }, string> => {
  if (params.tools !== undefined || params.toolChoice !== undefined) {
    return Either.left("tools in sampling requests are not supported (the sampling.tools capability is not declared)")
  }
  if (params.maxTokens < 1) return Either.left(`maxTokens must be at least 1, got ${params.maxTokens}`)
  const shown: Array<SamplingRequest["messages"][number]> = []
  const messages: Array<Message> = []
  for (const [index, message] of params.messages.entries()) {
    const texts = textBlocksOf(message.content, index)
    if (Either.isLeft(texts)) return Either.left(texts.left)
    shown.push({ role: message.role, text: texts.right.join("\n") })
    const blocks = texts.right.map((text) => ({ type: "text" as const, text }))
    messages.push(message.role === "user" ? { role: "user", content: blocks } : { role: "assistant", content: blocks })
  }
  if (messages.length === 0) return Either.left("the request has no messages")
  return Either.right({
    request: { server, systemPrompt: params.systemPrompt, messages: shown, maxTokens: params.maxTokens },
    messages
  })
}

const stopReasonOf = (reason: StopReason | null): string | undefined => {
  switch (reason) {
    case null:
      return undefined
    case "end_turn":
      return "endTurn"
    case "max_tokens":
      return "maxTokens"
    case "stop_sequence":
      return "stopSequence"
    default:
      return reason
  }
}

/** Whether the policy (and, for "ask", the approver) lets the request through; `Left` carries the refusal. */
export const decide = (
  policy: SamplingPolicy,
  request: SamplingRequest,
  approver: Option.Option<Approver["Type"]>
): Effect.Effect<Either.Either<void, string>> => {
  const server = request.server
  if (policy === "allow") return Effect.succeed(Either.right(undefined))
  if (policy === "deny") {
    return Effect.succeed(Either.left(`Sampling is denied for MCP server ${server} (its sampling policy is "deny")`))
  }
  const ask = Option.flatMap(approver, (a) => Option.fromNullable(a.approveSampling))
  if (Option.isNone(ask)) {
    return Effect.succeed(
      Either.left(
        `MCP server ${server} asked to use the language model, but nobody can approve it here; set its sampling policy to "allow" to permit it`
      )
    )
  }
  return Effect.map(ask.value(request), (approved) =>
    approved ? Either.right(undefined) : Either.left(`The user refused the sampling request of MCP server ${server}`)
  )
}

/** Runs the conversation on the model and answers with its text. */
export const complete = (
  sampler: Sampler,
  system: string | undefined,
  messages: ReadonlyArray<Message>,
  maxTokens: number
): Effect.Effect<CreateMessageResult, SamplingError> =>
  sampler.model
    .stream({
      model: sampler.modelName,
      maxTokens,
      system: system === undefined || system === "" ? [] : [{ type: "text", text: system }],
      tools: [],
      messages
    })
    .pipe(
      Stream.runFold(
        { model: sampler.modelName, text: [] as Array<string>, stop: undefined as string | undefined },
        (acc, event) => {
          if (event.type === "message_start") return { ...acc, model: event.model }
          if (event.type === "content_block" && event.block.type === "text") {
            return { ...acc, text: [...acc.text, event.block.text as string] }
          }
          if (event.type === "message_delta") return { ...acc, stop: stopReasonOf(event.stopReason) }
          return acc
        }
      ),
      Effect.map(
        (acc): CreateMessageResult => ({
          model: acc.model,
          role: "assistant",
          content: { type: "text", text: acc.text.join("") },
          ...(acc.stop === undefined ? {} : { stopReason: acc.stop })
        })
      ),
      Effect.mapError(
        (e) => new SamplingError({ code: ErrorCode.InternalError, message: `The language model failed: ${e.message}` })
      )
    )

/** Answers one `sampling/createMessage` request: checks it, decides, then runs it on the model. */
export const answer = (
  server: string,
  policy: SamplingPolicy,
  sampler: Sampler,
  params: Params
): Effect.Effect<CreateMessageResult, SamplingError> =>
  Effect.gen(function* () {
    const read = readRequest(server, params)
    if (Either.isLeft(read))
      return yield* Effect.fail(new SamplingError({ code: ErrorCode.InvalidParams, message: read.left }))
    const decision = yield* decide(policy, read.right.request, sampler.approver)
    if (Either.isLeft(decision))
      return yield* Effect.fail(new SamplingError({ code: rejectedCode, message: decision.left }))
    return yield* complete(sampler, params.systemPrompt, read.right.messages, params.maxTokens)
  })

/** The message a server gets when it asks for sampling from an engine that has no language model. */
const noModelMessage =
  "Armature has no language model configured, so it does not offer sampling (sampling/createMessage)"

/** Runs an Effect for the SDK, rejecting with the SamplingError itself so the SDK sends its code and message. */
const toPromise = <A>(effect: Effect.Effect<A, SamplingError>): Promise<A> =>
  Effect.runPromise(Effect.either(effect)).then(
    Either.match({
      onLeft: (error) => Promise.reject(error),
      onRight: (value) => value
    })
  )

/**
 * Installs the sampling handler on a client whose capabilities declare sampling (`sampler` present). Without a
 * sampler, a server that asks anyway gets a JSON-RPC error saying there is no model, rather than a bare
 * "method not found".
 */
export const install = (
  client: Client,
  server: string,
  policy: SamplingPolicy,
  sampler: Option.Option<Sampler>
): void => {
  if (Option.isSome(sampler)) {
    client.setRequestHandler(CreateMessageRequestSchema, (request) =>
      toPromise(answer(server, policy, sampler.value, request.params))
    )
    return
  }
  client.fallbackRequestHandler = async (request) => {
    throw new SamplingError({
      code: ErrorCode.MethodNotFound,
      message: request.method === "sampling/createMessage" ? noModelMessage : "Method not found"
    })
  }
}
