/**
 * More commands that run another command given as their arguments, beyond the classic wrappers of
 * `WrapperTables.ts`: schedulers and watchers (`watch`, `flock`, `entr`), tracers and debuggers (`strace`,
 * `ltrace`, `valgrind`), user and namespace switchers (`su`, `runuser`, `sg`, `unshare`, `nsenter`, `pkexec`), and
 * environment shims (`fakeroot`, `faketime`, `cross-env`, `proxychains`). Deny and ask rules see the command each one
 * runs; none of them is transparent for allow rules or the read-only analysis.
 */
import type { Wrapper } from "./Wrapper.js"

const helpVersion = { help: "flag", version: "flag" } as const

/** The options `su` and `runuser` share (util-linux); each adds its own. */
const switchUser = {
  short: {
    c: "value",
    f: "flag",
    g: "value",
    G: "value",
    l: "flag",
    m: "flag",
    p: "flag",
    P: "flag",
    s: "value",
    w: "value",
    h: "flag",
    V: "flag"
  },
  long: {
    command: "value",
    "session-command": "value",
    fast: "flag",
    group: "value",
    "supp-group": "value",
    login: "flag",
    "preserve-environment": "flag",
    pty: "flag",
    shell: "value",
    "whitelist-environment": "value",
    ...helpVersion
  }
} as const

