import { describe, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as CommandEffect from "../../../src/domain/shell/CommandEffect.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { ShellAnalyzer } from "../../../src/services/ShellAnalyzer.js"
import { readOnlyLine, subjects, unlistedLong } from "../../domain/shell/TableArbitraries.js"

/** Code execution hidden in commands that look read-only (the first class of the security review). */
const executesCode: ReadonlyArray<string> = [
  // with a command after it, env is a wrapper (judged by the wrapper stripping); alone, it is judged here
  "env --sp='touch /tmp/p'",
  "env --split-string='touch /tmp/p'",
  "env -S'touch /tmp/p'",
  "sort --outp=FILE in",
  "sort --output FILE in",
  "sort -o FILE in",
  "sort -uoFILE in",
  "sort --compress-prog=sh in",
  "sort --compress-program sh in",
  "sort -T /tmp in",
  "file --compi",
  "file -C -m magic",
  "file --magic-file=x y",
  "date --se=2020-01-01",
  "date --set 2020-01-01",
  "date -s now",
  "date 010100002020",
  "rg --hostname-bin=PROG x",
  "rg --pre cat x",
  "rg --pre=cat x",
  "sed -nee 1p",
  "sed 1e f",
  "sed -n 's/x/id/e' f",
  "sed -n 's/x/y/w out' f",
  "sed -n 'w out' f",
  "sed -n 'W out' f",
  "sed -n 'r /etc/passwd' f",
  "sed -n 'R /etc/passwd' f",
  "sed -n -e '1{e id' -e '}' f",
  "sed -i 1p f",
  "sed --in-pl 1p f",
  "sed -f script f",
  "find . -exec rm {} +",
  "find . -execdir rm {} ;",
  "find . -ok rm {} ;",
  "find . -okdir rm {} ;",
  "find . -delete",
  "find . -fprint out",
  "find . -fprintf out %p",
  "find . -fls out",
  "find . -files0-from list",
  "find . -frobnicate",
  "git -c core.pager=sh log",
  "git -c alias.x=!sh x",
  "git --config-env=core.pager=X log",
  "git --exec-path=/tmp log",
  "git --git-dir=elsewhere log",
  "git -p log",
  "git --paginate log",
  "git log --output=x",
  "git log --outp=x",
  "git diff --ext-diff",
  "git diff --textconv",
  "git show --textconv HEAD",
  "git log --show-signature",
  "git log --format=%G?",
  "git grep -O x",
  "git grep --open-files-in-pager=vim x",
  "git blame --textconv f",
  "git branch -d x",
  "git branch new-branch",
  "git tag v1",
  "git tag -v v1",
  "git config core.pager sh",
  "git config --unset a.b",
  "git stash",
  "git reflog expire --all",
  "git remote add o url",
  "git remote show origin",
  "printf -v PATH %s /tmp",
  "hostname evil",
  "hostname -F file",
  "hostname -b",
  "node -e 1",
  "node --version -e 1",
  "npm install",
  "npm run x",
  "npm view react version",
  // npm ls writes its log under ~/.npm/_logs and, with --global, asks the registry
  "npm ls",
  "npm ls --depth=0",
  "npm ls --global",
  "npm info react",
  "npm show react version",
  "npm v react",
  "uniq in out",
  "tree -o out",
  "tree -R",
  "jq -n 'import \"x\" as y; 1'",
  "command ls",
  "test -v 'a[$(id)]'",
  "[ -v x ]",
  "strings @opts",
  "python3 -c 1"
]

/** Issue 12's list (and Claude Code's), in the read-only direction. */
const issue12ReadOnly: ReadonlyArray<string> = [
  "sleep 1",
  "true",
  "false",
  "echo done",
  "printf '%s\\n' a",
  "pwd",
  "date",
  "date -u +%s",
  "date -d yesterday +%F",
  "which git",
  "type ls",
  "id -u",
  "whoami",
  "uname -a",
  "hostname",
  "hostname -f",
  "basename a/b.txt .txt",
  "dirname a/b",
  "realpath .",
  "readlink -f x",
  "stat -c %s f",
  "file -b f",
  "du -sh .",
  "df -h",
  "sort -rn f",
  "sort -k2,2 -t, f",
  "uniq -c f",
  "cut -d, -f1 f",
  "tr a-z A-Z",
  "nl f",
  "seq 1 10",
  "seq -5 5",
  "column -t f",
  "comm -12 a b",
  "cmp a b",
  "diff -u a b",
  "jq -r .name package.json",
  "jq -n --arg a b '$a'",
  "git status",
  "git log --oneline -5",
  "git diff HEAD~1",
  "git show HEAD",
  "git branch",
  "git branch -a",
  "git tag",
  "git tag -l 'v*'",
  "git rev-parse HEAD",
  "git ls-files",
  "git blame f",
  "git grep -n x",
  "git describe --tags",
  "git remote -v",
  "git config --get user.name",
  "git shortlog -sn",
  "git rev-list --count HEAD",
  "git merge-base a b",
  "git cat-file -p HEAD",
  "git for-each-ref '--format=%(refname)'",
  "git stash list",
  "git worktree list",
  "git reflog",
  "npm --version",
  "node --version",
  "node -v",
  "ls -la",
  "cat f",
  "head -n 5 f",
  "tail -20 f",
  "wc -l f",
  "grep -rn x .",
  "rg -n --hidden x",
  "find . -name '*.ts' -type f -newer x -print",
  "tree -L 2",
  "tac f",
  "rev f",
  "paste a b",
  "fold -w 80 f",
  "expand f",
  "unexpand f",
  "fmt f",
  "numfmt --to=iec 1024",
  "expr 1 + 2",
  "tsort f",
  "od -c f",
  "hexdump -C f",
  "sha256sum f",
  "md5sum f",
  "groups",
  "free -h",
  "base64 -d f",
  "strings -n 8 f",
  "python3 --version",
  "nproc",
  "uptime",
  "locale",
  "sed -n 1p f",
  "sed 's/a/b/g' f",
  "sed --sandbox 's/a/b/e' f",
  "env",
  "printenv HOME",
  "test -f x",
  '[ -n "$x" ]',
  "[[ -n $x ]]",
  "command -v git",
  "cd src"
]

/** Things an agent does all the time that are never read-only. */
const writes: ReadonlyArray<string> = [
  "less +F f",
  "awk 'BEGIN{system(\"id\")}' f",
  "tee f",
  "cp a b",
  "touch x",
  "rm x",
  "xargs rm",
  "xargs sort",
  "vim f"
]

layer(TreeSitterShellAnalyzer.layer)("read-only classification of command lines", (it) => {
  describe("code execution in commands that look read-only is never read-only", () => {
    for (const command of executesCode) {
      it.effect(command, () =>
        Effect.gen(function* () {
          expect((yield* ShellAnalyzer).analyze(command).readOnly).toBe(false)
        })
      )
    }
  })

  describe("the read-only knowledge is at least Claude Code's", () => {
    for (const command of issue12ReadOnly) {
      it.effect(command, () =>
        Effect.gen(function* () {
          const analysis = (yield* ShellAnalyzer).analyze(command)
          expect({ dangers: analysis.dangers, readOnly: analysis.readOnly }).toEqual({ dangers: [], readOnly: true })
        })
      )
    }
    for (const command of writes) {
      it.effect(`${command} is not`, () =>
        Effect.gen(function* () {
          expect((yield* ShellAnalyzer).analyze(command).readOnly).toBe(false)
        })
      )
    }
  })

  const lines = FastCheck.constantFrom(...subjects).chain((subject) => readOnlyLine(subject))
  const spoiled = FastCheck.constantFrom(...subjects).chain((subject) =>
    FastCheck.tuple(readOnlyLine(subject), unlistedLong(subject.table)).map(([line, option]) => [
      ...line.slice(0, subject.prefix.length),
      option,
      ...line.slice(subject.prefix.length)
    ])
  )
  const spoilers = FastCheck.constantFrom(
    (line: string) => `${line} > out.txt`,
    (line: string) => `${line} 2>> log`,
    (line: string) => `${line} $(id)`,
    (line: string) => `${line} "\`id\`"`,
    (line: string) => `${line} <(ls)`,
    (line: string) => `${line} $((x))`,
    (line: string) => `${line} $((x + 1))`,
    (line: string) => `${line} "\${x@P}"`,
    (line: string) => `${line} \${a[i]}`,
    (line: string) => `[ -v x ] && ${line}`,
    (line: string) => `[[ $n -gt 1 ]] && ${line}`
  )

  it.effect.prop(
    "a read-only line with a redirection, a substitution, arithmetic over a variable, a -v test or a transformation is not read-only",
    [lines, spoilers],
    ([line, spoil]) =>
      Effect.gen(function* () {
        const analyzer = yield* ShellAnalyzer
        expect(analyzer.analyze(line.join(" ")).readOnly).toBe(true)
        const command = spoil(line.join(" "))
        expect({ command, readOnly: analyzer.analyze(command).readOnly }).toEqual({ command, readOnly: false })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "a composition is read-only exactly when every part is",
    [
      FastCheck.array(
        FastCheck.tuple(FastCheck.oneof(lines, spoiled), FastCheck.constantFrom(" ; ", " && ", " | ", " || ")),
        {
          minLength: 1,
          maxLength: 5
        }
      )
    ],
    ([parts]) =>
      Effect.gen(function* () {
        const command = parts
          .map(([words, separator], at) => words.join(" ") + (at < parts.length - 1 ? separator : ""))
          .join("")
        const each = parts.every(([words]) => CommandEffect.describe(words).readOnly)
        expect({ command, readOnly: (yield* ShellAnalyzer).analyze(command).readOnly }).toEqual({
          command,
          readOnly: each
        })
      }),
    { fastCheck: { numRuns: 150 } }
  )
})
