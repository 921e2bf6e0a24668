/**
 * Round-4 red team (issue 28): attack classes found by reading the docs only, each as a generated property. Under a
 * tool-wide `allow: ["Bash"]` with deny rules for `rm` and `git push`, none of these may be allowed: a line
 * continuation inside a word (`r\<newline>m x` is `rm x` to bash), a shell fed code through a descriptor or `-s`, or
 * whose option cluster takes a value (`bash -euo pipefail -c CODE`), a program named by an option's value
 * (`rg --pre rm`, `hash -prm`), code in a language no table knew (`dc -e '!…'`, `m4`, `lftp -c`), and variables
 * naming a program, whether assigned before the command or through `for`, `read`, `printf -v` or `set -k`.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, decide, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-red-team-4-")
afterAll(project.remove)

const deny = ["Bash(rm:*)", "Bash(git push:*)"]
const denied = FastCheck.constantFrom("rm -rf build", "rm x", "git push origin main", "git push")

const allowed = (command: string) =>
  Effect.map(decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } }), (decision) => ({
    command,
    allowed: decision.behavior === "allow"
  }))

/** A denied command with a backslash-newline put somewhere inside it (bash removes the pair before reading words). */
const continued = FastCheck.tuple(denied, FastCheck.nat(), FastCheck.constantFrom("", "true && ", "echo a; ")).map(
  ([command, at, before]) => {
    const cut = 1 + (at % (command.length - 1))
    return `${before}${command.slice(0, cut)}\\\n${command.slice(cut)}`
  }
)

/** A shell given code through a descriptor, `-s`, or after an option cluster that takes the next word. */
const shellFed = FastCheck.tuple(
  FastCheck.constantFrom("bash", "sh", "dash", "/bin/bash"),
  denied,
  FastCheck.constantFrom(
    (sh: string, code: string) => `${sh} 0<<<${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} /dev/stdin <<< ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} /dev/fd/0 <<< ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} -s <<< ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} -s -- a b <<< ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} -es x <<< ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} -euo pipefail -c ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} -o errexit -c ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} -xo nounset -c ${shellQuote(code)}`,
    (sh: string, code: string) => `${sh} -O extglob -euo pipefail -c ${shellQuote(code)}`
  )
).map(([sh, code, feed]) => feed(sh, code))

/** Options whose value names a program the command runs. */
const programOptions = FastCheck.tuple(
  FastCheck.constantFrom("rm", "/bin/rm", "/usr/bin/rm"),
  FastCheck.constantFrom(
    (p: string) => `rg --pre ${p} x .`,
    (p: string) => `rg --pre=${p} x`,
    (p: string) => `rg -i --hostname-bin=${p} x`,
    (p: string) => `sort --compress-program=${p} a.txt`,
    (p: string) => `hash -p${p} c; c x`,
    (p: string) => `hash -rp ${p} c; c x`,
    (p: string) => `docker run --entrypoint=${p} img x`,
    (p: string) => `podman run --rm --entrypoint=${p} img x`,
    (p: string) => `aria2c --on-download-complete=${p} http://h/f`,
    (p: string) => `wget --use-askpass=${p} http://h/`,
    (p: string) => `git send-email --smtp-server=${p} a.patch`
  )
).map(([program, make]) => make(program))

