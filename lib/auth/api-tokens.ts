import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import { ValidationError } from '../errors.js'
import { createDocumentId } from '../documents/document-id.js'
import type { Registry } from '../model/registry.js'
import { API_TOKEN_UID } from '../model/users-permissions.js'
import { knownActions } from './actions.js'

export type ApiTokenType = 'read-only' | 'full-access' | 'custom'

/** A token as listed: never its key, which exists in clear only in the answer that created it. */
export interface ApiToken {
  id: number
  documentId: string
  name: string
  description: string | null
  type: ApiTokenType
  /** For `custom` tokens: the actions it may perform (`api::article.article.find`, ...). */
  permissions: string[]
  lastUsedAt: string | null
  expiresAt: string | null
  /** Milliseconds, or null for a token that never expires. */
  lifespan: number | null
  createdAt: string
}

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

function toToken (row: Record<string, any>): ApiToken {
  const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString())
  return {
    id: row.id,
    documentId: row.document_id,
    name: row.name,
    description: row.description ?? null,
    type: row.type,
    permissions: row.permissions ?? [],
    lastUsedAt: iso(row.last_used_at),
    expiresAt: iso(row.expires_at),
    lifespan: row.lifespan === null || row.lifespan === undefined ? null : Number(row.lifespan),
    createdAt: iso(row.created_at)!
  }
}

/**
 * API tokens, managed from application code (`app.contentApi.apiTokens`) and the CLI. Keys are
 * 256 hex characters of randomness, stored only as HMAC-SHA512(key, salt): the lookup is by hash,
 * and the final comparison is constant-time.
 */
export class ApiTokenService {
  readonly #db: Kysely<any>
  readonly #table: string
  readonly #salt: string
  readonly #revoked = new Set<() => void>()
  readonly #knownActions: ReadonlySet<string>

  constructor (db: Kysely<any>, registry: Registry, salt: string) {
    this.#db = db
    this.#table = registry.get(API_TOKEN_UID)!.tableName
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
    const now = new Date()
    const row = await this.#db.transaction().execute(async (trx) => {
      // Two creations of one name at once: the second waits, then sees the first.
      await sql`select pg_advisory_xact_lock(hashtext(${`api-token:${input.name}`}))`.execute(trx)
      const taken = await trx.selectFrom(this.#table).select('id').where('name', '=', input.name).executeTakeFirst()
      if (taken !== undefined) throw new ValidationError(`An API token named "${input.name}" already exists`)
      return await trx.insertInto(this.#table).values({
        document_id: createDocumentId(),
        name: input.name,
        description: input.description ?? null,
        type: input.type,
        access_key: this.hash(accessKey),
        permissions: JSON.stringify(input.type === 'custom' ? input.permissions : []),
        expires_at: lifespan === null ? null : new Date(now.getTime() + lifespan).toISOString(),
        lifespan: lifespan === null ? null : String(lifespan),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
        published_at: now.toISOString()
      }).returningAll().executeTakeFirstOrThrow()
    })
    return { ...toToken(row), accessKey }
  }

  async list (): Promise<ApiToken[]> {
    return (await this.#db.selectFrom(this.#table).selectAll().orderBy('id').execute()).map(toToken)
  }

  /** Deletes a token by id or name; answers whether one existed. */
  async revoke (idOrName: number | string): Promise<boolean> {
    const query = this.#db.deleteFrom(this.#table)
    const result = await (typeof idOrName === 'number' ? query.where('id', '=', idOrName) : query.where('name', '=', idOrName)).executeTakeFirst()
    for (const listener of this.#revoked) listener()
    return Number(result.numDeletedRows) > 0
  }

  /** Replaces a token's key (the old one stops working at once); returns the new key. */
  async regenerate (idOrName: number | string): Promise<string | null> {
    const accessKey = randomBytes(128).toString('hex')
    const query = this.#db.updateTable(this.#table).set({ access_key: this.hash(accessKey), updated_at: new Date().toISOString() })
    const result = await (typeof idOrName === 'number' ? query.where('id', '=', idOrName) : query.where('name', '=', idOrName)).executeTakeFirst()
    for (const listener of this.#revoked) listener()
    return Number(result.numUpdatedRows) > 0 ? accessKey : null
  }

  /** The token a presented key belongs to, or null. Expiry is the caller's to judge. */
  async findByKey (accessKey: string): Promise<ApiToken | null> {
    const hash = this.hash(accessKey)
    const row = await this.#db.selectFrom(this.#table).selectAll().where('access_key', '=', hash).executeTakeFirst()
    if (row === undefined) return null
    if (!timingSafeEqual(Buffer.from(row.access_key as string), Buffer.from(hash))) return null
    return toToken(row)
  }

  /** Records a use of a valid token, at most once per hour (the token object remembers it). */
  async touch (token: ApiToken): Promise<void> {
    if (token.lastUsedAt !== null && Date.now() - Date.parse(token.lastUsedAt) <= LAST_USED_GRANULARITY_MS) return
    token.lastUsedAt = new Date().toISOString()
    await this.#db.updateTable(this.#table).set({ last_used_at: token.lastUsedAt }).where('id', '=', token.id).execute()
  }

  /** Called when a token is revoked or regenerated, so no cache keeps accepting its old key. */
  onRevoke (listener: () => void): void {
    this.#revoked.add(listener)
  }
}
