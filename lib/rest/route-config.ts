import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, preHandlerHookHandler } from 'fastify'
import type { AccessControl, AccessGrant, AccessRequest } from '../auth/access.js'
import { errorHandler } from '../error-handler.js'
import { ForbiddenError } from '../errors.js'
import type { NamedPolicies, RouteActionConfig } from '../options/rest-routes.js'
import { applyPolicies, resolvePolicy, type PolicyReference, type ResolvedPolicy, type RoutePolicyContext } from '../policies.js'
import type { AccessScope } from '../query/access-scope.js'
import { readsDrafts } from '../query/index.js'

/**
 * What runs before a content-API route's handler, in Strapi's order: the access check (or, with
 * `auth: false`, only the caller's identification), the route's policies, then its middlewares
 * (lib/options/rest-routes.ts has the option's shape, docs/extending.md the examples). The same
 * check, with the same envelope, is `app.contentApi.routes.protect()` for the application's
 * own routes.
 */

/**
 * The scope of an `auth: false` route: no permission was asked, so none limits it (Strapi's
 * `auth: false` skips authorization, and its sanitiser then applies no permission). Private and
 * password attributes stay hidden: the query layer hides them from every client query.
 */
export const OPEN_SCOPE: AccessScope = Object.freeze({
  conditions: null,
  fields: null,
  read: () => ({ conditions: null, fields: null }),
  drafts: true,
  key: 'open'
})

/**
 * The access check of a route, as a callback hook: decided without waiting for most requests
 * (`access.decided`), so the check costs no promise. A status that reads drafts (`status=draft`,
 * and any other value but `published`, as the query reads it) asks the draft permission.
 */
export function accessHook (access: AccessControl, request: AccessRequest, config: RouteActionConfig | undefined): preHandlerHookHandler {
  if (config?.auth === false) {
    return function identify (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
      access.principal(req).then((principal) => { req.contentApiGrant = { principal, scope: OPEN_SCOPE }; done() }, done)
    }
  }
  const published = { ...request, draft: false }
  const drafts = { ...request, draft: true }
  return function guard (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const wanted = readsDrafts((req.query as { status?: unknown } | undefined)?.status) ? drafts : published
    const grant = access.decided?.(req, wanted)
    if (grant === undefined) {
      access.check(req, wanted).then((grant) => { req.contentApiGrant = grant; done() }, done)
      return
    }
    if (grant === null) {
      done(new ForbiddenError())
      return
    }
    req.contentApiGrant = grant
    done()
  }
}

/**
 * Strapi's policy context of an HTTP route, on Fastify's request and reply; a batch operation
 * (batch-route.ts) passes its own grant and params.
 */
export function routePolicyContext (
  app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, access: AccessRequest,
  grant: AccessGrant = request.contentApiGrant as AccessGrant, params: Record<string, string> = (request.params ?? {}) as Record<string, string>
): RoutePolicyContext {
  return {
    type: 'koa',
    is: (type: string) => type === 'koa',
    state: { user: grant.principal.kind === 'user' ? grant.principal.user : null, auth: { principal: grant.principal, scope: grant.scope === OPEN_SCOPE ? null : grant.scope } },
    params,
    query: (request.query ?? {}) as Record<string, unknown>,
    request,
    reply,
    http: { request, reply },
    uid: access.uid,
    action: access.action,
    app
  }
}

/** The route's policies, resolved now (an unknown name fails at start-up), as one hook; none when it has none. */
export function policiesHook (app: FastifyInstance, named: NamedPolicies, access: AccessRequest, references: ReadonlyArray<PolicyReference<RoutePolicyContext>> | undefined): preHandlerHookHandler | null {
  if (references === undefined || references.length === 0) return null
  const policies: Array<ResolvedPolicy<RoutePolicyContext>> = references.map((item) => resolvePolicy((name) => named[name], item))
  return async function policies_ (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await applyPolicies(policies, routePolicyContext(app, request, reply, access), app)
  }
}

/**
 * A route middleware as a Fastify preHandler. Wrapped in an async function so that a plain
 * `(request, reply) => {}` works too (Fastify would wait for a `done` it never calls); one that
 * sends the reply ends the request there.
 */
export function middlewareHook (middleware: (request: FastifyRequest, reply: FastifyReply) => unknown): preHandlerHookHandler {
  return async function middleware_ (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await middleware(request, reply)
  }
}

/** Every hook of a route: access, policies, middlewares. */
export function routeHooks (app: FastifyInstance, access: AccessControl, named: NamedPolicies, request: AccessRequest, config: RouteActionConfig | undefined): preHandlerHookHandler[] {
  const policies = policiesHook(app, named, request, config?.policies)
  return [
    accessHook(access, request, config),
    ...(policies === null ? [] : [policies]),
    ...(config?.middlewares ?? []).map(middlewareHook)
  ]
}

export interface ProtectOptions extends RouteActionConfig {
  /** The permission: a content type's action with `uid` (`find`, `findOne`, ...), or a full action string. */
  action: string
  uid?: string
}

/**
 * `app.contentApi.routes.protect()`: the access check, policies and middlewares of the content
 * API's routes, as one preHandler for the application's own routes, answering a refusal (401,
 * 403, a policy's error) in Strapi's envelope whatever the application's error handler is. The
 * grant is on `request.contentApiGrant` for the handler.
 *
 * @example
 * app.get('/api/articles/:documentId/summary', {
 *   preHandler: app.contentApi.routes.protect({ uid: 'api::article.article', action: 'findOne', policies: ['is-owner'] })
 * }, async (request) => summarise(request.contentApiGrant.scope, request.params.documentId))
 */
export function protect (app: FastifyInstance, access: AccessControl, named: NamedPolicies, options: ProtectOptions): preHandlerHookHandler {
  const request: AccessRequest = options.uid === undefined ? { action: options.action } : { uid: options.uid, action: options.action }
  const hooks = routeHooks(app, access, named, request, options)
  return async function protect_ (req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    try {
      for (const hook of hooks) {
        await new Promise<void>((resolve, reject) => {
          const done = (err?: Error | null): void => { if (err != null) reject(err); else resolve() }
          const result = (hook as (...args: any[]) => unknown).call(app, req, reply, done)
          if (result !== undefined && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(() => resolve(), reject)
        })
        if (reply.sent) return reply
      }
    } catch (err) {
      errorHandler(err, req, reply)
      return reply
    }
  }
}
