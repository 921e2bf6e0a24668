/**
 * What an MCP client answers to its servers: elicitation (to the McpElicitor when there is one, else to the
 * Approver's `elicit`, declined otherwise), roots (the session's project directory and working directory, as
 * file:// URIs, with `notifications/roots/list_changed` when they change) and sampling (McpSampling.ts).
 */
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  ElicitRequestSchema,
  type ElicitResult,
  ListRootsRequestSchema,
  type Root
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, Option, Ref, Stream } from "effect"
import type { Approver } from "../../services/Approver.js"
import type { ElicitationAnswer, McpElicitor } from "../../services/McpClients.js"
import type { Session } from "../../services/Session.js"

/** The capabilities the client declares: sampling only when there is a language model to answer with. */
export const clientCapabilities = (sampling: boolean) => ({
  elicitation: { form: {} },
  roots: { listChanged: true },
  ...(sampling ? { sampling: {} } : {})
})

/** The session's roots: the project directory, and the working directory when it differs. */
const rootsOf = (projectDir: string, cwd: string): ReadonlyArray<Root> =>
  [...new Set([projectDir, cwd])].map((dir) => ({ uri: pathToFileURL(dir).href, name: Path.basename(dir) || dir }))

const toResult = (answer: ElicitationAnswer): ElicitResult =>
  answer.action === "accept"
    ? {
        action: "accept",
        content: Object.fromEntries(
          Object.entries(answer.content).map(([k, v]) => [k, typeof v === "object" ? [...v] : v])
        )
      }
    : { action: answer.action }

/** Who answers forms: the McpElicitor when provided, else the Approver when it can, else nobody. */
export const elicitorOf = (
  elicitor: Option.Option<McpElicitor["Type"]>,
  approver: Option.Option<Approver["Type"]>
): Option.Option<McpElicitor["Type"]["elicit"]> =>
  Option.orElse(
    Option.map(elicitor, (e) => e.elicit),
    () => Option.flatMap(approver, (a) => Option.fromNullable(a.elicit))
  )

/**
 * Installs the handlers on a client of server `server`, and announces a change of roots as soon as the session's
 * working directory changes (for as long as the current scope: the connection's). Returns the effect that
 * announces a change not yet announced (the calls run it too, in case a change raced the connection).
 */
export const install = (
  client: Client,
  server: string,
  session: Session["Type"],
  elicit: Option.Option<McpElicitor["Type"]["elicit"]>
) =>
  Effect.gen(function* () {
    const roots = () => Effect.map(Ref.get(session.context), (context) => rootsOf(session.projectDir, context.cwd))
    const announced = yield* Ref.make(JSON.stringify(yield* roots()))
    client.setRequestHandler(ListRootsRequestSchema, () =>
      Effect.runPromise(Effect.map(roots(), (list) => ({ roots: [...list] })))
    )
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const params = request.params as { message: string; requestedSchema?: Record<string, unknown> }
      return Effect.runPromise(
        Option.match(elicit, {
          onNone: () => Effect.succeed<ElicitResult>({ action: "decline" }),
          onSome: (ask) =>
            ask({ server, message: params.message, requestedSchema: params.requestedSchema ?? {} }).pipe(
              Effect.map(toResult)
            )
        })
      )
    })
    /** Sends `notifications/roots/list_changed` if the roots differ from the last ones announced. */
    const announce = Effect.gen(function* () {
      const now = JSON.stringify(yield* roots())
      if ((yield* Ref.getAndSet(announced, now)) !== now) {
        yield* Effect.promise(() => client.sendRootsListChanged().catch(() => undefined))
      }
    })
    yield* session.context.changes.pipe(
      Stream.map((context) => context.cwd),
      Stream.changes,
      Stream.runForEach(() => announce),
      Effect.forkScoped
    )
    return announce
  })
