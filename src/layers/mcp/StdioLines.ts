/**
 * The server side of MCP's stdio transport: one JSON-RPC message per line on stdin, answers on stdout.
 *
 * Unlike the SDK's transport it closes when stdin ends (so a client that goes away never leaves the server
 * running), answers a line that is not JSON with a JSON-RPC parse error (-32700) and one that is JSON but not a
 * JSON-RPC message with an invalid-request error (-32600), instead of dropping them silently.
 */
import type { Readable, Writable } from "node:stream"
import { StringDecoder } from "node:string_decoder"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"

/** Lines longer than this (64 MiB) are refused with a parse error and skipped. */
const maxLineBytes = 64 * 1024 * 1024

const idOf = (json: unknown): string | number | null => {
  if (typeof json !== "object" || json === null || !("id" in json)) return null
  const id = json.id
  return typeof id === "string" || typeof id === "number" ? id : null
}

/** The error answer for a line that could not be taken as a message. */
const lineError = (line: string): JSONRPCMessage | undefined => {
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch (e) {
    return {
      jsonrpc: "2.0",
      id: null,
      error: { code: ErrorCode.ParseError, message: `Parse error: ${e instanceof Error ? e.message : String(e)}` }
    } as unknown as JSONRPCMessage
  }
  const parsed = JSONRPCMessageSchema.safeParse(json)
  if (parsed.success) return undefined
  return {
    jsonrpc: "2.0",
    id: idOf(json),
    error: { code: ErrorCode.InvalidRequest, message: "Invalid Request: not a JSON-RPC 2.0 message" }
  } as unknown as JSONRPCMessage
}

/** A stdio transport for a server, over any pair of streams (stdin/stdout by default). */
export class StdioLinesTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  private readonly decoder = new StringDecoder("utf8")
  private pending = ""
  private skipping = false
  private closed = false

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout
  ) {}

  private readonly onData = (chunk: Buffer | string): void => {
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk)
    let start = 0
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      const line = this.pending + text.slice(start, end)
      this.pending = ""
      start = end + 1
      if (this.skipping) this.skipping = false
      else this.onLine(line.replace(/\r$/, ""))
    }
    if (!this.skipping) this.pending += text.slice(start)
    if (this.pending.length > maxLineBytes) {
      this.pending = ""
      this.skipping = true
      void this.send({
        jsonrpc: "2.0",
        id: null,
        error: { code: ErrorCode.ParseError, message: `Parse error: a line longer than ${maxLineBytes} bytes` }
      } as unknown as JSONRPCMessage)
    }
  }

  private onLine(line: string): void {
    if (line.trim() === "") return
    const error = lineError(line)
    if (error !== undefined) {
      void this.send(error)
      return
    }
    this.onmessage?.(JSONRPCMessageSchema.parse(JSON.parse(line)))
  }

  private readonly onEnd = (): void => {
    void this.close()
  }

  private readonly onError = (error: Error): void => {
    this.onerror?.(error)
    void this.close()
  }

  async start(): Promise<void> {
    this.input.on("data", this.onData)
    this.input.on("end", this.onEnd)
    this.input.on("close", this.onEnd)
    this.input.on("error", this.onError)
    this.output.on("error", this.onError)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.input.off("data", this.onData)
    this.input.off("end", this.onEnd)
    this.input.off("close", this.onEnd)
    this.input.off("error", this.onError)
    this.output.off("error", this.onError)
    this.input.pause()
    // stdin holds the event loop open while it is a readable pipe: let it go.
    if (this.input === process.stdin) process.stdin.destroy()
    this.onclose?.()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.output.destroyed || this.output.writableEnded) return resolve()
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.output.once("drain", resolve)
    })
  }
}
