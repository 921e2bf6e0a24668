/**
 * Deny and ask rules match a command however it is spelled: by base name, through wrappers, through `git`'s global
 * options, in code given as a string; and when what runs is only known at run time, a rule that could match does.
 * The corpus is a data table by class; the controls show the matching stays precise.
 */
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { PermissionBehavior } from "../../../src/domain/Permission.js"
import { base, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-deny-")
afterAll(project.remove)

/** A class of spellings: the rule, and commands that must come out with `expect` under `allow: ["Bash"]`. */
interface Class {
  readonly name: string
  readonly rule: string
  readonly expect: PermissionBehavior
  readonly commands: ReadonlyArray<string>
}

const rm = "Bash(rm:*)"
const push = "Bash(git push:*)"

export const corpus: ReadonlyArray<Class> = [
  {
    name: "base name spellings",
    rule: rm,
    expect: "deny",
    commands: [
      "/bin/rm x",
      "/usr/bin/rm x",
      "\\rm x",
      '"rm" x',
      "'rm' x",
      "r''m x",
      'r""m x',
      "./rm x",
      "../../bin/rm x",
      "$'rm' x",
      "$'\\x72m' x",
      "r\\m x",
      "rm",
      "ls; /bin/rm -rf /"
    ]
  },
  {
    name: "env",
    rule: rm,
    expect: "deny",
    commands: [
      "env rm x",
      "env -i rm x",
      "env - rm x",
      "env -- rm x",
      "env FOO=1 BAR=2 rm x",
      "env -u HOME rm x",
      "env --unset=HOME rm x",
      "env --uns HOME rm x",
      "env -C /tmp rm x",
      "env --chdir=/tmp /bin/rm x",
      "env -i0 rm x",
      "env --ignore-env rm x",
      "env --default-signal rm x",
      "env --block-signal=INT rm x"
    ]
  },
  {
    name: "env -S and its abbreviations",
    rule: rm,
    expect: "deny",
    commands: [
      "env -S 'rm x'",
      "env --sp='rm x' ls",
      "env --split-string='rm x'",
      "env --split='rm x'",
      "env --s 'rm x'",
      "env -S'rm x'",
      "env -iS 'rm x'",
      "env -S 'FOO=1 rm x'",
      "env -S '-i rm x'",
      'env -S "$CMD"',
      `env -S "\${X}"`,
      'env --sp="$(echo rm) x"'
    ]
  },
  {
    name: "nice, timeout, nohup, stdbuf, time",
    rule: rm,
    expect: "deny",
    commands: [
      "nice rm x",
      "nice -n 5 rm x",
      "nice -5 rm x",
      "nice --adj=5 rm x",
      "nice -n5 rm x",
      "timeout 5 rm x",
      "timeout -s KILL 5 rm x",
      "timeout --sig=KILL 5 rm x",
      "timeout -k 1 5 rm x",
      "timeout --foreground --preserve 5 rm x",
      "timeout -v 5s /bin/rm x",
      "nohup rm x",
      "nohup -- rm x",
      "stdbuf -oL rm x",
      "stdbuf --output=L -e0 rm x",
      "time rm x",
      "time -p rm x",
      "/usr/bin/time -f %e rm x"
    ]
  },
  {
    name: "sudo, doas, command, builtin, exec, busybox, setsid, ionice, chroot, taskset",
    rule: rm,
    expect: "deny",
    commands: [
      "sudo rm x",
      "sudo -u root rm x",
      "sudo -E rm x",
      "sudo --user=root -H rm x",
      "sudo --pres rm x",
      "sudo FOO=1 rm x",
      "sudo -- rm x",
      "doas rm x",
      "doas -u root rm x",
      "command rm x",
      "command -p rm x",
      "builtin rm x",
      "exec rm x",
      "exec -a name rm x",
      "busybox rm x",
      "/bin/busybox rm -rf x",
      "setsid rm x",
      "setsid -f rm x",
      "ionice -c 3 rm x",
      "chroot / rm x",
      "taskset 1 rm x",
      "taskset -c 0 rm x"
    ]
  },
  {
    name: "xargs",
    rule: rm,
    expect: "deny",
    commands: [
      "ls | xargs rm",
      "ls | xargs -0 rm",
      "ls | xargs -I{} rm {}",
      "ls | xargs -i rm {}",
      "ls | xargs -n1 rm",
      "ls | xargs --max-args=1 rm",
      "ls | xargs --max-a=1 -P4 rm -f",
      "ls | xargs -r -- rm",
      "ls | xargs sh -c 'rm \"$@\"' _",
      "ls | xargs -I % sh -c 'echo %'",
      "ls | xargs -I% %",
      "ls | xargs -I{} {} -rf x",
      "ls | xargs -I% xargs find . %",
      "ls | xargs -n1 find . -name x",
      "printf '%s\\n' -exec rm src ';' | xargs find . -name zzz",
      "ls | xargs -I% xargs -n1 find . -exec git status {} +",
      "find . -name x $MORE",
      "find . $(echo -exec rm {} +)"
    ]
  },
  {
    name: "find -exec, -execdir, -ok, -okdir",
    rule: rm,
    expect: "deny",
    commands: [
      "find . -exec rm {} +",
      "find . -execdir rm {} \\;",
      "find . -ok rm {} \\;",
      "find . -okdir rm {} ';'",
      "find . -name '*.o' -exec rm -f {} +",
      "find . -type f -exec ls {} \\; -exec /bin/rm {} \\;",
      "find -L . -exec env rm {} +",
      "find . -exec {} x \\;",
      "find . $ACTION rm {} +"
    ]
  },
  {
    name: "wrapper chains",
    rule: rm,
    expect: "deny",
    commands: [
      "sudo env nice timeout 5 rm x",
      "ls | xargs sudo rm",
      "find . -exec env rm {} +",
      "nohup nice -n 1 /bin/rm x",
      "timeout 5 sudo -u root busybox rm x",
      "command exec env -i FOO=1 rm x",
      "env -S 'nice -n 1 rm x'",
      "sudo bash -c 'rm x'"
    ]
  },
  {
    name: "unknown wrapper options (the command may start at any later word)",
    rule: rm,
    expect: "deny",
    commands: [
      "timeout --frobnicate 5 rm x",
      "nice --zz rm x",
      "sudo --zz rm x",
      "env --zz rm x",
      "env -Z rm x",
      "xargs --zz rm",
      "stdbuf -q rm x"
    ]
  },
  {
    name: "code given as a string, or known only at run time",
    rule: rm,
    expect: "deny",
    commands: [
      "bash -c 'rm x'",
      'sh -c "rm x"',
      "bash -ec 'ls && rm x'",
      "bash -c 'bash -c \"rm x\"'",
      "eval rm x",
      "eval 'rm x'",
      'bash -c "$CMD"',
      "echo rm x | bash",
      "source ./script.sh",
      ". ./script.sh",
      "$CMD x",
      '"$(echo rm)" x',
      "r$X x",
      "/bin/r? x",
      "trap 'rm x' EXIT"
    ]
  },
  {
    name: "git global options",
    rule: push,
    expect: "deny",
    commands: [
      "git -C . push",
      "git --no-pager push",
      "git -c a=b push",
      "git -c a=b -c c=d push origin main",
      "git --git-dir=.git push",
      "git --git-dir .git push",
      "git --work-tree=. push",
      "git --work-tree . push",
      "git --namespace=x push",
      "git -p push",
      "git -P push",
      "git --paginate push",
      "git --bare push",
      "git --exec-path=/usr/lib/git-core push",
      "git --no-replace-objects --literal-pathspecs push",
      "git --no-optional-locks push",
      "git --config-env=a.b=HOME push",
      "git --no-pag push",
      "git --git-d=.git push",
      "git -c alias.p=push p",
      "git -c Alias.p=push p",
      "git --frob push",
      "git -C $DIR push",
      "git $SUB",
      "/usr/bin/git -C . push",
      "sudo git -C . push origin",
      "env git --no-pager push",
      "git push --force"
    ]
  },
  {
    name: "ask rules match the same spellings",
    rule: "ask:Bash(rm:*)",
    expect: "ask",
    commands: ["/bin/rm x", "busybox rm x", "find . -exec rm {} +", "find . -execdir rm {} \\;", "env --sp='rm x' ls"]
  },
  {
    name: "controls: other commands stay allowed",
    rule: rm,
    expect: "allow",
    commands: [
      "ls",
      "echo rm x",
      "rmdir x",
      "grep rm notes.txt",
      "command -v rm",
      "command -V rm",
      "git rm x",
      "find . -name rm",
      "ls | xargs",
      "ls | xargs echo",
      "ls | xargs -I% echo %",
      "ls | xargs -I{} find . -exec git status {} +",
      "env -S 'ls -l'",
      "timeout 5 ls",
      "bash -c 'ls'",
      "sudo -u root ls",
      "busybox --list"
    ]
  },
  {
    name: "controls: other git commands stay allowed",
    rule: push,
    expect: "allow",
    commands: [
      "git status",
      "git -C . pull",
      "git log --grep push",
      "git --no-pager log",
      "git -c a=b fetch",
      "echo git push",
      "git pushx"
    ]
  }
]

const caseOf = (c: Class) =>
  c.rule.startsWith("ask:") ? { ask: [c.rule.slice(4)], allow: ["Bash"] } : { deny: [c.rule], allow: ["Bash"] }

layer(base)("deny and ask rules see every spelling of a command", (it) => {
  for (const c of corpus) {
    describe(`${c.name} (${c.rule} → ${c.expect})`, () => {
      for (const command of c.commands) {
        it.effect(command, () =>
          Effect.gen(function* () {
            const decision = yield* decide(project, { ...caseOf(c), tool: "Bash", input: { command } })
            expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: c.expect })
          })
        )
      }
    })
  }

  it.effect("a refusal names the rule and the matched command", () =>
    Effect.gen(function* () {
      const decision = yield* decide(project, {
        deny: [push],
        allow: ["Bash"],
        tool: "Bash",
        input: { command: "git -C . push origin" }
      })
      expect(decision).toMatchObject({ behavior: "deny", rule: push })
      expect(decision.reason).toBe(
        // the settings file relative to the project: no absolute path of the machine goes to the model
        `Bash on git -C . push origin is denied by rule ${push} in .claude/settings.json`
      )
    })
  )

  it.effect("env --sp='touch /tmp/p' ls is not read-only: it asks with no rule", () =>
    Effect.gen(function* () {
      const decision = yield* decide(project, { tool: "Bash", input: { command: "env --sp='touch /tmp/p' ls" } })
      expect(decision.behavior).toBe("ask")
      const plan = yield* decide(project, {
        mode: "plan",
        tool: "Bash",
        input: { command: "env --sp='touch /tmp/p' ls" }
      })
      expect(plan.behavior).toBe("deny")
    })
  )
})
