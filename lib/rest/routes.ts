import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, HTTPMethods, RouteOptions } from 'fastify'
import Type from 'typebox'
import type { AccessControl, AccessGrant, AccessRequest, ContentAction } from '../auth/access.js'
import type { AccessScope } from '../query/access-scope.js'
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js'
import type { DocumentService } from '../documents/service.js'
import { TreeMemo } from '../documents/tree-memo.js'
import type { ContentType, Registry } from '../model/registry.js'
import { paginationMeta, parseQueryString, searchOf, type QueryTree, type RawQuery, type RequestLimits } from '../query/index.js'
import { documented as doc } from '../route-schema.js'
import { requestedConsistency } from '../http/consistency.js'
import { listBody, singleBody, v4Body, wantsV4 } from './format.js'
import {
  DocumentParamsSchema, ErrorEnvelopeSchema, ListQuerySchema, ReadQuerySchema,
  inputSchema, listResponseSchema, singleResponseSchema
} from './schemas.js'

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

const errors = { 400: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema }

/**
 * The write payload `{ data: {...} }`. Like Strapi, a missing or non-object `data` is "Missing
 * data payload"; an array passes on to validation, which rejects it with yup's message.
 */
function payload (body: unknown): Record<string, unknown> {
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined
  if (typeof data !== 'object' || data === null) throw new ValidationError('Missing "data" payload in the request body')
  return data as Record<string, unknown>
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
}

/**
 * Strapi v5's core routes for one content type:
 * - collection type: `GET|POST /<pluralApiId>`, `GET|PUT|DELETE /<pluralApiId>/:documentId`;
 * - single type: `GET|PUT|DELETE /<singularApiId>`.
 * Other methods on those paths answer 405, as Strapi's router does.
 */
