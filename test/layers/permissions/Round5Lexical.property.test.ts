/**
 * Issue 28, round 5 (shell and interpreter class): under a tool-wide `allow: ["Bash"]` with `Bash(rm:*)` and a Read
 * deny rule, in default and bypass mode, none of these spellings may be allowed:
 * 1. a character tree-sitter-bash reads as a blank and bash as part of a word, before `#` (`echo a\r# ; rm x`);
 * 2. a program reached through a symbolic link in the project (`./del x` with `./del` → rm), also behind `exec`,
 *    `command`, `env`, `timeout`, `nice`, after a `cd`, and a linked interpreter given code;
 * 3. sed scripts given by a long option's abbreviation or read from a file, awk indirect calls and ARGV;
 * 4. interpreters reading code from stdin as they run (`python3 -i`, `python3 -m asyncio`, `perl -d`), and code
 *    options after a bundled option (`perl -C -e`, `perl -m`);
 * 5. the directory stack's tilde forms (`~+0`, `~-1`, `~2`).
 * Everyday lines of the same shapes stay allowed.
 */
import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-round5-lexical-")
afterAll(project.remove)

const rm = Fs.realpathSync("/bin/rm")
Fs.mkdirSync(`${project.proj}/sub`)
Fs.mkdirSync(`${project.proj}/secrets`)
Fs.writeFileSync(`${project.proj}/secrets/k`, "SECRET\n")
Fs.writeFileSync(`${project.proj}/x`, "x\n")
Fs.symlinkSync(rm, `${project.proj}/del`)
Fs.symlinkSync(rm, `${project.proj}/sub/d3`)
Fs.symlinkSync(Fs.realpathSync("/usr/bin/perl"), `${project.proj}/p`)
Fs.symlinkSync(Fs.realpathSync("/bin/bash"), `${project.proj}/s`)
Fs.writeFileSync(`${project.proj}/run.sh`, "#!/bin/sh\necho hi\n", { mode: 0o755 })

// (`Read(.env)` is left out: a name matched in every directory, it makes any command of unknown reads ask, which
// would hide what these properties look for)
const deny = ["Bash(rm:*)", "Read(./secrets/**)"]
const mode = FastCheck.constantFrom("default" as const, "bypassPermissions" as const)

/** Decides `line` and expects it not to be allowed (ask or deny). */
const notAllowed = (line: string, m: "default" | "bypassPermissions") =>
  Effect.gen(function* () {
    const outcome = yield* bashOutcome(project, { allow: ["Bash"], deny, mode: m }, line)
    expect(outcome.behavior === "allow" ? outcome : "refused").toBe("refused")
  })

