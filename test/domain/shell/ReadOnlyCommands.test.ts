import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as ReadOnlyCommands from "../../../src/domain/shell/ReadOnlyCommands.js"

const readOnly: ReadonlyArray<string> = [
  "ls -la",
  "cat a b",
  "head -n 5 f",
  "tail -n +2 f",
  "wc -c f",
  "grep -rn x .",
  "egrep a f",
  "fgrep a f",
  "rg -n --hidden x",
  "find . -name x -print",
  "echo -n hi",
  "printf %s x",
  "pwd",
  "which git",
  "type cd",
  "stat -c %s f",
  "file f",
  "du -sh",
  "df",
  "tree -a -L 2",
  "basename a/b",
  "dirname a/b",
  "realpath x",
  "readlink -f x",
  "date -u +%s",
  "date -Iseconds",
  "uname -r",
  "whoami",
  "id -u",
  "env",
  "env -i A=1 B=2",
  "env -u HOME",
  "printenv HOME",
  "true",
  "false",
  ": ignored",
  "test -f x",
  "[ -f x ]",
  "diff -u a b",
  "cmp a b",
  "sort -k2 -t, f",
  "sort -rn",
  "uniq -c in",
  "uniq -f 2 in",
  "cut -f1",
  "tr -d x",
  "nl f",
  "jq -r .a f",
  "sed -n 5p f",
  // widened on purpose: Claude Code treats a lone s/// with harmless flags as read-only (it only prints)
  "sed s/a/b/ f",
  // everyday commands Claude Code runs (issue 29)
  "less -F f",
  "awk {print} f",
  "awk -F, {print} f",
  // comparisons and a logical or are plain text handling; `>` writes only after print/printf
  "awk $1>2 f",
  "awk NR<=3 f",
  'awk $1=="a"||$2=="b" f',
  "awk $3>1{print(a>b)} f",
  "xxd f",
  "join a b",
  "fd js",
  "fd -e md src",
  "file f",
  "popd",
  "git check-ignore -v f",
  "git cherry -v main",
  "git show-branch",
  "git var GIT_AUTHOR_IDENT",
  "git config user.email",
  "git branch --merged",
  "git format-patch -1 --stdout",
  "sed -n -e 1,3p -e $p f",
  "sed -nE /a/p f",
  "sed --quiet 2p",
  "cd ..",
  "git status --short",
  "git log -p --stat",
  "git diff --cached",
  "git show --name-only HEAD",
  "git branch",
  "git branch -vv",
  "git branch --contains abc123",
  "git branch -l feat*",
  "git rev-parse HEAD",
  "git ls-files -m",
  "git blame -L 1,5 f",
  "git remote",
  "git remote -v",
  "git config --get user.email",
  "git config --list --show-origin",
  "git config get user.name",
  "git --no-pager log",
  "git -C repo diff"
]

const notReadOnly: ReadonlyArray<string> = [
  "",
  "rm -f x",
  "cp a b",
  "mv a b",
  "touch x",
  "mkdir d",
  "chmod +x f",
  "less -o log f",
  "less +!id f",
  "xxd f out",
  "fd -x rm",
  "awk {print$1>$2} f",
  'awk {printf("%s",$1)>>"log"} f',
  'awk {print|"sort"} f',
  "git config user.email x",
  "git format-patch -1",
  "more f",
  "vim f",
  'awk {print>"out"} f',
  "xargs ls",
  "tee out",
  "curl http://example.test",
  "npm install",
  "node -e 1",
  "python3 -c 1",
  "./ls",
  "/tmp/ls",
  "rg --pre ./decompress x",
  "rg --pre=./decompress x",
  "find . -exec rm {} ;",
  "find . -execdir rm {} +",
  "find . -ok rm {} ;",
  "find . -okdir rm {} ;",
  "find . -delete",
  "find . -fprint out",
  "find . -fprint0 out",
  "find . -fprintf out %p",
  "find . -fls out",
  "printf -v x %s y",
  "file -C -m magic",
  "file --compile",
  "tree -o out",
  "tree -aR",
  "date -s now",
  "date --set=now",
  "sort -o out in",
  "sort -uo out in",
  "sort --output=out in",
  "sort --compress-program=gzip in",
  "uniq in out",
  "env ls",
  "env A=1 ls",
  "env -S ls",
  "env -iS ls",
  "sed -i -n 1p f",
  "sed -ni 1p f",
  "sed -n w out",
  "sed -n 1w out",
  "sed -n -f script f",
  "sed -n 1p;w out f",
  "sed -n",
  "git commit -m x",
  "git push",
  "git checkout main",
  "git reset --hard",
  "git branch -d x",
  "git branch -D x",
  "git branch -m a b",
  "git branch -M a b",
  "git branch -c a b",
  "git branch --delete x",
  "git branch --move a b",
  "git branch -f x HEAD",
  "git branch --set-upstream-to=origin/x",
  "git branch topic",
  "git branch -dr origin/x",
  "git log --output=out",
  "git diff --output out",
  "git diff --ext-diff",
  "git remote add o url",
  "git remote -v extra",
  "git remote remove o",
  "git config user.name x",
  "git config --unset user.name",
  "git config --add a.b c",
  "git config -e",
  "git -c core.pager=x log",
  "git --git-dir=x status",
  "git",
  "git -C"
]

