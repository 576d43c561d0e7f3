import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteOptions } from 'fastify'
import type { AccessControl, AccessGrant, AccessRequest, ContentAction } from '../auth/access.js'
import type { AccessScope } from '../query/access-scope.js'
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js'
import type { Precondition } from '../documents/precondition.js'
import type { DocumentService } from '../documents/service.js'
import type { CoreAnswer, NamedPolicies, RestRoutes, RouteAction } from '../options/rest-routes.js'
import { TreeMemo } from '../documents/tree-memo.js'
import type { ContentType, Registry } from '../model/registry.js'
import { checkRootPagination, paginationMeta, parseQueryString, readsDrafts, searchOf, type QueryTree, type RawQuery, type RequestLimits } from '../query/index.js'
import { documented as doc } from '../route-schema.js'
import { requestedConsistency } from '../http/consistency.js'
import { conditionalGet, headerValue, namesTag, type EtagOf } from './conditional.js'
import { listBody, singleBody, v4Body, wantsV4 } from './format.js'
import { OPEN_SCOPE, routeHooks } from './route-config.js'
import type { ModelSchemas } from '../http/openapi-models.js'
import { OPTIONAL_BEARER, SECURITY_CONFIG } from '../http/openapi-security.js'
import { AggregateResponseSchema, DocumentParamsSchema, ErrorEnvelopeSchema, aggregateQuerySchema, bodySchema, listResponseSchema, querySchema, singleResponseSchema } from './schemas.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** What the access check granted this request (set before the handler runs). */
    contentApiGrant: AccessGrant | null
  }
  interface FastifyContextConfig {
    /** The content type and action a content-API route serves, read by the access check. */
    contentApi?: AccessRequest
  }
}

const ROUTED_METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']

const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema }
const deleted = (description: string): Record<string, unknown> => ({ type: 'null', description })

/**
 * The write payload `{ data: {...} }`. Like Strapi, a missing or non-object `data` is "Missing
 * data payload"; an array passes on to validation, which rejects it with yup's message.
 */
function payload (body: unknown): Record<string, unknown> {
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined
  if (typeof data !== 'object' || data === null) throw new ValidationError('Missing "data" payload in the request body')
  return data as Record<string, unknown>
}

/**
 * A DELETE removes every version of a document (in its locale): `status=draft` cannot name only
 * the draft, which Strapi refuses with a 500 ("Cannot delete a draft document"); here a 400. Any
 * other status is ignored, as in Strapi.
 */
function refuseDraftDelete (model: ContentType, status: unknown): void {
  if (model.draftAndPublish && status === 'draft') throw new ValidationError('Cannot delete a draft document', { key: 'status', source: 'query', param: 'status' })
}

/** A write's query string, under the REST bounds like its body (`limits: true`). */
function writeOptions (query: RawQuery): { status?: any, locale?: any, fields?: any, populate?: unknown, limits: true } {
  return { status: query.status, locale: query.locale, fields: query.fields, populate: query.populate, limits: true }
}

/**
 * The query trees of reads, parsed once per content type, route, caller (its access key) and
 * query string: every content type's routes share their plugin's context, the memo's owner.
 */
const trees = new TreeMemo<QueryTree>(1000)

export interface RouteContext {
  registry: Registry
  access: AccessControl
  documents: (uid: string) => DocumentService
  /** The bounds on a request's work (the `limits` options). */
  limits: RequestLimits
  /** `rest.routes`: route config, only/except, controllers and Cache-Control per content type. */
  routes: RestRoutes
  /** The `policies` option: named policies. */
  policies: NamedPolicies
}

const JSON_TYPE = 'application/json; charset=utf-8'

/** What a core handler produces: the body as text (`{ data, meta }`, Strapi v5's shape), or null for a 204. */
type Core = (request: FastifyRequest) => Promise<string | null>