/** Programs carrying code in their own language, fed a denied command. */
const foreignCode = FastCheck.tuple(
  denied,
  FastCheck.constantFrom(
    (c: string) => `dc -e ${shellQuote(`!${c}`)}`,
    (c: string) => `echo ${shellQuote(`!${c}`)} | dc`,
    (c: string) => `m4 <<< ${shellQuote(`syscmd(${c})`)}`,
    (c: string) => `echo ${shellQuote(`esyscmd(${c})`)} | m4`,
    (c: string) => `gnuplot -e ${shellQuote(`system("${c}")`)}`,
    (c: string) => `octave --eval ${shellQuote(`system("${c}")`)}`,
    (c: string) => `lftp -c ${shellQuote(`!${c}`)}`,
    (c: string) => `lftp -e ${shellQuote(`!${c}`)} host`,
    (c: string) => `sftp -b - host <<< ${shellQuote(`!${c}`)}`,
    (_: string) => `sftp -b cmds host`,
    (c: string) => `strace -o ${shellQuote(`|${c}`)} true`,
    (c: string) => `python3 -m timeit ${shellQuote(`import os; os.system("${c}")`)}`,
    (c: string) => `node --import ${shellQuote(`data:text/javascript,require("child_process").execSync("${c}")`)} a.js`,
    (c: string) => `git send-email --sendmail-cmd=${shellQuote(c)} a.patch`,
    (c: string) => `git send-email --to-cmd=${shellQuote(c)} a.patch`,
    (c: string) => `git -c interactive.diffFilter=${shellQuote(c)} add -p`,
    (_: string) => `git -c include.path=/tmp/cfg l`,
    (_: string) => `git -c core.hooksPath=hooks commit -m x`
  )
).map(([command, make]) => make(command))

/** Variables naming a program or configuration that runs code, and the ways a line can assign them. */
const assignedVariable = FastCheck.tuple(
  FastCheck.constantFrom(
    ["ZDOTDIR", ".", "zsh -c true"],
    ["SHELL", "/bin/rm", "script -q /dev/null"],
    ["LESS", "+!rm x", "less a.txt"],
    ["RIPGREP_CONFIG_PATH", "cfg", "rg x"],
    ["FZF_DEFAULT_OPTS", "--preview='rm x'", "fzf -f x"],
    ["WGETRC", "cfg", "wget http://h/"],
    ["npm_config_script_shell", "./x", "npm test"],
    ["GIT_SSH_COMMAND", "rm x", "git fetch"],
    ["PAGER", "rm x", "man ls"]
  ),
  FastCheck.constantFrom(
    (n: string, v: string, c: string) => `${n}=${shellQuote(v)} ${c}`,
    (n: string, v: string, c: string) => `export ${n}=${shellQuote(v)}; ${c}`,
    (n: string, v: string, c: string) => `for ${n} in ${shellQuote(v)}; do export ${n}; ${c}; done`,
    (n: string, v: string, c: string) => `read ${n} <<< ${shellQuote(v)}; export ${n}; ${c}`,
    (n: string, v: string, c: string) => `read -r ${n} <<< ${shellQuote(v)}; export ${n}; ${c}`,
    (n: string, v: string, c: string) => `printf -v ${n} %s ${shellQuote(v)}; export ${n}; ${c}`,
    (n: string, v: string, c: string) => `set -k; ${c} ${n}=${shellQuote(v)}`,
    (n: string, v: string, c: string) => `set -o keyword; ${c} ${n}=${shellQuote(v)}`,
    (n: string, v: string, c: string) => `bash -kc ${shellQuote(`${c} ${n}=${shellQuote(v)}`)}`
  )
).map(([[name, value, command], make]) => make(name, value, command))

const notAllowed = (command: string) =>
  Effect.gen(function* () {
    expect(yield* allowed(command)).toEqual({ command, allowed: false })
  })

