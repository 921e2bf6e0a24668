/**
 * The rule-based PermissionPolicy: the permission pipeline (`Pipeline.ts`) over settings rules, the shell analyzer
 * and the file system. Each stage is a pure function of a call prepared once (`Prepare.ts`) returning one trace
 * step; the first stage with a verdict decides. See docs/permissions.md.
 */
import { FileSystem } from "@effect/platform"
import { Effect, Layer, Option, Ref } from "effect"
import type { PermissionBehavior } from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import * as SessionMode from "../../domain/SessionMode.js"
import { LiveSettings, reader } from "../../services/LiveSettings.js"
import { PermissionPolicy } from "../../services/PermissionPolicy.js"
import { Sandbox } from "../../services/Sandbox.js"
import { Settings } from "../../services/Settings.js"
import { analysisOf, ShellAnalyzer } from "../../services/ShellAnalyzer.js"
import * as DecisionFileSystem from "./DecisionFileSystem.js"
import { runStages } from "./Pipeline.js"
import { prepare } from "./Prepare.js"

/** Builds the policy from the Settings service, the ShellAnalyzer and the FileSystem. */
export const make = Effect.gen(function* () {
  const settings = yield* Settings
  const analyzer = yield* ShellAnalyzer
  const fs = DecisionFileSystem.of(yield* FileSystem.FileSystem)
  const sandbox = Option.getOrUndefined(yield* Effect.serviceOption(Sandbox))
  // the rules now: live settings (a settings file edited mid-session) apply from the next decision
  const current = yield* reader
  const live = yield* Effect.serviceOption(LiveSettings)
  const permissions = settings.permissions
  const mode = permissions.defaultMode
  return PermissionPolicy.of({
    mode,
    decide: (request) =>
      Effect.gen(function* () {
        const { permissions } = yield* current
        const session = yield* Ref.get(settings.sessionRules)
        const byBehavior = (b: PermissionBehavior) => session.filter((r) => r.behavior === b)
        const call = yield* prepare({
          request,
          // ExitPlanMode may have switched the session out of plan mode
          mode: yield* SessionMode.effectiveMode(request.context.state, permissions.defaultMode),
          rules: {
            allow: [...permissions.allow, ...byBehavior("allow")],
            ask: [...permissions.ask, ...byBehavior("ask")],
            deny: [...permissions.deny, ...byBehavior("deny")]
          },
          additionalDirectories: permissions.additionalDirectories,
          home: settings.home,
          analyze: (command) => analysisOf(analyzer, request.input, command),
          sandbox
        })
        return runStages(call, request.hookDecision)
      }).pipe(Effect.provideService(FileSystem.FileSystem, fs)),
    // the pool is assembled at every turn: a tool denied outright in live settings leaves it from the next turn
    isToolDenied: (tool) =>
      (Option.isSome(live) ? live.value.latest().permissions : permissions).deny.some(
        (rule) => rule.content === undefined && PermissionRule.namesTool(rule.tool, tool)
      )
  })
})

/** The rule-based PermissionPolicy. */
export const layer = Layer.effect(PermissionPolicy, make)