/** The wrappers by command name, merged into `WrapperTables.wrappers`. */
export const runnerWrappers: Readonly<Record<string, Wrapper>> = {
  watch: {
    options: {
      short: {
        n: "value",
        d: "optional",
        t: "flag",
        b: "flag",
        e: "flag",
        g: "flag",
        c: "flag",
        x: "flag",
        p: "flag",
        w: "flag",
        q: "value",
        r: "flag",
        s: "value"
      },
      long: {
        interval: "value",
        differences: "optional",
        "no-title": "flag",
        beep: "flag",
        errexit: "flag",
        chgexit: "flag",
        color: "flag",
        "no-color": "flag",
        exec: "flag",
        precise: "flag",
        "no-wrap": "flag",
        equexit: "value",
        "no-rerun": "flag",
        shell: "value",
        ...helpVersion
      },
      stopAtOperand: true
    },
    joined: true
  },
  flock: {
    options: {
      short: {
        s: "flag",
        x: "flag",
        e: "flag",
        n: "flag",
        u: "flag",
        w: "value",
        E: "value",
        o: "flag",
        F: "flag",
        c: "value",
        h: "flag",
        V: "flag",
        v: "flag"
      },
      long: {
        shared: "flag",
        exclusive: "flag",
        nonblock: "flag",
        unlock: "flag",
        timeout: "value",
        "conflict-exit-code": "value",
        close: "flag",
        command: "value",
        "no-fork": "flag",
        verbose: "flag",
        ...helpVersion
      },
      stopAtOperand: true
    },
    leading: 1,
    code: ["-c", "--command"]
  },
  su: {
    options: { short: { ...switchUser.short, C: "value" }, long: switchUser.long },
    code: ["-c", "-C", "--command", "--session-command"],
    dash: true
  },
  runuser: {
    options: {
      short: { ...switchUser.short, u: "value" },
      long: { ...switchUser.long, user: "value" },
      stopAtOperand: true
    },
    code: ["-c", "--command", "--session-command"],
    dash: true
  },
  sg: { options: { stopAtOperand: true }, leading: 1, code: ["-c"], joined: true },
  script: {
    options: {
      short: {
        a: "flag",
        B: "value",
        c: "value",
        E: "value",
        e: "flag",
        f: "flag",
        I: "value",
        m: "value",
        O: "value",
        o: "value",
        q: "flag",
        T: "value",
        t: "optional",
        h: "flag",
        V: "flag"
      },
      long: {
        append: "flag",
        "log-io": "value",
        command: "value",
        echo: "value",
        return: "flag",
        flush: "flag",
        force: "flag",
        "log-in": "value",
        "logging-format": "value",
        "log-out": "value",
        "output-limit": "value",
        quiet: "flag",
        "log-timing": "value",
        timing: "optional",
        ...helpVersion
      }
    },
    code: ["-c", "--command"]
  },
  strace: {
    options: {
      short: Object.fromEntries([
        ..."AcCdDfFhiknNqrtTvVwxyYzZ".split("").map((l) => [l, "flag" as const]),
        ..."abeEIoOpPsSuUX".split("").map((l) => [l, "value" as const])
      ]),
      stopAtOperand: true
    }
  },
  ltrace: {
    options: {
      short: Object.fromEntries([
        ..."bcCfhiLrStTV".split("").map((l) => [l, "flag" as const]),
        ..."aADeFlnopsuwx".split("").map((l) => [l, "value" as const])
      ]),
      long: { ...helpVersion, demangle: "flag", library: "value", output: "value", indent: "value", align: "value" },
      stopAtOperand: true
    }
  },
  valgrind: { options: { short: { q: "flag", v: "flag", h: "flag" }, long: helpVersion, stopAtOperand: true } },
  unshare: {
    options: {
      short: {
        f: "flag",
        h: "flag",
        i: "optional",
        m: "optional",
        n: "optional",
        p: "optional",
        u: "optional",
        U: "optional",
        C: "optional",
        T: "optional",
        r: "flag",
        c: "flag",
        V: "flag",
        S: "value",
        G: "value",
        R: "value",
        w: "value",
        l: "value"
      },
      stopAtOperand: true
    }
  },
  nsenter: {
    options: {
      short: {
        a: "flag",
        t: "value",
        S: "value",
        G: "value",
        m: "optional",
        u: "optional",
        i: "optional",
        n: "optional",
        p: "optional",
        U: "optional",
        C: "optional",
        T: "optional",
        r: "optional",
        w: "optional",
        W: "optional",
        F: "flag",
        Z: "flag",
        h: "flag",
        V: "flag"
      },
      stopAtOperand: true
    }
  },
  chrt: {
    options: {
      short: {
        a: "flag",
        b: "flag",
        d: "flag",
        e: "flag",
        f: "flag",
        i: "flag",
        m: "flag",
        o: "flag",
        p: "flag",
        r: "flag",
        R: "flag",
        v: "flag",
        h: "flag",
        V: "flag",
        T: "value",
        P: "value",
        D: "value"
      },
      stopAtOperand: true
    },
    leading: 1
  },
  prlimit: {
    options: {
      short: {
        c: "optional",
        d: "optional",
        e: "optional",
        f: "optional",
        i: "optional",
        l: "optional",
        m: "optional",
        n: "optional",
        q: "optional",
        r: "optional",
        s: "optional",
        t: "optional",
        u: "optional",
        v: "optional",
        x: "optional",
        y: "optional",
        o: "value",
        p: "value",
        h: "flag",
        V: "flag"
      },
      stopAtOperand: true
    }
  },
  fakeroot: {
    options: {
      short: { l: "value", s: "value", i: "value", u: "flag", b: "value", h: "flag", v: "flag" },
      long: { lib: "value", faked: "value", unknown: "flag", ...helpVersion },
      stopAtOperand: true
    }
  },
  pkexec: {
    options: {
      long: { user: "value", "disable-internal-agent": "flag", "keep-cwd": "flag", ...helpVersion },
      stopAtOperand: true
    }
  },
  faketime: {
    options: {
      short: { m: "flag", f: "flag", p: "value" },
      long: { "exclude-monotonic": "flag", ...helpVersion },
      stopAtOperand: true
    },
    leading: 1
  },
  unbuffer: { options: { short: { p: "flag" }, stopAtOperand: true } },
  caffeinate: {
    options: {
      short: { d: "flag", i: "flag", m: "flag", s: "flag", u: "flag", t: "value", w: "value" },
      stopAtOperand: true
    }
  },
  torsocks: {
    options: {
      short: { u: "value", p: "value", a: "value", P: "value", d: "flag", q: "flag", i: "flag", h: "flag" },
      stopAtOperand: true
    }
  },
  proxychains: { options: { short: { q: "flag", f: "value" }, stopAtOperand: true } },
  proxychains4: { options: { short: { q: "flag", f: "value" }, stopAtOperand: true } },
  rlwrap: { options: { short: { a: "optional", c: "flag", r: "flag", i: "flag" }, stopAtOperand: true } },
  entr: {
    options: {
      short: { a: "flag", c: "flag", d: "flag", n: "flag", p: "flag", r: "flag", s: "flag", z: "flag" },
      stopAtOperand: true
    },
    code: ["-s"]
  },
  "cross-env": { options: { stopAtOperand: true }, assignments: true },
  catchsegv: { options: { stopAtOperand: true } },
  eatmydata: { options: { stopAtOperand: true } },
  nocache: { options: { stopAtOperand: true } },
  "dbus-run-session": {
    options: { long: { "config-file": "value", "dbus-daemon": "value", ...helpVersion }, stopAtOperand: true }
  },
  coproc: { options: { stopAtOperand: true } },
  cpulimit: {
    options: {
      short: {
        l: "value",
        p: "value",
        e: "value",
        P: "value",
        z: "flag",
        i: "flag",
        k: "flag",
        r: "flag",
        v: "flag",
        q: "flag",
        h: "flag"
      },
      stopAtOperand: true
    }
  },
  setpriv: { options: { stopAtOperand: true } }
}
