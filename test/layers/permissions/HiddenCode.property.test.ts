/**
 * A deny rule must not be defeatable by wrapping: under a tool-wide `allow: ["Bash"]` with Bash deny rules, a denied
 * command inside a runner (`watch`, `flock -c`, `su -c`, `ssh HOST`, `parallel`, `npx`, `strace`, `tar
 * --to-command`, `git -c alias.x='!…'`, …) is denied, and code given to an interpreter (`python3 -c`, `perl -e`,
 * `awk 'BEGIN{system(…)}'`, `sed 'e …'`) is never allowed: the rules cannot see into it, so it asks. Genuinely safe
 * forms (`python3 --version`, `timeout 5 echo`, a script file, `awk '{print $1}'`) stay allowed.
 */
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { hiddenCode } from "../../../src/domain/shell/HiddenCode.js"
import { base, decide, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-hidden-code-")
afterAll(project.remove)

const deny = ["Bash(rm:*)", "Bash(git push:*)", "Read(./secrets/**)"]

type Wrap = (inner: string) => string

/** Runners that join their command's words with blanks and hand the line to a shell. */
const joining = ["watch", "ssh", "sg", "parallel"]

/** Runners whose operands run the inner command (as words, or as shell code in one quoted word). */
const runner: FastCheck.Arbitrary<Wrap> = FastCheck.oneof(
  FastCheck.constantFrom(
    "watch",
    "watch -n 1",
    "flock /tmp/lock",
    "flock -w 5 /tmp/lock",
    "runuser -u me --",
    "sg staff",
    "ssh host",
    "ssh -t -p 22 host",
    "strace -f",
    "strace -o /dev/null -e trace=all",
    "ltrace",
    "valgrind -q",
    "unshare -r",
    "nsenter -t 1 -m",
    "chrt -f 1",
    "prlimit --nofile=10",
    "fakeroot",
    "pkexec",
    "faketime 2020-01-01",
    "unbuffer",
    "caffeinate -i",
    "torsocks",
    "proxychains4 -q",
    "rlwrap",
    "entr",
    "cross-env A=1",
    "eatmydata",
    "nocache",
    "cpulimit -l 50 --",
    "npx",
    "npm exec --",
    "pnpm dlx",
    "gdb -q --args",
    "git bisect run",
    "timeout 5",
    "nice -n 5",
    "sudo -u root",
    "env A=1",
    "stdbuf -oL"
  ).map(
    (prefix): Wrap =>
      (inner) =>
        // These join their words into one line for a shell: quoting inside `inner` would be lost unless quoted whole.
        joining.some((j) => prefix.startsWith(j)) && /['"\\]/.test(inner)
          ? `${prefix} ${shellQuote(inner)}`
          : `${prefix} ${inner}`
  ),
  FastCheck.constantFrom<Wrap>(
    (inner) => `flock /tmp/lock -c ${shellQuote(inner)}`,
    (inner) => `su -c ${shellQuote(inner)}`,
    (inner) => `su root -c ${shellQuote(inner)}`,
    (inner) => `script -qc ${shellQuote(inner)} /dev/null`,
    (inner) => `watch ${shellQuote(inner)}`,
    (inner) => `ssh host ${shellQuote(inner)}`,
    (inner) => `npx -c ${shellQuote(inner)}`,
    (inner) => `parallel ::: ${shellQuote(inner)}`,
    (inner) => `parallel -j 2 ${/['"\\]/.test(inner) ? shellQuote(inner) : inner} ::: a b`,
    (inner) => `entr -s ${shellQuote(inner)}`,
    (inner) => `tar --to-command=${shellQuote(inner)} -xf a.tar`,
    (inner) => `tar -I ${shellQuote(inner)} -cf a.tar src`,
    (inner) => `tar --checkpoint-action=exec=${shellQuote(inner)} -cf a.tar src`,
    (inner) => `rsync -e ${shellQuote(inner)} a host:b`,
    (inner) => `rsync --rsh=${shellQuote(inner)} a host:b`,
    (inner) => `zip -T -TT ${shellQuote(inner)} a.zip f`,
    (inner) => `ssh -o ProxyCommand=${shellQuote(inner)} host`,
    (inner) => `scp -o ${shellQuote(`ProxyCommand ${inner}`)} a host:b`,
    (inner) => `man -P ${shellQuote(inner)} ls`,
    (inner) => `git -c alias.x=${shellQuote(`!${inner}`)} x`,
    (inner) => `git -c core.sshCommand=${shellQuote(inner)} fetch`,
    (inner) => `git -c core.pager=${shellQuote(inner)} log`,
    (inner) => `git config alias.x ${shellQuote(`!${inner}`)}`,
    (inner) => `git rebase --exec ${shellQuote(inner)} HEAD~1`,
    (inner) => `git submodule foreach ${shellQuote(inner)}`,
    (inner) => `git filter-branch --tree-filter ${shellQuote(inner)} HEAD`,
    (inner) => `git fetch --upload-pack=${shellQuote(inner)} origin`,
    (inner) => `bash -c ${shellQuote(inner)}`
  )
)

const chain = (inner: FastCheck.Arbitrary<string>) =>
  FastCheck.tuple(inner, FastCheck.array(runner, { minLength: 1, maxLength: 3 })).map(([command, wraps]) =>
    wraps.reduce((text, wrap) => wrap(text), command)
  )

const denied = FastCheck.constantFrom("rm -rf build", "/bin/rm x", "git push origin main", "git -C . push")

/** Interpreters with the option that carries code, and code in their language doing what the rules deny. */
const inline = FastCheck.constantFrom(
  ["python3 -c", `import os; os.system("rm -rf x")`],
  ["python -c", `import shutil; shutil.rmtree("x")`],
  ["python3 -Sc", `import os; os.remove("x")`],
  ["python3 -I -c", `import subprocess; subprocess.run(["git", "push"])`],
  ["python3.12 -c", `print(open("secrets/key").read())`],
  ["perl -e", `system("rm -rf x")`],
  ["perl -E", `unlink "x"`],
  ["perl -ne", `print`],
  ["perl -pi -e", `s/a/b/`],
  ["ruby -e", `system("rm x")`],
  ["node -e", `require("fs").rmSync("x")`],
  ["node --eval", `require("child_process").execSync("git push")`],
  ["node -p", `require("fs").readFileSync("secrets/key", "utf8")`],
  ["bun -e", `require("fs").rmSync("x")`],
  ["deno eval", `Deno.removeSync("x")`],
  ["php -r", `unlink("x");`],
  ["lua -e", `os.remove("x")`],
  ["Rscript -e", `unlink("x")`],
  ["julia -e", `rm("x")`],
  ["osascript -e", `do shell script "rm x"`],
  ["pwsh -Command", `Remove-Item x`],
  ["expect -c", `spawn rm x`],
  ["awk", `BEGIN { system("rm x") }`],
  ["gawk", `BEGIN { print "x" | "sh" }`],
  ["awk -v a=1", `{ while (("git push" | getline line) > 0) print line }`],
  ["sed", `1e rm x`],
  ["sed -n -e", `s/.*/rm x/e`],
  ["gdb -batch -ex", `shell rm x`],
  ["vim -c", `:!rm x`],
  ["emacs --batch --eval", `(delete-file "x")`],
  ["make --eval", `all: ; rm x`]
)

const withCode = inline.map(([head, code]) => `${head} ${shellQuote(code)}`)

/** The interpreter commands above, sometimes inside a transparent wrapper or a runner. */
const interpreted = FastCheck.tuple(
  withCode,
  FastCheck.constantFrom<Wrap>(
    (inner) => inner,
    (inner) => `timeout 5 ${inner}`,
    (inner) => `nice ${inner}`,
    (inner) => `sudo ${inner}`,
    (inner) => `env -i ${inner}`,
    (inner) => `bash -c ${shellQuote(inner)}`,
    (inner) => `watch ${shellQuote(inner)}`,
    (inner) => `ssh host ${shellQuote(inner)}`,
    (inner) => `strace -f ${inner}`,
    (inner) => `echo x | xargs ${inner}`,
    (inner) => `ls && ${inner}`
  )
).map(([command, wrap]) => wrap(command))

/** Safe: interpreters asked only for information, script files, text-only awk and sed, wrapped harmless commands. */
const safe = FastCheck.oneof(
  FastCheck.constantFrom(
    "python3 --version",
    "python3 -V",
    "python --help",
    "node --version",
    "node -v",
    "perl -v",
    "ruby --version",
    "php -v",
    "awk --version",
    "python3 -m http.server 8000",
    "python3 -u script.py --flag value",
    "python3 -W error::DeprecationWarning script.py",
    "node build.js --mode prod",
    "perl -w tool.pl input.txt",
    "ruby -w tool.rb",
    "awk '{print $1}' data.txt",
    "awk -F: '$3 > 100 { print $1 }' data.txt",
    "sed 's/a/b/g' data.txt",
    "sed -i 's/a/b/' data.txt",
    "sed -n '/start/,/end/p' data.txt",
    "tar -czf out.tar.gz src",
    "rsync -avz -e ssh src host:dst",
    "ssh host uptime",
    "npx tsc --noEmit",
    "git -c core.hooksPath=/dev/null commit -m x",
    "make",
    "make -j4 test"
  ),
  FastCheck.tuple(
    FastCheck.constantFrom("timeout 5", "nice -n 5", "watch -n 1", "flock /tmp/lock", "strace -f", "npx", "ssh host"),
    FastCheck.constantFrom("echo hi", "true", "date")
  ).map(([wrapper, command]) => `${wrapper} ${command}`)
)

/** Programs that take editing, SQL or script commands on stdin (or from a descriptor), fed a denied command. */
const fromStdin = FastCheck.tuple(
  FastCheck.constantFrom(
    "ed -s README.md",
    "ed README.md",
    "ex -s README.md",
    "vim -es README.md",
    "nvim -s /dev/stdin",
    "awk -f /dev/stdin",
    "gawk --file=/dev/stdin",
    "sed -f - README.md",
    "sed -f/dev/fd/0 README.md",
    "python3 /dev/stdin",
    "perl /proc/self/fd/0",
    "sqlite3 :memory:",
    "sqlite3 db.sqlite",
    "duckdb",
    "psql -d test",
    "mysql test"
  ),
  FastCheck.constantFrom("!rm x", ".system rm x", ".shell git push", "\\! rm x", 'BEGIN{system("rm x")}', "1e rm x"),
  FastCheck.constantFrom("here-string", "pipe", "here-doc")
).map(([program, payload, feed]) =>
  feed === "pipe"
    ? `printf '%s\\n' '${payload}' | ${program}`
    : feed === "here-doc"
      ? `${program} <<'EOF'\n${payload}\nEOF`
      : `${program} <<< '${payload}'`
)

layer(base)("deny rules under a tool-wide allow: wrappers and interpreters (generated)", (it) => {
  it.effect.prop(
    "a program that reads its commands from stdin or a descriptor is never allowed",
    [fromStdin],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, allowed: decision.behavior === "allow" }).toEqual({ command, allowed: false })
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "a denied command inside any chain of runners is denied",
    [chain(denied)],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "deny" })
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "inline code given to an interpreter is never allowed, and the reason names the option",
    [interpreted],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, allowed: decision.behavior === "allow" }).toEqual({ command, allowed: false })
        // fed by xargs, the line's unknown operands ask first (bashPaths runs before hiddenCode): that reason names xargs
        const reasons = command.includes("xargs")
          ? /runs .* code|code that uses|may run commands|xargs reads/
          : /runs .* code|code that uses|may run commands/
        if (decision.behavior === "ask") expect(decision.reason).toMatch(reasons)
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "an ask rule alone is enough: inline code asks",
    [withCode],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          ask: ["Bash(git push:*)"],
          tool: "Bash",
          input: { command }
        })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "ask" })
        expect(decision.trace.at(-1)?.step).toBe("hiddenCode")
      }),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect.prop(
    "without Bash deny or ask rules a tool-wide allow still covers inline code",
    [withCode],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "allow" })
      }),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect.prop(
    "genuinely safe forms stay allowed under the deny rules",
    [safe],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior, reason: decision.reason }).toMatchObject({
          command,
          behavior: "allow"
        })
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect("the trace names the option and the rule that cannot see into the code", () =>
    Effect.gen(function* () {
      const decision = yield* decide(project, {
        allow: ["Bash"],
        deny,
        tool: "Bash",
        input: { command: `python3 -c 'import os; os.system("rm -rf x")'` }
      })
      expect(decision).toMatchObject({ behavior: "ask", rule: "Bash(rm:*)" })
      expect(decision.reason).toMatch(
        /^`python3 -c` runs Python code given on the command line, which rule Bash\(rm:\*\)/
      )
    })
  )

  it.effect("bypass mode does not skip it; dontAsk turns it into a deny", () =>
    Effect.gen(function* () {
      const command = `perl -e 'unlink "x"'`
      const bypass = yield* decide(project, { deny, mode: "bypassPermissions", tool: "Bash", input: { command } })
      const dontAsk = yield* decide(project, {
        allow: ["Bash"],
        deny,
        mode: "dontAsk",
        tool: "Bash",
        input: { command }
      })
      expect([bypass.behavior, dontAsk.behavior]).toEqual(["ask", "deny"])
    })
  )

  it.effect("a file the line writes and then runs asks; a file it writes and then reads does not", () =>
    Effect.gen(function* () {
      const rows: ReadonlyArray<readonly [string, string]> = [
        ["echo 'rm -rf x' > a.sh && bash a.sh", "ask"],
        ["printf 'import os' > a.py && python3 a.py", "ask"],
        ["cat > run.sh <<'EOF'\nrm x\nEOF\nchmod +x run.sh && ./run.sh", "ask"],
        ["echo x | tee b.sh; sh ./b.sh", "ask"],
        ["cp /bin/rm ./r && ./r x", "ask"],
        ["echo hi > out.txt && cat out.txt", "allow"],
        ["npm test > out.log 2>&1", "allow"]
      ]
      for (const [command, expected] of rows) {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: expected })
      }
    })
  )

  it.effect("alias and hash -p definitions are read as the command they name", () =>
    Effect.gen(function* () {
      for (const [command, expected] of [
        ["shopt -s expand_aliases; alias r=rm; r x", "deny"],
        ["hash -p /bin/rm r; r x", "deny"],
        ["alias ll='ls -la'", "allow"]
      ] as const) {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: expected })
      }
    })
  )

  it.effect("variables naming a program ask", () =>
    Effect.gen(function* () {
      for (const command of [
        "GIT_SSH_COMMAND='rm x' git fetch",
        "PAGER='rm x' git log",
        "env LESSOPEN='|rm %s' less f"
      ]) {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "ask" })
      }
    })
  )
})

