import { sql, type Kysely } from 'kysely'
import { createDocumentId } from '../documents/document-id.js'
import { ApplicationError, NotFoundError, UsageError } from '../errors.js'
import type { Registry } from '../model/registry.js'
import { knownActions, permissionTree, type PermissionTree } from './actions.js'
import { PERMISSION_UID, ROLE_UID, USER_UID } from './models.js'

/** A granted action with its optional row and field limits. */
export interface Permission {
  action: string
  /**
   * Beyond Strapi, row level: a filter (Strapi's `filters` syntax) every query of the action must
   * also satisfy, compiled into the same SQL. `'$user.id'` and `'$user.documentId'` stand for the
   * caller's values, e.g. `{ owner: { id: { $eq: '$user.id' } } }`.
   */
  conditions: Record<string, unknown> | null
  /** Beyond Strapi, field level: the attributes the action may read or write (all when null). */
  fields: string[] | null
}

export interface GrantOptions {
  conditions?: Record<string, unknown>
  fields?: string[]
}

export interface RoleSpec {
  name: string
  type: string
  description?: string
}

/** Strapi's built-in roles and their default grants (`services/users-permissions.ts`). */
export const DEFAULT_ROLES: ReadonlyArray<RoleSpec & { actions: string[] }> = [
  {
    name: 'Public',
    type: 'public',
    description: 'Default role given to unauthenticated user.',
    actions: ['auth.callback', 'auth.connect', 'auth.forgotPassword', 'auth.resetPassword', 'auth.register',
      'auth.emailConfirmation', 'auth.sendEmailConfirmation'].map((a) => `plugin::users-permissions.${a}`)
  },
  {
    name: 'Authenticated',
    type: 'authenticated',
    description: 'Default role given to authenticated user.',
    actions: ['user.me', 'auth.changePassword'].map((a) => `plugin::users-permissions.${a}`)
  }
]

/**
 * Roles and their permissions, persisted in `up_roles`/`up_permissions` and read through a
 * per-role cache: the access check runs on every request and must not cost a query each time.
 * Writes through this store invalidate the cache at once; `ttlMs` bounds how long another
 * application instance may keep serving permissions changed elsewhere.
 */
export class PermissionStore {
  readonly #db: Kysely<any>
  readonly #roles: string
  readonly #permissions: string
  readonly #link: { table: string, permission: string, role: string }
  /** The users' link table to their role (`up_users_role_lnk`). */
  readonly #users: { table: string, user: string, role: string }
  readonly #known: ReadonlySet<string>
  readonly #usersMoved = new Set<() => void>()
  readonly #ttlMs: number
  readonly #cache = new Map<string, { at: number, permissions: Promise<Map<string, Permission>>, loaded?: Map<string, Permission> }>()

  constructor (db: Kysely<any>, registry: Registry, ttlMs = 5000) {
    this.#db = db
    this.#roles = registry.get(ROLE_UID)!.tableName
    const permission = registry.get(PERMISSION_UID)!
    this.#permissions = permission.tableName
    const role = permission.associations.get('role')
    // Invariants, not reachable: the built-in models have them, and no model may take their uids.
    if (role?.kind !== 'relation') throw new Error('the permission model has no role relation')
    this.#link = { table: role.link.table, permission: role.link.sourceColumn, role: role.link.targetColumn }
    const userRole = registry.get(USER_UID)!.associations.get('role')
    if (userRole?.kind !== 'relation') throw new Error('the user model has no role relation')
    this.#users = { table: userRole.link.table, user: userRole.link.sourceColumn, role: userRole.link.targetColumn }
    this.#known = knownActions(registry)
    this.#ttlMs = ttlMs
  }

  /**
   * The permissions of a role (by its `type`: `public`, `authenticated`, ...), by action. The
   * same map is returned until the role's permissions change or the cache expires, so callers
   * may key what they derive from it on its identity.
   */
  async forRole (roleType: string): Promise<Map<string, Permission>> {
    return this.loaded(roleType) ?? await this.#reload(roleType)
  }

  /** The role's permissions when the cache holds them (without waiting), else undefined. */
  loaded (roleType: string): Map<string, Permission> | undefined {
    const cached = this.#cache.get(roleType)
    return cached !== undefined && Date.now() - cached.at < this.#ttlMs ? cached.loaded : undefined
  }

