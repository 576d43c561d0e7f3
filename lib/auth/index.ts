import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fastifyJwt from '@fastify/jwt'
import type { AuthStores } from '../documents/auth-stores.js'
import type { ChangeEvents } from '../documents/change-events.js'
import type { DocumentService } from '../documents/service.js'
import type { UserStore } from '../documents/user-credentials.js'
import type { ContentType, Registry } from '../model/registry.js'
import type { ResolvedOptions } from '../options/index.js'
import type { RequestLimits } from '../query/index.js'
import { addBodyParsers, namingBodyLimit } from '../http/body-parsers.js'
import { modelSchemasOf } from '../http/openapi-models.js'
import { errorHandler } from '../error-handler.js'
import { PermissionAccessControl, type AccessControl } from './access.js'
import { ApiTokenService } from './api-tokens.js'
import { Authenticator } from './authenticate.js'
import { localRoutes } from './local-routes.js'
import { API_TOKEN_UID, PERMISSION_UID, ROLE_UID, USER_UID } from '../model/users-permissions.js'
import { PermissionStore } from './permissions.js'
import { registerRateLimit } from './rate-limit.js'
import { rolesRoutes } from './roles-routes.js'
import { authSchemas } from './route-schemas.js'
import { authRouter, userReader } from './routing.js'
import { usersRoutes } from './users-routes.js'

/** The users-and-permissions services: who is calling, what they may do, and the stores behind them. */
export interface Auth {
  apiTokens: ApiTokenService
  permissions: PermissionStore
  authenticator: Authenticator
  /** The access check every route and resolver goes through. */
  access: AccessControl
  /** Password hashes and reset codes, read apart from the document service. */
  credentials: UserStore
}

/** The built-in content types whose tables the auth stores (lib/documents/auth-stores.ts) read and write. */
export function authModels (registry: Registry): { users: ContentType, roles: ContentType, permissions: ContentType, apiTokens: ContentType } {
  return { users: registry.get(USER_UID)!, roles: registry.get(ROLE_UID)!, permissions: registry.get(PERMISSION_UID)!, apiTokens: registry.get(API_TOKEN_UID)! }
}

/**
 * Builds the auth services over their stores, creates the default roles on first boot, and ties
 * the caches to the change events of the writes that void them, made through this instance or
 * any other on the database (lib/documents/change-events.ts): a user written (blocked, confirmed,
 * given another role or password) drops the cached users; a role or permission written (grants,
 * revocations, conditions, a deleted role whose users moved) drops every role's cached
 * permissions and the cached users (their role); an API token created, revoked or regenerated
 * drops the cached tokens. A `resync` (the listening connection was lost) drops them all.
 * `auth.credentialsCacheMs` bounds how long any of them lives without such an event.
 */
export async function createAuth (deps: {
  stores: AuthStores
  registry: Registry
  documents: (uid: string) => DocumentService
  changes: ChangeEvents
  options: ResolvedOptions['auth']
  apiTokenSalt: string
  log: FastifyBaseLogger
}): Promise<Auth> {
  const { stores, registry, options } = deps
  const apiTokens = new ApiTokenService(stores.apiTokens, registry, deps.apiTokenSalt)
  const permissions = new PermissionStore(stores.roles, registry, options.credentialsCacheMs)
  if (!(await permissions.bootstrap())) {
    deps.log.warn('fastify-content-api: the users-and-permissions tables do not exist (schema sync did not create them); roles are created on the first start that has them')
  }
  const authenticator = new Authenticator(stores.users, apiTokens, options.credentialsCacheMs, options.register.emailConfirmation)
  const { changes } = deps
  changes.on(USER_UID, () => { authenticator.forgetUsers() })
  for (const uid of [ROLE_UID, PERMISSION_UID]) {
    changes.on(uid, () => { permissions.forget(); authenticator.forgetUsers() })
  }
  changes.on(API_TOKEN_UID, () => { authenticator.forgetTokens() })
  const access = new PermissionAccessControl(authenticator, permissions, {
    draftsRequirePermission: options.draftsRequirePermission,
    draftTypes: new Set([...registry.contentTypes.values()].filter((ct) => ct.draftAndPublish).map((ct) => ct.uid))
  })
  return { apiTokens, permissions, authenticator, access, credentials: stores.users }
}

export interface AuthPluginOptions {
  auth: Auth
  registry: Registry
  documents: (uid: string) => DocumentService
  options: ResolvedOptions['auth']
  jwtSecret: string
  /** The bounds on a request's work, as for content routes. */
  limits: RequestLimits
}

/**
 * Strapi's users-and-permissions routes, registered by the plugin entry under the content API
 * prefix (`/api`) beside the REST routes, as an encapsulated context with the same body parsers
 * and error envelope: login, registration and the password and email flows
 * (lib/auth/local-routes.ts), users (users-routes.ts), roles and permissions (roles-routes.ts).
 * It also registers `@fastify/jwt`, which signs and verifies users' JWTs for every surface, and
 * the rate limit of the credential routes (rate-limit.ts). Unknown paths under the prefix are
 * the REST context's 404.
 */
export async function authPlugin (app: FastifyInstance, { auth, registry, documents, options, jwtSecret, limits }: AuthPluginOptions): Promise<void> {
  addBodyParsers(app, limits)
  // As on content routes: schemas document, the handlers validate with Strapi's messages.
  app.setValidatorCompiler(() => () => true)
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  app.setErrorHandler(namingBodyLimit(errorHandler, limits))
  app.decorateRequest('contentApiGrant', null)

  // HS256 only: a token naming another algorithm (or `none`) is refused, whatever it claims.
  await app.register(fastifyJwt, {
    secret: jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: options.jwtExpiresIn },
    // fast-jwt caches verified tokens (bounded, and never past their expiry): a client's JWT is
    // checked once, not on every request.
    verify: { algorithms: ['HS256'], cache: 1000 }
  })
  auth.authenticator.useJwt(app.jwt)

  const limited = await registerRateLimit(app, options.rateLimit)
  const ctx = {
    ...auth,
    documents,
    options,
    limits,
    route: authRouter(app, auth.access, limited),
    // The models' named schemas are added by the REST context, a sibling (rest/index.ts).
    schemas: authSchemas(modelSchemasOf(registry, (id) => app.getSchema(id) !== undefined), registry, options.register.allowedFields),
    userJson: userReader(documents)
  }
  localRoutes(app, ctx)
  usersRoutes(ctx)
  rolesRoutes(ctx)
}
