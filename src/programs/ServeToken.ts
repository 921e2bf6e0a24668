/**
 * The bearer token of `armature serve`: given with `--token-file` or `ARMATURE_SERVE_TOKEN`, else made once and kept
 * in `<stateDir>/serve-token`, a file only its owner may read. Runners started from one state directory share that
 * file; runners elsewhere are given the same token by either of the other two ways. The token itself is never printed.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import { minTokenLength } from "../domain/ServeAccess.js"

/** The environment variable that gives the token. */
export const tokenVariable = "ARMATURE_SERVE_TOKEN"

/** Where a token made by `serve` is kept, under the state directory. */
export const tokenFileOf = (stateDir: string): string => Path.join(stateDir, "serve-token")

/** The token and where it came from (shown on start instead of the token). */
export interface ServeToken {
  readonly token: string
  readonly source: string
}

const invalid = (message: string) => new InvalidInputError({ message })

/** A token file's text, refused when others may read it or it holds no usable token. */
const readTokenFile = (file: string, flag: string): Effect.Effect<string, InvalidInputError> =>
  Effect.gen(function* () {
    const stat = yield* Effect.try({
      try: () => Fs.statSync(file),
      catch: (e) => invalid(`${flag}: ${file}: ${(e as Error).message}`)
    })
    if ((stat.mode & 0o077) !== 0) {
      return yield* invalid(
        `${flag}: ${file} may be read by other users (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`
      )
    }
    const token = Fs.readFileSync(file, "utf8").trim()
    if (token.length < minTokenLength || /\s/.test(token)) {
      return yield* invalid(`${flag}: ${file}: expected one token of at least ${minTokenLength} characters, no spaces`)
    }
    return token
  })

/**
 * The token of a runner: `--token-file`, else ARMATURE_SERVE_TOKEN, else the state directory's `serve-token` (made,
 * mode 0600, when it is not there yet; when another runner makes it at the same moment, that one is read).
 */
export const resolve = (
  tokenFile: string | undefined,
  env: string | undefined,
  stateDir: string
): Effect.Effect<ServeToken, InvalidInputError> =>
  Effect.gen(function* () {
    if (tokenFile !== undefined) {
      return { token: yield* readTokenFile(tokenFile, "--token-file"), source: tokenFile }
    }
    if (env !== undefined && env !== "") {
      const token = env.trim()
      if (token.length < minTokenLength || /\s/.test(token)) {
        return yield* invalid(`${tokenVariable}: expected a token of at least ${minTokenLength} characters, no spaces`)
      }
      return { token, source: tokenVariable }
    }
    const file = tokenFileOf(stateDir)
    yield* Effect.try({
      try: () => {
        Fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
        // written aside, then linked into place: a runner starting at the same moment reads a whole token or none
        const aside = `${file}.${process.pid}.${Crypto.randomBytes(4).toString("hex")}`
        Fs.writeFileSync(aside, `${Crypto.randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" })
        try {
          Fs.linkSync(aside, file)
        } finally {
          Fs.unlinkSync(aside)
        }
      },
      catch: (e) => e as NodeJS.ErrnoException
    }).pipe(
      Effect.catchAll((e) =>
        e.code === "EEXIST" ? Effect.void : Effect.fail(invalid(`serve: cannot write ${file}: ${e.message}`))
      )
    )
    return { token: yield* readTokenFile(file, "serve"), source: file }
  })
