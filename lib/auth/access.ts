import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { ForbiddenError } from '../errors.js'
import { FILE_UID } from '../model/associations.js'
import type { AccessScope, ReadAccess } from '../query/access-scope.js'
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

export interface AccessGrant {
  principal: Principal
  scope: AccessScope
}

/** The one place where a request's access is decided: every REST route and GraphQL resolver asks it. */
export interface AccessControl {
  check (request: FastifyRequest, access: AccessRequest): Promise<AccessGrant>
  /**
   * The decision when it needs no waiting (a known caller whose role's permissions are loaded:
   * most requests): the grant, or null (a 403 "Forbidden"); undefined when only `check` can
   * decide. The routes ask it first, so that a decided request costs no promise.
   */
  decided? (request: FastifyRequest, access: AccessRequest): AccessGrant | null | undefined
  principal (request: FastifyRequest): Promise<Principal>
}

const READ_ACTIONS = new Set(['find', 'findOne'])

/** Thrown by `bindUser` when conditions name a caller's value the caller does not have. */
const UNBOUND = Symbol('unbound')

/** Replaces `'$user.id'` and `'$user.documentId'` in a permission's conditions with the caller's values. */
function bindUser (conditions: unknown, principal: Principal): unknown {
  if (typeof conditions === 'string' && conditions.startsWith('$user.')) {
    if (principal.kind !== 'user') throw UNBOUND
    const key = conditions.slice('$user.'.length)
    if (key === 'id') return principal.user.id
    if (key === 'documentId') return principal.user.documentId
    if (key === 'email') return principal.user.email
    if (key === 'username') return principal.user.username
    throw UNBOUND
  }
  if (Array.isArray(conditions)) return conditions.map((c) => bindUser(c, principal))
  if (typeof conditions === 'object' && conditions !== null) {
    return Object.fromEntries(Object.entries(conditions).map(([k, v]) => [k, bindUser(v, principal)]))
  }
  return conditions
}

