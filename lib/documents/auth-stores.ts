import type { Kysely } from 'kysely'
import type { ContentType } from '../model/registry.js'
import { ApiTokenRows } from './api-token-rows.js'
import type { ChangeEvents } from './change-events.js'
import { RolePermissionRows } from './role-permission-rows.js'
import { UserStore } from './user-credentials.js'

/**
 * The SQL the auth layer runs beside the document service: reads and writes the content API
 * never exposes (password hashes, reset codes, hashed API keys) or that must stay one cached
 * query per role or caller (a role's grants, a JWT's user). Built once at start-up.
 */
export interface AuthStores {
  users: UserStore
  apiTokens: ApiTokenRows
  roles: RolePermissionRows
}

/**
 * The auth stores over the users-and-permissions content types and `admin::api-token`.
 *
 * @example
 * const stores = authStores(db, authModels(registry), changes)
 * await stores.users.findCredentials('alice@example.com')
 */
export function authStores (db: Kysely<any>, models: { users: ContentType, roles: ContentType, permissions: ContentType, apiTokens: ContentType }, changes: ChangeEvents): AuthStores {
  return {
    users: new UserStore(db, models.users, models.roles),
    apiTokens: new ApiTokenRows(db, models.apiTokens, changes),
    roles: new RolePermissionRows(db, models, changes)
  }
}
