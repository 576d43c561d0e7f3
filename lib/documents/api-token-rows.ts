import { sql, type Kysely } from 'kysely'
import { ValidationError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import { API_TOKEN_UID } from '../model/users-permissions.js'
import type { ChangeEvents } from './change-events.js'
import { createDocumentId } from './document-id.js'
import { runWrite, type ChangeOf } from './write-transaction.js'

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

/** A token row to insert; `accessKeyHash` is the key's HMAC, never the key. */
export interface NewApiToken {
  name: string
  description: string | null
  type: ApiTokenType
  accessKeyHash: string
  permissions: string[]
  lifespan: number | null
}

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
 * The SQL of API tokens (`strapi_api_tokens`), for the token service in lib/auth/api-tokens.ts,
 * which owns keys, hashing and validation. A token is named by its id or its unique name.
 */
export class ApiTokenRows {
  readonly #db: Kysely<any>
  readonly #table: string
  readonly #changes: ChangeEvents

  /**
   * `tokens` is the `admin::api-token` content type. Creating, deleting or re-keying a token is
   * announced to the other instances (a change event of `admin::api-token`), which drop the
   * tokens they cached (lib/auth/index.ts).
   */
  constructor (db: Kysely<any>, tokens: ContentType, changes: ChangeEvents) {
    this.#db = db
    this.#changes = changes
    this.#table = tokens.tableName
  }

  /**
   * Inserts a token whose name no other token has, or throws a ValidationError. Two creations of
   * one name at once: the second waits on the name's lock, then sees the first.
   *
   * ```sql
   * select pg_advisory_xact_lock(hashtext('api-token:' || $name))
   * select id from strapi_api_tokens where name = $1
   * insert into strapi_api_tokens (document_id, name, ..., access_key, ...) values (...) returning *
   * ```
   */
  async insert (token: NewApiToken): Promise<ApiToken> {
    const now = new Date()
    const row = await runWrite(this.#db, this.#changes, tokenChange('create', (row: Record<string, any>) => row.document_id as string), async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`api-token:${token.name}`}))`.execute(trx)
      const taken = await trx.selectFrom(this.#table).select('id').where('name', '=', token.name).executeTakeFirst()
      if (taken !== undefined) throw new ValidationError(`An API token named "${token.name}" already exists`)
      return await trx.insertInto(this.#table).values({
        document_id: createDocumentId(),
        name: token.name,
        description: token.description,
        type: token.type,
        access_key: token.accessKeyHash,
        permissions: JSON.stringify(token.permissions),
        expires_at: token.lifespan === null ? null : new Date(now.getTime() + token.lifespan).toISOString(),
        lifespan: token.lifespan === null ? null : String(token.lifespan),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
        published_at: now.toISOString()
      }).returningAll().executeTakeFirstOrThrow()
    })
    return toToken(row)
  }

  /** `select * from strapi_api_tokens order by id` */
  async list (): Promise<ApiToken[]> {
    return (await this.#db.selectFrom(this.#table).selectAll().orderBy('id').execute()).map(toToken)
  }

  /**
   * Deletes a token; answers whether one existed.
   *
   * ```sql
   * begin; delete from strapi_api_tokens where id = $1 returning document_id;  -- or name = $1
   * select pg_notify(...); commit  -- when one existed, with other instances to tell
   * ```
   */
  async delete (idOrName: number | string): Promise<boolean> {
    const deleted = await runWrite(this.#db, this.#changes, tokenChange('delete', (found: string | undefined) => found), async (trx) => {
      const query = trx.deleteFrom(this.#table)
      const row = await (typeof idOrName === 'number' ? query.where('id', '=', idOrName) : query.where('name', '=', idOrName)).returning('document_id').executeTakeFirst()
      return row?.document_id as string | undefined
    })
    return deleted !== undefined
  }

  /**
   * Replaces a token's key hash; answers whether one existed.
   *
   * ```sql
   * begin; update strapi_api_tokens set access_key = $1, updated_at = $2 where id = $3 returning document_id;  -- or name = $3
   * select pg_notify(...); commit
   * ```
   */
  async setKeyHash (idOrName: number | string, accessKeyHash: string): Promise<boolean> {
    const updated = await runWrite(this.#db, this.#changes, tokenChange('update', (found: string | undefined) => found), async (trx) => {
      const query = trx.updateTable(this.#table).set({ access_key: accessKeyHash, updated_at: new Date().toISOString() })
      const row = await (typeof idOrName === 'number' ? query.where('id', '=', idOrName) : query.where('name', '=', idOrName)).returning('document_id').executeTakeFirst()
      return row?.document_id as string | undefined
    })
    return updated !== undefined
  }

  /**
   * The token stored under a key's hash, with that stored hash (for the caller's constant-time
   * comparison), or null.
   *
   * ```sql
   * select * from strapi_api_tokens where access_key = $1
   * ```
   */
  async findByKeyHash (accessKeyHash: string): Promise<{ token: ApiToken, accessKeyHash: string } | null> {
    const row = await this.#db.selectFrom(this.#table).selectAll().where('access_key', '=', accessKeyHash).executeTakeFirst()
    return row === undefined ? null : { token: toToken(row), accessKeyHash: row.access_key as string }
  }

  /** `update strapi_api_tokens set last_used_at = $1 where id = $2` */
  async setLastUsed (id: number, at: string): Promise<void> {
    await this.#db.updateTable(this.#table).set({ last_used_at: at }).where('id', '=', id).execute()
  }
}

/** A token write's event, for the token whose documentId `written` finds in the result; none when no token was written. */
function tokenChange<T> (action: 'create' | 'update' | 'delete', written: (result: T) => string | undefined): ChangeOf<T> {
  return (result) => {
    const documentId = written(result)
    return documentId === undefined ? null : { uid: API_TOKEN_UID, action, documentId }
  }
}
