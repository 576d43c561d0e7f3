import { sql, type Kysely } from 'kysely'
import { ApplicationError, NotFoundError, UsageError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import type { ChangeEvents } from './change-events.js'
import { createDocumentId } from './document-id.js'
import { runWrite, type ChangeOf } from './write-transaction.js'
import { ROLE_UID } from '../model/users-permissions.js'

/** One granted action's row: its optional row conditions and field list, as stored (JSON). */
export interface PermissionRow {
  action: string
  conditions: Record<string, unknown> | null
  fields: string[] | null
}

export interface RoleRow {
  id: number
  name: string
  type: string
  description: string | null
}

/** The row and field limits stored with granted actions. */
export interface PermissionLimits {
  conditions?: Record<string, unknown>
  fields?: string[]
}

/** A link table between two content types: its name and the columns that hold each side's id. */
interface Link { table: string, from: string, to: string }

function linkOf (model: ContentType, attribute: string): Link {
  const association = model.associations.get(attribute)
  // An invariant, not reachable: the built-in models have it, and no model may take their uids.
  if (association?.kind !== 'relation') throw new Error(`the ${model.uid} model has no ${attribute} relation`)
  return { table: association.link.table, from: association.link.sourceColumn, to: association.link.targetColumn }
}

/**
 * The SQL of users-and-permissions roles and their grants (`up_roles`, `up_permissions`, the
 * `up_permissions_role_lnk` and `up_users_role_lnk` link tables), for the permission store in
 * lib/auth/permissions.ts, which caches and invalidates. A role is named by its `type`. Every
 * write runs in one transaction, which announces it to the other instances (a change event of
 * `plugin::users-permissions.role`: they drop their cached permissions, lib/auth/index.ts).
 */
export class RolePermissionRows {
  readonly #db: Kysely<any>
  readonly #roles: string
  readonly #permissions: string
  /** `up_permissions_role_lnk`: from a permission to its role. */
  readonly #link: Link
  /** `up_users_role_lnk`: from a user to their role. */
  readonly #users: Link
  readonly #changes: ChangeEvents

  /** The users-and-permissions `roles`, `permissions` and `users` content types. */
  constructor (db: Kysely<any>, models: { roles: ContentType, permissions: ContentType, users: ContentType }, changes: ChangeEvents) {
    this.#db = db
    this.#changes = changes
    this.#roles = models.roles.tableName
    this.#permissions = models.permissions.tableName
    this.#link = linkOf(models.permissions, 'role')
    this.#users = linkOf(models.users, 'role')
  }

  /**
   * Whether the role and permission tables exist (not after a dry-run sync, or with sync off on
   * an empty database).
   *
   * ```sql
   * select to_regclass('up_roles') is not null and to_regclass('up_permissions') is not null as ready
   * ```
   */
  async ready (): Promise<boolean> {
    const { rows } = await sql<{ ready: boolean }>`select to_regclass(${this.#roles}) is not null and to_regclass(${this.#permissions}) is not null as ready`.execute(this.#db)
    return rows[0]?.ready === true
  }

  /**
   * A role's grants.
   *
   * ```sql
   * select p.action, p.conditions, p.fields from up_permissions as p
   * inner join up_permissions_role_lnk as l on l.permission_id = p.id
   * inner join up_roles as r on r.id = l.role_id
   * where r.type = $1
   * ```
   */
  async permissionsOf (roleType: string): Promise<PermissionRow[]> {
    const rows = await this.#db.selectFrom(`${this.#permissions} as p`)
      .innerJoin(`${this.#link.table} as l`, `l.${this.#link.from}`, 'p.id')
      .innerJoin(`${this.#roles} as r`, 'r.id', `l.${this.#link.to}`)
      .select(['p.action', 'p.conditions', 'p.fields'])
      .where('r.type', '=', roleType)
      .execute()
    return rows.map((row) => ({
      action: row.action as string,
      conditions: (row.conditions as Record<string, unknown> | null) ?? null,
      fields: (row.fields as string[] | null) ?? null
    }))
  }

  /** `select id, name, type, description from up_roles order by id` */
  async listRoles (): Promise<RoleRow[]> {
    return await this.#db.selectFrom(this.#roles).select(['id', 'name', 'type', 'description']).orderBy('id').execute() as RoleRow[]
  }

  /**
   * Inserts the role unless one of its type exists, with `actions` granted when it does; true
   * when it inserted. The check and the insert run under a transaction-scoped advisory lock on the
   * role's type in this schema, so that two instances starting at once (or two administrators)
   * cannot both insert it: the second waits, then sees the first one's role and grants.
   *
   * ```sql
   * select pg_advisory_xact_lock(hashtext('fastify-content-api:role'), hashtext(current_schema() || ':' || $1))
   * select id from up_roles where type = $1
   * insert into up_roles (document_id, name, type, description, ...) values (...)
   * ```
   */
  async createRole (role: { name: string, type: string, description?: string }, actions: readonly string[] = []): Promise<boolean> {
    return await this.#write(roleChange('create', (created) => created), async (trx) => {
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
      if (actions.length > 0) await this.#insert(trx, await this.#roleId(role.type, trx), actions, {})
      return true
    })
  }

  /**
   * Grants actions to a role, replacing the limits of those it already held: a delete of the held
   * ones (as `revoke`), then a permission row and a link row for each action.
   *
   * ```sql
   * insert into up_permissions (document_id, action, conditions, fields, ...) values (...) returning id
   * insert into up_permissions_role_lnk (permission_id, role_id) values ($1, $2)
   * ```
   */
  async grant (roleType: string, actions: readonly string[], limits: PermissionLimits): Promise<void> {
    const roleId = await this.#roleId(roleType)
    await this.#write(roleChange('update'), async (trx) => {
      await this.#remove(trx, roleId, actions)
      await this.#insert(trx, roleId, actions, limits)
    })
  }

  /**
   * Removes actions from a role.
   *
   * ```sql
   * delete from up_permissions where action in ($1, ...) and id in (select permission_id from up_permissions_role_lnk where role_id = $2)
   * ```
   */
  async revoke (roleType: string, actions: readonly string[]): Promise<void> {
    const roleId = await this.#roleId(roleType)
    await this.#write(roleChange('update'), async (trx) => { await this.#remove(trx, roleId, actions) })
  }

  /**
   * Makes `actions` exactly the role's grants: held ones that stay keep their limits, the others
   * are deleted, the new ones inserted without limits.
   *
   * ```sql
   * select p.action from up_permissions as p inner join up_permissions_role_lnk as l on l.permission_id = p.id where l.role_id = $1
   * delete from up_permissions where action in (<held, not wanted>) and id in (select permission_id from up_permissions_role_lnk where role_id = $1)
   * insert into up_permissions ... -- and a link row, for each wanted action not held
   * ```
   */
  async setActions (roleType: string, actions: readonly string[]): Promise<void> {
    const wanted = new Set(actions)
    await this.#write(roleChange('update'), async (trx) => {
      const roleId = await this.#roleId(roleType, trx)
      const held = await trx.selectFrom(`${this.#permissions} as p`)
        .innerJoin(`${this.#link.table} as l`, `l.${this.#link.from}`, 'p.id')
        .select('p.action').where(`l.${this.#link.to}`, '=', roleId).execute()
      const holds = new Set(held.map((row) => row.action as string))
      await this.#remove(trx, roleId, [...holds].filter((action) => !wanted.has(action)))
      await this.#insert(trx, roleId, [...wanted].filter((action) => !holds.has(action)), {})
    })
  }

  /** How many users each role has, by role id: `select role_id, count(*) from up_users_role_lnk group by role_id` */
  async userCounts (): Promise<Map<number, number>> {
    const { table, to: role } = this.#users
    const rows = await this.#db.selectFrom(table).select([role, sql<string>`count(*)`.as('count')]).groupBy(role).execute()
    return new Map(rows.map((row) => [row[role] as number, Number(row.count)]))
  }

  /**
   * Deletes a role, as Strapi's `deleteRole`: its users move to the public role, its grants are
   * deleted, then the role, in one transaction. The public role cannot be deleted.
   *
   * ```sql
   * update up_users_role_lnk set role_id = <public> where role_id = $1
   * delete from up_permissions where id in (select permission_id from up_permissions_role_lnk where role_id = $1)
   * delete from up_permissions_role_lnk where role_id = $1
   * delete from up_roles where id = $1
   * ```
   */
  async deleteRole (roleType: string): Promise<void> {
    if (roleType === 'public') throw new ApplicationError('Cannot delete public role')
    await this.#write(roleChange('delete'), async (trx) => {
      const found = await trx.selectFrom(this.#roles).select('id').where('type', '=', roleType).executeTakeFirst()
      if (found === undefined) throw new NotFoundError('Role not found')
      const roleId = found.id as number
      const publicId = await this.#roleId('public', trx)
      const { table, to: role } = this.#users
      await trx.updateTable(table).set({ [role]: publicId }).where(role, '=', roleId).execute()
      await trx.deleteFrom(this.#permissions)
        .where(sql<boolean>`id in (select ${sql.ref(this.#link.from)} from ${sql.table(this.#link.table)} where ${sql.ref(this.#link.to)} = ${roleId})`)
        .execute()
      await trx.deleteFrom(this.#link.table).where(this.#link.to, '=', roleId).execute()
      await trx.deleteFrom(this.#roles).where('id', '=', roleId).execute()
    })
  }

  async #write<T> (change: ChangeOf<T>, fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    return await runWrite(this.#db, this.#changes, change, fn)
  }

  async #roleId (roleType: string, db: Kysely<any> = this.#db): Promise<number> {
    const row = await db.selectFrom(this.#roles).select('id').where('type', '=', roleType).executeTakeFirst()
    if (row === undefined) throw new UsageError('FCA_ERR_UNKNOWN_ROLE', roleType)
    return row.id as number
  }

  async #insert (db: Kysely<any>, roleId: number, actions: readonly string[], limits: PermissionLimits): Promise<void> {
    const now = new Date().toISOString()
    for (const action of actions) {
      const row = await db.insertInto(this.#permissions).values({
        document_id: createDocumentId(),
        action,
        conditions: limits.conditions === undefined ? null : JSON.stringify(limits.conditions),
        fields: limits.fields === undefined ? null : JSON.stringify(limits.fields),
        created_at: now,
        updated_at: now,
        published_at: now
      }).returning('id').executeTakeFirstOrThrow()
      await db.insertInto(this.#link.table).values({ [this.#link.from]: row.id, [this.#link.to]: roleId }).execute()
    }
  }

  async #remove (db: Kysely<any>, roleId: number, actions: readonly string[]): Promise<void> {
    if (actions.length === 0) return
    await db.deleteFrom(this.#permissions)
      .where('action', 'in', [...actions])
      .where(sql<boolean>`id in (select ${sql.ref(this.#link.from)} from ${sql.table(this.#link.table)} where ${sql.ref(this.#link.to)} = ${roleId})`)
      .execute()
  }
}

/** A role write's event; `changed` tells from the result whether anything was written (a role that existed already is not created again). */
function roleChange<T> (action: 'create' | 'update' | 'delete', changed: (result: T) => boolean = () => true): ChangeOf<T> {
  return (result) => changed(result) ? { uid: ROLE_UID, action } : null
}
