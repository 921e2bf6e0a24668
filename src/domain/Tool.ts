/**
 * The tool protocol (docs/library.md, "Define a tool"): a tool is described by Schemas (input, output, failure) and
 * built with fail-closed defaults. Its `call` is an `Effect<O, E, R>`: `E` is described by the failure Schema, `R` are
 * the services it needs, provided once by the layer that registers it (ToolRegistryLive.register, `provide`).
 */
import {
  type Context,
  Data,
  Duration,
  Effect,
  Either,
  JSONSchema,
  Option,
  ParseResult,
  type Schema,
  SchemaAST
} from "effect"
import type { ResultContentBlock, ToolResultContent } from "./Blocks.js"
import { ToolFailure, ToolSchemaError, type ToolValidationError } from "./Errors.js"
import { type PermissionMode, type PermissionOpinion, passthrough } from "./Permission.js"
import type * as ToolPolicy from "./ToolPolicy.js"
import * as ToolVersion from "./ToolVersion.js"

/** A tool's category (what kind of thing it does). */
export type Category = "file" | "shell" | "search" | "network" | "agent" | "workflow" | "plan" | "mcp" | "custom"

/** Where a tool comes from; built-ins sort before MCP tools in the pool. */
export type Source = "builtin" | "mcp"

/** What a call touches, for conflict detection and cache invalidation (docs/executor.md). */
export interface Resource {
  readonly key: string
  readonly access: "read" | "write"
}

/** The parts of the session a context modifier may change. */
export interface SessionContext {
  readonly cwd: string
}

/** A change to the session context returned by a call, e.g. Bash's `cd` (docs/executor.md). */
export type ContextModifier = (context: SessionContext) => SessionContext

/** A key into the session's state store, with its initial value. */
export interface StateKey<A> {
  readonly key: string
  readonly initial: A
}

/** Makes a session state key. */
export const stateKey = <A>(key: string, initial: A): StateKey<A> => ({ key, initial })

/** Session state shared by the calls of one session (todos, file-state cache, background shells …). */
export interface SessionState {
  readonly get: <A>(key: StateKey<A>) => Effect.Effect<A>
  readonly set: <A>(key: StateKey<A>, value: A) => Effect.Effect<void>
  readonly modify: <A, B>(key: StateKey<A>, f: (a: A) => readonly [B, A]) => Effect.Effect<B>
}

/** Makes an in-memory session state store. */
export const makeSessionState: Effect.Effect<SessionState> = Effect.sync(() => {
  const store = new Map<string, unknown>()
  const read = <A>(key: StateKey<A>): A => (store.has(key.key) ? (store.get(key.key) as A) : key.initial)
  return {
    get: (key) => Effect.sync(() => read(key)),
    set: (key, value) =>
      Effect.sync(() => {
        store.set(key.key, value)
      }),
    modify: (key, f) =>
      Effect.sync(() => {
        const [b, a] = f(read(key))
        store.set(key.key, a)
        return b
      })
  }
})

/** What a call sees of its surroundings. */
export interface ToolContext {
  readonly toolUseId: string
  /** The session's working directory when the call started. */
  readonly cwd: string
  readonly permissionMode: PermissionMode
  /** Emits a progress event at once, outside the ordering of results. */
  readonly progress: (data: unknown) => Effect.Effect<void>
  /** Completes when the user interrupts the turn; `"block"` tools may watch it to stop early by choice. */
  readonly interrupted: Effect.Effect<void>
  readonly state: SessionState
}

/** A call's output together with a context modifier. */
export class WithModifier<A> extends Data.TaggedClass("WithModifier")<{
  readonly output: A
  readonly modifier: ContextModifier
}> {}

/** Returns `output` from a call together with a context modifier. */
export const withModifier = <A>(output: A, modifier: ContextModifier): WithModifier<A> =>
  new WithModifier({ output, modifier })

/** True when a call returned a `WithModifier`. */
export const isWithModifier = (u: unknown): u is WithModifier<unknown> => u instanceof WithModifier

/**
 * A tool definition with every field filled in. `E` is what `call` fails with (described by `failure`), `R` the
 * services `call` needs; the registry holds only tools whose `R` has been provided (`Any`).
 */