/**
 * Strapi v5's core routes for one content type:
 * - collection type: `GET|POST /<pluralApiId>`, `GET|PUT|DELETE /<pluralApiId>/:documentId`;
 * - single type: `GET|PUT|DELETE /<singularApiId>`.
 * Other methods on those paths answer 405, as Strapi's router does. `rest.routes[uid]` may leave
 * routes out (`only`/`except`: their paths are then the application's), give them policies and
 * middlewares or `auth: false`, replace their handlers, and set their `Cache-Control`
 * (route-config.ts, conditional.ts; docs/extending.md).
 */
export function registerContentTypeRoutes (app: FastifyInstance, model: ContentType, ctx: RouteContext & { schemas: ModelSchemas, etagOf: EtagOf }): void {
  const { etagOf } = ctx
  const service = ctx.documents(model.uid)
  const settings = ctx.routes[model.uid] ?? {}
  const tags = [model.displayName]
  const { schemas } = ctx
  const security = OPTIONAL_BEARER
  const scope = (request: FastifyRequest): AccessScope => request.contentApiGrant!.scope
  const listKey = `${model.uid}\0list\0`
  const oneKey = `${model.uid}\0one\0`
  /**
   * A read's query tree, parsed at most once for the same route, caller and query string (parse
   * errors are not kept). `read`: a GET's, after the checks Strapi makes of pagination
   * keys outside `pagination[...]` (`checkRootPagination`); a write's If-Match tree skips them
   * (Strapi's writes drop those keys) and is memoised apart.
   */
  const tree = (request: FastifyRequest, list: boolean, access: AccessScope = scope(request), read = false): QueryTree => {
    const search = searchOf(request.url)
    const key = (list ? listKey : oneKey) + access.key + (read ? '\0' : '\0w\0') + search
    const found = trees.find(ctx, key)
    if (found !== undefined) return found
    const raw = parseQueryString(`?${search}`, ctx.limits)
    if (read) checkRootPagination(raw, list)
    return trees.add(ctx, key, service.queryTree(raw, { list, access }))
  }
  /** The body as the client asked for it: Strapi v5's, or v4's with the `Strapi-Response-Format: v4` header. */
  const render = (request: FastifyRequest, body: string): string => wantsV4(request.headers) ? v4Body(body, model, ctx.registry) : body
  const enabled = (action: RouteAction): boolean =>
    (settings.only === undefined || settings.only.includes(action)) && settings.except?.includes(action) !== true
  const onSend = conditionalGet(settings.cacheControl, etagOf)

  /** The action whose answer a `GET` of a document gives: what `If-Match` is compared with. */
  const readAction: ContentAction = model.kind === 'collectionType' ? 'findOne' : 'find'
  /**
   * `If-Match` as a precondition of the write: the representation a `GET` of the same URL (its
   * status, locale, fields, populate) would answer this caller now, compared in the write's
   * transaction. A caller that may not read gets the write's own scope (only `*` can match).
   */
  const precondition = async (request: FastifyRequest): Promise<Precondition | undefined> => {
    const header = headerValue(request.headers['if-match'])
    if (header === undefined) return undefined
    let access = scope(request)
    if (settings.config?.[readAction]?.auth === false) access = OPEN_SCOPE
    else {
      const draft = readsDrafts((request.query as { status?: unknown }).status)
      try {
        access = (await ctx.access.check(request, { uid: model.uid, action: readAction, draft })).scope
      } catch (err) {
        if (!(err instanceof ForbiddenError)) throw err
      }
    }
    const spec = tree(request, false, access)
    return { spec, matches: (current) => namesTag(header, current === null ? null : etagOf(render(request, singleBody(current)))) }
  }

  const routes: Array<{ url: string, methods: HTTPMethods[] }> = []
  const disabled: Array<{ url: string, method: HTTPMethods }> = []
  const route = (method: HTTPMethods, url: string, name: ContentAction, options: Omit<RouteOptions, 'method' | 'url' | 'handler'> & { core: Core }): void => {
    if (!enabled(name)) {
      disabled.push({ url, method })
      return
    }
    const { core, ...rest } = options
    const access: AccessRequest = { uid: model.uid, action: name }
    const controller = settings.controllers?.[name]
    const handler = controller === undefined
      ? async (request: FastifyRequest, reply: FastifyReply) => {
        const body = await core(request)
        return body === null ? reply.code(204).send() : reply.code(200).type(JSON_TYPE).send(render(request, body))
      }
      : async (request: FastifyRequest, reply: FastifyReply) => {
        const coreAnswer = async (): Promise<CoreAnswer | null> => {
          const body = await core(request)
          return body === null ? null : JSON.parse(render(request, body)) as CoreAnswer
        }
        const result = await controller(request, reply, coreAnswer)
        if (reply.sent) return reply
        if (result === undefined || result === null) return reply.code(reply.statusCode === 200 ? 204 : reply.statusCode).send()
        return reply.type(JSON_TYPE).send(typeof result === 'string' ? result : JSON.stringify(result))
      }
    app.route({
      ...rest,
      method,
      url,
      config: { contentApi: access, ...SECURITY_CONFIG },
      preHandler: routeHooks(app, ctx.access, ctx.policies, access, settings.config?.[name]),
      ...(method === 'GET' ? { onSend } : {}),
      handler
    })
    const entry = routes.find((r) => r.url === url)
    if (entry === undefined) routes.push({ url, methods: [method] })
    else entry.methods.push(method)
  }

  /**
   * Our extension, `GET /<plural>/aggregate` (docs/aggregations.md): under the `find` permission
   * and its route config (the same rows and fields as the list), never a documentId (those are 24
   * characters), and a static segment, which the router prefers to `/:documentId`.
   */
  const aggregateRoute = (base: string): void => {
    const access: AccessRequest = { uid: model.uid, action: 'find' }
    app.route({
      method: 'GET',
      url: `${base}/aggregate`,
      schema: doc({ tags, summary: `Aggregate ${model.pluralName} (count, sum, avg, min, max, groupBy)`, security, querystring: aggregateQuerySchema(schemas, model), response: { 200: AggregateResponseSchema, ...errors } }),
      config: { contentApi: access, ...SECURITY_CONFIG },
      preHandler: routeHooks(app, ctx.access, ctx.policies, access, settings.config?.find),
      handler: async (request, reply) => {
        const raw = parseQueryString(request.url, ctx.limits)
        const data = await service.aggregateJson(raw, { access: scope(request), consistency: requestedConsistency(request) })
        return reply.code(200).type(JSON_TYPE).send(`{"data":${data},"meta":{}}`)
      }
    })
  }

  if (model.kind === 'collectionType') {
    const base = `/${model.pluralName}`
    const one = `${base}/:documentId`
    route('GET', base, 'find', {
      schema: doc({ tags, summary: `List ${model.pluralName}`, security, querystring: querySchema(schemas, model, 'list'), response: { 200: listResponseSchema(schemas, model), ...errors } }),
      core: async (request) => {
        const query = tree(request, true, scope(request), true)
        const page = await service.findPageJson(query, { limits: true, consistency: requestedConsistency(request) })
        return listBody(page.json, paginationMeta(query.pagination, page.total, page.links))
      }
    })
    if (enabled('find')) aggregateRoute(base)
    route('POST', base, 'create', {
      schema: doc({ tags, summary: `Create a ${model.singularName}`, security, querystring: querySchema(schemas, model, 'write'), body: bodySchema(schemas, model, true), response: { 200: singleResponseSchema(schemas, model), ...errors } }),
      core: async (request) => {
        const query = parseQueryString(request.url, ctx.limits)
        const document = await service.create({ data: payload(request.body), ...writeOptions(query), access: scope(request) })
        return singleBody(JSON.stringify(document))
      }
    })
    route('GET', one, 'findOne', {
      schema: doc({ tags, summary: `Get a ${model.singularName}`, security, params: DocumentParamsSchema, querystring: querySchema(schemas, model, 'read'), response: { 200: singleResponseSchema(schemas, model), ...errors } }),
      core: async (request) => {
        const { documentId } = request.params as { documentId: string }
        const json = await service.findOneJson(documentId, tree(request, false, scope(request), true), { limits: true, consistency: requestedConsistency(request) })
        if (json === null) throw new NotFoundError()
        return singleBody(json)
      }
    })
    route('PUT', one, 'update', {
      schema: doc({ tags, summary: `Update a ${model.singularName}`, security, params: DocumentParamsSchema, querystring: querySchema(schemas, model, 'write'), body: bodySchema(schemas, model, false), response: { 200: singleResponseSchema(schemas, model), 412: ErrorEnvelopeSchema, ...errors } }),
      core: async (request) => {
        const { documentId } = request.params as { documentId: string }
        const query = parseQueryString(request.url, ctx.limits)
        const data = payload(request.body)
        const document = await service.update({ documentId, data, ...writeOptions(query), access: scope(request), ifMatch: await precondition(request) })
        if (document === null) throw new NotFoundError()
        return singleBody(JSON.stringify(document))
      }
    })
    route('DELETE', one, 'delete', {
      schema: doc({ tags, summary: `Delete a ${model.singularName}`, security, params: DocumentParamsSchema, querystring: querySchema(schemas, model, 'delete'), response: { 204: deleted('Deleted (also when nothing matched)'), 412: ErrorEnvelopeSchema, ...errors } }),
      core: async (request) => {
        const { documentId } = request.params as { documentId: string }
        const query = parseQueryString(request.url, ctx.limits)
        refuseDraftDelete(model, query.status)
        await service.delete({ documentId, locale: query.locale as string | undefined, access: scope(request), ifMatch: await precondition(request) })
        return null
      }
    })
  } else {
    const url = `/${model.singularName}`
    route('GET', url, 'find', {
      schema: doc({ tags, summary: `Get the ${model.singularName}`, security, querystring: querySchema(schemas, model, 'read'), response: { 200: singleResponseSchema(schemas, model), ...errors } }),
      core: async (request) => {
        const json = await service.findOneJson(null, tree(request, false, scope(request), true), { limits: true, consistency: requestedConsistency(request) })
        if (json === null) throw new NotFoundError()
        return singleBody(json)
      }
    })
    route('PUT', url, 'update', {
      schema: doc({ tags, summary: `Create or update the ${model.singularName}`, description: 'The first write creates the single type: it must then send what a create requires.', security, querystring: querySchema(schemas, model, 'write'), body: bodySchema(schemas, model, false), response: { 200: singleResponseSchema(schemas, model), 412: ErrorEnvelopeSchema, ...errors } }),
      core: async (request) => {
        const query = parseQueryString(request.url, ctx.limits)
        const data = payload(request.body)
        const document = await service.upsertSingle({ data, ...writeOptions(query), access: scope(request), ifMatch: await precondition(request) })
        return singleBody(JSON.stringify(document))
      }
    })
    route('DELETE', url, 'delete', {
      schema: doc({ tags, summary: `Delete the ${model.singularName}`, security, querystring: querySchema(schemas, model, 'delete'), response: { 204: deleted('Deleted (also when nothing existed)'), 412: ErrorEnvelopeSchema, ...errors } }),
      core: async (request) => {
        const query = parseQueryString(request.url, ctx.limits)
        refuseDraftDelete(model, query.status)
        await service.delete({ documentId: null, locale: query.locale as string | undefined, access: scope(request), ifMatch: await precondition(request) })
        return null
      }
    })
  }

  for (const { url, methods } of routes) {
    // A method left out by `only`/`except` is the application's to route: no 405 on it.
    const others = ROUTED_METHODS.filter((m) => !methods.includes(m) && !disabled.some((d) => d.url === url && d.method === m))
    if (others.length === 0) continue
    app.route({
      method: others,
      url,
      schema: doc({ hide: true }),
      handler: async (_request, reply) => reply.code(405).header('allow', methods.join(', ')).type('text/plain; charset=utf-8').send('Method Not Allowed')
    })
  }
}
