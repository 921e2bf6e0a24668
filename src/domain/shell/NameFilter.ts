/**
 * The name filters of recursive readers and listers: `rg -g '*.js'` searches only the files its positive globs
 * match, `find -name '*.js'` lists only the names that match. A filter is matched loosely in the safe direction: a
 * glob without `/` is tested against a file's base name, one with `/` against every tail of its path, always
 * ignoring case, and `*` matches a leading dot. A path the filter rejects is one the command cannot reach.
 */

/** A regular expression for one glob: `**` crosses `/`, `*` and `?` do not, `[…]` and `{a,b}` as rg reads them. */
const globRegex = (glob: string): RegExp | undefined => {
  let out = ""
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === "*") {
      if (glob[i + 1] === "*") {
        i++
        if (glob[i + 1] === "/") {
          i++
          out += "(?:.*/)?"
        } else out += ".*"
      } else out += "[^/]*"
    } else if (c === "?") out += "[^/]"
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2)
      if (end === -1) return undefined
      let body = glob.slice(i + 1, end)
      if (body.startsWith("!")) body = `^${body.slice(1)}`
      out += `[${body.replace(/\\/g, "\\\\")}]`
      i = end
    } else if (c === "{") {
      braces++
      out += "(?:"
    } else if (c === "}" && braces > 0) {
      braces--
      out += ")"
    } else if (c === "," && braces > 0) out += "|"
    else if (c === "\\" && i + 1 < glob.length) {
      i++
      out += glob[i].replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
  }
  if (braces > 0) return undefined
  try {
    return new RegExp(`^${out}$`, "i")
  } catch {
    return undefined
  }
}

/** The tails of a path at its `/` boundaries (`a/b/c`, `b/c`, `c`). */
const tails = (path: string): ReadonlyArray<string> => {
  const parts = path.split("/").filter((part) => part !== "")
  return parts.map((_, at) => parts.slice(at).join("/"))
}

/**
 * True when a path may pass the filter: some glob matches its base name (a glob without `/`) or a tail of it.
 * A glob that does not compile passes everything.
 */
export const passes = (globs: ReadonlyArray<string>, path: string): boolean =>
  globs.some((glob) => {
    const trimmed = glob.replace(/^\/+/, "").replace(/\/+$/, "")
    const regex = globRegex(trimmed)
    if (regex === undefined) return true
    if (!trimmed.includes("/")) return regex.test(path.slice(path.lastIndexOf("/") + 1))
    return tails(path).some((tail) => regex.test(tail))
  })