export interface Tool<I, O, E = ToolFailure, R = never> {
  readonly name: string
  /** The version, for a tool registered as `name@version` (docs/tools.md, "Tool versions"). */
  readonly version?: string | undefined
  readonly aliases: ReadonlyArray<string>
  readonly description: string
  readonly input: Schema.Schema<I, unknown>
  readonly output: Schema.Schema<O, unknown>
  /**
   * The Schema of what `call` fails with (`E`, checked against `call` in the Definition); the model sees a failure's
   * `message`, else its encoded form (`failureText`). Typed loosely here so that a tool that cannot fail (`E` never)
   * is still an `Any`.
   */
  // biome-ignore lint/suspicious/noExplicitAny: Schema is invariant in its type; see above
  readonly failure: Schema.Schema<any, unknown>
  readonly progress: Option.Option<Schema.Schema<unknown, unknown>>
  readonly source: Source
  readonly isEnabled: () => boolean
  readonly isReadOnly: (input: I) => boolean
  readonly isConcurrencySafe: (input: I) => boolean
  readonly isDestructive: (input: I) => boolean
  readonly cancelsSiblingsOnError: boolean
  readonly interruptBehavior: "cancel" | "block"
  readonly maxResultSizeChars: number
  readonly shouldDefer: boolean
  readonly alwaysLoad: boolean
  readonly searchHint: string | undefined
  readonly category: Category
  readonly timeout: Option.Option<Duration.Duration>
  /**
   * Whether calling twice with this input does no more than calling once (an MCP server's `idempotentHint`): with
   * read-only calls, the only ones a retry policy retries. Absent means no.
   */
  readonly isIdempotent?: ((input: I) => boolean) | undefined
  /** The tool's own failure policy (retry, timeout, rate limit, circuit breaker); settings may override it. */
  readonly policy?: ToolPolicy.Policy | undefined
  readonly validate: (input: I, ctx: ToolContext) => Effect.Effect<void, ToolValidationError>
  readonly checkPermissions: (input: I, ctx: ToolContext) => Effect.Effect<PermissionOpinion>
  readonly resources: (input: I) => ReadonlyArray<Resource>
  /** The main argument shown in summaries (e.g. Bash's command). */
  readonly summarize: (input: I) => string
  readonly call: (input: I, ctx: ToolContext) => Effect.Effect<O | WithModifier<O>, E, R>
  readonly toResult: (output: O) => ToolResultContent
  /** The JSON Schema of `input`, computed once when the tool is made. */
  readonly inputJsonSchema: JsonObjectSchema
}

/** Any tool whose requirements are provided, whatever its input, output and failure types: what the registry holds. */
// biome-ignore lint/suspicious/noExplicitAny: tools of every input type share one registry
export type Any = Tool<any, any, any, never>

/** Any tool, its requirements provided or not. */
// biome-ignore lint/suspicious/noExplicitAny: tools of every type
export type AnyWithRequirements = Tool<any, any, any, any>

/** The services a tool's `call` needs. */
// biome-ignore lint/suspicious/noExplicitAny: matches any tool
export type Requirements<T> = T extends Tool<any, any, any, infer R> ? R : never

/**
 * A tool whose `call` runs with `context` added to the context it is called in: how the registering layer provides
 * a tool's requirements once, when it is built.
 */
export const provide = <I, O, E, R>(tool: Tool<I, O, E, R>, context: Context.Context<R>): Tool<I, O, E, never> => {
  const call = tool.call as (input: I, ctx: ToolContext) => Effect.Effect<O | WithModifier<O>, E>
  const provided = context.unsafeMap
  // Inside the engine the call's context usually holds these very services already (the registering layer was built
  // from it): then the call runs as it is, since changing a fiber's context costs about as much as the executor's
  // own work per call (bench/Executor.bench.ts: ratio 1.2 -> 2.2 when every call's context was replaced). The answer
  // is remembered for the last context seen: the calls of one executor run in the same one.
  let checked: Context.Context<never> | undefined
  let holds = false
  const holdsAll = (outer: Context.Context<never>): boolean => {
    if (outer === checked) return holds
    holds = true
    for (const [key, service] of provided) {
      if (outer.unsafeMap.get(key) !== service) {
        holds = false
        break
      }
    }
    checked = outer
    return holds
  }
  // the fiber's context read in the fiber's own step (`withFiberRuntime`), not `contextWithEffect`'s two
  return {
    ...tool,
    call: (input, ctx) =>
      Effect.withFiberRuntime((fiber) =>
        holdsAll(fiber.currentContext)
          ? call(input, ctx)
          : Effect.provide(call(input, ctx), context as Context.Context<never>)
      )
  }
}

/** The JSON Schema object sent to the API as `input_schema`. */
export interface JsonObjectSchema {
  readonly type: "object"
  readonly properties: Record<string, unknown>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties: false
  readonly [key: string]: unknown
}

/**
 * What a tool author writes: the required fields and any overrides of the fail-closed defaults. `call` may fail with
 * any `E` described by `failure` (default: ToolFailure) and may need services `R` (provided by the registering layer).
 */
