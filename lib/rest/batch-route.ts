import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AccessGrant, AccessRequest } from '../auth/access.js'
import type { BatchOperation, BatchResult } from '../documents/batch.js'
import { toContentApiError } from '../error-handler.js'
import { BatchOperationError, LimitError, NotFoundError, ValidationError } from '../errors.js'
import { isApiContentType } from '../model/built-ins.js'
import { readsDrafts } from '../query/index.js'
import type { ContentType } from '../model/registry.js'
import type { RouteAction } from '../options/rest-routes.js'
import type { ResolvedRestBatch } from '../options/rest-batch.js'
import { applyPolicies, resolvePolicy, type ResolvedPolicy, type RoutePolicyContext } from '../policies.js'
import { documented } from '../route-schema.js'
import { OPEN_SCOPE, routePolicyContext } from './route-config.js'
import type { RouteContext } from './routes.js'
import { ErrorEnvelopeSchema } from './schemas.js'

/**
 * `POST <prefix>/batch` (docs/batches.md): JSON:API's atomic operations over the content API.
 * Each operation is checked as its single route checks a request (the route's permission, with
 * `status: 'draft'` the drafts permission; `auth: false`; the route's policies; row- and
 * field-level access, which the document service applies in the transaction) and refused, with
 * the batch, when the route is not served (`only`/`except`) or has what a batch cannot
 * reproduce (a controller override, route middlewares: they act on the HTTP exchange).
 * Every check that needs no database write runs before the batch's transaction opens.
 */

export interface BatchRouteContext extends RouteContext {
  batch: ResolvedRestBatch
  /** `app.contentApi.documents.batch`. */
  runBatch: (operations: readonly BatchOperation[]) => Promise<BatchResult[]>
}

