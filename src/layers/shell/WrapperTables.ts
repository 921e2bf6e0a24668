/**
 * The commands that run another command given as their arguments (`env`, `timeout`, `sudo`, `xargs`, …), as data:
 * each one's full option table (so `env --sp=…` is read as `--split-string`, the way GNU getopt reads it) and where
 * the wrapped command starts. Options a table does not name make the start unknown; the callers then assume the
 * command may start at any later word.
 */
import type { OptionTable } from "../../domain/shell/OptionParser.js"
import { runnerWrappers } from "./RunnerWrappers.js"
import type { Wrapper } from "./Wrapper.js"

export type { Wrapper } from "./Wrapper.js"

const helpVersion = { help: "flag", version: "flag" } as const

/** The wrappers by command name. */
export const wrappers: Readonly<Record<string, Wrapper>> = {
  env: {
    options: {
      short: { i: "flag", "0": "flag", u: "value", C: "value", S: "value", v: "flag" },
      long: {
        "ignore-environment": "flag",
        null: "flag",
        unset: "value",
        chdir: "value",
        "split-string": "value",
        "block-signal": "optional",
        "default-signal": "optional",
        "ignore-signal": "optional",
        "list-signal-handling": "flag",
        debug: "flag",
        ...helpVersion
      },
      stopAtOperand: true
    },
    assignments: true,
    split: ["-S", "--split-string"],
    dash: true,
    transparent: true
  },
  timeout: {
    options: {
      short: { k: "value", s: "value", v: "flag", f: "flag", p: "flag" },
      long: {
        "kill-after": "value",
        signal: "value",
        foreground: "flag",
        "preserve-status": "flag",
        verbose: "flag",
        ...helpVersion
      },
      stopAtOperand: true
    },
    leading: 1,
    transparent: true
  },
  nice: {
    options: {
      short: { n: "value" },
      long: { adjustment: "value", ...helpVersion },
      stopAtOperand: true,
      numericOption: true
    },
    transparent: true
  },
  nohup: { options: { long: helpVersion, stopAtOperand: true }, transparent: true },
  stdbuf: {
    options: {
      short: { i: "value", o: "value", e: "value" },
      long: { input: "value", output: "value", error: "value", ...helpVersion },
      stopAtOperand: true
    },
    transparent: true
  },
  time: {
    options: {
      short: { a: "flag", f: "value", o: "value", p: "flag", q: "flag", v: "flag", V: "flag" },
      long: {
        append: "flag",
        format: "value",
        output: "value",
        portability: "flag",
        quiet: "flag",
        verbose: "flag",
        ...helpVersion
      },
      stopAtOperand: true
    },
    transparent: true,
    writes: ["-o", "--output"]
  },
  sudo: {
    options: {
      short: {
        A: "flag",
        b: "flag",
        E: "flag",
        e: "flag",
        H: "flag",
        i: "flag",
        K: "flag",
        k: "flag",
        l: "flag",
        n: "flag",
        P: "flag",
        S: "flag",
        s: "flag",
        V: "flag",
        v: "flag",
        C: "value",
        D: "value",
        g: "value",
        h: "value",
        p: "value",
        R: "value",
        r: "value",
        T: "value",
        t: "value",
        U: "value",
        u: "value"
      },
      long: {
        askpass: "flag",
        background: "flag",
        bell: "flag",
        "close-from": "value",
        chdir: "value",
        "preserve-env": "optional",
        edit: "flag",
        group: "value",
        "set-home": "flag",
        host: "value",
        login: "flag",
        "remove-timestamp": "flag",
        "reset-timestamp": "flag",
        list: "flag",
        "non-interactive": "flag",
        "preserve-groups": "flag",
        prompt: "value",
        chroot: "value",
        role: "value",
        stdin: "flag",
        shell: "flag",
        type: "value",
        "command-timeout": "value",
        "other-user": "value",
        user: "value",
        validate: "flag",
        ...helpVersion
      },
      stopAtOperand: true
    },
    assignments: true
  },
  doas: {
    options: { short: { L: "flag", n: "flag", s: "flag", C: "value", u: "value" }, stopAtOperand: true }
  },
  command: { options: { short: { p: "flag", v: "flag", V: "flag" }, stopAtOperand: true }, noCommand: ["-v", "-V"] },
  builtin: { options: { stopAtOperand: true } },
  exec: { options: { short: { c: "flag", l: "flag", a: "value" }, stopAtOperand: true } },
  setsid: {
    options: {
      short: { c: "flag", f: "flag", w: "flag" },
      long: { ctty: "flag", fork: "flag", wait: "flag", ...helpVersion },
      stopAtOperand: true
    }
  },
  ionice: {
    options: {
      short: { c: "value", n: "value", t: "flag", p: "flag", P: "flag", u: "value" },
      long: {
        class: "value",
        classdata: "value",
        ignore: "flag",
        pid: "flag",
        pgid: "flag",
        uid: "value",
        ...helpVersion
      },
      stopAtOperand: true
    }
  },
  taskset: {
    options: {
      short: { a: "flag", c: "flag", p: "flag" },
      long: { "all-tasks": "flag", "cpu-list": "flag", pid: "flag", ...helpVersion },
      stopAtOperand: true
    },
    leading: 1
  },
  chroot: {
    options: {
      long: { userspec: "value", groups: "value", "skip-chdir": "flag", ...helpVersion },
      stopAtOperand: true
    },
    leading: 1
  },
  xargs: {
    options: {
      short: {
        "0": "flag",
        a: "value",
        d: "value",
        E: "value",
        e: "optional",
        I: "value",
        i: "optional",
        L: "value",
        l: "optional",
        n: "value",
        o: "flag",
        P: "value",
        p: "flag",
        r: "flag",
        s: "value",
        t: "flag",
        x: "flag"
      },
      long: {
        null: "flag",
        "arg-file": "value",
        delimiter: "value",
        eof: "optional",
        replace: "optional",
        "max-lines": "optional",
        "max-args": "value",
        "open-tty": "flag",
        "max-procs": "value",
        "process-slot-var": "value",
        interactive: "flag",
        "no-run-if-empty": "flag",
        "max-chars": "value",
        verbose: "flag",
        exit: "flag",
        "show-limits": "flag",
        ...helpVersion
      },
      stopAtOperand: true
    },
    appends: true,
    replace: ["-I", "-i", "--replace"]
  },
  ...runnerWrappers
}

