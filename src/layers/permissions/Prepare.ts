/**
 * The effectful part of a decision: computes a call's target, its resolved paths and rule anchors, and the tool's
 * own opinion, once, for the pure stages to read.
 */
import * as Path from "node:path"
import { type Context, Effect } from "effect"
import type { PermissionMode, PermissionOpinion } from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import { resourcesOf } from "../../domain/Resources.js"
import * as Tool from "../../domain/Tool.js"
import type { PermissionRequest } from "../../services/PermissionPolicy.js"
import { planFor, type Sandbox } from "../../services/Sandbox.js"
import type { ShellAnalysis } from "../../services/ShellAnalyzer.js"
import { prepareBash } from "./BashPaths.js"
import { resolveLinkedPrograms } from "./LinkedPrograms.js"
import type { Prepared, PreparedRule } from "./Prepared.js"
import { preparePath, realpathLoose } from "./PreparePaths.js"
import { findProtected } from "./ProtectedTrees.js"
import { copiesTrees, isProtectedPath } from "./SafetyPaths.js"
import { targetOf } from "./Targets.js"

/** The inputs of `prepare`. */
export interface PrepareOptions {
  readonly request: PermissionRequest
  readonly mode: PermissionMode
  readonly rules: {
    readonly allow: ReadonlyArray<PermissionRule.Rule>
    readonly ask: ReadonlyArray<PermissionRule.Rule>
    readonly deny: ReadonlyArray<PermissionRule.Rule>
  }
  readonly additionalDirectories: ReadonlyArray<string>
  readonly home: string
  readonly analyze: (command: string) => ShellAnalysis
  /** The sandbox, when the application has one. */
  readonly sandbox?: Context.Tag.Service<Sandbox> | undefined
}

/** Computes everything the stages need: the target, resolved paths and rule anchors, and the tool's opinion. */
export const prepare = (options: PrepareOptions) =>
  Effect.gen(function* () {
    const { request } = options
    const tool = request.tool
    const input = request.input
    const cwd = request.context.cwd
    const home = options.home
    const target = targetOf(tool, input)
    const written = target._tag === "Command" ? options.analyze(target.command) : undefined
    // `./del x` with `./del` a link to /bin/rm: the rules see the program the link leads to
    const analysis = written === undefined ? undefined : yield* resolveLinkedPrograms(written, cwd, options.analyze)
    const bash =
      analysis === undefined
        ? undefined
        : yield* prepareBash({
            steps: analysis.pathSteps ?? [],
            cwd,
            home,
            ...options.rules,
            readOnly: analysis.readOnly
          })
    const paths =
      bash?.paths ??
      (yield* Effect.forEach(target._tag === "Paths" ? target.paths : [], (p) =>
        Effect.map(preparePath(p, cwd, home), (prepared) =>
          // A device written by a file tool (Write of /dev/null) is not inside the working directories.
          PermissionRule.isEditCall(tool, input) ? { ...prepared, deviceOk: false } : prepared
        )
      ))
    const workingDirs = yield* Effect.forEach([cwd, ...options.additionalDirectories], (d) =>
      realpathLoose(Path.resolve(cwd, d))
    )
    const prepareRule = (rule: PermissionRule.Rule) =>
      Effect.gen(function* () {
        const isPathRule =
          rule.content !== undefined &&
          target._tag === "Paths" &&
          rule.tool !== "WebFetch" &&
          rule.tool !== "Bash" &&
          PermissionRule.coversCall(rule, tool, input)
        if (!isPathRule) return { rule } satisfies PreparedRule
        const { anchor, pattern } = PermissionRule.pathPattern(rule, { cwd, home })
        return { rule, anchor: yield* realpathLoose(anchor), pattern } satisfies PreparedRule
      })
    const opinion = yield* tool.checkPermissions(input, request.context).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.succeed<PermissionOpinion>({
          behavior: "ask",
          reason: `${tool.name}'s permission check failed: ${String(defect)}`
        })
      )
    )
    const readOnly = Tool.safely(tool.isReadOnly, input) && (analysis === undefined || analysis.readOnly)
    // The directories a tree copy names, below the working directories (a working directory itself or one above it
    // is asked for by the safety stage already): walked for protected names.
    const trees =
      target._tag === "Command" && !readOnly && copiesTrees(analysis)
        ? yield* findProtected(
            paths
              .map((p) => p.forms[0])
              .filter((form) => !workingDirs.some((dir) => dir === form || dir.startsWith(`${form}${Path.sep}`))),
            isProtectedPath
          )
        : undefined
    const writesResource = resourcesOf(tool, input).some((r) => r.access === "write")
    return {
      tool,
      input,
      mode: options.mode,
      target,
      analysis,
      paths,
      bash: bash?.check,
      workingDirs,
      cwd,
      home,
      readOnly,
      edits: target._tag === "Paths" && PermissionRule.isEditCall(tool, input),
      writes:
        (target._tag === "Paths" && (PermissionRule.isEditCall(tool, input) || writesResource)) ||
        (analysis !== undefined && !readOnly),
      host: target._tag === "Url" ? PermissionRule.hostOf(target.url) : undefined,
      allow: yield* Effect.forEach(options.rules.allow, prepareRule),
      ask: yield* Effect.forEach(options.rules.ask, prepareRule),
      deny: yield* Effect.forEach(options.rules.deny, prepareRule),
      opinion,
      trees,
      sandbox:
        analysis === undefined || options.sandbox === undefined || !options.sandbox.config.enabled
          ? undefined
          : {
              plan: planFor(
                options.sandbox,
                analysis.commands.map((c) => c.argv),
                typeof input === "object" &&
                  input !== null &&
                  (input as Record<string, unknown>).dangerouslyDisableSandbox === true
              ),
              autoAllow: options.sandbox.config.autoAllowBashIfSandboxed
            }
    } satisfies Prepared
  })
