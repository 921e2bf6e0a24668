/**
 * The MCP annotations `mcp serve` advertises for a tool, fail-closed: a client may auto-approve on them, so a hint
 * that lowers the risk is given only where it holds for every input.
 *
 * A tool's flags (`isReadOnly`, `isDestructive`) are functions of the input, so they cannot say "for every input"
 * by themselves. The built-in tools are therefore listed here with what holds for all of their inputs (a test
 * checks each entry against the tool's flags on generated inputs); MCP-proxied tools carry their server's
 * constant hints (read-only and destructive through the tool's flags, idempotent and open-world as the server gave
 * them, open-world by MCP's default when it did not); any other tool gets the most cautious annotations.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import * as Tool from "../../domain/Tool.js"
import { serverHintsOf } from "./McpToolShape.js"

/** What holds for every input of a tool. */
export interface StaticHints {
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly openWorld: boolean
  /** Omitted where unknown (e.g. it depends on what the world does between calls). */
  readonly idempotent?: boolean
}

/** The most cautious hints, for a tool nothing is known about. */
export const unknownHints: StaticHints = { readOnly: false, destructive: true, openWorld: true }

/** The built-in tools, by name. A tool missing here is annotated as unknown. */
export const builtinHints: Readonly<Record<string, StaticHints>> = {
  // Asks the user multiple-choice questions: nothing written, but the answers may differ each time.
  AskUserQuestion: { readOnly: true, destructive: false, openWorld: false, idempotent: false },
  // Runs arbitrary commands: may write, delete and reach the network, whatever the analyzer says of one input.
  Bash: { readOnly: false, destructive: true, openWorld: true, idempotent: false },
  // Reads a background shell's new output: never writes, but a second read returns something else.
  BashOutput: { readOnly: true, destructive: false, openWorld: false, idempotent: false },
  Edit: { readOnly: false, destructive: true, openWorld: false, idempotent: false },
  // Presents a plan and asks to leave plan mode: session bookkeeping only.
  ExitPlanMode: { readOnly: true, destructive: false, openWorld: false, idempotent: false },
  Glob: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  Grep: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  KillShell: { readOnly: false, destructive: true, openWorld: false, idempotent: true },
  // Inserts, replaces or deletes cells of a notebook: inserting twice gives two cells.
  NotebookEdit: { readOnly: false, destructive: true, openWorld: false, idempotent: false },
  Read: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  Sleep: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  // Replaces the session's todo list (session bookkeeping, nothing outside the session).
  TodoWrite: { readOnly: false, destructive: false, openWorld: false, idempotent: true },
  ToolSearch: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  WebFetch: { readOnly: true, destructive: false, openWorld: true },
  // Overwrites whatever file is there; writing the same content twice leaves the same file.
  Write: { readOnly: false, destructive: true, openWorld: false, idempotent: true }
}

/**
 * The hints of `tool`: the table for a built-in, the server's constant hints for an MCP tool (its flags ignore
 * the input by construction), the most cautious ones otherwise.
 */
export const hintsOf = (tool: Tool.Any): StaticHints => {
  if (tool.source === "builtin" && Object.hasOwn(builtinHints, tool.name)) return builtinHints[tool.name]
  if (tool.source === "mcp" || tool.category === "mcp") {
    const readOnly = Tool.safely(tool.isReadOnly, {})
    const server = serverHintsOf(tool)
    return {
      readOnly,
      destructive: !readOnly && Tool.safely(tool.isDestructive, {}),
      openWorld: server.openWorldHint ?? true,
      ...(server.idempotentHint === undefined ? {} : { idempotent: server.idempotentHint })
    }
  }
  return unknownHints
}

/** The `annotations` of a tool in `tools/list`. */
export const annotationsOf = (tool: Tool.Any): ToolAnnotations => {
  const hints = hintsOf(tool)
  return {
    readOnlyHint: hints.readOnly,
    destructiveHint: !hints.readOnly && hints.destructive,
    ...(hints.idempotent === undefined ? {} : { idempotentHint: hints.idempotent }),
    openWorldHint: hints.openWorld
  }
}
