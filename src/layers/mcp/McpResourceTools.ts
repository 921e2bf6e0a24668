/**
 * `ListMcpResources` and `ReadMcpResource`: the resources of the configured MCP servers, as tools the model can
 * use (deferred, read-only), named as in Claude Code's equivalents. Pages of `resources/list` are followed with
 * `Stream.paginateEffect`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Resource } from "@modelcontextprotocol/sdk/types.js"
import { Chunk, Effect, Option, Schema, Stream } from "effect"
import * as McpFailure from "../../domain/McpFailure.js"
import * as Tool from "../../domain/Tool.js"

/** The servers the tools reach, by name. */
export interface ResourceServers {
  readonly names: ReadonlyArray<string>
  readonly withClient: <A>(
    server: string,
    f: (client: Client) => Promise<A>
  ) => Effect.Effect<A, McpFailure.RequestFailure>
}

/** One resource as listed to the model. */
export interface Listed {
  readonly server: string
  readonly uri: string
  readonly name: string
  readonly mimeType?: string
  readonly description?: string
}

const hasResources = (client: Client): boolean => client.getServerCapabilities()?.resources !== undefined

/** Every resource of one server, page after page (none when the server has no resources capability). */
const listServer = (
  servers: ResourceServers,
  server: string
): Effect.Effect<ReadonlyArray<Listed>, McpFailure.RequestFailure> =>
  Stream.paginateEffect(Option.none<string>(), (cursor) =>
    servers.withClient(server, async (client) => {
      if (!hasResources(client)) return [[] as ReadonlyArray<Resource>, Option.none<Option.Option<string>>()] as const
      const page = await client.listResources(Option.isSome(cursor) ? { cursor: cursor.value } : undefined)
      const next = page.nextCursor === undefined ? Option.none() : Option.some(Option.some(page.nextCursor))
      return [page.resources, next] as const
    })
  ).pipe(
    Stream.flattenIterables,
    Stream.map(
      (r): Listed => ({
        server,
        uri: r.uri,
        name: r.name,
        ...(r.mimeType === undefined ? {} : { mimeType: r.mimeType }),
        ...(r.description === undefined ? {} : { description: r.description })
      })
    ),
    Stream.runCollect,
    Effect.map(Chunk.toReadonlyArray)
  )

const unknownServer = (servers: ResourceServers, server: string) =>
  new McpFailure.UnknownMcpServer({
    server,
    message: `No MCP server named ${JSON.stringify(server)}; configured: ${servers.names.join(", ") || "none"}`
  })

/** The two tools over `servers`. */
export const make = (servers: ResourceServers) =>
  Effect.all([
    Tool.make({
      name: "ListMcpResources",
      description:
        "Lists the resources offered by the configured MCP servers (uri, name, MIME type), of one server or of all. Read one with ReadMcpResource.",
      input: Schema.Struct({
        server: Schema.optional(Schema.String).annotations({ description: "Only this server's resources" })
      }),
      output: Schema.Array(Schema.Unknown),
      category: "mcp",
      shouldDefer: true,
      searchHint: "mcp resources list",
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      failure: McpFailure.ResourceFailure,
      call: (input): Effect.Effect<ReadonlyArray<Listed>, McpFailure.ResourceFailure> =>
        input.server !== undefined && !servers.names.includes(input.server)
          ? Effect.fail(unknownServer(servers, input.server))
          : Effect.map(
              Effect.forEach(
                input.server === undefined ? servers.names : [input.server],
                (s) => listServer(servers, s),
                {
                  concurrency: "unbounded"
                }
              ),
              (lists) => lists.flat()
            ),
      toResult: (listed) => (listed.length === 0 ? "No resources found" : JSON.stringify(listed, null, 2))
    }),
    Tool.make({
      name: "ReadMcpResource",
      description: "Reads one resource of an MCP server by its URI (as listed by ListMcpResources).",
      input: Schema.Struct({
        server: Schema.String.annotations({ description: "The MCP server's name" }),
        uri: Schema.String.annotations({ description: "The resource's URI" })
      }),
      output: Schema.String,
      category: "mcp",
      shouldDefer: true,
      searchHint: "mcp resource read",
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      failure: McpFailure.ResourceFailure,
      call: (input): Effect.Effect<string, McpFailure.ResourceFailure> =>
        servers.names.includes(input.server)
          ? servers.withClient(input.server, async (client) => {
              const result = await client.readResource({ uri: input.uri })
              return result.contents
                .map((c) =>
                  "text" in c && typeof c.text === "string"
                    ? c.text
                    : `[binary resource ${c.uri}${c.mimeType ? ` (${c.mimeType})` : ""}, ${"blob" in c && typeof c.blob === "string" ? c.blob.length : 0} base64 characters]`
                )
                .join("\n")
            })
          : Effect.fail(unknownServer(servers, input.server))
    })
  ])
