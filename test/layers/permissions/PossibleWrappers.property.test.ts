/**
 * Issue 28, classes 2 and 8. A program not in the tables may be a wrapper: under a tool-wide allow with Bash deny
 * rules, a denied command after it is denied (`setarch x86_64 rm x`, `ssh-agent git push`), and so is a denied script
 * run through a shell or interpreter. A prefix allow rule never covers an option that runs code (`rg --pre`,
 * `make -E`, `ssh -o ProxyCommand=…`): it asks, and the reason names the option.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, decide, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-possible-wrappers-")
afterAll(project.remove)

const unknownProgram = FastCheck.constantFrom(
  "setarch x86_64",
  "linux64",
  "ssh-agent",
  "bwrap --bind / /",
  "firejail --quiet",
  "mysterytool --flag",
  "xvfb-run -a",
  "numactl -C 0 --"
)
const denied = FastCheck.constantFrom("rm x", "/bin/rm -rf x", "git push", "git push origin main")

const script = FastCheck.tuple(
  FastCheck.constantFrom("bash", "sh", "zsh", "bash -x", "bash -e --", "python3", "node", "env bash", "timeout 5 sh"),
  FastCheck.constantFrom("deploy.sh", "./deploy.sh"),
  FastCheck.constantFrom("", " prod", " --dry-run")
).map(([runner, file, rest]) => `${runner} ${file}${rest}`)

const codeOption = FastCheck.constantFrom(
  ["Bash(rg:*)", "rg --pre ./x foo", "--pre"],
  ["Bash(rg:*)", "rg --pr=./x foo", "--pr"],
  ["Bash(make:*)", "make -E 'x:=1'", "-E"],
  ["Bash(make:*)", "make --ev='x:=1'", "--ev"],
  ["Bash(sed:*)", "sed -nf evil.sed f", "-f"],
  ["Bash(git grep:*)", "git grep -O'touch p' x", "-O"],
  ["Bash(ssh:*)", `ssh -o ${shellQuote("ProxyCommand=touch p")} h`, "-o ProxyCommand"],
  ["Bash(ssh:*)", "ssh -Fcfg h", "-F"],
  ["Bash(tar:*)", "tar -xf a.tar --to-command=./x", "--to-command"],
  ["Bash(rsync:*)", "rsync -avze ./x a h:b", "-e"],
  // round 3: a program ripgrep runs for its hostname, libraries and programs ssh loads or runs, the shell make runs
  // recipes in, sftp/scp talking to a local server program
  ["Bash(rg:*)", "rg --hostname-bin=./x --hyperlink-format=default y", "--hostname-bin"],
  ["Bash(ssh:*)", "ssh -oPKCS11Provider=./x.so h", "-o PKCS11Provider"],
  ["Bash(ssh:*)", "ssh -I ./x.so h", "-I"],
  ["Bash(ssh:*)", `ssh -o ${shellQuote("XAuthLocation ./x")} -X h`, "-o XAuthLocation"],
  ["Bash(make:*)", "make SHELL=./x", "SHELL"],
  ["Bash(make:*)", "make 'MAKEFLAGS=--eval=x'", "MAKEFLAGS"],
  ["Bash(sftp:*)", "sftp -D ./x h", "-D"],
  ["Bash(scp:*)", "scp -D ./x a h:b", "-D"],
  ["Bash(awk:*)", "awk -f prog.awk f", "-f"],
  ["Bash(gawk:*)", "gawk --load=./x.so 1 f", "--load"]
)

layer(base)("programs not in the tables and options that run code (generated)", (it) => {
  it.effect.prop(
    "a denied command after an unknown program is denied",
    [unknownProgram, denied],
    ([program, command]) =>
      Effect.gen(function* () {
        const line = `${program} ${command}`
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Bash(rm:*)", "Bash(git push:*)"],
          tool: "Bash",
          input: { command: line }
        })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "deny" })
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect.prop(
    "a denied script run through a shell or an interpreter is denied",
    [script],
    ([line]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Bash(./deploy.sh:*)"],
          tool: "Bash",
          input: { command: line }
        })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "deny" })
      }),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect.prop(
    "a prefix allow rule never covers an option that runs code, and the reason names it",
    [codeOption],
    ([[rule, line, option]]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: [rule], tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "ask" })
        expect(decision.reason).toContain(option)
      }),
    { fastCheck: { numRuns: 30 } }
  )
})
