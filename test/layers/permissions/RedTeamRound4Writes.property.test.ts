/**
 * Round-4 red team (issue 28 classes 6 and 9): writes that must ask in acceptEdits and bypassPermissions mode. An
 * archive or a patch names the files it writes inside itself (`tar xf a.tar`, `unzip a.zip`, `patch -p1 < p.diff`
 * may write `.git/hooks/pre-commit`); more start-up files run code (`~/.ssh/rc`, `~/.xprofile`, `~/.login`, systemd
 * user units, `~/.claude.json`'s MCP servers); git subcommands write hooks or configuration no word names (`git init
 * --template=DIR`, `git lfs install`, `git maintenance register`, `git sparse-checkout set`); and changing a device's
 * owner or mode (`chmod 000 /dev/null`) breaks the system as surely as replacing it.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-red-team-4-writes-")
afterAll(project.remove)

const mode = FastCheck.constantFrom("acceptEdits" as const, "bypassPermissions" as const)

const extraction = FastCheck.constantFrom(
  "tar xf a.tar",
  "tar -xzf a.tgz",
  "tar --extract -f a.tar",
  "bsdtar -xf a.tar",
  "unzip a.zip",
  "unzip -o a.zip -d src",
  "cpio -idv < a.cpio",
  "7z x a.7z",
  "ar x a.a",
  "pax -r -f a.pax",
  "patch -p1 < p.diff",
  "patch -p0 -i p.diff",
  "git apply --unsafe-paths p.diff",
  "timeout 60 tar xf a.tar"
)

const startUp = FastCheck.tuple(
  FastCheck.constantFrom(
    ".ssh/rc",
    ".ssh/authorized_keys",
    ".ssh/config",
    ".login",
    ".mkshrc",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".pam_environment",
    ".config/autostart/x.desktop",
    ".config/systemd/user/x.service",
    ".config/environment.d/x.conf",
    ".claude.json",
    ".gdbinit",
    ".vimrc",
    ".npmrc"
  ),
  FastCheck.constantFrom("~/", "src/"),
  FastCheck.constantFrom(
    (p: string) => `echo x >> ${p}`,
    (p: string) => `printf x > ${p}`,
    (p: string) => `cp src/a.ts ${p}`,
    (p: string) => `tee -a ${p} < src/a.ts`
  )
).map(([name, where, write]) => write(`${where}${name}`))

const gitWrites = FastCheck.constantFrom(
  "git init --template=tpl",
  "git init -q --template ./tpl .",
  "git lfs install",
  "git maintenance register",
  "git maintenance start",
  "git sparse-checkout set src",
  "git -C . sparse-checkout init"
)

const deviceMetadata = FastCheck.tuple(
  FastCheck.constantFrom(
    "chmod 000",
    "chmod -R 777",
    "chown nobody",
    "chgrp nogroup",
    "setfacl -m u:nobody:rw",
    "chattr +i"
  ),
  FastCheck.constantFrom("/dev/null", "/dev/tty", "/dev/zero", "/dev/sda")
).map(([command, device]) => `${command} ${device}`)

const notAllowed = (command: string, m: "acceptEdits" | "bypassPermissions") =>
  Effect.gen(function* () {
    const outcome = yield* bashOutcome(project, { mode: m }, command)
    expect(outcome.behavior === "allow" ? outcome : "not allowed").toEqual("not allowed")
  })

layer(base)("red team round 4: writes that always ask (generated)", (it) => {
  const runs = { fastCheck: { numRuns: 40 } }
  it.effect.prop("an archive or a patch extracted", [extraction, mode], ([c, m]) => notAllowed(c, m), runs)
  it.effect.prop("a start-up file that runs code", [startUp, mode], ([c, m]) => notAllowed(c, m), runs)
  it.effect.prop("git writing its hooks or configuration", [gitWrites, mode], ([c, m]) => notAllowed(c, m), runs)
  it.effect.prop("a device's owner, mode or attributes", [deviceMetadata, mode], ([c, m]) => notAllowed(c, m), runs)
  it.effect.prop(
    "archives created or listed and a plain git init stay allowed in bypassPermissions mode",
    [
      FastCheck.constantFrom(
        "tar czf out.tgz src",
        "tar tf a.tar",
        "unzip -l a.zip",
        "tar -xOf a.tar f",
        "git init",
        "chmod +x src/a.ts",
        "patch --dry-run -p1 < p.diff",
        "git apply --check p.diff"
      )
    ],
    ([command]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, { mode: "bypassPermissions" }, command)
        expect(outcome.behavior).toBe("allow")
      }),
    { fastCheck: { numRuns: 20 } }
  )
})
