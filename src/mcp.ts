/**
 * `effect-armature/mcp`: the layers built on the MCP SDK (`@modelcontextprotocol/sdk`, an optional peer dependency):
 * MCP servers as a source of tools, and Armature's tools served over MCP. `Armature.layer({ mcpConfig })` loads
 * the client side by itself; import this module to use the layers directly.
 */

export * as McpClientsLive from "./layers/mcp/McpClientsLive.js"
export * as McpServer from "./layers/mcp/McpServer.js"
