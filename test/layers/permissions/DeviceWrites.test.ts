/**
 * Bash writes of devices and kernel files (issue 28 class 6): replacing, removing or linking a device, or writing a
 * device other than a harmless sink, asks in every mode, bypassPermissions included; writing into a sink
 * (`> /dev/null`, `tee /dev/null`, `cp x /dev/null`, `dd of=/dev/null`) stays allowed there.
 */
import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as DeviceWrites from "../../../src/domain/shell/DeviceWrites.js"
import { base, bashOutcome, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-device-writes-")
afterAll(project.remove)
Fs.writeFileSync(`${project.proj}/README.md`, "readme\n")

const device = FastCheck.constantFrom("/dev/null", "/dev/zero", "/dev/sda", "/dev/nvme0n1", "/dev/tty1", "/dev/random")
const spelling = FastCheck.constantFrom(
  (d: string) => `mv README.md ${d}`,
  (d: string) => `mv ${d} x`,
  (d: string) => `mv -f ${d} x`,
  (d: string) => `rm ${d}`,
  (d: string) => `rm -f ${d}`,
  (d: string) => `ln -sf README.md ${d}`,
  (d: string) => `cp -T README.md ${d}`,
  (d: string) => `cp --remove-destination README.md ${d}`,
  (d: string) => `cp -f README.md ${d}`,
  (d: string) => `install README.md ${d}`,
  (d: string) => `rsync README.md ${d}`,
  (d: string) => `touch ${d}`
)
const otherDevice = FastCheck.constantFrom("/dev/sda", "/dev/zero", "/dev/mem", "/proc/sys/vm/drop_caches", "/sys/x")
const writer = FastCheck.constantFrom(
  (d: string) => `echo x > ${d}`,
  (d: string) => `printf x >> ${d}`,
  (d: string) => `cat README.md > ${d}`,
  (d: string) => `tee ${d} < README.md`,
  (d: string) => `cp README.md ${d}`,
  (d: string) => `dd if=README.md of=${d}`,
  (d: string) => `truncate -s 0 ${d}`
)
const mode = FastCheck.constantFrom("acceptEdits" as const, "bypassPermissions" as const, "default" as const)

layer(base)("Bash writes of devices (generated)", (it) => {
  it.effect.prop(
    "replacing, removing or linking a device is never allowed without approval",
    [spelling, device, mode],
    ([spell, d, m]) =>
      Effect.gen(function* () {
        expect(yield* bashOutcome(project, { mode: m }, spell(d))).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 300 } }
  )

  it.effect.prop(
    "writing a device other than a sink is never allowed without approval",
    [writer, otherDevice, mode],
    ([spell, d, m]) =>
      Effect.gen(function* () {
        expect(yield* bashOutcome(project, { mode: m }, spell(d))).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 300 } }
  )

  it.effect("writing into a sink stays allowed in bypassPermissions mode", () =>
    Effect.gen(function* () {
      for (const line of [
        "cat README.md > /dev/null",
        "ls >/dev/null 2>&1",
        "echo x > /dev/stderr",
        "echo x > /dev/tty",
        "echo x 1>&2 2>/dev/fd/2",
        "tee /dev/null < README.md",
        "cp README.md /dev/null",
        "dd if=/dev/zero of=/dev/null count=1",
        "echo x > /dev/shm/armature-test-scratch",
        "mkdir -p build >/dev/null 2>&1"
      ]) {
        expect(yield* bashOutcome(project, { mode: "bypassPermissions" }, line)).toMatchObject({ behavior: "allow" })
      }
    })
  )
})

layer(base)("DeviceWrites.reason", (it) => {
  it("a redirection into a sink is free, a replacing command is not", () => {
    expect(DeviceWrites.reason("/dev/null", { given: "/dev/null", redirect: true, guessed: false })).toBeUndefined()
    expect(
      DeviceWrites.reason("/dev/null", { given: "/dev/null", redirect: false, guessed: false, program: "mv", args: [] })
    ).toBeDefined()
    expect(
      DeviceWrites.reason("/dev/zero", {
        given: "/dev/zero",
        redirect: false,
        guessed: true,
        program: "dd",
        args: ["if=/dev/zero", "of=/dev/null"]
      })
    ).toBeUndefined()
    expect(DeviceWrites.reason("/dev/tcp/127.0.0.1/9", { given: "x", redirect: true, guessed: false })).toBeUndefined()
  })
})
