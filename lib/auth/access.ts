import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { ForbiddenError } from '../errors.js'
import { FILE_UID } from '../model/associations.js'
import type { Authenticator, Principal } from './authenticate.js'
import type { Permission, PermissionStore } from './permissions.js'

/** The content-API actions of a content type's routes, named as Strapi names permissions (`<uid>.<action>`). */
export type ContentAction = 'find' | 'findOne' | 'create' | 'update' | 'delete'

export interface AccessRequest {
  /** A full action (`plugin::users-permissions.user.me`), or a content type's action with its uid. */
  action: ContentAction | string
  uid?: string
  /** The request reads drafts (`status=draft`). */
  draft?: boolean
}

/**
 * What a granted request may do beyond the action itself, enforced by the document service in
 * the SQL it runs (never by filtering results afterwards).
 */
export interface AccessScope {
  /** A filter every row the request touches must satisfy (row-level permission), or null. */
  conditions: Record<string, unknown> | null
  /** The attributes the request may read or write (field-level permission), or null for all. */
  fields: ReadonlySet<string> | null
  /** Whether the caller may read a content type: populate, filters and sort through relations need it. */
  canRead: (uid: string) => boolean
  /**
   * Identifies everything above: two requests with the same key and the same query compile to
   * the same SQL, so compiled statements can be reused across them.
   */
  key: string
}

export interface AccessGrant {
  principal: Principal
  scope: AccessScope
}

/** The one place where a request's access is decided: every REST route and GraphQL resolver asks it. */
export interface AccessControl {
  check (request: FastifyRequest, access: AccessRequest): Promise<AccessGrant>
  principal (request: FastifyRequest): Promise<Principal>
}

const READ_ACTIONS = new Set(['find', 'findOne'])

/** Replaces `'$user.id'` and `'$user.documentId'` in a permission's conditions with the caller's values. */
function bindUser (conditions: unknown, principal: Principal): unknown {
  if (typeof conditions === 'string' && conditions.startsWith('$user.')) {
    if (principal.kind !== 'user') throw new ForbiddenError()
    const key = conditions.slice('$user.'.length)
    if (key === 'id') return principal.user.id
    if (key === 'documentId') return principal.user.documentId
    if (key === 'email') return principal.user.email
    if (key === 'username') return principal.user.username
    throw new ForbiddenError()
  }
  if (Array.isArray(conditions)) return conditions.map((c) => bindUser(c, principal))
  if (typeof conditions === 'object' && conditions !== null) {
    return Object.fromEntries(Object.entries(conditions).map(([k, v]) => [k, bindUser(v, principal)]))
  }
  return conditions
}

/**
 * Users-and-permissions access, as Strapi decides it: the public role without credentials, the
 * user's role with a JWT, the token's type with an API token (`read-only`: find and findOne only;
 * `full-access`: everything; `custom`: its list). A missing permission is a 403 "Forbidden".
 */
export class PermissionAccessControl implements AccessControl {
  readonly #authenticator: Authenticator
  readonly #store: PermissionStore
  readonly #draftsRequirePermission: boolean
  /**
   * Decided grants (null: denied) per caller and action. A caller's principal object lives as
   * long as its credentials are cached and its role's permission map until they change, so a
   * repeat request costs two map lookups instead of deriving its scope again.
   */
  readonly #grants = new WeakMap<Principal, { permissions: RolePermissions | null, byAction: Map<string, AccessGrant | null> }>()

  constructor (authenticator: Authenticator, store: PermissionStore, options: { draftsRequirePermission: boolean }) {
    this.#authenticator = authenticator
    this.#store = store
    this.#draftsRequirePermission = options.draftsRequirePermission
  }

  async principal (request: FastifyRequest): Promise<Principal> {
    return await this.#authenticator.authenticate(request)
  }

  check (request: FastifyRequest, access: AccessRequest): Promise<AccessGrant> {
    // The common case (a known caller, its role's permissions loaded) is decided without waiting:
    // this runs on every request, and every await would add to its cost.
    const principal = this.#authenticator.known(request)
    const permissions = principal === undefined ? undefined : this.#loaded(principal)
    if (principal === undefined || permissions === undefined) return this.#checkAfterLoading(request, access)
    const grant = this.#decided(principal, permissions, access)
    return grant === null ? Promise.reject(new ForbiddenError()) : Promise.resolve(grant)
  }

