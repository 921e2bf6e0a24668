/**
 * The OS sandbox Bash commands (and sandboxed stdio MCP servers) run in: its effective settings, whether it can run
 * here, the policy it enforces, and the wrapping of a command line. Implemented by `SandboxLive` (src/layers/sandbox)
 * over @anthropic-ai/sandbox-runtime; `none` is the sandbox turned off. See docs/sandbox.md.
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import * as SandboxDomain from "../domain/Sandbox.js"

/** A command could not be wrapped (the runtime refused the profile, or the sandbox is not ready). */
export class SandboxError extends Schema.TaggedError<SandboxError>()("SandboxError", {
  reason: Schema.String
}) {
  override get message(): string {
    return `The sandbox could not run the command: ${this.reason}`
  }
}

/** What to wrap. */
export interface WrapOptions {
  /** A per-call key (the tool_use id) under which the runtime records what it refused. */
  readonly id: string
  /** The command as the model wrote it, for the violation records. */
  readonly commandText: string
}

/** The port. */
export class Sandbox extends Context.Tag("armature/Sandbox")<
  Sandbox,
  {
    readonly config: SandboxDomain.Config
    readonly availability: SandboxDomain.Availability
    /** The policy enforced (also when unavailable, for `armature sandbox check`); undefined when disabled. */
    readonly policy: SandboxDomain.Policy | undefined
    /** What works only in part: rules the sandbox cannot express, runtime features missing (e.g. seccomp). */
    readonly warnings: ReadonlyArray<string>
    /**
     * The command line that runs `command` inside the sandbox, for `/bin/bash -c`. Scoped: the runtime's per-command
     * state is released when the scope closes, so keep the scope open until the process is gone.
     */
    readonly wrap: (command: string, options: WrapOptions) => Effect.Effect<string, SandboxError, Scope.Scope>
    /**
     * A note for a result the sandbox shaped (which path, which host it refused), or undefined. For a command that
     * succeeded, only refusals the runtime or the output name for certain count (no guess from network errors).
     */
    readonly explain: (id: string, output: string, failed: boolean) => string | undefined
  }
>() {}

/** The sandbox turned off: every command runs unsandboxed, as without this service. */
export const none: Layer.Layer<Sandbox> = Layer.succeed(
  Sandbox,
  Sandbox.of({
    config: SandboxDomain.resolve(undefined, false),
    availability: { _tag: "Disabled" },
    policy: undefined,
    warnings: [],
    wrap: () => Effect.fail(new SandboxError({ reason: "the sandbox is turned off" })),
    explain: () => undefined
  })
)

/** How a Bash command line (its simple commands' words) runs under the sandbox service. */
export const planFor = (
  sandbox: Context.Tag.Service<Sandbox>,
  commands: ReadonlyArray<ReadonlyArray<string>>,
  disableRequested: boolean
): SandboxDomain.RunPlan => SandboxDomain.plan(sandbox.config, sandbox.availability, commands, disableRequested)