describe("hiddenCode over command forms", () => {
  const cases: ReadonlyArray<readonly [ReadonlyArray<string | null>, string | undefined]> = [
    [["python3", "-c", "x"], "`python3 -c` runs Python code given on the command line"],
    [["python3", "-"], "`python3` reads Python code from stdin"],
    [["python3"], "`python3` reads Python code from stdin"],
    [["python3", null], "`python3` with a word known only when the shell runs (it may be code)"],
    [["python3", "script.py", "-c", "x"], undefined],
    [["python3", "-m", "pip", "-c", "x"], undefined],
    [["/usr/bin/perl", "-lane", "print"], "`perl -e` runs Perl code given on the command line"],
    [["node", "--eval=1"], "`node --eval` runs JavaScript code given on the command line"],
    [["deno", "eval", "1"], "`deno eval` runs JavaScript code given on the command line"],
    [["awk", "{print $1}", "f"], undefined],
    [["awk", "-f", "prog.awk", "f"], undefined],
    [["awk", 'BEGIN{system("x")}'], "`awk program` runs awk code that uses `system(`"],
    [["sed", "s/a/b/", "f"], undefined],
    [
      ["sed", "-n", "1e ls"],
      "`sed` with a script that may run commands or read or write files (`e`, `r`, `R`, `w`, `W`, `s///e`, `s///w`)"
    ],
    [["sed", "--sandbox", "1e ls"], undefined],
    [["vim", "+!rm x"], "`vim +` runs Vim code given on the command line"],
    [["less", "+!rm x", "f"], "`less` runs a command given in `+!rm x`"],
    [["at", "now"], "`at` reads the commands it schedules from stdin"],
    [["ls", "-c"], undefined]
  ]
  for (const [form, expected] of cases) {
    it(`${JSON.stringify(form)} → ${expected ?? "nothing hidden"}`, () => {
      expect(hiddenCode(form)).toBe(expected)
    })
  }
})
