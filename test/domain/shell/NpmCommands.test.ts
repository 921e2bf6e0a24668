import { describe, expect, it } from "@effect/vitest"
import * as NpmCommands from "../../../src/domain/shell/NpmCommands.js"

/** npm 11.19's own reading of each word (`deref` of its command list), recorded from the installed npm. */
const npmReads: ReadonlyArray<readonly [string, string | undefined]> = [
  ["publish", "publish"],
  ["pu", "publish"],
  ["pub", "publish"],
  ["publis", "publish"],
  ["i", "install"],
  ["add", "install"],
  ["isntall", "install"],
  ["insta", "install"],
  ["it", "install-test"],
  ["installTest", "install-test"],
  ["install-cl", "ci"],
  ["rm", "uninstall"],
  ["r", "uninstall"],
  ["unlink", "uninstall"],
  ["uni", "uninstall"],
  ["remo", "uninstall"],
  ["unp", "unpublish"],
  ["x", "exec"],
  ["exe", "exec"],
  ["rb", "rebuild"],
  ["rum", "run"],
  ["urn", "run"],
  ["run-s", "run"],
  ["runScript", "run"],
  ["why", "explain"],
  ["explo", "explore"],
  ["ex", undefined],
  ["p", undefined],
  ["Publish", undefined],
  ["publishx", undefined],
  ["", undefined]
]

describe("NpmCommands.canonical", () => {
  it.each(npmReads)("reads %j as npm does", (word, command) => expect(NpmCommands.canonical(word)).toBe(command))
})

describe("NpmCommands.pnpmCanonical", () => {
  it.each([
    ["rm", "remove"],
    ["i", "install"],
    ["up", "update"],
    ["publish", "publish"],
    ["pub", undefined],
    ["curl", undefined]
  ] as const)("reads %j as pnpm does", (word, command) => expect(NpmCommands.pnpmCanonical(word)).toBe(command))
})