/** `git`'s options before the subcommand (they may hide which subcommand runs: `git -C . push`). */
export const gitGlobalOptions: OptionTable = {
  short: { C: "value", c: "value", p: "flag", P: "flag", v: "flag", h: "flag" },
  long: {
    "config-env": "value",
    "exec-path": "optional",
    "html-path": "flag",
    "man-path": "flag",
    "info-path": "flag",
    paginate: "flag",
    "no-pager": "flag",
    "no-replace-objects": "flag",
    "no-lazy-fetch": "flag",
    "no-optional-locks": "flag",
    "no-advice": "flag",
    bare: "flag",
    "git-dir": "value",
    "work-tree": "value",
    namespace: "value",
    "super-prefix": "value",
    "literal-pathspecs": "flag",
    "glob-pathspecs": "flag",
    "noglob-pathspecs": "flag",
    "icase-pathspecs": "flag",
    "list-cmds": "value",
    "attr-source": "value",
    ...helpVersion
  },
  stopAtOperand: true
}

/** Shells: `-c` takes code from a string, no script operand reads it from stdin. */
export const shells: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh"
])

/** Shell options that take the next word. */
export const shellOptionsWithArgument: ReadonlySet<string> = new Set([
  "-o",
  "+o",
  "-O",
  "+O",
  "--rcfile",
  "--init-file"
])

/** `find` actions that run a command up to `;` or `+`. */
export const findActions: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"])
