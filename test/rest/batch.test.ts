import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import contentApi, { ApplicationError, ConfigurationError, defineContentType } from '../../lib/index.js'
import { build, type BuildOptions } from '../helpers/build.js'
import { createTestDatabase } from '../helpers/database.js'
import { homepage } from '../fixtures/models.js'
import { ARTICLE, CATEGORY, TAG, countRows, relationOptions } from '../fixtures/relations.js'
import { Receiver, FAST } from '../webhooks/helpers.js'

/**
 * `POST /api/batch` (docs/batches.md): JSON:API's atomic operations over the content API. Every
 * operation is the single route's write, checked as that route checks it; the batch commits
 * whole or not at all, and says which operation failed.
 */

t.setTimeout(120_000)

const HOMEPAGE = 'api::homepage.homepage'
const options = (extra: Partial<BuildOptions> = {}): BuildOptions => ({
  ...relationOptions,
  models: [...relationOptions.models, homepage],
  graphql: false,
  upload: { enabled: false },
  ...extra,
  rest: { batch: { enabled: true }, ...extra.rest }
})

async function batch (app: FastifyInstance, operations: unknown, headers: Record<string, string> = {}): Promise<{ status: number, json: any }> {
  const res = await app.inject({ method: 'POST', url: '/api/batch', headers, payload: { operations } as Record<string, unknown> })
  return { status: res.statusCode, json: JSON.parse(res.body) }
}

/** Rows of the content tables the suite writes. */
async function counts (app: FastifyInstance): Promise<Record<string, number>> {
  return {
    articles: await countRows(app, 'articles'),
    categories: await countRows(app, 'categories'),
    tags: await countRows(app, 'tags'),
    links: await countRows(app, 'articles_category_lnk')
  }
}

t.test('creates, updates and deletes across types in one request, later ones naming earlier ones by lid', async (t) => {
  const { app } = await build(t, options())
  const old = await app.contentApi.documents(TAG).create({ data: { name: 'old' } })

  const res = await batch(app, [
    { op: 'create', type: 'categories', lid: 'news', data: { name: 'News', rank: 1 } },
    { op: 'create', type: 'tags', lid: 't1', data: { name: 'fresh' } },
    { op: 'create', type: 'articles', lid: 'a1', data: { title: 'Hello', category: { lid: 'news' }, tags: { connect: [{ lid: 't1' }, old.documentId] } }, populate: ['category', 'tags'] },
    { op: 'update', type: 'articles', documentId: { lid: 'a1' }, data: { views: 7 }, status: 'draft' },
    { op: 'update', type: 'homepage', data: { title: 'Welcome' } },
    { op: 'delete', type: 'tags', documentId: old.documentId }
  ])
  t.equal(res.status, 200, JSON.stringify(res.json))
  const [category, tag, article, draft, home, removed] = res.json.data
  t.same(res.json.meta, {})
  t.match(category, { documentId: /^[a-z0-9]{24}$/, name: 'News', rank: 1 }, 'each result is the document the single route answers')
  t.match(tag, { name: 'fresh' })
  t.match(article, { title: 'Hello', category: { documentId: category.documentId }, publishedAt: String }, 'the lid resolved in a relation')
  t.same(article.tags.map((x: any) => x.name).sort(), ['fresh', 'old'], 'lids and documentIds mix in connect')
  t.match(draft, { documentId: article.documentId, views: 7, publishedAt: null }, 'the lid resolved as the documentId of an update')
  t.match(home, { title: 'Welcome' }, 'a single type is updated (created on its first write)')
  t.equal(removed, null, 'a delete answers null')

  const read = await app.inject({ method: 'GET', url: `/api/articles/${article.documentId}?status=draft&populate=category` })
  t.match(JSON.parse(read.body).data, { views: 7, category: { name: 'News' } }, 'everything committed')
  t.equal(await app.contentApi.documents(TAG).findOne({ documentId: old.documentId }), null, 'the delete committed')
  t.equal((await app.contentApi.documents(HOMEPAGE).findFirst())?.title, 'Welcome', 'the single type committed')
})

