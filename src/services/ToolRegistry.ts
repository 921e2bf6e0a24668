/**
 * The registry of tools by name and alias, and the assembly of the pool (the tools the model is offered).
 */
import { Context, type Effect, type Option, type Scope, type Stream } from "effect"
import type { DuplicateToolError } from "../domain/Errors.js"
import type * as Tool from "../domain/Tool.js"

/** Which tool set the pool keeps: all tools, or only Bash, Read and Edit. */
export type ToolSet = "full" | "simple"

/** Options for assembling the pool sent to the model. */
export interface PoolOptions {
  readonly toolSet?: ToolSet | undefined
  /** The whole-tool deny hook point: a tool denied outright is never shown (docs/permissions.md). */
  readonly isDenied?: ((tool: Tool.Any) => boolean) | undefined
}

/** A change of the registry's contents, for listeners such as ToolSearch or the agent loop. */
export type RegistryChange =
  | { readonly _tag: "Registered"; readonly name: string }
  | { readonly _tag: "Unregistered"; readonly name: string }

/** The port: a registry of tools that changes at run time. */
export class ToolRegistry extends Context.Tag("armature/ToolRegistry")<
  ToolRegistry,
  {
    /**
     * Adds a tool; a name or alias already used by a tool of the same source fails, unless both are versions of the
     * same name with different versions (the newest becomes active for calls that start from now on).
     */
    readonly register: (tool: Tool.Any) => Effect.Effect<void, DuplicateToolError>
    /** Adds a tool for the life of the current scope. */
    readonly registerScoped: (tool: Tool.Any) => Effect.Effect<void, DuplicateToolError, Scope.Scope>
    /** Removes a tool by name (every version), or one version by `name@version`; true when it was there. */
    readonly unregister: (name: string) => Effect.Effect<boolean>
    /**
     * Finds a tool by name, then by alias: its active version (the newest, or the one settings pin); `name@version`
     * finds that version whether active or not. Built-ins win name clashes with MCP tools.
     */
    readonly lookup: (name: string) => Effect.Effect<Option.Option<Tool.Any>>
    /** Every registered version of a tool, oldest first. */
    readonly versions: (name: string) => Effect.Effect<ReadonlyArray<Tool.Any>>
    /** Every registered tool (its active version), in pool order, with no filtering. */
    readonly all: Effect.Effect<ReadonlyArray<Tool.Any>>
    /** The pool sent to the model: built-in tools by name, then MCP tools by name; tools denied outright left out. */
    readonly pool: (options?: PoolOptions) => Effect.Effect<ReadonlyArray<Tool.Any>>
    /** Registry changes as they happen. */
    readonly changes: Stream.Stream<RegistryChange>
    /**
     * Pins versions for the rest of the registry's life, over the settings' `toolVersions` (a durable session
     * resuming with the versions it started with): `{"Deploy": "1.4.2"}`. Later pins replace earlier ones by name.
     */
    readonly pinVersions: (pins: Readonly<Record<string, string>>) => Effect.Effect<void>
  }
>() {}