  async #checkAfterLoading (request: FastifyRequest, access: AccessRequest): Promise<AccessGrant> {
    const principal = await this.#authenticator.authenticate(request)
    let permissions = this.#loaded(principal)
    if (permissions === undefined) permissions = await this.#store.forRole(roleOf(principal)!)
    const grant = this.#decided(principal, permissions, access)
    if (grant === null) throw new ForbiddenError()
    return grant
  }

  /** The permissions of the caller's role when loaded (null for API tokens), else undefined. */
  #loaded (principal: Principal): RolePermissions | null | undefined {
    const role = roleOf(principal)
    return role === undefined ? null : role === null ? EMPTY : this.#store.loaded(role)
  }

  #decided (principal: Principal, permissions: RolePermissions | null, access: AccessRequest): AccessGrant | null {
    let decided = this.#grants.get(principal)
    if (decided?.permissions !== permissions) {
      decided = { permissions, byAction: new Map() }
      this.#grants.set(principal, decided)
    }
    const action = access.uid === undefined ? access.action : `${access.uid}.${access.action}`
    const drafts = access.draft === true && this.#draftsRequirePermission && access.uid !== undefined
    const key = drafts ? `${action}\0drafts` : action
    let grant = decided.byAction.get(key)
    if (grant === undefined) {
      grant = decide(principal, permissions, action, drafts ? `${access.uid!}.findDrafts` : null)
      decided.byAction.set(key, grant)
    }
    return grant
  }
}

type RolePermissions = ReadonlyMap<string, Permission>
const EMPTY: RolePermissions = new Map()

/** The role whose permissions apply (null: a user without a role), or undefined for an API token. */
function roleOf (principal: Principal): string | null | undefined {
  if (principal.kind === 'token') return undefined
  return principal.kind === 'user' ? principal.user.roleType : 'public'
}

/** The caller's permission for a full action: the permission, `true` (no limits), or null (denied). */
function permissionFor (principal: Principal, permissions: RolePermissions | null, action: string): Permission | true | null {
  if (principal.kind !== 'token') return permissions?.get(action) ?? null
  const { token } = principal
  if (token.type === 'full-access') return true
  if (token.type === 'read-only') return READ_ACTIONS.has(action.slice(action.lastIndexOf('.') + 1)) ? true : null
  return token.permissions.includes(action) ? true : null
}

/** The grant for an action (and, for drafts when they need it, the `findDrafts` action too), or null. */
function decide (principal: Principal, permissions: RolePermissions | null, action: string, draftAction: string | null): AccessGrant | null {
  const permission = permissionFor(principal, permissions, action)
  if (permission === null) return null
  if (draftAction !== null && permissionFor(principal, permissions, draftAction) === null) return null
  const limits = permission === true ? null : permission
  let conditions: Record<string, unknown> | null = null
  if (limits?.conditions != null) {
    try {
      conditions = bindUser(limits.conditions, principal) as Record<string, unknown>
    } catch (err) {
      if (err instanceof ForbiddenError) return null
      throw err
    }
  }
  const readable = readableBy(principal, permissions)
  return {
    principal,
    scope: {
      conditions,
      fields: limits?.fields == null ? null : new Set(limits.fields),
      canRead: readable.all ? () => true : (uid) => readable.actions.has(readAction(uid)),
      key: `${readable.fingerprint}|${conditions === null ? '' : JSON.stringify(conditions)}|${limits?.fields == null ? '' : limits.fields.join(',')}`
    }
  }
}

interface Readable { all: boolean, actions: ReadonlySet<string>, fingerprint: string }

/** The actions the caller holds (for `canRead`), with a fingerprint that changes when they do. */
function readableBy (principal: Principal, permissions: RolePermissions | null): Readable {
  if (principal.kind === 'token') {
    const { token } = principal
    return token.type === 'custom'
      ? { all: false, actions: new Set(token.permissions), fingerprint: `token:${token.id}:${token.permissions.join(',')}` }
      : { all: true, actions: new Set(), fingerprint: `token:${token.type}` }
  }
  const role = roleOf(principal)
  if (role === null || permissions === null) return { all: false, actions: new Set(), fingerprint: 'none' }
  let readable = readableByMap.get(permissions)
  if (readable === undefined) {
    const fingerprint = `role:${role}:${createHash('sha1').update(JSON.stringify([...permissions.values()])).digest('base64url')}`
    readable = { all: false, actions: new Set(permissions.keys()), fingerprint }
    readableByMap.set(permissions, readable)
  }
  return readable
}

/** Computed once per loaded permission map (a reload, after a grant or revoke, is a new map). */
const readableByMap = new WeakMap<RolePermissions, Readable>()

/** The permission that lets a caller read a content type (files are read through the upload plugin's). */
export function readAction (uid: string): string {
  return uid === FILE_UID ? 'plugin::upload.content-api.find' : `${uid}.find`
}
