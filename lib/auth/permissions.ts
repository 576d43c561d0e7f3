import type { RolePermissionRows, RoleRow } from '../documents/role-permission-rows.js'
import type { Registry } from '../model/registry.js'
import { knownActions, permissionTree, type PermissionTree } from './actions.js'

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
 * Roles and their permissions, persisted in `up_roles`/`up_permissions` (their SQL is
 * lib/documents/role-permission-rows.ts) and read through a per-role cache: the access check runs
 * on every request and must not cost a query each time. Writes through this store invalidate the
 * cache at once; writes elsewhere (another instance, the document service) reach `forget` through
 * their change events (lib/auth/index.ts). `ttlMs` (`auth.credentialsCacheMs`) bounds how long a
 * cached role lives when such an event was missed; 0 reads the role's grants on every check.
 */
export class PermissionStore {
  readonly #rows: RolePermissionRows
  readonly #known: ReadonlySet<string>
  readonly #ttlMs: number
  readonly #cache = new Map<string, { at: number, permissions: Promise<Map<string, Permission>>, loaded?: Map<string, Permission> }>()

  constructor (rows: RolePermissionRows, registry: Registry, ttlMs = 5000) {
    this.#rows = rows
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
    return new Map((await this.#rows.permissionsOf(roleType)).map((permission) => [permission.action, permission]))
  }

  /** Drops every cached role (another instance changed roles or grants; or changes may have been missed). */
  forget (): void {
    this.#cache.clear()
  }

  #invalidate (roleType?: string): void {
    if (roleType === undefined) this.#cache.clear()
    else this.#cache.delete(roleType)
  }

  /** Creates a role (idempotent by `type`, across instances too). */
  async createRole (role: RoleSpec): Promise<void> {
    await this.#rows.createRole(role)
  }

  async listRoles (): Promise<RoleRow[]> {
    return await this.#rows.listRoles()
  }

  /**
   * Grants actions to a role, replacing the limits of actions it already had. Takes effect at
   * once in this instance, and in the others on the database as soon as they hear of it
   * (milliseconds; docs/operations.md#many-instances).
   *
   * @example
   * await app.contentApi.permissions.grant('public', ['api::article.article.find', 'api::article.article.findOne'])
   * await app.contentApi.permissions.grant('authenticated', ['api::note.note.find'], { conditions: { owner: { id: '$user.id' } } })
   */
  async grant (roleType: string, actions: readonly string[], options: GrantOptions = {}): Promise<void> {
    await this.#rows.grant(roleType, actions, options)
    this.#invalidate(roleType)
  }

  /** Removes actions from a role. */
  async revoke (roleType: string, actions: readonly string[]): Promise<void> {
    await this.#rows.revoke(roleType, actions)
    this.#invalidate(roleType)
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
   */
  async setActions (roleType: string, actions: readonly string[]): Promise<void> {
    await this.#rows.setActions(roleType, actions)
    this.#invalidate(roleType)
  }

  /** How many users each role has, by role id (`nb_users` of `GET /users-permissions/roles`). */
  async userCounts (): Promise<Map<number, number>> {
    return await this.#rows.userCounts()
  }

  /**
   * Deletes a role, as Strapi's `deleteRole`: its users move to the public role, its grants are
   * deleted, then the role, in one transaction. The public role cannot be deleted.
   */
  async deleteRole (roleType: string): Promise<void> {
    await this.#rows.deleteRole(roleType)
    this.#invalidate(roleType)
  }

  /**
   * Creates the `public` and `authenticated` roles with Strapi's default grants, on first boot
   * only. Returns false (and does nothing) when the tables do not exist yet, as after a dry-run
   * sync or with sync off on an empty database.
   */
  async bootstrap (): Promise<boolean> {
    if (!(await this.#rows.ready())) return false
    for (const role of DEFAULT_ROLES) {
      // The role and its default grants in one transaction: an instance that waited on the role's
      // lock finds both, or neither.
      await this.#rows.createRole(role, role.actions)
      this.#invalidate(role.type)
    }
    return true
  }
}
