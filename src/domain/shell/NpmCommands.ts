/**
 * npm's subcommand names as npm itself reads them (npm 11): a command, one of its aliases or typo spellings
 * (`i`, `add`, `rm`, `x`, `rb`, `rum`, `isntall`), a camelCase spelling (`installTest`), or any prefix that
 * names one of those alone (`pub`, `publ`, `exe`, `unpub`). A deny rule for `npm publish` must see `npm pub` as
 * `npm publish`: `canonical` turns the word npm is given into the command npm runs, so rules are matched against
 * what runs. Written from npm's behaviour (`npm help`, its command list), checked against npm 11.19.
 */

/** Each npm command with the other words that run it (aliases, short names and typos npm corrects). */
const table: Readonly<Record<string, ReadonlyArray<string>>> = {
  access: [],
  adduser: ["add-user"],
  "approve-scripts": [],
  audit: [],
  bugs: ["issues"],
  cache: [],
  ci: ["clean-install", "ic", "install-clean", "isntall-clean"],
  completion: [],
  config: ["c"],
  dedupe: ["ddp"],
  "deny-scripts": [],
  deprecate: [],
  diff: [],
  "dist-tag": ["dist-tags"],
  docs: ["home"],
  doctor: [],
  edit: [],
  exec: ["x"],
  explain: ["why"],
  explore: [],
  "find-dupes": [],
  fund: [],
  get: [],
  help: ["hlep"],
  "help-search": [],
  init: ["create", "innit"],
  install: ["i", "add", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall"],
  "install-ci-test": ["cit", "clean-install-test", "sit"],
  "install-scripts": [],
  "install-test": ["it"],
  link: ["ln"],
  ll: ["la"],
  login: [],
  logout: [],
  ls: ["list"],
  org: ["ogr"],
  outdated: [],
  owner: ["author"],
  pack: [],
  ping: [],
  pkg: [],
  prefix: [],
  profile: [],
  prune: [],
  publish: [],
  query: [],
  rebuild: ["rb"],
  repo: [],
  restart: [],
  root: [],
  run: ["run-script", "rum", "urn"],
  sbom: [],
  search: ["find", "s", "se"],
  set: [],
  shrinkwrap: [],
  stage: [],
  star: [],
  stars: [],
  start: [],
  stop: [],
  team: [],
  test: ["t", "tst"],
  token: [],
  trust: [],
  undeprecate: [],
  uninstall: ["un", "unlink", "remove", "rm", "r"],
  unpublish: [],
  unstar: [],
  update: ["u", "up", "upgrade", "udpate"],
  version: ["verison"],
  view: ["v", "info", "show"],
  whoami: []
}

/** Every word npm reads as a command name, with the command it runs. */
const names: ReadonlyMap<string, string> = new Map(
  Object.entries(table).flatMap(([command, aliases]) => [
    [command, command] as const,
    ...aliases.map((alias) => [alias, command] as const)
  ])
)

const sorted: ReadonlyArray<string> = [...names.keys()].sort()

/** npm's commands. */
export const commands: ReadonlyArray<string> = Object.keys(table)

/**
 * The npm command a subcommand word runs, or undefined when npm refuses it (`Unknown command`): upper-case letters
 * become `-` and the lower-case letter (`installTest` is `install-test`), then a name, an alias, or a prefix of
 * exactly one name (an alias reached by its prefix runs its command: `install-cl` is `ci`).
 */
export const canonical = (word: string): string | undefined => {
  if (word === "") return undefined
  const spelled = /[A-Z]/.test(word) ? word.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`) : word
  const named = names.get(spelled)
  if (named !== undefined) return named
  let found: string | undefined
  for (const name of sorted) {
    if (!name.startsWith(spelled)) continue
    if (found !== undefined) return undefined
    found = name
  }
  return found === undefined ? undefined : names.get(found)
}

/**
 * pnpm's commands with their other names (pnpm 10). pnpm abbreviates nothing, but a first word that is not one of
 * these is a script of the project or, when there is none of that name, a program run as `pnpm exec` would run it
 * (`pnpm curl …` runs curl): see `pnpmCanonical`.
 */
const pnpmTable: Readonly<Record<string, ReadonlyArray<string>>> = {
  add: [],
  "approve-builds": [],
  audit: [],
  bin: [],
  cache: [],
  "cat-file": [],
  "cat-index": [],
  catalog: [],
  ci: ["clean-install", "ic", "install-clean"],
  clean: ["purge"],
  completion: [],
  config: ["c"],
  create: [],
  dedupe: [],
  deploy: [],
  dlx: [],
  doctor: [],
  env: [],
  exec: [],
  fetch: [],
  "find-hash": [],
  get: [],
  help: [],
  "ignored-builds": [],
  import: [],
  init: [],
  install: ["i"],
  "install-test": ["it"],
  licenses: [],
  link: ["ln"],
  list: ["ls"],
  ll: ["la"],
  login: ["adduser"],
  logout: [],
  outdated: [],
  pack: [],
  patch: [],
  "patch-commit": [],
  "patch-remove": [],
  peers: [],
  prune: [],
  publish: [],
  rebuild: ["rb"],
  recursive: ["multi", "m"],
  remove: ["uninstall", "rm", "un", "uni", "r"],
  restart: [],
  root: [],
  run: ["run-script"],
  runtime: [],
  sbom: [],
  "self-update": [],
  server: [],
  set: [],
  setup: [],
  start: [],
  store: [],
  test: ["t", "tst"],
  unlink: [],
  update: ["up", "upgrade"],
  version: [],
  why: [],
  with: []
}

/** pnpm passes these to npm, or refuses them as not implemented: none runs a program named by its words. */
const pnpmOthers: ReadonlyArray<string> = [
  "access",
  "bugs",
  "deprecate",
  "dist-tag",
  "docs",
  "edit",
  "info",
  "owner",
  "ping",
  "prefix",
  "profile",
  "pkg",
  "repo",
  "s",
  "search",
  "set-script",
  "show",
  "star",
  "stars",
  "team",
  "token",
  "undeprecate",
  "unpublish",
  "unstar",
  "v",
  "view",
  "whoami",
  "xmas"
]

const pnpmNames: ReadonlyMap<string, string> = new Map([
  ...Object.entries(pnpmTable).flatMap(([command, aliases]) => [
    [command, command] as const,
    ...aliases.map((alias) => [alias, command] as const)
  ]),
  ...pnpmOthers.map((name) => [name, name] as const)
])

/**
 * The pnpm command a first word runs, or undefined when it is none: pnpm then runs the project's script of that name
 * or, without one, the program of that name with the later words (`pnpm rmdir x`), as `pnpm exec` does.
 */
export const pnpmCanonical = (word: string): string | undefined => pnpmNames.get(word)
