import { sql, type Kysely } from 'kysely'
import type { Registry } from '../model/registry.js'
import { USER_UID } from '../model/users-permissions.js'

export interface Credentials {
  id: number
  documentId: string
  username: string
  email: string
  /** The stored hash (scrypt, or a bcrypt hash migrated from Strapi); null for provider-only users. */
  password: string | null
  confirmed: boolean
  blocked: boolean
}

type SecretField = 'resetPasswordToken' | 'confirmationToken'

/**
 * The few reads of users that must see what the API never shows (password hashes, reset and
 * confirmation codes), kept apart from the document service so no response can carry them.
 */
export class UserStore {
  readonly #db: Kysely<any>
  readonly #table: string
  readonly #columns: Record<SecretField, string>

  constructor (db: Kysely<any>, registry: Registry) {
    const users = registry.get(USER_UID)!
    this.#db = db
    this.#table = users.tableName
    this.#columns = {
      resetPasswordToken: users.fields.get('resetPasswordToken')!.column,
      confirmationToken: users.fields.get('confirmationToken')!.column
    }
  }

  #select () {
    return this.#db.selectFrom(this.#table).select(['id', 'document_id', 'username', 'email', 'password', 'confirmed', 'blocked'])
  }

  #credentials (row: Record<string, any> | undefined): Credentials | null {
    if (row === undefined) return null
    return {
      id: row.id,
      documentId: row.document_id,
      username: row.username,
      email: row.email,
      password: row.password ?? null,
      confirmed: row.confirmed === true,
      blocked: row.blocked === true
    }
  }

  /** A local user by email (case-insensitive) or username (exact), as Strapi's login matches. */
  async findCredentials (identifier: string): Promise<Credentials | null> {
    const row = await this.#select()
      .where((eb) => eb.or([eb('email', '=', identifier.toLowerCase()), eb('username', '=', identifier)]))
      .where((eb) => eb.or([eb('provider', '=', 'local'), eb('provider', 'is', null)]))
      .orderBy('id')
      .executeTakeFirst()
    return this.#credentials(row)
  }

  async findById (id: number): Promise<Credentials | null> {
    return this.#credentials(await this.#select().where('id', '=', id).executeTakeFirst())
  }

  /** A user of any provider by email, case-insensitively (never by username), as Strapi's forgot-password and send-email-confirmation look them up. */
  async findByEmail (email: string): Promise<Credentials | null> {
    const row = await this.#select().where(sql`lower(email)`, '=', email.toLowerCase()).orderBy('id').executeTakeFirst()
    return this.#credentials(row)
  }

  /**
   * Whether a user of any provider other than `exceptId` has one of these emails (compared
   * case-insensitively) or usernames (exactly): Strapi's uniqueness checks, which its
   * `unique_email` setting (on by default) applies across providers.
   *
   * ```sql
   * select id from up_users where (lower(email) in ($1, $2) or username in ($3, $4)) and id <> $5 limit 1
   * ```
   */
  async isTaken (taken: { emails?: readonly string[], usernames?: readonly string[] }, exceptId?: number): Promise<boolean> {
    const emails = (taken.emails ?? []).map((email) => email.toLowerCase())
    const usernames = taken.usernames ?? []
    if (emails.length === 0 && usernames.length === 0) return false
    let query = this.#db.selectFrom(this.#table).select('id').where((eb) => eb.or([
      ...(emails.length > 0 ? [eb(sql`lower(email)`, 'in', emails)] : []),
      ...(usernames.length > 0 ? [eb('username', 'in', usernames)] : [])
    ]))
    if (exceptId !== undefined) query = query.where('id', '<>', exceptId)
    return await query.limit(1).executeTakeFirst() !== undefined
  }

  /** Replaces a stored password hash with another (a bcrypt hash re-hashed at sign-in); `hash` must already be one. */
  async setPasswordHash (id: number, hash: string): Promise<void> {
    await this.#db.updateTable(this.#table).set({ password: hash }).where('id', '=', id).execute()
  }

  async findBySecret (field: SecretField, digest: string): Promise<Credentials | null> {
    return this.#credentials(await this.#select().where(this.#columns[field], '=', digest).executeTakeFirst())
  }

  async setSecret (id: number, field: SecretField, digest: string | null): Promise<void> {
    await this.#db.updateTable(this.#table).set({ [this.#columns[field]]: digest }).where('id', '=', id).execute()
  }
}
