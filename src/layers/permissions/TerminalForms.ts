/**
 * The terminal approver's MCP questions: an elicitation form asked field by field (each answer checked against
 * the field's type in the requested schema), a server's request to use the language model (sampling), and an
 * unapproved server of the project's `.mcp.json`. Everything a server sends is shown with control characters
 * made visible, so it cannot drive the terminal. See docs/mcp.md.
 */
import { Effect, Either, Option } from "effect"
import type {
  ElicitationAnswer,
  ElicitationRequest,
  ElicitationValue,
  ProjectServerAnswer,
  ProjectServerRequest,
  SamplingRequest
} from "../../services/McpClients.js"

/** How a question is put: write a text, read a line (None when the input is closed). */
export interface Io {
  readonly write: (text: string) => Effect.Effect<void>
  readonly read: Effect.Effect<Option.Option<string>>
}

/** Replaces control characters (escape sequences included), keeping newlines and tabs. */
export const printable = (text: string): string =>
  Array.from(text, (c) => {
    const code = c.charCodeAt(0)
    const control = (code < 0x20 && c !== "\n" && c !== "\t") || (code >= 0x7f && code <= 0x9f)
    return control ? `\\u${code.toString(16).padStart(4, "0")}` : c
  }).join("")

/** One field of a form, read from the requested schema. */
export interface Field {
  readonly key: string
  readonly label: string
  readonly description: string | undefined
  readonly kind: "string" | "number" | "integer" | "boolean" | "choice" | "choices"
  readonly required: boolean
  readonly default: ElicitationValue | undefined
  /** For choice(s): the values and how they are shown. */
  readonly options: ReadonlyArray<{ readonly value: string; readonly label: string }>
  readonly schema: Readonly<Record<string, unknown>>
}

const record = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

const optionsOf = (schema: Readonly<Record<string, unknown>>): Field["options"] => {
  const titled = (list: unknown) =>
    (Array.isArray(list) ? list : [])
      .map(record)
      .flatMap((o) =>
        typeof o.const === "string" ? [{ value: o.const, label: typeof o.title === "string" ? o.title : o.const }] : []
      )
  if (Array.isArray(schema.oneOf)) return titled(schema.oneOf)
  if (Array.isArray(schema.anyOf)) return titled(schema.anyOf)
  const names = strings(schema.enumNames)
  return strings(schema.enum).map((value, i) => ({ value, label: names[i] ?? value }))
}

/** The fields of a requested schema, in the order the server gave them. */
export const fieldsOf = (requestedSchema: Readonly<Record<string, unknown>>): ReadonlyArray<Field> => {
  const required = strings(requestedSchema.required)
  return Object.entries(record(requestedSchema.properties)).map(([key, raw]) => {
    const schema = record(raw)
    const items = record(schema.items)
    const kind: Field["kind"] =
      schema.type === "array"
        ? "choices"
        : schema.enum !== undefined || schema.oneOf !== undefined
          ? "choice"
          : schema.type === "number" || schema.type === "integer" || schema.type === "boolean"
            ? schema.type
            : "string"
    const dflt = schema.default
    return {
      key,
      label: typeof schema.title === "string" ? schema.title : key,
      description: typeof schema.description === "string" ? schema.description : undefined,
      kind,
      required: required.includes(key),
      default:
        typeof dflt === "string" || typeof dflt === "number" || typeof dflt === "boolean"
          ? dflt
          : Array.isArray(dflt)
            ? strings(dflt)
            : undefined,
      options: kind === "choices" ? optionsOf(items) : kind === "choice" ? optionsOf(schema) : [],
      schema
    }
  })
}

const num = (schema: Readonly<Record<string, unknown>>, key: string): number | undefined =>
  typeof schema[key] === "number" ? (schema[key] as number) : undefined

const checkString = (field: Field, text: string): Either.Either<string, string> => {
  const min = num(field.schema, "minLength")
  const max = num(field.schema, "maxLength")
  if (min !== undefined && text.length < min) return Either.left(`at least ${min} characters`)
  if (max !== undefined && text.length > max) return Either.left(`at most ${max} characters`)
  switch (field.schema.format) {
    case "email":
      return /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(text) ? Either.right(text) : Either.left("an email address")
    case "uri":
      return URL.canParse(text) ? Either.right(text) : Either.left("a URI, such as https://example.com")
    case "date":
      return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text))
        ? Either.right(text)
        : Either.left("a date as YYYY-MM-DD")
    case "date-time":
      return /^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(Date.parse(text))
        ? Either.right(text)
        : Either.left("a date and time as YYYY-MM-DDTHH:MM:SSZ")
    default:
      return Either.right(text)
  }
}