/** The REST operations: a single route's writes. Publication has no content-API route (and no permission) to mirror. */
const ACTIONS: Readonly<Record<string, RouteAction>> = { create: 'create', update: 'update', delete: 'delete' }
const KEYS: Readonly<Record<string, ReadonlySet<string>>> = {
  create: new Set(['op', 'type', 'lid', 'data', 'status', 'locale', 'fields', 'populate']),
  update: new Set(['op', 'type', 'documentId', 'data', 'status', 'locale', 'fields', 'populate']),
  delete: new Set(['op', 'type', 'documentId', 'locale'])
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** What a batch operation is checked against: its route's settings, resolved once at registration. */
interface RouteRules {
  served: boolean
  /** Why the route cannot be batched, or null. */
  refused: string | null
  open: boolean
  policies: Array<ResolvedPolicy<RoutePolicyContext>>
}

export function registerBatchRoute (app: FastifyInstance, ctx: BatchRouteContext): void {
  const rules = new Map<string, RouteRules>()
  for (const model of ctx.registry.contentTypes.values()) {
    if (!isApiContentType(model.uid)) continue
    const settings = ctx.routes[model.uid] ?? {}
    for (const action of ['create', 'update', 'delete'] as const) {
      const config = settings.config?.[action]
      const refused = settings.controllers?.[action] !== undefined
        ? 'its route has a controller override'
        : (config?.middlewares?.length ?? 0) > 0 ? 'its route has middlewares' : null
      rules.set(`${model.uid}\0${action}`, {
        served: (settings.only === undefined || settings.only.includes(action)) && settings.except?.includes(action) !== true,
        refused,
        open: config?.auth === false,
        // Resolved now: an unknown policy name fails at start-up, as the routes' do.
        policies: (config?.policies ?? []).map((item) => resolvePolicy((name) => ctx.policies[name], item))
      })
    }
  }

  /** One operation of the body, checked and granted, as the document service takes it. */
  const checkOperation = async (request: FastifyRequest, reply: FastifyReply, raw: unknown): Promise<BatchOperation> => {
    if (!isObject(raw)) throw new ValidationError('An operation must be an object', { path: '' })
    const action = typeof raw.op === 'string' ? ACTIONS[raw.op] : undefined
    if (action === undefined) throw new ValidationError('op must be one of create, update, delete', { path: 'op' })
    for (const key of Object.keys(raw)) if (!KEYS[action].has(key)) throw ValidationError.invalidKey(key, { key, path: key, source: 'body' })
    const model = typeof raw.type === 'string' ? ctx.registry.byRouteId(raw.type) : undefined
    if (model === undefined || !isApiContentType(model.uid)) throw new NotFoundError('Unknown content type', { path: 'type' })
    if (action === 'create' && model.kind === 'singleType') throw new ValidationError('A single type is created by its first update', { path: 'op' })
    const route = rules.get(`${model.uid}\0${action}`)!
    if (!route.served) throw new NotFoundError()
    if (route.refused !== null) throw new ValidationError(`The ${action} of ${raw.type} cannot be batched: ${route.refused}`, { path: 'op' })
    if (action !== 'delete' && !isObject(raw.data)) throw new ValidationError('Missing "data" payload in the operation', { path: 'data' })
    if (model.kind === 'collectionType' && action !== 'create' && raw.documentId === undefined) throw new ValidationError('documentId is required', { path: 'documentId' })
    if (model.kind === 'singleType' && raw.documentId !== undefined) throw new ValidationError('A single type\'s operations take no documentId', { path: 'documentId' })
    if (raw.documentId !== undefined && typeof raw.documentId !== 'string' && !isObject(raw.documentId)) {
      throw new ValidationError('documentId must be a documentId or { lid }', { path: 'documentId' })
    }
    const grant = await grantOf(request, model, action, readsDrafts(raw.status), route)
    if (route.policies.length > 0) {
      // A document named by lid does not exist yet: its policies see no documentId.
      const params: Record<string, string> = typeof raw.documentId === 'string' ? { documentId: raw.documentId } : {}
      await applyPolicies(route.policies, routePolicyContext(app, request, reply, { uid: model.uid, action }, grant, params), app)
    }
    const { op: _op, type: _type, ...rest } = raw
    return { ...rest, op: action, uid: model.uid, access: grant.scope, limits: true } as unknown as BatchOperation
  }

  const grantOf = async (request: FastifyRequest, model: ContentType, action: RouteAction, draft: boolean, route: RouteRules): Promise<AccessGrant> => {
    if (route.open) return { principal: await ctx.access.principal(request), scope: OPEN_SCOPE }
    const wanted: AccessRequest = { uid: model.uid, action, draft }
    return await ctx.access.check(request, wanted)
  }

  app.route({
    method: 'POST',
    url: ctx.batch.path,
    schema: documented({
      tags: ['Batch'],
      summary: 'Several creates, updates and deletes in one transaction, all applied or none',
      body: {
        type: 'object',
        required: ['operations'],
        properties: {
          operations: {
            type: 'array',
            items: { type: 'object', required: ['op', 'type'], properties: { op: { type: 'string' }, type: { type: 'string' } }, additionalProperties: true },
            maxItems: ctx.batch.maxOperations
          }
        }
      },
      response: {
        200: { type: 'object', required: ['data', 'meta'], properties: { data: { type: 'array', items: {} }, meta: { type: 'object', properties: {} } } },
        400: ErrorEnvelopeSchema,
        403: ErrorEnvelopeSchema,
        404: ErrorEnvelopeSchema
      }
    }),
    handler: async (request, reply) => {
      const operations = operationsOf(request.body, ctx.batch.maxOperations)
      // The caller first: bad credentials are the request's, not an operation's, refusal.
      await ctx.access.principal(request)
      const checked: BatchOperation[] = []
      for (let i = 0; i < operations.length; i++) {
        try {
          checked.push(await checkOperation(request, reply, operations[i]))
        } catch (err) {
          throw atOperation(err, i)
        }
      }
      const results = await ctx.runBatch(checked)
      const data = results.map((result, i) => checked[i].op === 'delete' ? null : result)
      return await reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify({ data, meta: {} }))
    }
  })
}

/** The body's `operations`, within `maxOperations`. */
function operationsOf (body: unknown, maxOperations: number): unknown[] {
  if (!isObject(body) || !Array.isArray(body.operations)) throw new ValidationError('The body must be { "operations": [...] }', { path: 'operations' })
  for (const key of Object.keys(body)) if (key !== 'operations') throw ValidationError.invalidKey(key, { key, path: key, source: 'body' })
  if (body.operations.length === 0) throw new ValidationError('operations must hold at least one operation', { path: 'operations' })
  if (body.operations.length > maxOperations) {
    throw new LimitError(`A batch may hold at most ${maxOperations} operations`, { limit: 'rest.batch.maxOperations', max: maxOperations })
  }
  return body.operations
}

/** A refusal of an operation (4xx) names it; anything else is the request's. */
function atOperation (err: unknown, operation: number): unknown {
  const error = toContentApiError(err)
  return error.status < 500 && error.status !== 401 ? new BatchOperationError(error, operation) : err
}