const toArgv = (command: string): ReadonlyArray<string> => (command === "" ? [] : command.split(" "))

describe("ReadOnlyCommands.isReadOnlyCommand", () => {
  for (const command of readOnly) {
    it(`${JSON.stringify(command)} is read-only`, () => {
      expect(ReadOnlyCommands.isReadOnlyCommand(toArgv(command))).toBe(true)
    })
  }
  for (const command of notReadOnly) {
    it(`${JSON.stringify(command)} is not read-only`, () => {
      expect(ReadOnlyCommands.isReadOnlyCommand(toArgv(command))).toBe(false)
    })
  }

  it.prop(
    "a command that is not on the list is never read-only, whatever its arguments",
    [
      FastCheck.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
      FastCheck.array(FastCheck.string({ maxLength: 6 }), { maxLength: 4 })
    ],
    ([name, args]) => {
      const listed = readOnly.some((command) => command.split(" ")[0] === name) || name === "rg" || name === "find"
      if (!listed) expect(ReadOnlyCommands.isReadOnlyCommand([name, ...args])).toBe(false)
    }
  )
})

describe("ReadOnlyCommands.readsWhateverArguments", () => {
  it("holds for commands without writing options only", () => {
    expect(["ls", "cat", "grep", "echo", "cd", "jq"].map(ReadOnlyCommands.readsWhateverArguments)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true
    ])
    expect(["find", "sort", "sed", "git", "env", "rg", "tree"].map(ReadOnlyCommands.readsWhateverArguments)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false
    ])
  })
})

describe("ReadOnlyCommands.isRiskyAssignment", () => {
  it("flags variables that change which code runs", () => {
    const risky = ["PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV", "IFS"]
    const more = ["GIT_EXTERNAL_DIFF", "GIT_CONFIG_GLOBAL", "PAGER", "NODE_OPTIONS", "PYTHONPATH", "HOME"]
    for (const name of [...risky, ...more, "RIPGREP_CONFIG_PATH", "PROMPT_COMMAND", "BASH_FUNC_ls%%"]) {
      expect(ReadOnlyCommands.isRiskyAssignment(name)).toBe(true)
    }
  })

  it("lets ordinary variables through", () => {
    for (const name of ["FOO", "LANG", "LC_ALL", "TZ", "NO_COLOR", "DEBUG", "MY_PATH", "PATHS"]) {
      expect(ReadOnlyCommands.isRiskyAssignment(name)).toBe(false)
    }
  })
})

describe("sed labels", () => {
  // GNU sed 4.9 skips blanks before a label and ends it at a blank or `;`: what follows is the next command.
  const label = FastCheck.stringMatching(/^[A-Za-z0-9_.#-]{1,6}$/)
  const branch = FastCheck.constantFrom(":", "b", "t", "T", ": ", "b ", "t\t")
  const blank = FastCheck.constantFrom(" ", "\t", ";", " ; ", "\n")
  const writer = FastCheck.constantFrom("w /tmp/f", "e rm x", "r secrets/key.txt", "s/h/CMD/e", "W out", "R f")
  const safe = FastCheck.constantFrom("p", "d", "n", "=", "s/a/b/g", "")

  it.prop("a command after a label is judged as a command", [branch, label, blank, writer], ([b, l, sep, w]) => {
    expect(ReadOnlyCommands.isReadOnlyCommand(["sed", "-n", `${b}${l}${sep}${w}`, "f"])).toBe(false)
  })

  it.prop("a label followed by read-only commands stays read-only", [branch, label, blank, safe], ([b, l, sep, s]) => {
    expect(ReadOnlyCommands.isReadOnlyCommand(["sed", "-n", `${b}${l}${sep}${s}`, "f"])).toBe(true)
  })

  it("a } in a label is not read-only", () => {
    for (const script of [":x}", "bx}", "bx};:x"])
      expect(ReadOnlyCommands.isReadOnlyCommand(["sed", script])).toBe(false)
  })
})
