/**
 * What an MCP client answers to its servers: elicitation (to the McpElicitor when there is one, declined
 * otherwise) and roots (the session's project directory and working directory, as file:// URIs, with
 * `notifications/roots/list_changed` when they change). Sampling is not declared, so servers do not ask for it.
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
import { Effect, Option, Ref } from "effect"
import type { ElicitationAnswer, McpElicitor } from "../../services/McpClients.js"
import type { Session } from "../../services/Session.js"

/** The capabilities the client declares. */
export const clientCapabilities = { elicitation: {}, roots: { listChanged: true } }

/** The session's roots: the project directory, and the working directory when it differs. */
export const rootsOf = (projectDir: string, cwd: string): ReadonlyArray<Root> =>
  [...new Set([projectDir, cwd])].map((dir) => ({ uri: pathToFileURL(dir).href, name: Path.basename(dir) || dir }))

const toResult = (answer: ElicitationAnswer): ElicitResult =>
  answer.action === "accept" ? { action: "accept", content: { ...answer.content } } : { action: answer.action }

/** Installs the handlers on a client of server `server`; returns the effect that notifies a change of roots. */
export const install = (
  client: Client,
  server: string,
  session: Session["Type"],
  elicitor: Option.Option<McpElicitor["Type"]>
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
        Option.match(elicitor, {
          onNone: () => Effect.succeed<ElicitResult>({ action: "decline" }),
          onSome: (e) =>
            e
              .elicit({ server, message: params.message, requestedSchema: params.requestedSchema ?? {} })
              .pipe(Effect.map(toResult))
        })
      )
    })
    /** Sends `notifications/roots/list_changed` if the roots differ from the last ones announced. */
    return Effect.gen(function* () {
      const now = JSON.stringify(yield* roots())
      if ((yield* Ref.getAndSet(announced, now)) !== now) {
        yield* Effect.promise(() => client.sendRootsListChanged().catch(() => undefined))
      }
    })
  })
