import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import mercurius from 'mercurius'
import { NoSchemaIntrospectionCustomRule, buildSchema as buildSdl } from 'graphql'
import type { AccessControl } from '../auth/access.js'
import type { Authenticator } from '../auth/authenticate.js'
import type { PermissionStore } from '../auth/permissions.js'
import type { UserStore } from '../auth/users.js'
import type { DocumentService } from '../documents/service.js'
import { ContentApiError } from '../errors.js'
import type { Registry } from '../model/registry.js'
import type { ResolvedOptions } from '../options.js'
import { depthLimitRule } from './depth-limit.js'
import { errorFormatter } from './errors.js'
import { GraphqlApi } from './extension.js'
import { resolveGraphqlOptions, type ResolvedGraphqlOptions } from './options.js'
import { Reader } from './read.js'
import { registerSandboxAssets, sendSandbox } from './sandbox.js'
import { buildSchema } from './schema.js'

export { GraphqlApi } from './extension.js'
export type { Extension, ExtensionFactory, ExtensionLibraries } from './extension.js'
export type { GraphqlOptions } from './options.js'
export type { ContentTypeConfig, FieldConfig } from './shadow-crud.js'
export type { MiddlewareFactory, MiddlewareFunction, PolicyContext, PolicyFunction, ResolverConfig } from './wrap.js'
export { PolicyError } from './errors.js'

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

/** Apollo's CSRF prevention, with Apollo's answer: a browser cannot send these without a preflight. */
const CSRF_MESSAGE = "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header (with a type that is not one of application/x-www-form-urlencoded, multipart/form-data, text/plain) or provide a non-empty value for one of the following headers: x-apollo-operation-name, apollo-require-preflight\n"
const SIMPLE_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'])
const NO_QUERY = 'GraphQL operations must contain a non-empty `query` or a `persistedQuery` extension.'

function badRequest (reply: FastifyReply, message: string): FastifyReply {
  return reply.code(400).type('application/json; charset=utf-8').send({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] })
}

function csrfSafe (request: FastifyRequest): boolean {
  const type = request.headers['content-type']?.split(';')[0].trim().toLowerCase()
  if (type !== undefined && type !== '' && !SIMPLE_TYPES.has(type)) return true
  const preflight = (name: string): boolean => typeof request.headers[name] === 'string' && request.headers[name] !== ''
  return preflight('x-apollo-operation-name') || preflight('apollo-require-preflight')
}

const wantsHtml = (request: FastifyRequest): boolean => (request.headers.accept ?? '').includes('text/html')

function hasQuery (request: FastifyRequest): boolean {
  const source = request.method === 'GET' ? request.query : request.body
  if (Array.isArray(source)) return true
  const { query, extensions } = (source ?? {}) as { query?: unknown, extensions?: { persistedQuery?: unknown } }
  return (typeof query === 'string' && query !== '') || extensions?.persistedQuery !== undefined
}

/**
 * The endpoint's HTTP rules, ahead of Mercurius: browsers get the sandbox on GET, requests a
 * browser could forge cross-site are refused (CSRF), credentials are checked once per request
 * (an invalid token is the REST 401, as in Strapi, before any GraphQL runs), and an empty query
 * is Apollo's 400.
 */
function endpointHooks (app: FastifyInstance, options: ResolvedGraphqlOptions, access: AccessControl): void {
  const isEndpoint = (request: FastifyRequest): boolean => request.routeOptions.url === options.endpoint
  app.addHook('onRequest', async (request, reply) => {
    if (!isEndpoint(request)) return
    if (request.method === 'GET' && wantsHtml(request) && (request.query as { query?: unknown }).query === undefined && options.landingPage) {
      return sendSandbox(reply, options.endpoint)
    }
    if (!csrfSafe(request)) return badRequest(reply, CSRF_MESSAGE)
  })
  app.addHook('preHandler', async (request, reply) => {
    if (!isEndpoint(request)) return
    if (!hasQuery(request)) return badRequest(reply, NO_QUERY)
    try {
      await access.principal(request)
    } catch (err) {
      if (!(err instanceof ContentApiError)) throw err
      return reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(err.toEnvelope()))
    }
  })
}

/**
 * Registers the GraphQL endpoint on Mercurius, in a context of its own (Mercurius's decorators
 * and error handler stay there), and returns the extension API decorated as
 * `app.contentApi.graphql`, or null when GraphQL is off (`graphql: false`). The schema is built
 * when the application becomes ready, so application code can configure Shadow CRUD and add
 * extensions in between.
 */
export async function registerGraphql (app: FastifyInstance, deps: GraphqlDeps): Promise<GraphqlApi | null> {
  const options = resolveGraphqlOptions(deps.options.graphql)
  if (options === null) return null
  const api = new GraphqlApi(options.endpoint)
  const reader = new Reader(app.contentApi.db, deps.registry, deps.options.i18n, deps.options.query)

  await app.register(async (child) => {
    endpointHooks(child, options, deps.access)
    if (options.landingPage) registerSandboxAssets(child, options.endpoint)
    const engine = options.engineServer
    const userRules = Array.isArray(engine.validationRules) ? engine.validationRules : []
    await child.register(mercurius, {
      allowBatchedQueries: false,
      ...engine,
      // A placeholder until the application is ready: extensions are registered in between.
      schema: buildSdl('type Query { _starting: Boolean }'),
      path: options.endpoint,
      graphiql: false,
      errorFormatter: errorFormatter as any,
      validationRules: [depthLimitRule(options.depthLimit), ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule]), ...userRules]
    })
    child.addHook('onReady', async () => {
      const schema = buildSchema({ ...deps, app, reader, graphql: options, api })
      child.graphql.replaceSchema(schema)
      api.seal(schema)
    })
  })
  return api
}
