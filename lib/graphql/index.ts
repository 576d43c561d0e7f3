import type { FastifyInstance } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import type { Authenticator } from '../auth/authenticate.js'
import type { PermissionStore } from '../auth/permissions.js'
import type { UserStore } from '../auth/users.js'
import type { DocumentService } from '../documents/service.js'
import type { Registry } from '../model/registry.js'
import type { ResolvedOptions } from '../options.js'

/** What the GraphQL module needs from the rest of the plugin. */
export interface GraphqlDeps {
  registry: Registry
  documents: (uid: string) => DocumentService
  access: AccessControl
  authenticator: Authenticator
  credentials: UserStore
  permissions: PermissionStore
  options: ResolvedOptions
}

/** The public GraphQL API decorated as `app.contentApi.graphql` (null when GraphQL is off). */
export type GraphqlApi = Record<string, never>

/** Registers the GraphQL endpoint (not implemented yet: GraphQL is off). */
export async function registerGraphql (_app: FastifyInstance, _deps: GraphqlDeps): Promise<GraphqlApi | null> {
  return null
}