const checkNumber = (field: Field, text: string): Either.Either<number, string> => {
  const value = Number(text)
  if (text === "" || !Number.isFinite(value))
    return Either.left(field.kind === "integer" ? "a whole number" : "a number")
  if (field.kind === "integer" && !Number.isInteger(value)) return Either.left("a whole number")
  const min = num(field.schema, "minimum")
  const max = num(field.schema, "maximum")
  if (min !== undefined && value < min) return Either.left(`a number of at least ${min}`)
  if (max !== undefined && value > max) return Either.left(`a number of at most ${max}`)
  return Either.right(value)
}

const pick = (field: Field, text: string): Either.Either<string, string> => {
  const index = /^\d+$/.test(text) ? Number(text) - 1 : -1
  const found = field.options[index] ?? field.options.find((o) => o.value === text || o.label === text)
  return found === undefined
    ? Either.left(`one of ${field.options.map((_, i) => `${i + 1}`).join(", ")} (or the value itself)`)
    : Either.right(found.value)
}

const checkChoices = (field: Field, text: string): Either.Either<ReadonlyArray<string>, string> => {
  const picked: Array<string> = []
  for (const part of text.split(",").map((p) => p.trim())) {
    if (part === "") continue
    const one = pick(field, part)
    if (Either.isLeft(one)) return Either.left(`a comma separated list of ${one.left}`)
    if (!picked.includes(one.right)) picked.push(one.right)
  }
  const min = num(field.schema, "minItems")
  const max = num(field.schema, "maxItems")
  if (min !== undefined && picked.length < min) return Either.left(`at least ${min} choice${min === 1 ? "" : "s"}`)
  if (max !== undefined && picked.length > max) return Either.left(`at most ${max} choice${max === 1 ? "" : "s"}`)
  return Either.right(picked)
}

/**
 * Reads one answer for a field. An empty line takes the default, or leaves an optional field out (`None`); a
 * value that does not fit is `Left` with what was expected.
 */
export const parseField = (field: Field, line: string): Either.Either<Option.Option<ElicitationValue>, string> => {
  const text = line.trim()
  if (text === "") {
    if (field.default !== undefined) return Either.right(Option.some(field.default))
    return field.required ? Either.left("a value (this field is required)") : Either.right(Option.none())
  }
  const some = <A extends ElicitationValue>(e: Either.Either<A, string>) => Either.map(e, (v) => Option.some(v))
  switch (field.kind) {
    case "boolean": {
      const word = text.toLowerCase()
      if (["y", "yes", "true"].includes(word)) return Either.right(Option.some(true))
      if (["n", "no", "false"].includes(word)) return Either.right(Option.some(false))
      return Either.left("yes or no")
    }
    case "number":
    case "integer":
      return some(checkNumber(field, text))
    case "choice":
      return some(pick(field, text))
    case "choices":
      return some(checkChoices(field, text))
    case "string":
      return some(checkString(field, text))
  }
}

const show = (value: ElicitationValue): string =>
  typeof value === "boolean" ? (value ? "yes" : "no") : Array.isArray(value) ? value.join(", ") : String(value)

/** The question for one field: its label, what it takes, its default, whether it is required. */
export const fieldPrompt = (field: Field): string => {
  const what =
    field.kind === "boolean"
      ? "yes/no"
      : field.kind === "choice" || field.kind === "choices"
        ? `${field.kind === "choices" ? "one or more, comma separated, of" : "one of"} ${field.options
            .map((o, i) => `${i + 1}) ${o.label === o.value ? o.value : `${o.label} [${o.value}]`}`)
            .join("  ")}`
        : field.kind === "string" && typeof field.schema.format === "string"
          ? `text, ${field.schema.format}`
          : field.kind === "string"
            ? "text"
            : field.kind
  const notes = [
    what,
    field.default === undefined ? undefined : `Enter for ${show(field.default)}`,
    field.required ? "required" : field.default === undefined ? "Enter to skip" : undefined
  ].filter((n) => n !== undefined)
  const description = field.description === undefined ? "" : ` - ${field.description}`
  return printable(`  ${field.label}${description} (${notes.join("; ")}): `)
}

