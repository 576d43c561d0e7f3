import { sql, type Kysely } from 'kysely'
import type { ContentType } from '../model/registry.js'

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

/** A user as the auth routes and access checks need it (never the password hash), with the type of their role. */
export interface UserWithRole {
  id: number
  documentId: string
  username: string
  email: string
  provider: string | null
  confirmed: boolean
  blocked: boolean
  roleType: string | null
}

type SecretField = 'resetPasswordToken' | 'confirmationToken'

/**
 * The few reads of users that must see what the API never shows (password hashes, reset and
 * confirmation codes), kept apart from the document service so no response can carry them, and
 * the one read of a user with their role's type that authenticates a JWT.
 */
export class UserStore {
  readonly #db: Kysely<any>
  readonly #table: string
  readonly #columns: Record<SecretField, string>
  readonly #role: { link: string, user: string, role: string, roles: string }

  /** `users` and `roles` are the users-and-permissions user and role content types. */
  constructor (db: Kysely<any>, users: ContentType, roles: ContentType) {
    this.#db = db
    this.#table = users.tableName
    this.#columns = {
      resetPasswordToken: users.fields.get('resetPasswordToken')!.column,
      confirmationToken: users.fields.get('confirmationToken')!.column
    }
    const role = users.associations.get('role')
    // An invariant, not reachable: the built-in user model has it, and no model may take its uid.
    if (role?.kind !== 'relation') throw new Error('the user model has no role relation')
    this.#role = { link: role.link.table, user: role.link.sourceColumn, role: role.link.targetColumn, roles: roles.tableName }
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

  /**
   * A local user by email (case-insensitive) or username (exact), as Strapi's login matches.
   *
   * ```sql
   * select id, document_id, username, email, password, confirmed, blocked from up_users
   * where (email = $1 or username = $2) and (provider = 'local' or provider is null) order by id
   * ```
   */
  async findCredentials (identifier: string): Promise<Credentials | null> {
    const row = await this.#select()
      .where((eb) => eb.or([eb('email', '=', identifier.toLowerCase()), eb('username', '=', identifier)]))
      .where((eb) => eb.or([eb('provider', '=', 'local'), eb('provider', 'is', null)]))
      .orderBy('id')
      .executeTakeFirst()
    return this.#credentials(row)
  }

  /** `select id, document_id, username, email, password, confirmed, blocked from up_users where id = $1` */
  async findById (id: number): Promise<Credentials | null> {
    return this.#credentials(await this.#select().where('id', '=', id).executeTakeFirst())
  }

  /**
   * A user of any provider by email, case-insensitively (never by username), as Strapi's
   * forgot-password and send-email-confirmation look them up.
   *
   * ```sql
   * select id, document_id, username, email, password, confirmed, blocked from up_users where lower(email) = $1 order by id
   * ```
   */
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

  /**
   * Replaces a stored password hash with another (a bcrypt hash re-hashed at sign-in); `hash` must already be one.
   *
   * ```sql
   * update up_users set password = $1 where id = $2
   * ```
   */
  async setPasswordHash (id: number, hash: string): Promise<void> {
    await this.#db.updateTable(this.#table).set({ password: hash }).where('id', '=', id).execute()
  }

  /** `select id, document_id, ... from up_users where reset_password_token = $1` (or `confirmation_token`) */
  async findBySecret (field: SecretField, digest: string): Promise<Credentials | null> {
    return this.#credentials(await this.#select().where(this.#columns[field], '=', digest).executeTakeFirst())
  }

  /** `update up_users set reset_password_token = $1 where id = $2` (or `confirmation_token`) */
  async setSecret (id: number, field: SecretField, digest: string | null): Promise<void> {
    await this.#db.updateTable(this.#table).set({ [this.#columns[field]]: digest }).where('id', '=', id).execute()
  }

  /**
   * A user with the type of their role, or null: the one query that resolves a JWT's user.
   *
   * ```sql
   * select u.id, u.document_id, u.username, u.email, u.provider, u.confirmed, u.blocked, r.type as role_type
   * from up_users as u
   * left join up_users_role_lnk as l on l.user_id = u.id
   * left join up_roles as r on r.id = l.role_id
   * where u.id = $1
   * ```
   */
  async findWithRole (id: number): Promise<UserWithRole | null> {
    const { link, user, role, roles } = this.#role
    const row = await this.#db.selectFrom(`${this.#table} as u`)
      .leftJoin(`${link} as l`, `l.${user}`, 'u.id')
      .leftJoin(`${roles} as r`, 'r.id', `l.${role}`)
      .select(['u.id', 'u.document_id', 'u.username', 'u.email', 'u.provider', 'u.confirmed', 'u.blocked', 'r.type as role_type'])
      .where('u.id', '=', id)
      .executeTakeFirst()
    if (row === undefined) return null
    return {
      id: row.id as number,
      documentId: row.document_id as string,
      username: row.username as string,
      email: row.email as string,
      provider: (row.provider as string | null) ?? null,
      confirmed: row.confirmed === true,
      blocked: row.blocked === true,
      roleType: (row.role_type as string | null) ?? null
    }
  }
}