export interface Definition<
  I,
  O,
  IE = unknown,
  OE = unknown,
  PA = unknown,
  PE = unknown,
  E = ToolFailure,
  FE = unknown,
  R = never
> {
  /** The name the model calls; `name@version` (e.g. `Deploy@2.1.0`) makes this one version of `name`. */
  readonly name: string
  /** The version, when not given in the name. */
  readonly version?: string
  readonly aliases?: ReadonlyArray<string>
  readonly description: string
  readonly input: Schema.Schema<I, IE>
  readonly output: Schema.Schema<O, OE>
  /**
   * The Schema of what `call` fails with: a tagged error, or a `Schema.Union` of them. Default ToolFailure. The model
   * sees the failure's `message`, else its encoded form.
   */
  readonly failure?: Schema.Schema<E, FE>
  readonly progress?: Schema.Schema<PA, PE>
  readonly source?: Source
  readonly isEnabled?: () => boolean
  readonly isReadOnly?: (input: I) => boolean
  readonly isConcurrencySafe?: (input: I) => boolean
  readonly isDestructive?: (input: I) => boolean
  readonly cancelsSiblingsOnError?: boolean
  readonly interruptBehavior?: "cancel" | "block"
  readonly maxResultSizeChars?: number
  readonly shouldDefer?: boolean
  readonly alwaysLoad?: boolean
  readonly searchHint?: string
  readonly category?: Category
  readonly timeout?: Duration.DurationInput
  readonly isIdempotent?: (input: I) => boolean
  /** Retries of transient failures, timeout, rate limit and circuit breaker (docs/tools.md, "Tool policies"). */
  readonly policy?: ToolPolicy.Policy
  readonly validate?: (input: I, ctx: ToolContext) => Effect.Effect<void, ToolValidationError>
  readonly checkPermissions?: (input: I, ctx: ToolContext) => Effect.Effect<PermissionOpinion>
  readonly resources?: (input: I) => ReadonlyArray<Resource>
  readonly summarize?: (input: I) => string
  readonly call: (input: I, ctx: ToolContext) => Effect.Effect<O | WithModifier<O>, E, R>
  readonly toResult?: (output: O) => ToolResultContent
}

/** The default mapping of an output to result content: strings as they are, anything else as JSON. */
export const defaultToResult = (output: unknown): ToolResultContent => {
  if (output === undefined || output === null) return ""
  if (typeof output === "string") return output
  if (Array.isArray(output) && output.every(isResultBlock)) return output as ReadonlyArray<ResultContentBlock>
  return JSON.stringify(output, null, 2)
}

const isResultBlock = (u: unknown): boolean =>
  typeof u === "object" &&
  u !== null &&
  "type" in u &&
  (u.type === "text" || u.type === "image" || u.type === "tool_reference")

const defaultSummary = (input: unknown): string => {
  if (typeof input !== "object" || input === null) return ""
  const first = Object.values(input).find((v) => typeof v === "string")
  return typeof first === "string" ? first : ""
}

const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

/**
 * Derives the API's `input_schema` from a tool's input Schema: descriptions from annotations, `required` from
 * non-optional fields, `additionalProperties: false`. Fails when the Schema has no JSON Schema form.
 */
export const jsonSchemaOf = (
  name: string,
  schema: Schema.Schema.AnyNoContext
): Effect.Effect<JsonObjectSchema, ToolSchemaError> =>
  isEmptyStruct(schema.ast)
    ? Effect.succeed({ type: "object", properties: {}, additionalProperties: false })
    : Effect.try({
        try: () => {
          const definitions: Record<string, JSONSchema.JsonSchema7> = {}
          const json = JSONSchema.fromAST(schema.ast, {
            definitions,
            topLevelReferenceStrategy: "skip",
            additionalPropertiesStrategy: "strict"
          }) as unknown as Record<string, unknown>
          const { $schema: _ignored, ...rest } = json
          const out: Record<string, unknown> = { ...rest }
          if (Object.keys(definitions).length > 0) out.$defs = definitions
          return out
        },
        catch: (e) => new ToolSchemaError({ tool: name, reason: e instanceof Error ? e.message : String(e) })
      }).pipe(
        Effect.filterOrFail(
          (json): json is Record<string, unknown> & JsonObjectSchema =>
            json.type === "object" && typeof json.properties === "object",
          () => new ToolSchemaError({ tool: name, reason: "the input Schema is not an object (Schema.Struct)" })
        ),
        Effect.map((json) => (json.additionalProperties === false ? json : { ...json, additionalProperties: false }))
      )

/**
 * Makes a tool from its definition, filling every omitted field with its fail-closed default
 * (writable, not concurrency-safe, not destructive, needs permission). Fails when the input Schema has no
 * JSON Schema form, naming the tool.
 */
