/**
 * Tool versions (docs/tools.md, "Tool versions"): a tool registered as `name@version` is one version of `name`; the
 * registry serves one active version per name, the newest unless settings pin one (`"toolVersions": {"Deploy":
 * "1.x"}`). Pure: parsing, ordering, pin matching and the choice of the active version.
 */
import { Schema } from "effect"

/** A name split from its version: `Deploy@1.2.0` → `{ name: "Deploy", version: "1.2.0" }`. */
export interface Named {
  readonly name: string
  readonly version: string | undefined
}

const versioned = /^(.+?)@([0-9A-Za-z][0-9A-Za-z.+-]*)$/

/** Splits `name@version`; a name without `@version` has no version. */
export const parse = (text: string): Named => {
  const match = versioned.exec(text)
  return match === null ? { name: text, version: undefined } : { name: match[1], version: match[2] }
}

/** `name@version`, or the name alone for an unversioned tool. */
export const format = (name: string, version: string | undefined): string =>
  version === undefined ? name : `${name}@${version}`

const parts = (version: string): ReadonlyArray<string> => version.split(/[.+-]/)

/** Orders versions part by part, numerically where both parts are numbers (`1.10.0` after `1.9.0`). */
export const compare = (a: string, b: string): number => {
  const pa = parts(a)
  const pb = parts(b)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i]
    const y = pb[i]
    if (x === undefined) return -1
    if (y === undefined) return 1
    const nx = Number(x)
    const ny = Number(y)
    const order = Number.isInteger(nx) && Number.isInteger(ny) ? nx - ny : x < y ? -1 : x > y ? 1 : 0
    if (order !== 0) return order < 0 ? -1 : 1
  }
  return 0
}

/**
 * Whether `version` matches a pin: parts compared in order, `x` or `*` matching any part, and a pin shorter than the
 * version matching every longer version (`1` and `1.x` both match `1.4.2`).
 */
export const matches = (pin: string, version: string): boolean => {
  const want = parts(pin)
  const have = parts(version)
  return want.every((part, i) => part === "x" || part === "X" || part === "*" || have[i] === part)
}

/** The `toolVersions` settings section: a pin per tool name. */
export const PinsSection = Schema.Record({ key: Schema.String, value: Schema.String })
export type PinsSection = typeof PinsSection.Type

/**
 * The active version among `versions` of one name: the newest matching the pin when there is one (none when no
 * version matches), else the newest. Unversioned (undefined) counts as older than any version.
 */
export const active = (
  versions: ReadonlyArray<string | undefined>,
  pin: string | undefined
): { readonly _tag: "Some"; readonly version: string | undefined } | { readonly _tag: "None" } => {
  const candidates = pin === undefined ? versions : versions.filter((v) => v !== undefined && matches(pin, v))
  if (candidates.length === 0) return { _tag: "None" }
  const newest = candidates.reduce((best, v) =>
    best === undefined ? v : v === undefined ? best : compare(v, best) > 0 ? v : best
  )
  return { _tag: "Some", version: newest }
}