const attempts = 3

/** A three-way question: the first letters of `choices` (or the words) are accepted; None when input ends. */
const choose = <A extends string>(io: Io, question: string, choices: Readonly<Record<string, A>>, again: string) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < attempts; attempt++) {
      yield* io.write(attempt === 0 ? question : again)
      const line = yield* io.read
      if (Option.isNone(line)) return Option.none<A>()
      const word = line.value.trim().toLowerCase()
      const found = choices[word]
      if (found !== undefined) return Option.some(found)
    }
    return Option.none<A>()
  })

/**
 * Asks an elicitation form on the terminal: whether to fill it in (or decline, or cancel), each field in turn
 * (a value that does not fit is asked again, up to three times), then whether to send it. A closed input or
 * no clear answer cancels.
 */
export const askForm = (io: Io, request: ElicitationRequest): Effect.Effect<ElicitationAnswer> =>
  Effect.gen(function* () {
    const fields = fieldsOf(request.requestedSchema)
    const actions = { y: "accept", yes: "accept", n: "decline", no: "decline", c: "cancel", cancel: "cancel" } as const
    const start = yield* choose(
      io,
      `${printable(`MCP server ${request.server} asks: ${request.message}`)}\nFill in its form (${fields.length} field${fields.length === 1 ? "" : "s"})? [y] yes  [n] decline  [c] cancel `,
      actions,
      "Please answer y, n or c: "
    )
    if (Option.isNone(start)) return { action: "cancel" }
    if (start.value !== "accept") return { action: start.value }
    const content: Record<string, ElicitationValue> = {}
    for (const field of fields) {
      let answered = false
      for (let attempt = 0; attempt < attempts && !answered; attempt++) {
        yield* io.write(fieldPrompt(field))
        const line = yield* io.read
        if (Option.isNone(line)) return { action: "cancel" }
        const parsed = parseField(field, line.value)
        if (Either.isLeft(parsed)) {
          yield* io.write(`  Expected ${parsed.left}.\n`)
          continue
        }
        if (Option.isSome(parsed.right)) content[field.key] = parsed.right.value
        answered = true
      }
      if (!answered) {
        yield* io.write("  No valid answer; the form is cancelled.\n")
        return { action: "cancel" }
      }
    }
    const summary = Object.entries(content).map(([k, v]) => `  ${k}: ${show(v)}`)
    const send = yield* choose(
      io,
      `${printable(summary.join("\n"))}\nSend this to ${printable(request.server)}? [y] send  [n] decline  [c] cancel `,
      actions,
      "Please answer y, n or c: "
    )
    if (Option.isNone(send)) return { action: "cancel" }
    return send.value === "accept" ? { action: "accept", content } : { action: send.value }
  })

/** Asks whether an MCP server may use the language model for this request. */
export const askSampling = (io: Io, request: SamplingRequest): Effect.Effect<boolean> => {
  const conversation = request.messages.map((m) => `  ${m.role}: ${m.text}`)
  const text = [
    `MCP server ${request.server} asks to use the language model (up to ${request.maxTokens} tokens).`,
    ...(request.systemPrompt === undefined ? [] : [`  system: ${request.systemPrompt}`]),
    ...conversation
  ].join("\n")
  return Effect.map(
    choose(
      io,
      `${printable(text)}\nAllow? [y] yes  [n] no `,
      { y: "y", yes: "y", n: "n", no: "n" },
      "Please answer y or n: "
    ),
    (answer) => Option.getOrElse(answer, () => "n") === "y"
  )
}

/** Asks about an unapproved server of the project's `.mcp.json`, as Claude Code does. */
export const askProjectServer = (io: Io, request: ProjectServerRequest): Effect.Effect<ProjectServerAnswer> =>
  Effect.map(
    choose(
      io,
      `${printable(`New MCP server found in ${request.file}: ${request.server} (${request.summary})`)}\n[y] use this server  [a] use this and all future servers of this project's .mcp.json  [n] do not use it `,
      { y: "approve", yes: "approve", a: "approve-all", all: "approve-all", n: "reject", no: "reject" } as const,
      "Please answer y, a or n: "
    ),
    (answer) => Option.getOrElse(answer, (): ProjectServerAnswer => "reject")
  )