export const make = <
  I,
  O,
  IE = unknown,
  OE = unknown,
  PA = unknown,
  PE = unknown,
  E = ToolFailure,
  FE = unknown,
  R = never
>(
  def: Definition<I, O, IE, OE, PA, PE, E, FE, R>
): Effect.Effect<Tool<I, O, E, R>, ToolSchemaError> =>
  Effect.map(jsonSchemaOf(def.name, def.input as Schema.Schema.AnyNoContext), (inputJsonSchema) => ({
    name: ToolVersion.parse(def.name).name,
    version: ToolVersion.parse(def.name).version ?? def.version,
    aliases: def.aliases ?? [],
    description: def.description,
    input: def.input as unknown as Schema.Schema<I, unknown>,
    output: def.output as unknown as Schema.Schema<O, unknown>,
    failure: (def.failure ?? ToolFailure) as Schema.Schema<unknown, unknown>,
    progress: Option.fromNullable(def.progress as unknown as Schema.Schema<unknown, unknown> | undefined),
    source: def.source ?? (def.name.startsWith("mcp__") ? "mcp" : "builtin"),
    isEnabled: def.isEnabled ?? (() => true),
    isReadOnly: def.isReadOnly ?? (() => false),
    isConcurrencySafe: def.isConcurrencySafe ?? (() => false),
    isDestructive: def.isDestructive ?? (() => false),
    cancelsSiblingsOnError: def.cancelsSiblingsOnError ?? false,
    interruptBehavior: def.interruptBehavior ?? "block",
    maxResultSizeChars: def.maxResultSizeChars ?? 100_000,
    shouldDefer: def.shouldDefer ?? false,
    alwaysLoad: def.alwaysLoad ?? false,
    searchHint: def.searchHint,
    category: def.category ?? (def.name.startsWith("mcp__") ? "mcp" : "custom"),
    timeout: Option.map(Option.fromNullable(def.timeout), Duration.decode),
    isIdempotent: def.isIdempotent,
    policy: def.policy,
    validate: def.validate ?? noValidation,
    checkPermissions: def.checkPermissions ?? (() => Effect.succeed(passthrough)),
    resources: def.resources ?? (() => []),
    summarize: def.summarize ?? defaultSummary,
    call: def.call,
    toResult: def.toResult ?? defaultToResult,
    inputJsonSchema
  }))

const nonEmptyString = (u: unknown): u is string => typeof u === "string" && u !== ""

/**
 * The text the model sees for a failure of a tool's `call`: its `message` (then `stderr`, then `stdout`, as a
 * ToolFailure carries them), else its form encoded by the tool's failure Schema, else its string form.
 */
export const failureText = (tool: AnyWithRequirements, failure: unknown): string => {
  if (typeof failure === "object" && failure !== null) {
    const { message, stderr, stdout } = failure as { message?: unknown; stderr?: unknown; stdout?: unknown }
    if (nonEmptyString(message)) return [message, stderr, stdout].filter(nonEmptyString).join("\n")
  }
  const encoded = ParseResult.encodeUnknownEither(tool.failure as Schema.Schema<unknown, unknown>)(failure)
  if (Either.isRight(encoded)) {
    return typeof encoded.right === "string" ? encoded.right : JSON.stringify(encoded.right)
  }
  return String(failure)
}

/** Whether a failure is marked transient (a failure of the way to the tool, not of the tool; ToolPolicy retries). */
export const isTransient = (failure: unknown): boolean =>
  typeof failure === "object" && failure !== null && (failure as { transient?: unknown }).transient === true

/** The `validate` of a tool that declares none: accepts every input (the executor skips it). */
export const noValidation = (_input: unknown, _ctx: ToolContext): Effect.Effect<void, ToolValidationError> =>
  Effect.void

/** Evaluates a safety predicate fail-closed: a thrown defect means `false`. */
export const safely = <I>(predicate: (input: I) => boolean, input: I): boolean => {
  try {
    return predicate(input) === true
  } catch {
    return false
  }
}

/** The tool definition sent to the Messages API. */
export interface ApiToolDefinition {
  readonly name: string
  readonly description: string
  readonly input_schema: JsonObjectSchema
  readonly defer_loading?: boolean
}

/** The Messages API form of a tool. */
export const toApiDefinition = (tool: Any): ApiToolDefinition => ({
  name: tool.name,
  description: tool.description,
  input_schema: tool.inputJsonSchema
})

/** Whether a tool is deferred (only its name is sent until ToolSearch loads it; docs/tools.md). */
export const isDeferred = (tool: Any): boolean =>
  tool.alwaysLoad ? false : tool.name === "ToolSearch" ? false : tool.source === "mcp" ? true : tool.shouldDefer