layer(base)("round 5: the shell and interpreter class", (it) => {
  const foreign = FastCheck.constantFrom(
    "\r",
    "\v",
    "\f",
    "\x85",
    "\xa0",
    "\u1680",
    "\u2000",
    "\u2007",
    "\u200a",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\\\v",
    "\\\f",
    "\\\r"
  )
  it.effect.prop(
    "a character that is a blank to the parser but not to bash hides no command",
    [
      FastCheck.constantFrom("echo a", "ls", "true", "printf %s x", ": a"),
      foreign,
      FastCheck.constantFrom(" ", ""),
      FastCheck.constantFrom(";", " ;", "&&", "||", "|", "&"),
      FastCheck.constantFrom("rm x", "rm -rf sub", "cat secrets/k"),
      mode
    ],
    ([head, blank, space, separator, tail, m]) => notAllowed(`${head}${space}${blank}#${separator} ${tail}`, m),
    { fastCheck: { numRuns: 60 } }
  )

  const wrapper = FastCheck.constantFrom("", "exec ", "command ", "env ", "timeout 1 ", "nice ", "nice -n 5 ", "nohup ")
  const linked = FastCheck.constantFrom(
    "./del",
    "././del",
    "sub/../del",
    `${project.proj}/del`,
    "./sub/d3",
    "cd sub && ./d3",
    "cd sub; ../del",
    `./s -c ${shellQuote("rm x")}`
  )
  it.effect.prop(
    "a program reached through a project symlink is matched by its target",
    [wrapper, linked, mode],
    ([w, program, m]) => {
      const cd = program.match(/^(cd sub(?: &&|;) )(.*)$/)
      return notAllowed(cd === null ? `${w}${program} x` : `${cd[1]}${w}${cd[2]} x`, m)
    },
    { fastCheck: { numRuns: 50 } }
  )

  it.effect.prop(
    "a linked interpreter given code is seen as that interpreter",
    [wrapper, FastCheck.constantFrom("-e", "-le", "-E", "-Mstrict -e"), mode],
    ([w, option, m]) => notAllowed(`${w}./p ${option} ${shellQuote("unlink q")}`, m),
    { fastCheck: { numRuns: 25 } }
  )

  const sedOption = FastCheck.constantFrom(
    "--expression=",
    "--expressio=",
    "--expr=",
    "--e=",
    "--ex ",
    "--expression ",
    "-e ",
    "-ne ",
    "-n -e ",
    "--quiet --expr=",
    "--line-length 5 "
  )
  const sedScript = FastCheck.constantFrom("e rm x", "1e rm x", "r secrets/k", "R secrets/k", "w out", "s/a/b/w out")
  it.effect.prop(
    "a sed script given by any spelling of --expression is read",
    [sedOption, sedScript, mode],
    ([option, script, m]) =>
      notAllowed(
        `sed ${option.endsWith("=") ? `${option}${shellQuote(script)}` : `${option}${shellQuote(script)}`} x`,
        m
      ),
    { fastCheck: { numRuns: 50 } }
  )
  it.effect.prop(
    "a sed script read from a file is not seen, so it is not allowed",
    [FastCheck.constantFrom("-f s.sed", "--file=s.sed", "--fi s.sed", "--fil=s.sed", "-nf s.sed", "-n -f s.sed"), mode],
    ([option, m]) => notAllowed(`sed ${option} x`, m),
    { fastCheck: { numRuns: 20 } }
  )
  it.effect.prop(
    "awk's indirect calls and ARGV assignments are not plain text handling",
    [
      FastCheck.constantFrom(
        'BEGIN{ARGV[1]="secr" "ets/k"; ARGC=2} {print}',
        'BEGIN{ARGC=2; ARGV[1]="secrets/k"} 1',
        'BEGIN{f="sys" "tem"; @f("rm x")}',
        'BEGIN{f="system"; @f("r" "m x")}',
        'BEGIN{split("secr ets/k", a); ARGV[1]=a[1] a[2]} 1'
      ),
      FastCheck.constantFrom("awk", "gawk", "timeout 5 awk"),
      mode
    ],
    ([program, awk, m]) => notAllowed(`${awk} ${shellQuote(program)} x`, m),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect.prop(
    "an interpreter reading code from stdin as it runs is not allowed",
    [
      FastCheck.constantFrom(
        "python3 -i /dev/null",
        "python3 -i x",
        "python3 -qi x",
        "python3 -im json.tool",
        "python3 -m asyncio",
        "python3 -u -m asyncio",
        "perl -d x",
        "perl -de 0",
        "perl -d:Trace x",
        `perl ${shellQuote("-d:Mod;unlink q")} x`,
        `perl -C -e ${shellQuote("unlink q")}`,
        `perl -CSD -e ${shellQuote("unlink q")}`,
        `perl -CSDe ${shellQuote("unlink q")}`,
        `perl ${shellQuote("-mPOSIX;unlink q")} x`
      ),
      FastCheck.constantFrom("", " <<EOF\nimport os\nEOF", " < /dev/stdin", " <<< 'print(1)'"),
      mode
    ],
    ([line, input, m]) => notAllowed(`${line}${input}`, m),
    { fastCheck: { numRuns: 50 } }
  )

  it.effect.prop(
    "a tilde form naming the directory stack is an unknown path",
    [
      FastCheck.constantFrom("~+0", "~-0", "~+1", "~1", "~-1", "~+2", "~-", "~+"),
      FastCheck.constantFrom("cat", "head -1", "grep -r S", "wc -c", "less"),
      mode
    ],
    ([tilde, command, m]) => notAllowed(`${command} ${tilde}/secrets/k`, m),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect.prop(
    "everyday lines of the same shapes stay allowed",
    [
      FastCheck.constantFrom(
        "echo 'a\rb'",
        'printf "%s\\f" x',
        "ls # a comment\r",
        "./run.sh",
        "python3 x.py",
        "python3 -m json.tool x",
        "perl x.pl",
        "perl -w x.pl",
        "sed -n 1p x",
        "sed --quiet --expression=1p x",
        "sed --sandbox 'e rm x' x",
        "awk '{print $1}' x",
        "awk -F: 'NR>1{print $2}' x",
        "cat ~+/x",
        "ls ~"
      ),
      mode
    ],
    ([line, m]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, { allow: ["Bash"], deny, mode: m }, line)
        expect(outcome.behavior === "allow" ? "allow" : outcome).toBe("allow")
      }),
    { fastCheck: { numRuns: 30 } }
  )
})
