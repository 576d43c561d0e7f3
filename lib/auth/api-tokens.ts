import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { ValidationError } from '../errors.js'
import type { ApiToken, ApiTokenRows, ApiTokenType } from '../documents/api-token-rows.js'
import type { Registry } from '../model/registry.js'
import { knownActions } from './actions.js'

export type { ApiToken, ApiTokenType } from '../documents/api-token-rows.js'

export interface CreateApiToken {
  name: string
  type: ApiTokenType
  description?: string
  permissions?: string[]
  /** Milliseconds until expiry; omitted or null: unlimited (Strapi offers 7, 30 and 90 days). */
  lifespan?: number | null
  /** Import an existing key (migrating from Strapi, fixtures); generated when omitted. */
  accessKey?: string
}

const TYPES = new Set(['read-only', 'full-access', 'custom'])
/** `lastUsedAt` is written at most this often, so a busy token does not write on every request. */
const LAST_USED_GRANULARITY_MS = 60 * 60 * 1000

/**
 * API tokens, managed from application code (`app.contentApi.apiTokens`) and the CLI. Keys are
 * 256 hex characters of randomness, stored only as HMAC-SHA512(key, salt): the lookup is by hash,
 * and the final comparison is constant-time.
 */
export class ApiTokenService {
  readonly #rows: ApiTokenRows
  readonly #salt: string
  readonly #knownActions: ReadonlySet<string>

  constructor (rows: ApiTokenRows, registry: Registry, salt: string) {
    this.#rows = rows
    this.#salt = salt
    this.#knownActions = knownActions(registry)
  }

  hash (accessKey: string): string {
    return createHmac('sha512', this.#salt).update(accessKey).digest('hex')
  }

  /** Creates a token; the answer carries the plain `accessKey`, shown this once. */
  async create (input: CreateApiToken): Promise<ApiToken & { accessKey: string }> {
    if (typeof input.name !== 'string' || input.name.trim() === '') throw new ValidationError('API token name is required')
    if (!TYPES.has(input.type)) throw new ValidationError('API token type must be read-only, full-access or custom')
    if (input.type === 'custom' && (input.permissions === undefined || input.permissions.length === 0)) {
      throw new ValidationError('A custom API token needs a list of permissions')
    }
    const unknown = (input.permissions ?? []).filter((action) => !this.#knownActions.has(action))
    if (input.type === 'custom' && unknown.length > 0) throw new ValidationError(`Unknown permissions: ${unknown.join(', ')}`)
    const lifespan = input.lifespan ?? null
    if (lifespan !== null && (!Number.isSafeInteger(lifespan) || lifespan <= 0)) throw new ValidationError('API token lifespan must be a positive number of milliseconds')
    const accessKey = input.accessKey ?? randomBytes(128).toString('hex')
    const token = await this.#rows.insert({
      name: input.name,
      description: input.description ?? null,
      type: input.type,
      accessKeyHash: this.hash(accessKey),
      permissions: input.type === 'custom' ? input.permissions! : [],
      lifespan
    })
    return { ...token, accessKey }
  }

  async list (): Promise<ApiToken[]> {
    return await this.#rows.list()
  }

  /** Deletes a token by id or name; answers whether one existed. */
  async revoke (idOrName: number | string): Promise<boolean> {
    return await this.#rows.delete(idOrName)
  }

  /** Replaces a token's key (the old one stops working at once); returns the new key. */
  async regenerate (idOrName: number | string): Promise<string | null> {
    const accessKey = randomBytes(128).toString('hex')
    return await this.#rows.setKeyHash(idOrName, this.hash(accessKey)) ? accessKey : null
  }

  /** The token a presented key belongs to, or null. Expiry is the caller's to judge. */
  async findByKey (accessKey: string): Promise<ApiToken | null> {
    const hash = this.hash(accessKey)
    const found = await this.#rows.findByKeyHash(hash)
    if (found === null) return null
    if (!timingSafeEqual(Buffer.from(found.accessKeyHash), Buffer.from(hash))) return null
    return found.token
  }

  /** Records a use of a valid token, at most once per hour (the token object remembers it). */
  async touch (token: ApiToken): Promise<void> {
    if (token.lastUsedAt !== null && Date.now() - Date.parse(token.lastUsedAt) <= LAST_USED_GRANULARITY_MS) return
    token.lastUsedAt = new Date().toISOString()
    await this.#rows.setLastUsed(token.id, token.lastUsedAt)
  }
}
