import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { NotFoundError, ValidationError, type FieldError } from '../errors.js'
import type { DocumentService } from '../documents/service.js'
import type { UserStore } from '../documents/user-credentials.js'
import type { ResolvedOptions } from '../options/index.js'
import type { RequestLimits } from '../query/index.js'
import { documented } from '../route-schema.js'
import { SECURITY_CONFIG } from '../http/openapi-security.js'
import type { AuthSchemas } from './route-schemas.js'
import type { AccessControl } from './access.js'
import type { AccessScope } from '../query/access-scope.js'
import type { Authenticator } from './authenticate.js'
import { USER_UID } from '../model/users-permissions.js'
import type { PermissionStore } from './permissions.js'

/** What the users-and-permissions route modules share. */
export interface AuthRouteContext {
  access: AccessControl
  credentials: UserStore
  authenticator: Authenticator
  documents: (uid: string) => DocumentService
  permissions: PermissionStore
  options: ResolvedOptions['auth']
  /** The bounds on a request's work, as for content routes. */
  limits: RequestLimits
  /** Registers a route behind the check of its `plugin::users-permissions.<action>` permission. */
  route: (options: AuthRouteOptions) => void
  /** The routes' schemas, for the OpenAPI document (route-schemas.ts). */
  schemas: AuthSchemas
  /** A user as the auth routes answer it (the document service's read, no query string), or 404. */
  userJson: (id: number) => Promise<Record<string, unknown>>
}

/** A route of the auth plugin: its permission's action and whether the auth rate limit applies. */
export type AuthRouteOptions = RouteOptions & { action: string, limit?: boolean }

const UP = 'plugin::users-permissions'

/**
 * The route registrar of the auth routes: each route checks its permission through the same
 * access control as content routes before its handler runs, is documented with its schema
 * (which validates nothing: the auth context compiles none), and with `limit` takes the rate
 * limit's route config.
 */
export function authRouter (app: FastifyInstance, access: AccessControl, limited: FastifyContextConfig): AuthRouteContext['route'] {
  const guard = (action: string) => async (request: FastifyRequest): Promise<void> => {
    request.contentApiGrant = await access.check(request, { action: `${UP}.${action}` })
  }
  return (options) => {
    const { action, limit, ...rest } = options
    app.route({ ...rest, preHandler: guard(action), config: { ...(limit === true ? limited : {}), ...SECURITY_CONFIG }, schema: documented({ ...rest.schema }) })
  }
}

/** The reader of `userJson`: a user by id as the document service shows it. */
export function userReader (documents: (uid: string) => DocumentService): AuthRouteContext['userJson'] {
  const users = documents(USER_UID)
  return async (id) => {
    const user = await users.findFirst({ filters: { id } })
    if (user === null) throw new NotFoundError()
    return user
  }
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** yup's "x is a required field" for each missing string, as Strapi's auth validators answer. */
export function requireStrings (body: unknown, keys: readonly string[]): Record<string, string> {
  const data = isPlainObject(body) ? body : {}
  const errors: FieldError[] = keys
    .filter((key) => typeof data[key] !== 'string' || data[key] === '')
    .map((key) => ({ path: [key], message: `${key} is a required field`, name: 'ValidationError' }))
  if (errors.length > 0) throw ValidationError.fromFieldErrors(errors)
  return data as Record<string, string>
}

/** A bare JSON answer: the auth routes' answers are not wrapped in `{ data }`, as in Strapi. */
export const json = (reply: FastifyReply, status: number, body: unknown): FastifyReply =>
  reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body))

/** A numeric id route parameter (users and roles keep numeric ids in Strapi's routes), or null. */
export function idParam (request: FastifyRequest, name = 'id'): number | null {
  const id = Number((request.params as Record<string, string>)[name])
  return Number.isSafeInteger(id) ? id : null
}

/** The row and field limits the access check granted the request, if any. */
export const scopeOf = (request: FastifyRequest): AccessScope | undefined => request.contentApiGrant?.scope