  async #reload (roleType: string): Promise<Map<string, Permission>> {
    const cached = this.#cache.get(roleType)
    // A load already under way is shared by every request that arrives meanwhile.
    if (cached !== undefined && Date.now() - cached.at < this.#ttlMs) return await cached.permissions
    const entry: { at: number, permissions: Promise<Map<string, Permission>>, loaded?: Map<string, Permission> } = { at: Date.now(), permissions: this.#load(roleType) }
    this.#cache.set(roleType, entry)
    entry.permissions.then((loaded) => { entry.loaded = loaded }, () => { if (this.#cache.get(roleType) === entry) this.#cache.delete(roleType) })
    return await entry.permissions
  }

  async #load (roleType: string): Promise<Map<string, Permission>> {
    const rows = await this.#db.selectFrom(`${this.#permissions} as p`)
      .innerJoin(`${this.#link.table} as l`, `l.${this.#link.permission}`, 'p.id')
      .innerJoin(`${this.#roles} as r`, 'r.id', `l.${this.#link.role}`)
      .select(['p.action', 'p.conditions', 'p.fields'])
      .where('r.type', '=', roleType)
      .execute()
    return new Map(rows.map((row) => [row.action as string, {
      action: row.action as string,
      conditions: (row.conditions as Record<string, unknown> | null) ?? null,
      fields: (row.fields as string[] | null) ?? null
    }]))
  }

  #invalidate (roleType?: string): void {
    if (roleType === undefined) this.#cache.clear()
    else this.#cache.delete(roleType)
  }

  async #roleId (roleType: string, db: Kysely<any> = this.#db): Promise<number> {
    const row = await db.selectFrom(this.#roles).select('id').where('type', '=', roleType).executeTakeFirst()
    if (row === undefined) throw new UsageError('FCA_ERR_UNKNOWN_ROLE', roleType)
    return row.id as number
  }

  /** Creates a role (idempotent by `type`, across instances too). */
  async createRole (role: RoleSpec): Promise<void> {
    await this.#db.transaction().execute(async (trx) => { await this.#createRole(trx, role) })
  }

  /**
   * Inserts the role unless one of its type exists; true when it did. The check and the insert run
   * under a transaction-scoped advisory lock on the role's type in this schema, so that two
   * instances starting at once (or two administrators) cannot both insert it: the second waits,
   * then sees the first one's row.
   *
   * ```sql
   * select pg_advisory_xact_lock(hashtext('fastify-content-api:role'), hashtext(current_schema() || ':' || $1))
   * ```
   */
  async #createRole (trx: Kysely<any>, role: RoleSpec): Promise<boolean> {
    await sql`select pg_advisory_xact_lock(hashtext('fastify-content-api:role'), hashtext(current_schema() || ':' || ${role.type}))`.execute(trx)
    const existing = await trx.selectFrom(this.#roles).select('id').where('type', '=', role.type).executeTakeFirst()
    if (existing !== undefined) return false
    const now = new Date().toISOString()
    await trx.insertInto(this.#roles).values({
      document_id: createDocumentId(),
      name: role.name,
      type: role.type,
      description: role.description ?? null,
      created_at: now,
      updated_at: now,
      published_at: now
    }).execute()
    return true
  }

  async listRoles (): Promise<Array<{ id: number, name: string, type: string, description: string | null }>> {
    return await this.#db.selectFrom(this.#roles).select(['id', 'name', 'type', 'description']).orderBy('id').execute() as any
  }

  /**
   * Grants actions to a role, replacing the limits of actions it already had. Takes effect at
   * once in this instance (and within the cache TTL in others).
   *
   * @example
   * await app.contentApi.permissions.grant('public', ['api::article.article.find', 'api::article.article.findOne'])
   * await app.contentApi.permissions.grant('authenticated', ['api::note.note.find'], { conditions: { owner: { id: '$user.id' } } })
   */
  async grant (roleType: string, actions: readonly string[], options: GrantOptions = {}): Promise<void> {
    const roleId = await this.#roleId(roleType)
    await this.#db.transaction().execute(async (trx) => {
      await this.#remove(trx, roleId, actions)
      await this.#insert(trx, roleId, actions, options)
    })
    this.#invalidate(roleType)
  }

  async #insert (db: Kysely<any>, roleId: number, actions: readonly string[], options: GrantOptions): Promise<void> {
    const now = new Date().toISOString()
    for (const action of actions) {
      const row = await db.insertInto(this.#permissions).values({
        document_id: createDocumentId(),
        action,
        conditions: options.conditions === undefined ? null : JSON.stringify(options.conditions),
        fields: options.fields === undefined ? null : JSON.stringify(options.fields),
        created_at: now,
        updated_at: now,
        published_at: now
      }).returning('id').executeTakeFirstOrThrow()
      await db.insertInto(this.#link.table).values({ [this.#link.permission]: row.id, [this.#link.role]: roleId }).execute()
    }
  }

  /** Removes actions from a role. */
  async revoke (roleType: string, actions: readonly string[]): Promise<void> {
    const roleId = await this.#roleId(roleType)
    await this.#db.transaction().execute(async (trx) => { await this.#remove(trx, roleId, actions) })
    this.#invalidate(roleType)
  }

  async #remove (db: Kysely<any>, roleId: number, actions: readonly string[]): Promise<void> {
    if (actions.length === 0) return
    await db.deleteFrom(this.#permissions)
      .where('action', 'in', [...actions])
      .where(sql<boolean>`id in (select ${sql.ref(this.#link.permission)} from ${sql.table(this.#link.table)} where ${sql.ref(this.#link.role)} = ${roleId})`)
      .execute()
  }

  /**
   * Strapi's permission tree (see lib/auth/actions.ts): every known action, enabled where the
   * role holds it; without a role, every action disabled (`GET /users-permissions/permissions`).
   *
   * @example
   * (await permissions.tree('public'))['plugin::users-permissions'].controllers.auth.register // { enabled: true, policy: '' }
   */
  async tree (roleType?: string): Promise<PermissionTree> {
    const granted = roleType === undefined ? new Set<string>() : new Set((await this.forRole(roleType)).keys())
    return permissionTree(this.#known, granted)
  }

  /**
   * Makes `actions` exactly the role's grants: grants it holds and keeps keep their row and field
   * limits, the others are revoked, the new ones granted without limits (as Strapi's
   * `updateRole`).
   *
   * ```sql
   * delete from up_permissions where action in (<held, not wanted>) and id in (select permission_id from up_permissions_role_lnk where role_id = $1)
   * insert into up_permissions ... -- and a link row, for each wanted action not held
   * ```
   */
  async setActions (roleType: string, actions: readonly string[]): Promise<void> {
    const wanted = new Set(actions)
    await this.#db.transaction().execute(async (trx) => {
      const roleId = await this.#roleId(roleType, trx)
      const held = await trx.selectFrom(`${this.#permissions} as p`)
        .innerJoin(`${this.#link.table} as l`, `l.${this.#link.permission}`, 'p.id')
        .select('p.action').where(`l.${this.#link.role}`, '=', roleId).execute()
      const holds = new Set(held.map((row) => row.action as string))
      await this.#remove(trx, roleId, [...holds].filter((action) => !wanted.has(action)))
      await this.#insert(trx, roleId, [...wanted].filter((action) => !holds.has(action)), {})
    })
    this.#invalidate(roleType)
  }

  /** How many users each role has, by role id (`nb_users` of `GET /users-permissions/roles`). */
  async userCounts (): Promise<Map<number, number>> {
    const { table, role } = this.#users
    const rows = await this.#db.selectFrom(table).select([role, sql<string>`count(*)`.as('count')]).groupBy(role).execute()
    return new Map(rows.map((row) => [row[role] as number, Number(row.count)]))
  }

  /**
   * Deletes a role, as Strapi's `deleteRole`: its users move to the public role, its grants are
   * deleted, then the role, in one transaction. The public role cannot be deleted.
   */
  async deleteRole (roleType: string): Promise<void> {
    if (roleType === 'public') throw new ApplicationError('Cannot delete public role')
    await this.#db.transaction().execute(async (trx) => {
      const found = await trx.selectFrom(this.#roles).select('id').where('type', '=', roleType).executeTakeFirst()
      if (found === undefined) throw new NotFoundError('Role not found')
      const roleId = found.id as number
      const publicId = await this.#roleId('public', trx)
      const { table, role } = this.#users
      await trx.updateTable(table).set({ [role]: publicId }).where(role, '=', roleId).execute()
      await trx.deleteFrom(this.#permissions)
        .where(sql<boolean>`id in (select ${sql.ref(this.#link.permission)} from ${sql.table(this.#link.table)} where ${sql.ref(this.#link.role)} = ${roleId})`)
        .execute()
      await trx.deleteFrom(this.#link.table).where(this.#link.role, '=', roleId).execute()
      await trx.deleteFrom(this.#roles).where('id', '=', roleId).execute()
    })
    this.#invalidate(roleType)
    for (const listener of this.#usersMoved) listener()
  }

  /** Called after users changed role behind the document service's back (a deleted role's users), so no cache keeps their old role. */
  onUsersMoved (listener: () => void): void {
    this.#usersMoved.add(listener)
  }

  /**
   * Creates the `public` and `authenticated` roles with Strapi's default grants, on first boot
   * only. Returns false (and does nothing) when the tables do not exist yet, as after a dry-run
   * sync or with sync off on an empty database.
   */
  async bootstrap (): Promise<boolean> {
    const { rows } = await sql<{ ready: boolean }>`select to_regclass(${this.#roles}) is not null and to_regclass(${this.#permissions}) is not null as ready`.execute(this.#db)
    if (rows[0]?.ready !== true) return false
    for (const role of DEFAULT_ROLES) {
      // The role and its default grants in one transaction: an instance that waited on the role's
      // lock finds both, or neither.
      await this.#db.transaction().execute(async (trx) => {
        if (await this.#createRole(trx, role)) await this.#insert(trx, await this.#roleId(role.type, trx), role.actions, {})
      })
      this.#invalidate(role.type)
    }
    return true
  }
}
