import { describe, expect, it } from "@effect/vitest"
import * as ToolSearchQuery from "../../src/domain/ToolSearchQuery.js"

const tools: ReadonlyArray<ToolSearchQuery.Searchable> = [
  { name: "NotebookEdit", description: "Edits a Jupyter notebook cell.", searchHint: "jupyter ipynb", isMcp: false },
  {
    name: "WebSearch",
    description: "Searches the web and returns results.",
    searchHint: "internet google",
    isMcp: false
  },
  { name: "mcp__github__create_issue", description: "Create a new issue in a GitHub repository", isMcp: true },
  { name: "mcp__github__list_pulls", description: "List pull requests", isMcp: true },
  { name: "mcp__slack__send_message", description: "Send a message to a Slack channel", isMcp: true }
]
const [notebook, webSearch, createIssue, , sendMessage] = tools

describe("ToolSearchQuery", () => {
  it("parses select: and keyword queries", () => {
    expect(ToolSearchQuery.parse("select:Read, WebFetch ,")).toEqual({ _tag: "Select", names: ["Read", "WebFetch"] })
    expect(ToolSearchQuery.parse("SELECT:a")).toEqual({ _tag: "Select", names: ["a"] })
    expect(ToolSearchQuery.parse("  +Slack send  + message ")).toEqual({
      _tag: "Keywords",
      text: "+slack send  + message",
      required: ["slack"],
      optional: ["send", "message"]
    })
  })

  it("splits names on __, _ and CamelCase", () => {
    expect(ToolSearchQuery.nameParts("NotebookEdit")).toEqual(["notebook", "edit"])
    expect(ToolSearchQuery.nameParts("mcp__github__create_issue")).toEqual(["github", "create", "issue"])
    expect(ToolSearchQuery.nameParts("mcp__my-server__getHTTPStatus")).toEqual([
      "my",
      "server",
      "get",
      "http",
      "status"
    ])
  })

  it("scores each term with its weight: name part, search hint, description", () => {
    expect(ToolSearchQuery.scoreTerm(notebook, "notebook")).toBe(10 + 2)
    expect(ToolSearchQuery.scoreTerm(sendMessage, "slack")).toBe(12 + 2)
    expect(ToolSearchQuery.scoreTerm(notebook, "book")).toBe(5)
    expect(ToolSearchQuery.scoreTerm(sendMessage, "mess")).toBe(6)
    expect(ToolSearchQuery.scoreTerm(notebook, "bookedit")).toBe(3)
    expect(ToolSearchQuery.scoreTerm(notebook, "jupyter")).toBe(4 + 2)
    expect(ToolSearchQuery.scoreTerm(webSearch, "google")).toBe(4)
    expect(ToolSearchQuery.scoreTerm(webSearch, "web")).toBe(10 + 2)
    expect(ToolSearchQuery.scoreTerm(createIssue, "repository")).toBe(2)
    expect(ToolSearchQuery.scoreTerm(createIssue, "repo")).toBe(0)
  })

  it("requires +terms and ranks by total score, ties by name", () => {
    expect(ToolSearchQuery.search(tools, "+github issue")).toEqual([
      { name: "mcp__github__create_issue", score: 28 },
      { name: "mcp__github__list_pulls", score: 12 }
    ])
    expect(ToolSearchQuery.search(tools, "+slack +github")).toEqual([])
    expect(ToolSearchQuery.search(tools, "message issue notebook")).toEqual([
      { name: "mcp__github__create_issue", score: 14 },
      { name: "mcp__slack__send_message", score: 14 },
      { name: "NotebookEdit", score: 12 }
    ])
  })

  it("limits keyword results to max_results (default 5)", () => {
    const many = Array.from({ length: 7 }, (_, i) => ({ name: `Alpha${i}`, description: "x", isMcp: false }))
    expect(ToolSearchQuery.search(many, "alpha").map((h) => h.name)).toEqual([
      "Alpha0",
      "Alpha1",
      "Alpha2",
      "Alpha3",
      "Alpha4"
    ])
    expect(ToolSearchQuery.search(many, "alpha", { maxResults: 2 })).toEqual([
      { name: "Alpha0", score: 5 },
      { name: "Alpha1", score: 5 }
    ])
    expect(ToolSearchQuery.defaultMaxResults).toBe(5)
  })

  it("select: returns every named tool, case-insensitive, in order, with no limit", () => {
    expect(ToolSearchQuery.search(tools, "select:websearch,NOTEBOOKEDIT,missing,WebSearch", { maxResults: 1 })).toEqual(
      [
        { name: "WebSearch", score: null },
        { name: "NotebookEdit", score: null }
      ]
    )
  })

  it("an exact name or an mcp__server prefix returns directly", () => {
    expect(ToolSearchQuery.search(tools, "notebookedit")).toEqual([{ name: "NotebookEdit", score: null }])
    expect(ToolSearchQuery.search(tools, "mcp__github")).toEqual([
      { name: "mcp__github__create_issue", score: null },
      { name: "mcp__github__list_pulls", score: null }
    ])
    expect(ToolSearchQuery.search(tools, "mcp__github", { maxResults: 1 })).toEqual([
      { name: "mcp__github__create_issue", score: null }
    ])
    expect(ToolSearchQuery.search(tools, "mcp__github__list")).toEqual([
      { name: "mcp__github__list_pulls", score: null }
    ])
  })

  it("finds nothing for unrelated or empty queries", () => {
    expect(ToolSearchQuery.search(tools, "kubernetes")).toEqual([])
    expect(ToolSearchQuery.search(tools, "   ")).toEqual([])
    expect(ToolSearchQuery.search(tools, "select:")).toEqual([])
  })
})