export function registerContentTypeRoutes (app: FastifyInstance, model: ContentType, ctx: RouteContext): void {
  const service = ctx.documents(model.uid)
  const tags = [model.displayName]
  const action = (name: ContentAction) => ({ contentApi: { uid: model.uid, action: name } })
  const scope = (request: FastifyRequest): AccessScope => request.contentApiGrant!.scope
  const listKey = `${model.uid}\0list\0`
  const oneKey = `${model.uid}\0one\0`
  /** A read's query tree, parsed at most once for the same route, caller and query string (parse errors are not kept). */
  const tree = (request: FastifyRequest, list: boolean): QueryTree => {
    const search = searchOf(request.url)
    const access = scope(request)
    const key = (list ? listKey : oneKey) + access.key + '\0' + search
    return trees.find(ctx, key) ?? trees.add(ctx, key, service.queryTree(parseQueryString(`?${search}`, ctx.limits), { list, access }))
  }
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, body: string): FastifyReply =>
    reply.code(status).type('application/json; charset=utf-8').send(wantsV4(request.headers) ? v4Body(body, model, ctx.registry) : body)

  const routes: Array<{ url: string, methods: HTTPMethods[] }> = []
  const route = (method: HTTPMethods, url: string, options: Omit<RouteOptions, 'method' | 'url'>): void => {
    // The action is known now; reading it back from `request.routeOptions` would rebuild that
    // object on every request.
    const published = { ...options.config!.contentApi!, draft: false }
    const drafts = { ...published, draft: true }
    // A callback hook: decided without waiting (most requests), the check costs no promise.
    const guard = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      const access = (request.query as { status?: unknown }).status === 'draft' ? drafts : published
      const grant = ctx.access.decided?.(request, access)
      if (grant === undefined) {
        ctx.access.check(request, access).then((grant) => { request.contentApiGrant = grant; done() }, done)
        return
      }
      if (grant === null) {
        done(new ForbiddenError())
        return
      }
      request.contentApiGrant = grant
      done()
    }
    app.route({ ...options, method, url, preHandler: guard })
    const entry = routes.find((r) => r.url === url)
    if (entry === undefined) routes.push({ url, methods: [method] })
    else entry.methods.push(method)
  }

  if (model.kind === 'collectionType') {
    const base = `/${model.pluralName}`
    const one = `${base}/:documentId`
    route('GET', base, {
      config: action('find'),
      schema: doc({ tags, summary: `List ${model.pluralName}`, querystring: ListQuerySchema, response: { 200: listResponseSchema(model), ...errors } }),
      handler: async (request, reply) => {
        const query = tree(request, true)
        const page = await service.findPageJson(query, { limits: true, consistency: requestedConsistency(request) })
        return send(request, reply, 200, listBody(page.json, paginationMeta(query.pagination, page.total)))
      }
    })
    route('POST', base, {
      config: action('create'),
      schema: doc({ tags, summary: `Create a ${model.singularName}`, querystring: ReadQuerySchema, body: inputSchema(model), response: { 200: singleResponseSchema(model), ...errors } }),
      handler: async (request, reply) => {
        const query = parseQueryString(request.url, ctx.limits)
        const document = await service.create({ data: payload(request.body), ...writeOptions(query), access: scope(request) })
        return send(request, reply, 200, singleBody(JSON.stringify(document)))
      }
    })
    route('GET', one, {
      config: action('findOne'),
      schema: doc({ tags, summary: `Get a ${model.singularName}`, params: DocumentParamsSchema, querystring: ReadQuerySchema, response: { 200: singleResponseSchema(model), ...errors } }),
      handler: async (request, reply) => {
        const { documentId } = request.params as { documentId: string }
        const json = await service.findOneJson(documentId, tree(request, false), { limits: true, consistency: requestedConsistency(request) })
        if (json === null) throw new NotFoundError()
        return send(request, reply, 200, singleBody(json))
      }
    })
    route('PUT', one, {
      config: action('update'),
      schema: doc({ tags, summary: `Update a ${model.singularName}`, params: DocumentParamsSchema, querystring: ReadQuerySchema, body: inputSchema(model), response: { 200: singleResponseSchema(model), ...errors } }),
      handler: async (request, reply) => {
        const { documentId } = request.params as { documentId: string }
        const query = parseQueryString(request.url, ctx.limits)
        const document = await service.update({ documentId, data: payload(request.body), ...writeOptions(query), access: scope(request) })
        if (document === null) throw new NotFoundError()
        return send(request, reply, 200, singleBody(JSON.stringify(document)))
      }
    })
    route('DELETE', one, {
      config: action('delete'),
      schema: doc({ tags, summary: `Delete a ${model.singularName}`, params: DocumentParamsSchema, response: { 204: Type.Null({ description: 'Deleted (also when nothing matched)' }), ...errors } }),
      handler: async (request, reply) => {
        const { documentId } = request.params as { documentId: string }
        const query = parseQueryString(request.url, ctx.limits)
        await service.delete({ documentId, locale: query.locale as string | undefined, access: scope(request) })
        return reply.code(204).send()
      }
    })
  } else {
    const url = `/${model.singularName}`
    route('GET', url, {
      config: action('find'),
      schema: doc({ tags, summary: `Get the ${model.singularName}`, querystring: ReadQuerySchema, response: { 200: singleResponseSchema(model), ...errors } }),
      handler: async (request, reply) => {
        const json = await service.findOneJson(null, tree(request, false), { limits: true, consistency: requestedConsistency(request) })
        if (json === null) throw new NotFoundError()
        return send(request, reply, 200, singleBody(json))
      }
    })
    route('PUT', url, {
      config: action('update'),
      schema: doc({ tags, summary: `Create or update the ${model.singularName}`, querystring: ReadQuerySchema, body: inputSchema(model), response: { 200: singleResponseSchema(model), ...errors } }),
      handler: async (request, reply) => {
        const query = parseQueryString(request.url, ctx.limits)
        const document = await service.upsertSingle({ data: payload(request.body), ...writeOptions(query), access: scope(request) })
        return send(request, reply, 200, singleBody(JSON.stringify(document)))
      }
    })
    route('DELETE', url, {
      config: action('delete'),
      schema: doc({ tags, summary: `Delete the ${model.singularName}`, response: { 204: Type.Null({ description: 'Deleted (also when nothing existed)' }), ...errors } }),
      handler: async (request, reply) => {
        const query = parseQueryString(request.url, ctx.limits)
        await service.delete({ documentId: null, locale: query.locale as string | undefined, access: scope(request) })
        return reply.code(204).send()
      }
    })
  }

  for (const { url, methods } of routes) {
    const others = ROUTED_METHODS.filter((m) => !methods.includes(m))
    if (others.length === 0) continue
    app.route({
      method: others,
      url,
      schema: doc({ hide: true }),
      handler: async (_request, reply) => reply.code(405).header('allow', methods.join(', ')).type('text/plain; charset=utf-8').send('Method Not Allowed')
    })
  }
}
