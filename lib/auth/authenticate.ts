import type { FastifyRequest } from 'fastify'
import type { JWT } from '@fastify/jwt'
import { UnauthorizedError } from '../errors.js'
import { LruCache } from '../lru-cache.js'
import type { UserStore, UserWithRole } from '../documents/user-credentials.js'
import type { ApiToken, ApiTokenService } from './api-tokens.js'

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/
const PUBLIC: Principal = Object.freeze({ kind: 'public' })

/** A user as the auth routes and access checks need it (never the password hash). */
export type AuthUser = UserWithRole

/** Who is calling: nobody (the public role), a user with a JWT, or an API token. */
export type Principal =
  | { kind: 'public' }
  | { kind: 'user', user: AuthUser }
  | { kind: 'token', token: ApiToken }

/**
 * `Authorization: Bearer <token>`, exactly two parts with a case-insensitive scheme, as Strapi
 * reads it. Anything else (no header, `Basic ...`, an empty bearer) is no credentials at all.
 */
export function bearerToken (header: string | undefined): string | null {
  if (header === undefined) return null
  const parts = header.trim().split(/\s+/)
  if (parts.length !== 2 || parts[0].toLowerCase() !== 'bearer' || parts[1] === '') return null
  return parts[1]
}

/**
 * Resolves a request's credentials, once per request: a JWT is tried first (users), then an API
 * token, as Strapi orders its strategies. A token that is neither is a 401 even on public
 * routes, as in Strapi.
 */
export class Authenticator {
  readonly #store: UserStore
  readonly #tokens: ApiTokenService
  /** Callers still being resolved, per request, so that one request never resolves its caller twice. */
  readonly #pending = new WeakMap<FastifyRequest, Promise<Principal>>()
  /**
   * Resolved users and API tokens, for `ttlMs`: without them every authenticated request would
   * cost one more query than an anonymous one. Writes to users and revoked or regenerated tokens
   * clear them, in the instance that made them and (through change events) in every other one;
   * `ttlMs` bounds them where an event was missed.
   */
  readonly #users = new LruCache<number, { at: number, user: AuthUser | null }>(10_000)
  readonly #tokensByKey = new LruCache<string, { at: number, token: ApiToken | null }>(10_000)
  /**
   * Resolved callers by `Authorization` header, so a repeat caller skips parsing, verification
   * and lookups entirely: this is the whole cost of credentials on most requests.
   */
  readonly #principals = new LruCache<string, { at: number, expiresAt: number | null, principal: Principal }>(10_000)
  readonly #ttlMs: number
  /**
   * Counts the `forget*` calls: a lookup that started before one (it may have read the row as it
   * was before the change that caused it) does not fill the caches when it ends.
   */
  #generation = 0
  /** With `auth.register.emailConfirmation`, an unconfirmed user's JWT is refused, as Strapi's strategy does. */
  readonly #requireConfirmed: boolean
  #jwt: JWT | null = null

  constructor (users: UserStore, tokens: ApiTokenService, ttlMs = 5000, requireConfirmed = false) {
    this.#store = users
    this.#tokens = tokens
    this.#ttlMs = ttlMs
    this.#requireConfirmed = requireConfirmed
  }

  /** The `@fastify/jwt` instance that signs and verifies user tokens (set once the plugin registers). */
  useJwt (jwt: JWT): void { this.#jwt = jwt }

  get jwt (): JWT {
    // An invariant, not reachable: the auth routes set it as they register, before any request.
    if (this.#jwt === null) throw new Error('JWT support is not initialised')
    return this.#jwt
  }

  /** Signs a user JWT (`{ id, iat, exp }`, HS256). */
  issue (user: { id: number }): string {
    return this.jwt.sign({ id: user.id })
  }

  /** The request's caller; a bad, expired or unknown credential rejects with a 401. */
  authenticate (request: FastifyRequest): Promise<Principal> {
    const known = this.known(request)
    if (known !== undefined) return Promise.resolve(known)
    let principal = this.#pending.get(request)
    if (principal === undefined) {
      principal = this.#resolve(request.headers.authorization!)
      this.#pending.set(request, principal)
    }
    return principal
  }

  /**
   * The request's caller when it is known without waiting: nobody (no credentials), or a caller
   * whose header was resolved within `ttlMs` and whose JWT or token has not expired since.
   */
  known (request: FastifyRequest): Principal | undefined {
    const header = request.headers.authorization
    if (header === undefined) return PUBLIC
    const hit = this.#principals.get(header)
    if (hit !== undefined) {
      const now = Date.now()
      if (now - hit.at < this.#ttlMs && (hit.expiresAt === null || hit.expiresAt > now)) return hit.principal
    }
    return bearerToken(header) === null ? PUBLIC : undefined
  }

  async #resolve (header: string): Promise<Principal> {
    const token = bearerToken(header)
    if (token === null) return PUBLIC
    const now = Date.now()
    const generation = this.#generation
    const principal = await this.#verify(token)
    const expiresAt = principal.kind === 'token'
      ? (principal.token.expiresAt === null ? null : Date.parse(principal.token.expiresAt))
      : (this.jwt.decode<{ exp?: number }>(token)?.exp ?? 0) * 1000 || null
    if (generation === this.#generation) this.#principals.set(header, { at: now, expiresAt, principal })
    return principal
  }

  async #verify (token: string): Promise<Principal> {
    let userId: number | null = null
    // API keys are hex: only a three-part token can be a JWT, so keys skip the failing verify.
    if (JWT_SHAPE.test(token)) {
      try {
        const payload = this.jwt.verify<{ id?: unknown }>(token)
        if (typeof payload.id === 'number') userId = payload.id
      } catch {
        // Not one of our JWTs (or expired): it may be an API token.
      }
    }
    if (userId !== null) {
      const user = await this.#cachedUser(userId)
      // Checked on the cached user too: confirming or blocking a user writes it through the
      // document service, which clears the cache, so a refusal never outlives the change.
      if (user === null || user.blocked || (this.#requireConfirmed && !user.confirmed)) throw new UnauthorizedError('Invalid credentials')
      return { kind: 'user', user }
    }
    const apiToken = await this.#cachedToken(token)
    if (apiToken === null) throw new UnauthorizedError('Missing or invalid credentials')
    if (apiToken.expiresAt !== null && Date.parse(apiToken.expiresAt) <= Date.now()) throw new UnauthorizedError('Token expired')
    await this.#tokens.touch(apiToken)
    return { kind: 'token', token: apiToken }
  }

  async #cachedUser (id: number): Promise<AuthUser | null> {
    const hit = this.#users.get(id)
    if (hit !== undefined && Date.now() - hit.at < this.#ttlMs) return hit.user
    const generation = this.#generation
    const user = await this.#store.findWithRole(id)
    if (generation === this.#generation) this.#users.set(id, { at: Date.now(), user })
    return user
  }

  async #cachedToken (key: string): Promise<ApiToken | null> {
    const hit = this.#tokensByKey.get(key)
    if (hit !== undefined && Date.now() - hit.at < this.#ttlMs) return hit.token
    const generation = this.#generation
    const token = await this.#tokens.findByKey(key)
    if (generation === this.#generation) this.#tokensByKey.set(key, { at: Date.now(), token })
    return token
  }

  /** Forget cached users (a user was written: blocked, deleted, given another role...). */
  forgetUsers (): void {
    this.#generation++
    this.#users.clear()
    this.#principals.clear()
  }

  /** Forget cached API tokens (one was revoked or regenerated). */
  forgetTokens (): void {
    this.#generation++
    this.#tokensByKey.clear()
    this.#principals.clear()
  }
}
