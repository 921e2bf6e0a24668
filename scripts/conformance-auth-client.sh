#!/bin/sh
# The client command for the MCP conformance suite's auth/* scenarios (@modelcontextprotocol/conformance), run as
#   conformance client --command "sh scripts/conformance-auth-client.sh" --suite auth
# (or --scenario auth/NAME). The suite appends the server's URL. This writes an .mcp.json for it (with the client
# id and secret of MCP_CONFORMANCE_CONTEXT when the scenario gives them, and the client-credentials grant for the
# auth/client-credentials-* scenarios), logs in with `armature mcp login`, whose "browser" ($BROWSER) follows the
# authorization URL as an approving user would, then calls the server's first tool with `armature exec`.
# Version 0.1.16 needs Node 22 (it imports fs.globSync, used only by its tier-check command); on Node 20, drop
# that import from its dist/index.js and define `o` as a stub first (see docs/mcp.md, "Conformance").
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
url="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
node -e '
const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")
const oauth = {}
if (ctx.client_id) oauth.clientId = ctx.client_id
if (ctx.client_secret) oauth.clientSecret = ctx.client_secret
if ((process.env.MCP_CONFORMANCE_SCENARIO ?? "").startsWith("auth/client-credentials")) oauth.grant = "client_credentials"
const entry = { type: "http", url: process.argv[1], ...(Object.keys(oauth).length > 0 ? { oauth } : {}) }
require("fs").writeFileSync("servers.json", JSON.stringify({ mcpServers: { conf: entry } }))
' "$url"
printf '%s\n' 'await fetch(process.argv[2]).catch(() => undefined)' > browser.mjs
export ARMATURE_CONFIG_DIR="$dir/config" BROWSER="node $dir/browser.mjs" HOME="$dir"
armature() { node "$root/bin/armature.mjs" "$@"; }
armature mcp login conf --mcp-config servers.json --timeout 20 || true
tool=$(armature tools list --json --mcp-config servers.json 2>/dev/null | node -e '
let s = ""
process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const tool = JSON.parse(s).find((t) => t.name.startsWith("mcp__conf__"))
  console.log(tool === undefined ? "" : tool.name)
})')
if [ -n "$tool" ]; then
  printf '[{"type":"tool_use","id":"c1","name":"%s","input":{}}]\n' "$tool" > call.json
  armature exec call.json --mcp-config servers.json --allowed-tools mcp__conf --output json
fi