t.test('a failing third operation leaves no trace of the first two: rows, webhook deliveries, after hooks, change events', async (t) => {
  const receiver = await Receiver.start(t)
  const { app } = await build(t, options({ webhooks: { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create', 'entry.update', 'entry.publish'] }], ...FAST } }))
  const existing = await app.contentApi.documents(CATEGORY).create({ data: { name: 'Existing', rank: 1 } })
  await receiver.waitFor(1)
  const afterHooks: string[] = []
  const beforeHooks: string[] = []
  const changes: string[] = []
  app.contentApi.lifecycles.subscribe({
    beforeCreate (event) { beforeHooks.push(`${event.model.singularName} create`) },
    beforeUpdate (event) { beforeHooks.push(`${event.model.singularName} update`) },
    afterCreate (event) { afterHooks.push(`${event.model.singularName} create`) },
    afterUpdate (event) { afterHooks.push(`${event.model.singularName} update`) }
  })
  for (const uid of [CATEGORY, ARTICLE]) app.contentApi.documents(uid).onChange((e) => { changes.push(`${e.uid} ${e.action}`) })
  const before = await counts(app)
  const deliveries = await countRows(app, 'content_api_webhook_deliveries')

  const res = await batch(app, [
    { op: 'create', type: 'categories', lid: 'c', data: { name: 'New' } },
    { op: 'update', type: 'categories', documentId: existing.documentId, data: { name: 'Renamed' } },
    { op: 'create', type: 'articles', data: { views: 1, category: { lid: 'c' } } }
  ])
  t.equal(res.status, 400)
  t.equal(res.json.error.name, 'ValidationError')
  t.equal(res.json.error.details.operation, 2, 'details name the failing operation')
  t.match(res.json.error.details.errors, [{ path: ['title'] }], 'and carry its own details')

  t.same(await counts(app), before, 'no row of the first two operations')
  t.equal((await app.contentApi.documents(CATEGORY).findOne({ documentId: existing.documentId }))?.name, 'Existing', 'the update rolled back')
  t.equal(await countRows(app, 'content_api_webhook_deliveries'), deliveries, 'no webhook delivery queued')
  t.same(afterHooks, [], 'no after hook fired')
  t.same(beforeHooks, ['category create', 'category update', 'article create'], 'before hooks ran, as before a refused single write')
  t.same(changes, [], 'no change event')

  beforeHooks.length = 0
  const ok = await batch(app, [
    { op: 'create', type: 'categories', lid: 'c', data: { name: 'New' } },
    { op: 'update', type: 'categories', documentId: existing.documentId, data: { name: 'Renamed' } },
    { op: 'create', type: 'articles', data: { title: 'Fine', category: { lid: 'c' } } }
  ])
  t.equal(ok.status, 200)
  t.same(afterHooks, ['category create', 'category update', 'article create'], 'after hooks fire once every operation has written, in order')
  t.same(changes, [`${CATEGORY} create`, `${CATEGORY} update`, `${ARTICLE} create`], 'change events after the commit')
  const events = (await receiver.waitFor(5)).slice(1).map((r) => r.json.event)
  t.same(events.sort(), ['entry.create', 'entry.create', 'entry.publish', 'entry.update'], 'the committed batch\'s webhook events')
})

t.test('an after hook that throws rolls the whole batch back, naming its operation', async (t) => {
  const { app } = await build(t, options())
  app.contentApi.lifecycles.subscribe({ models: [TAG], afterCreate (event) { if (event.result?.name === 'bad') throw new Error('refused') } })
  app.contentApi.lifecycles.subscribe({ models: [CATEGORY], afterCreate (event) { if (event.result?.name === 'bad') throw new ApplicationError('Not this name') } })
  const before = await counts(app)
  const res = await batch(app, [
    { op: 'create', type: 'tags', data: { name: 'fine' } },
    { op: 'create', type: 'categories', data: { name: 'bad' } }
  ])
  t.equal(res.status, 400)
  t.match(res.json.error, { name: 'ApplicationError', message: 'Not this name', details: { operation: 1 } })
  t.same(await counts(app), before)
  const crash = await batch(app, [{ op: 'create', type: 'tags', data: { name: 'bad' } }])
  t.equal(crash.status, 500, 'an application\'s own error is a 500, as in a single write')
  t.same(await counts(app), before)
})

t.test('permissions: each operation checked as its route; one refusal refuses the batch', async (t) => {
  const { app } = await build(t, options({ publicAccess: false }))
  const permissions = app.contentApi.permissions
  await permissions.grant('public', [`${CATEGORY}.create`, `${TAG}.create`, `${CATEGORY}.find`])
  const before = await counts(app)

  const refused = await batch(app, [
    { op: 'create', type: 'categories', data: { name: 'one' } },
    { op: 'create', type: 'articles', data: { title: 'no permission' } }
  ])
  t.equal(refused.status, 403)
  t.same(refused.json.error, { status: 403, name: 'ForbiddenError', message: 'Forbidden', details: { operation: 1 } })
  t.same(await counts(app), before, 'nothing written')

  // Row-level: updates only of categories ranked under 10, checked in the transaction.
  await permissions.grant('public', [`${CATEGORY}.update`], { conditions: { rank: { $lt: 10 } } })
  const low = await app.contentApi.documents(CATEGORY).create({ data: { name: 'low', rank: 1 } })
  const high = await app.contentApi.documents(CATEGORY).create({ data: { name: 'high', rank: 50 } })
  const rows = await counts(app)
  const row = await batch(app, [
    { op: 'create', type: 'tags', data: { name: 'kept?' } },
    { op: 'update', type: 'categories', documentId: low.documentId, data: { name: 'low 2' } },
    { op: 'update', type: 'categories', documentId: high.documentId, data: { name: 'high 2' } }
  ])
  const single = await app.inject({ method: 'PUT', url: `/api/categories/${high.documentId}`, payload: { data: { name: 'high 2' } } })
  t.equal(row.status, single.statusCode, 'the status the single route answers')
  t.equal(row.json.error.details.operation, 2)
  t.same(await counts(app), rows)
  t.equal((await app.contentApi.documents(CATEGORY).findOne({ documentId: low.documentId }))?.name, 'low', 'the allowed update rolled back too')

  const moved = await batch(app, [{ op: 'update', type: 'categories', documentId: low.documentId, data: { rank: 20 } }])
  t.equal(moved.status, 403, 'an update may not take a row out of its conditions')

  const drafts = await batch(app, [{ op: 'create', type: 'tags', data: { name: 'x' } }], { authorization: 'Bearer nonsense' })
  t.equal(drafts.status, 401, 'bad credentials are the request\'s refusal')
  t.notOk('operation' in drafts.json.error.details)
})

t.test('route settings: policies apply per operation, auth: false opens, controllers and middlewares are not batched', async (t) => {
  const calls: string[] = []
  const { app } = await build(t, options({
    publicAccess: false,
    policies: { 'no-secret': (ctx: any) => { calls.push(`${String(ctx.uid)} ${ctx.action} ${ctx.params.documentId ?? ''}`); return ctx.state.auth.principal.kind === 'public' } },
    rest: {
      batch: { enabled: true },
      routes: {
        [CATEGORY]: { config: { create: { policies: ['no-secret'] }, update: { auth: false, policies: [(ctx: any) => ctx.params.documentId !== 'locked'] } } },
        [TAG]: { controllers: { create: async (_req, _reply, core) => await core() } },
        [ARTICLE]: { except: ['delete'], config: { update: { middlewares: [() => {}] } } }
      }
    }
  }))
  await app.contentApi.permissions.grant('public', [`${CATEGORY}.create`, `${TAG}.create`, `${ARTICLE}.update`, `${ARTICLE}.delete`])
  const cat = await app.contentApi.documents(CATEGORY).create({ data: { name: 'c' } })

  const ok = await batch(app, [
    { op: 'create', type: 'categories', lid: 'c', data: { name: 'with policy' } },
    { op: 'update', type: 'categories', documentId: cat.documentId, data: { name: 'open route' } },
    { op: 'update', type: 'categories', documentId: { lid: 'c' }, data: { rank: 2 } }
  ])
  t.equal(ok.status, 200, JSON.stringify(ok.json))
  t.same(calls, [`${CATEGORY} create `], 'the route\'s policy ran with its context')

  const policy = await batch(app, [
    { op: 'create', type: 'categories', data: { name: 'a' } },
    { op: 'update', type: 'categories', documentId: 'locked', data: { name: 'b' } }
  ])
  t.match(policy, { status: 403, json: { error: { name: 'PolicyError', details: { operation: 1 } } } })

  const controller = await batch(app, [{ op: 'create', type: 'tags', data: { name: 'x' } }])
  t.match(controller, { status: 400, json: { error: { message: /controller override/, details: { operation: 0 } } } })
  const middleware = await batch(app, [{ op: 'update', type: 'articles', documentId: 'x', data: { title: 'x' } }])
  t.match(middleware, { status: 400, json: { error: { message: /middlewares/, details: { operation: 0 } } } })
  const excepted = await batch(app, [{ op: 'delete', type: 'articles', documentId: 'x' }])
  t.match(excepted, { status: 404, json: { error: { name: 'NotFoundError', details: { operation: 0 } } } }, 'a route left out by except is not served')
})

t.test('input: the body, each operation, lids and the bounds, refused with the operation\'s index before any SQL', async (t) => {
  const { app } = await build(t, options({ rest: { batch: { enabled: true, maxOperations: 3 } } }))
  const before = await counts(app)
  const cases: Array<[string, unknown, number, Record<string, unknown>]> = [
    ['too many operations', Array.from({ length: 4 }, () => ({ op: 'create', type: 'tags', data: {} })), 400, { limit: 'rest.batch.maxOperations', max: 3 }],
    ['no operations', [], 400, { path: 'operations' }],
    ['an unknown op', [{ op: 'upsert', type: 'tags', data: {} }], 400, { operation: 0, path: 'op' }],
    ['an unknown key', [{ op: 'create', type: 'tags', data: {}, documentId: 'x' }], 400, { operation: 0, key: 'documentId' }],
    ['an unknown type', [{ op: 'create', type: 'tags', data: {} }, { op: 'create', type: 'nopes', data: {} }], 404, { operation: 1, path: 'type' }],
    ['a built-in type', [{ op: 'create', type: 'users', data: {} }], 404, { operation: 0 }],
    ['no data', [{ op: 'create', type: 'tags' }], 400, { operation: 0, path: 'data' }],
    ['no documentId', [{ op: 'update', type: 'tags', data: {} }], 400, { operation: 0, path: 'documentId' }],
    ['create on a single type', [{ op: 'create', type: 'homepage', data: {} }], 400, { operation: 0 }],
    ['a documentId on a single type', [{ op: 'update', type: 'homepage', documentId: 'x', data: {} }], 400, { operation: 0, path: 'documentId' }],
    ['an unknown lid', [{ op: 'create', type: 'tags', data: {} }, { op: 'update', type: 'tags', documentId: { lid: 'x' }, data: {} }], 400, { operation: 1, lid: 'x' }],
    ['a lid used before its create', [{ op: 'create', type: 'articles', data: { title: 'a', category: { lid: 'c' } } }, { op: 'create', type: 'categories', lid: 'c', data: {} }], 400, { operation: 0, lid: 'c' }],
    ['a lid declared twice', [{ op: 'create', type: 'tags', lid: 'a', data: {} }, { op: 'create', type: 'tags', lid: 'a', data: {} }], 400, { operation: 1, lid: 'a' }],
    ['an empty lid', [{ op: 'create', type: 'tags', lid: '', data: {} }], 400, { operation: 0, path: 'lid' }],
    ['a lid beside a documentId', [{ op: 'create', type: 'categories', lid: 'c', data: {} }, { op: 'create', type: 'articles', data: { title: 'a', category: { lid: 'c', documentId: 'x' } } }], 400, { operation: 1 }],
    ['an invalid value', [{ op: 'create', type: 'tags', data: {} }, { op: 'create', type: 'categories', data: { rank: 'high' } }], 400, { operation: 1 }]
  ]
  for (const [name, operations, status, details] of cases) {
    const res = await batch(app, operations)
    t.equal(res.status, status, `${name}: ${status}`)
    t.match(res.json, { data: null, error: { status, details } }, `${name}: ${JSON.stringify(res.json.error)}`)
  }
  for (const body of ['[]', '{"operations":{}}', '{"operations":[],"extra":1}', 'null']) {
    const res = await app.inject({ method: 'POST', url: '/api/batch', headers: { 'content-type': 'application/json' }, payload: body })
    t.equal(res.statusCode, 400, `body ${body}`)
  }
  const big = await app.inject({ method: 'POST', url: '/api/batch', payload: { operations: [{ op: 'create', type: 'tags', data: { name: 'x'.repeat(2_000_000) } }] } })
  t.equal(big.statusCode, 413, 'the body limit (limits.bodyBytes) holds')
  const get = await app.inject({ method: 'GET', url: '/api/batch' })
  t.equal(get.statusCode, 404, 'POST only')
  t.same(await counts(app), before, 'nothing written by any of them')

  // As on the single route (Strapi 5): a status other than `published` is not refused, it writes the draft only.
  const draft = await batch(app, [{ op: 'create', type: 'articles', data: { title: 'x' }, status: 'sometimes' }])
  t.equal(draft.status, 200, JSON.stringify(draft.json))
  t.equal(draft.json.data[0].publishedAt, null, 'a draft')
})

t.test('two batches writing the same document concurrently lose no write', async (t) => {
  const { app } = await build(t, options())
  const doc = await app.contentApi.documents(ARTICLE).create({ data: { title: 'start', views: 0 } })
  const writers = Array.from({ length: 6 }, async (_, i) => await batch(app, [
    { op: 'create', type: 'tags', lid: 't', data: { name: `tag ${i}` } },
    { op: 'update', type: 'articles', documentId: doc.documentId, data: { tags: { connect: [{ lid: 't' }] } } }
  ]))
  const results = await Promise.all(writers)
  t.same(results.map((r) => r.status), [200, 200, 200, 200, 200, 200])
  const read = await app.contentApi.documents(ARTICLE).findOne({ documentId: doc.documentId, populate: ['tags'] })
  t.equal((read?.tags as unknown[]).length, 6, 'every batch\'s connect is kept')
})

t.test('off by default; a path that is a content type\'s is refused at registration', async (t) => {
  const { app } = await build(t, { ...relationOptions, graphql: false, upload: { enabled: false } })
  t.equal((await app.inject({ method: 'POST', url: '/api/batch', payload: { operations: [] } })).statusCode, 404, 'no route unless rest.batch.enabled')

  const batchType = defineContentType({ kind: 'collectionType', collectionName: 'batches', info: { singularName: 'batch-run', pluralName: 'batch', displayName: 'Batch' }, attributes: { name: { type: 'string' } } })
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const other = Fastify({ logger: false })
  t.teardown(async () => { await other.close() })
  let error: unknown
  try {
    await other.register(contentApi, { models: [batchType], db: database.db, rest: { batch: { enabled: true } } })
    await other.ready()
  } catch (err) {
    error = err
  }
  t.ok(error instanceof ConfigurationError, 'a ConfigurationError')
  t.match((error as Error).message, /rest\.batch\.path "\/batch" is the path of the content type "batch"'s routes/)

  for (const [batch, problem] of [
    [{ enabled: true, size: 3 }, /rest\.batch/],
    [{ enabled: true, path: 'batch' }, /rest\.batch\.path/],
    [{ enabled: true, maxOperations: 0 }, /rest\.batch\.maxOperations/]
  ] as const) {
    const bad = Fastify({ logger: false })
    t.teardown(async () => { await bad.close() })
    const err = await bad.register(contentApi, { models: [], db: database.db, rest: { batch: batch as any } }).then(() => null, (e: unknown) => e)
    t.ok(err instanceof ConfigurationError && problem.test((err as Error).message), `refused: ${JSON.stringify(batch)}`)
  }
})

t.test('the route is in the OpenAPI document', async (t) => {
  const { app } = await build(t, options(), async (app) => { await app.register(swagger, { openapi: {} }) })
  const spec = app.swagger() as Record<string, any>
  const post = spec.paths['/api/batch']?.post
  t.ok(post, 'POST /api/batch is documented')
  t.same(post.tags, ['Batch'])
  t.match(post.requestBody.content['application/json'].schema, { properties: { operations: { type: 'array', maxItems: 100 } } })
})