/** A permission's conditions bound to the caller; undefined when they name values it lacks (no access). */
function boundConditions (permission: Permission | true, principal: Principal): Record<string, unknown> | null | undefined {
  if (permission === true || permission.conditions == null) return null
  try {
    return bindUser(permission.conditions, principal) as Record<string, unknown>
  } catch (err) {
    if (err === UNBOUND) return undefined
    throw err
  }
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
  readonly #draftTypes: ReadonlySet<string>
  /**
   * Decided grants (null: denied) per caller and action. A caller's principal object lives as
   * long as its credentials are cached and its role's permission map until they change, so a
   * repeat request costs two map lookups instead of deriving its scope again.
   */
  readonly #grants = new WeakMap<Principal, { permissions: RolePermissions | null, byAction: Map<string, AccessGrant | null> }>()

  /** `draftTypes`: the uids of draft & publish types, whose drafts `draftsRequirePermission` guards. */
  constructor (authenticator: Authenticator, store: PermissionStore, options: { draftsRequirePermission: boolean, draftTypes: ReadonlySet<string> }) {
    this.#authenticator = authenticator
    this.#store = store
    this.#draftsRequirePermission = options.draftsRequirePermission
    this.#draftTypes = options.draftTypes
  }

  async principal (request: FastifyRequest): Promise<Principal> {
    return await this.#authenticator.authenticate(request)
  }

  check (request: FastifyRequest, access: AccessRequest): Promise<AccessGrant> {
    const grant = this.decided(request, access)
    if (grant === undefined) return this.#checkAfterLoading(request, access)
    return grant === null ? Promise.reject(new ForbiddenError()) : Promise.resolve(grant)
  }

  decided (request: FastifyRequest, access: AccessRequest): AccessGrant | null | undefined {
    // The common case (a known caller, its role's permissions loaded) is decided without waiting:
    // this runs on every request, and every await would add to its cost.
    const principal = this.#authenticator.known(request)
    const permissions = principal === undefined ? undefined : this.#loaded(principal)
    if (principal === undefined || permissions === undefined) return undefined
    return this.#decided(principal, permissions, access)
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
      grant = this.#decide(principal, permissions, action, drafts ? access.uid! : null)
      decided.byAction.set(key, grant)
    }
    return grant
  }

  /**
   * The grant for an action, or null. `drafts`: the uid whose drafts the request reads, when
   * `draftsRequirePermission` makes that need `<uid>.findDrafts` (and then so does every draft &
   * publish type read through relations).
   */
  #decide (principal: Principal, permissions: RolePermissions | null, action: string, drafts: string | null): AccessGrant | null {
    const permission = permissionFor(principal, permissions, action)
    if (permission === null) return null
    const findDrafts = (uid: string): boolean => permissionFor(principal, permissions, `${uid}.findDrafts`) !== null
    if (drafts !== null && !findDrafts(drafts)) return null
    const conditions = boundConditions(permission, principal)
    if (conditions === undefined) return null
    const fields = permission === true || permission.fields == null ? null : new Set(permission.fields)
    const readsDrafts = drafts !== null
    const reads = new Map<string, ReadAccess | null>()
    const read = (uid: string): ReadAccess | null => {
      let access = reads.get(uid)
      if (access === undefined) {
        access = readAccess(principal, permissions, uid)
        if (access !== null && readsDrafts && this.#draftTypes.has(uid) && !findDrafts(uid)) access = null
        reads.set(uid, access)
      }
      return access
    }
    const fingerprint = fingerprintOf(principal, permissions)
    const caller = fingerprint.perUser && principal.kind === 'user' ? principal.user.id : ''
    return {
      principal,
      scope: {
        conditions,
        fields,
        read,
        drafts: readsDrafts || !this.#draftsRequirePermission,
        // Reads through relations bind the caller's values too: then the SQL is the caller's own.
        key: `${fingerprint.fingerprint}|${caller}|${readsDrafts ? 'd' : ''}|${conditions === null ? '' : JSON.stringify(conditions)}|${fields === null ? '' : [...fields].join(',')}`
      }
    }
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

const UNLIMITED: ReadAccess = Object.freeze({ conditions: null, fields: null })

/** What the caller may read of a type through relations: its `find` grant, bound to the caller. */
function readAccess (principal: Principal, permissions: RolePermissions | null, uid: string): ReadAccess | null {
  const permission = permissionFor(principal, permissions, readAction(uid))
  if (permission === null) return null
  if (permission === true || (permission.conditions == null && permission.fields == null)) return UNLIMITED
  const conditions = boundConditions(permission, principal)
  if (conditions === undefined) return null
  return { conditions, fields: permission.fields == null ? null : new Set(permission.fields) }
}

interface Fingerprint {
  /** Changes whenever what the caller holds does. */
  fingerprint: string
  /** Some grant's conditions name the caller's values (`$user.id`). */
  perUser: boolean
}

/** A fingerprint of the caller's grants, for the compiled-statement cache key. */
function fingerprintOf (principal: Principal, permissions: RolePermissions | null): Fingerprint {
  if (principal.kind === 'token') {
    const { token } = principal
    return { fingerprint: token.type === 'custom' ? `token:${token.id}:${token.permissions.join(',')}` : `token:${token.type}`, perUser: false }
  }
  const role = roleOf(principal)
  if (role === null || permissions === null) return { fingerprint: 'none', perUser: false }
  let known = fingerprints.get(permissions)
  if (known === undefined) {
    const grants = JSON.stringify([...permissions.values()])
    known = { fingerprint: `role:${role}:${createHash('sha1').update(grants).digest('base64url')}`, perUser: grants.includes('"$user.') }
    fingerprints.set(permissions, known)
  }
  return known
}

/** Computed once per loaded permission map (a reload, after a grant or revoke, is a new map). */
const fingerprints = new WeakMap<RolePermissions, Fingerprint>()

/** The permission that lets a caller read a content type (files are read through the upload plugin's). */
export function readAction (uid: string): string {
  return uid === FILE_UID ? 'plugin::upload.content-api.find' : `${uid}.find`
}
