/**
 * Enumerability (issue 28, class 1): under a tool-wide `allow: ["Bash"]` with Bash deny rules, a line is allowed only
 * when the analysis can name every program it may start. Code the shell evaluates later — a trap's action, a
 * `mapfile`/`compgen` callback, a prompt expansion, a name or number evaluated as arithmetic, a nameref, a command
 * rebound through BASH_CMDS/BASH_ALIASES, a coprocess — is never allowed (the rules apply: ask, or deny where the
 * rule is seen). The same builtins used inertly stay allowed.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { builtinOpacity } from "../../../src/domain/shell/Enumerability.js"
import { base, decide, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-enumerability-")
afterAll(project.remove)

const deny = ["Bash(rm:*)", "Bash(git push:*)"]

/** Denied commands as code text. */
const code = FastCheck.constantFrom("rm x", "rm -rf build", "git push", "git push origin main", "/bin/rm x")

/** A subscript holding a command substitution: bash runs it whenever it evaluates the text as a name or a number. */
const subscript = code.map((inner) => `a[$(${inner})]`)

/** Families of constructs that evaluate text later, each given the denied code. */
const laterCode: FastCheck.Arbitrary<string> = FastCheck.oneof(
  // callbacks and traps: the code is run as a command later
  FastCheck.tuple(
    code,
    FastCheck.constantFrom(
      (c: string) => `mapfile -C ${shellQuote(c)} -c 1 a < /dev/null`,
      (c: string) => `readarray -t -C ${shellQuote(c)} -c 1 lines < /dev/null`,
      (c: string) => `mapfile -tC ${shellQuote(c)} a < /dev/null`,
      (c: string) => `compgen -C ${shellQuote(c)} foo`,
      (c: string) => `compgen -W x -C ${shellQuote(c)} y`,
      (c: string) => `complete -C ${shellQuote(c)} ls`,
      (c: string) => `trap -- ${shellQuote(c)} EXIT`,
      (c: string) => `trap -p -- ${shellQuote(c)} INT TERM`,
      (c: string) => `trap ${shellQuote(c)} EXIT`,
      (c: string) => `builtin trap -- ${shellQuote(c)} EXIT`,
      (c: string) => `coproc ${c}`,
      (c: string) => `coproc w { ${c}; }`,
      (c: string) => `jobs -x ${c}`,
      (c: string) => `bash -c ${shellQuote(`trap -- ${shellQuote(c)} EXIT`)}`
    )
  ).map(([c, make]) => make(c)),
  // text evaluated as a prompt, a name or a number
  FastCheck.tuple(
    subscript,
    FastCheck.constantFrom(
      (s: string) => `[[ ${shellQuote(s)} -eq 0 ]]`,
      (s: string) => `[[ 1 -lt ${shellQuote(s)} ]]`,
      (s: string) => `v=${shellQuote(s)}; [[ $v -eq 0 ]]`,
      (s: string) => `v=${shellQuote(s)}; echo $((v))`,
      (s: string) => `v=${shellQuote(s)}; (( v > 1 ))`,
      (s: string) => `printf -v ${shellQuote(s)} %s 1`,
      (s: string) => `read ${shellQuote(s)} <<< 1`,
      (s: string) => `read -r -a ${shellQuote(s)} <<< 1`,
      (s: string) => `declare -n r=${shellQuote(s)}; r=1`,
      (s: string) => `local -n q=${shellQuote(s)}; q=2`,
      (s: string) => `typeset -n q=${shellQuote(s)}`,
      (s: string) => `declare -i n=${shellQuote(s)}`,
      (s: string) => `let ${shellQuote(`${s}=1`)}`,
      (s: string) => `unset ${shellQuote(s)}`,
      (s: string) => `getopts ab ${shellQuote(s)}`,
      (s: string) => `wait -p ${shellQuote(s)}`,
      (s: string) => `mapfile ${shellQuote(s)} < /dev/null`,
      (s: string) => `export ${shellQuote(s)}`,
      (s: string) => `y=${shellQuote(s)}; echo \${!y}`,
      (s: string) => `test -v ${shellQuote(s)}`,
      (s: string) => `[[ -v ${shellQuote(s)} ]]`,
      (s: string) => `select a in ${shellQuote(s)}; do break; done < /dev/null`
    )
  ).map(([s, make]) => make(s)),
  code.map((c) => `x=${shellQuote(`$(${c})`)}; : "\${x@P}"`),
  code.map((c) => `p=${shellQuote(`\`${c}\``)}; echo "\${p@P}"`),
  code.map((c) => `PS4=${shellQuote(`$(${c})`)}; set -x; :`),
  // commands rebound by name
  FastCheck.constantFrom(
    "BASH_CMDS[r]=/bin/rm; r x",
    "BASH_ALIASES[r]=rm; r x",
    "BASH_ALIASES+=([p]='git push'); p",
    "enable -f ./evil.so rm",
    "enable -n echo",
    "fc -s rm",
    "compgen -F f x"
  )
)

/** The same builtins used inertly. */
const inert = FastCheck.constantFrom(
  "mapfile -t lines < /dev/null",
  "readarray a < /dev/null",
  "trap 'echo done' EXIT",
  "trap - EXIT",
  "trap -l",
  "compgen -W 'a b' a",
  "printf -v out '%s' hi",
  "read -r x <<< hi",
  "read -a arr <<< 'a b'",
  "declare -a arr=(1 2)",
  "export FOO=1",
  'export PATH="$PATH:/opt/bin"',
  "local x=1 2>/dev/null",
  "unset x",
  "unset 'arr[0]'",
  "let i=1+2",
  "[[ 3 -eq 3 ]]",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  "echo ${a[0]} ${#x}",
  "for i in 1 2; do echo $i; done"
)

layer(base)("enumerability under a tool-wide allow with deny rules (generated)", (it) => {
  it.effect.prop(
    "code the shell evaluates later is never allowed",
    [laterCode],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, allowed: decision.behavior === "allow" }).toEqual({ command, allowed: false })
      }),
    { fastCheck: { numRuns: 120 } }
  )

  it.effect.prop(
    "and not in bypass mode either",
    [laterCode],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          deny,
          mode: "bypassPermissions",
          tool: "Bash",
          input: { command }
        })
        expect({ command, allowed: decision.behavior === "allow" }).toEqual({ command, allowed: false })
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect.prop(
    "the same builtins used inertly stay allowed",
    [inert],
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
})

layer(base)("builtinOpacity", (it) => {
  const words = (line: string) => line.split(" ").map((value) => ({ value, literal: true }))
  it("names the builtin and why", () => {
    expect(builtinOpacity(words("fc -s rm"))).toContain("fc")
    expect(builtinOpacity(words("declare -n r=x"))).toContain("-n")
    expect(builtinOpacity(words("read a[$(id)]"))).toContain("subscript")
    expect(builtinOpacity(words("read -r line"))).toBeUndefined()
    expect(builtinOpacity(words("printf -v out %s"))).toBeUndefined()
  })
})
