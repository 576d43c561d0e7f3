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

  constructor (authenticator: Authenticator, store: PermissionStore, options: { draftsRequirePermission: boolean }) {
    this.#authenticator = authenticator
    this.#store = store
    this.#draftsRequirePermission = options.draftsRequirePermission
  }

  async principal (request: FastifyRequest): Promise<Principal> {
    return await this.#authenticator.authenticate(request)
  }

  /** The caller's permission for a full action: the permission, `true` (no limits), or null (denied). */
  async #permission (principal: Principal, action: string): Promise<Permission | true | null> {
    if (principal.kind === 'token') {
      const { token } = principal
      if (token.type === 'full-access') return true
      if (token.type === 'read-only') return READ_ACTIONS.has(action.slice(action.lastIndexOf('.') + 1)) ? true : null
      return token.permissions.includes(action) ? true : null
    }
    const role = principal.kind === 'user' ? principal.user.roleType : 'public'
    if (role === null) return null
    return (await this.#store.forRole(role)).get(action) ?? null
  }

  async check (request: FastifyRequest, access: AccessRequest): Promise<AccessGrant> {
    const principal = await this.#authenticator.authenticate(request)
    const action = access.uid === undefined ? access.action : `${access.uid}.${access.action}`
    const permission = await this.#permission(principal, action)
    if (permission === null) throw new ForbiddenError()
    if (access.draft === true && this.#draftsRequirePermission && access.uid !== undefined) {
      if (await this.#permission(principal, `${access.uid}.findDrafts`) === null) throw new ForbiddenError()
    }
    const limits = permission === true ? null : permission
    const readable = await this.#readable(principal)
    const conditions = limits?.conditions == null ? null : bindUser(limits.conditions, principal) as Record<string, unknown>
    const fields = limits?.fields == null ? null : new Set(limits.fields)
    return {
      principal,
      scope: {
        conditions,
        fields,
        canRead: readable.all ? () => true : (uid) => readable.actions.has(readAction(uid)),
        key: `${readable.fingerprint}|${conditions === null ? '' : JSON.stringify(conditions)}|${limits?.fields == null ? '' : limits.fields.join(',')}`
      }
    }
  }

  /** The actions the caller holds (for `canRead`), with a fingerprint that changes when they do. */
  async #readable (principal: Principal): Promise<{ all: boolean, actions: ReadonlySet<string>, fingerprint: string }> {
    if (principal.kind === 'token') {
      const { token } = principal
      return token.type === 'custom'
        ? { all: false, actions: new Set(token.permissions), fingerprint: `token:${token.id}:${token.permissions.join(',')}` }
        : { all: true, actions: new Set(), fingerprint: `token:${token.type}` }
    }
    const role = principal.kind === 'user' ? principal.user.roleType : 'public'
    if (role === null) return { all: false, actions: new Set(), fingerprint: 'none' }
    const permissions = await this.#store.forRole(role)
    let readable = readableByMap.get(permissions)
    if (readable === undefined) {
      const fingerprint = `role:${role}:${createHash('sha1').update(JSON.stringify([...permissions.values()])).digest('base64url')}`
      readable = { all: false, actions: new Set(permissions.keys()), fingerprint }
      readableByMap.set(permissions, readable)
    }
    return readable
  }
}

/** Computed once per loaded permission map (a reload, after a grant or revoke, is a new map). */
const readableByMap = new WeakMap<ReadonlyMap<string, Permission>, { all: boolean, actions: ReadonlySet<string>, fingerprint: string }>()

/** The permission that lets a caller read a content type (files are read through the upload plugin's). */
export function readAction (uid: string): string {
  return uid === FILE_UID ? 'plugin::upload.content-api.find' : `${uid}.find`
}