layer(base)("red team round 4: deny rules under a tool-wide allow (generated)", (it) => {
  const runs = { fastCheck: { numRuns: 60 } }
  it.effect.prop("a line continuation inside a denied command's words", [continued], ([c]) => notAllowed(c), runs)
  it.effect.prop(
    "a shell fed code through a descriptor, -s, or a cluster taking a value",
    [shellFed],
    ([c]) => notAllowed(c),
    runs
  )
  it.effect.prop("an option whose value names the program run", [programOptions], ([c]) => notAllowed(c), runs)
  it.effect.prop("code in a language no table knew", [foreignCode], ([c]) => notAllowed(c), runs)
  it.effect.prop(
    "xargs reading its words from a file, under a Read deny rule",
    [argFile],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Read(./secrets/**)"],
          tool: "Bash",
          input: { command }
        })
        expect({ command, allowed: decision.behavior === "allow" }).toEqual({ command, allowed: false })
      }),
    runs
  )
  it.effect.prop(
    "xargs -a naming a denied file reads it, with or without an allow rule",
    [secretArgFile, FastCheck.boolean()],
    ([command, toolWide]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          ...(toolWide ? { allow: ["Bash"] } : {}),
          deny: ["Read(./secrets/**)"],
          tool: "Bash",
          input: { command }
        })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "deny" })
      }),
    runs
  )
  it.effect.prop(
    "a program's options before the subcommand a deny rule names",
    [leadingOptions],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Bash(npm publish:*)", "Bash(docker push:*)", "Bash(cargo publish:*)", "Bash(yarn npm publish:*)"],
          tool: "Bash",
          input: { command }
        })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "deny" })
      }),
    runs
  )
  it.effect.prop("a variable naming a program, however it is assigned", [assignedVariable], ([c]) => notAllowed(c), {
    fastCheck: { numRuns: 80 }
  })
})

/** `xargs -a FILE` reads its words from FILE: they are only known at run time, whatever a pipeline before it lists. */
const argFile = FastCheck.tuple(
  FastCheck.constantFrom("-a list", "--arg-file=list", "--arg-file list", "-0 -a list", "-a list -I{}"),
  FastCheck.constantFrom("cat", "head -n 5", "wc -c", "grep KEY"),
  FastCheck.constantFrom("", "find src -name '*.ts' | ", "git ls-files | ")
).map(([option, command, before]) => `${before}xargs ${option} ${command}${option.includes("{}") ? " {}" : ""}`)

/** `xargs -a FILE` with FILE under a Read deny rule: xargs hands FILE's contents to its command (`echo` by default). */
const secretArgFile = FastCheck.tuple(
  FastCheck.constantFrom(
    "-a secrets/k",
    "--arg-file=secrets/k",
    "--arg-file secrets/k",
    "-asecrets/k",
    "-0 -a ./secrets/k"
  ),
  FastCheck.constantFrom("", " echo", " printf '%s\\n'", " -n1 echo", " -I{} echo {}")
).map(([option, command]) => `xargs ${option}${command}`)

/** A program's own options before the subcommand a deny rule names (`npm --loglevel=silent publish`). */
const leadingOptions = FastCheck.tuple(
  FastCheck.constantFrom(["npm", "publish"], ["docker", "push img"], ["cargo", "publish"], ["yarn", "npm publish"]),
  FastCheck.constantFrom(
    "--loglevel=silent",
    "-w pkg",
    "--registry https://r.example",
    "-q",
    "+nightly",
    "--prefix . -s"
  )
).map(([[program, rest], options]) => `${program} ${options} ${rest}`)

/** The same constructs used plainly: a tool-wide allow still covers them. */
const plain = FastCheck.constantFrom(
  "echo a \\\nb",
  "npm run test \\\n  -- --reporter=dot",
  "bash -euo pipefail -c 'echo hi'",
  "bash -o errexit scripts/build.sh",
  "sh -c 'echo a'",
  "rg --hidden TODO src",
  "sort -u a.txt",
  "hash -r",
  "docker run --rm --name=web img echo hi",
  'for f in a b; do echo "$f"; done',
  'read -r line < a.txt; echo "$line"',
  'printf -v out %s x; echo "$out"',
  "set -euo pipefail; echo ok",
  "set -x; ls",
  "git -c core.hooksPath=/dev/null commit -m x",
  "python3 -m http.server 8000",
  "python3 -m pytest -q",
  "strace -o trace.txt ls",
  "LANG=C sort a.txt",
  "npm --loglevel=silent run build",
  "docker --context prod ps"
)

layer(base)("red team round 4: what stays allowed under a tool-wide allow (generated)", (it) => {
  it.effect.prop(
    "plain uses of the same constructs",
    [plain],
    ([command]) =>
      Effect.gen(function* () {
        expect(yield* allowed(command)).toEqual({ command, allowed: true })
      }),
    { fastCheck: { numRuns: 40 } }
  )
})
