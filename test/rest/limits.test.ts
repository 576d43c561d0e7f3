import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import contentApi from '../../lib/index.js'
import { createTestDatabase } from '../helpers/database.js'
import { StatementCounter } from '../helpers/statements.js'
import { oracleOptions } from '../fixtures/oracle/models.js'

/**
 * The `limits` options through the REST API (docs/operations.md, "Bounds on a request's work"):
 * every bound answers 400 `LimitError` (413 for the body size) in Strapi's envelope, with
 * `details: { limit, max }` naming the option, and before any SQL runs (`maxRows` after its
 * probe, never the read). The limits here are small, so small data reaches them.
 *
 * The data: categories C1 (articles A1-A4) and C2 (A5, A6); authors U1-U4; each article has one
 * or two authors (9 links); A1 also in French.
 */

const LIMITS = { populateDepth: 3, maxRows: 20, queryLength: 300, queryParameters: 10, bodyBytes: 2048, inputDepth: 8 }
const ARTICLE = 'api::article.article'

interface Setup { app: FastifyInstance, counter: StatementCounter, ids: Record<string, string> }

async function setup (t: Test): Promise<Setup> {
  const database = await createTestDatabase()
  const counter = new StatementCounter()
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, {
    ...oracleOptions,
    graphql: false,
    limits: LIMITS,
    auth: { ...oracleOptions.auth, rateLimit: false },
    db: database.db.withPlugin(counter)
  })
  await app.ready()
  await app.contentApi.permissions.grant('public', [
    ...['api::article.article', 'api::category.category', 'api::author.author'].flatMap((uid) => [`${uid}.find`, `${uid}.findOne`]),
    `${ARTICLE}.create`, 'plugin::upload.content-api.find'
  ])
  const ids: Record<string, string> = {}
  const create = async (uid: string, name: string, data: Record<string, unknown>): Promise<void> => {
    ids[name] = (await app.contentApi.documents(uid).create({ data })).documentId
  }
  for (const name of ['C1', 'C2']) await create('api::category.category', name, { name })
  for (const name of ['U1', 'U2', 'U3', 'U4']) await create('api::author.author', name, { name })
  const links: Array<[string, string, string[]]> = [
    ['A1', 'C1', ['U1', 'U2']], ['A2', 'C1', ['U1']], ['A3', 'C1', ['U2', 'U3']], ['A4', 'C1', ['U3']], ['A5', 'C2', ['U4', 'U1']], ['A6', 'C2', ['U4']]
  ]
  for (const [title, category, authors] of links) {
    await create(ARTICLE, title, { title, category: ids[category], authors: authors.map((a) => ids[a]), seo: { metaTitle: title } })
  }
  await app.contentApi.documents(ARTICLE).update({ documentId: ids.A1, locale: 'fr', data: { title: 'A1 fr' } })
  return { app, counter, ids }
}

/** The request's answer, and the statements it ran. */
async function call (s: Setup, options: { method?: 'GET' | 'POST', url: string, payload?: string | Buffer, type?: string }) {
  let response!: Awaited<ReturnType<FastifyInstance['inject']>>
  const statements = await s.counter.during(async () => {
    response = await s.app.inject({
      method: options.method ?? 'GET',
      url: options.url,
      payload: options.payload,
      headers: options.payload === undefined ? {} : { 'content-type': options.type ?? 'application/json' }
    })
  })
  return { status: response.statusCode, body: response.json(), statements }
}

/** A 400 naming `limits.<name>` in the envelope, answered before any SQL. */
function limited (t: Test, answer: Awaited<ReturnType<typeof call>>, name: keyof typeof LIMITS, what: string, sql = 0): void {
  t.equal(answer.status, 400, `${what}: 400`)
  t.match(answer.body, { data: null, error: { status: 400, name: 'ValidationError', message: new RegExp(`limits\\.${name} is ${LIMITS[name]}`), details: { limit: `limits.${name}`, max: LIMITS[name] } } }, `${what}: the envelope names limits.${name}`)
  t.equal(answer.statements.length, sql, `${what}: ${sql === 0 ? 'no SQL ran' : `${sql} statement(s) ran`}`)
}

const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n)

t.test('the query string: limits.queryLength and limits.queryParameters', async (t) => {
  const s = await setup(t)
  limited(t, await call(s, { url: `/api/articles?filters[title][$eq]=${'x'.repeat(300)}` }), 'queryLength', 'a 300+ character query string')
  t.equal((await call(s, { url: `/api/articles?filters[title][$eq]=${'x'.repeat(270)}` })).status, 200, 'within the length')
  const params = (n: number): string => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&')
  limited(t, await call(s, { url: `/api/articles?${params(11)}` }), 'queryParameters', '11 parameters')
  t.equal((await call(s, { url: `/api/articles?${params(10)}` })).status, 200, '10 parameters')
  limited(t, await call(s, { url: `/api/upload/files?${params(11)}` }), 'queryParameters', 'and the upload routes')
})

t.test('limits.bodyBytes: a larger body is a 413 in the envelope, whatever its type', async (t) => {
  const s = await setup(t)
  const big = JSON.stringify({ data: { title: 'x'.repeat(3000) } })
  for (const [url, type, payload] of [
    ['/api/articles', 'application/json', big],
    ['/api/articles', 'application/x-www-form-urlencoded', `data[title]=${'x'.repeat(3000)}`],
    ['/api/articles', 'text/plain', 'x'.repeat(3000)],
    ['/api/auth/local', 'application/json', JSON.stringify({ identifier: 'x'.repeat(3000), password: 'x' })],
    ['/api/upload', 'application/json', JSON.stringify({ fileInfo: { name: 'x'.repeat(3000) } })]
  ]) {
    const answer = await call(s, { method: 'POST', url, type, payload })
    t.equal(answer.status, 413, `${url} ${type}: 413`)
    t.same(answer.body, {
      data: null,
      error: { status: 413, name: 'PayloadTooLargeError', message: 'The request body is larger than 2048 bytes (limits.bodyBytes is 2048)', details: { limit: 'limits.bodyBytes', max: 2048 } }
    })
    t.equal(answer.statements.length, 0, 'no SQL ran')
  }
  const fits = JSON.stringify({ data: { title: 'Fits' } })
  t.equal((await call(s, { method: 'POST', url: '/api/articles', payload: fits.padEnd(2048, ' ') })).status, 200, 'exactly 2048 bytes is read')
})

t.test('limits.inputDepth: a body, a form or a query nested deeper is a 400 before anything walks it', async (t) => {
  const s = await setup(t)
  const count = async (): Promise<number> => (await s.app.contentApi.documents(ARTICLE).findMany({ fields: ['id'] })).length
  const before = await count()
  limited(t, await call(s, { method: 'POST', url: '/api/articles', payload: `{"data":{"title":"Deep","tags":${deep(7)}}}` }), 'inputDepth', 'a JSON attribute 9 levels down')
  limited(t, await call(s, { method: 'POST', url: '/api/articles', payload: `{"data":{"title":"Deep","category":${'{"a":'.repeat(7)}1${'}'.repeat(7)}}}` }), 'inputDepth', 'a relation 9 levels down')
  limited(t, await call(s, { method: 'POST', url: '/api/articles', payload: `{"other":${deep(8)},"data":{"title":"Deep"}}` }), 'inputDepth', 'a field the route does not read')
  limited(t, await call(s, { method: 'POST', url: '/api/auth/local', payload: `{"identifier":${deep(8)},"password":"x"}` }), 'inputDepth', 'an auth route\'s body')
  limited(t, await call(s, { method: 'POST', url: '/api/articles', type: 'application/x-www-form-urlencoded', payload: `data${'[a]'.repeat(8)}=1` }), 'inputDepth', 'a form body')
  limited(t, await call(s, { url: `/api/articles?filters${'[$and][0]'.repeat(3)}[title][$eq]=x` }), 'inputDepth', 'query filters')
  t.equal(await count(), before, 'nothing was written')

  const fits = await call(s, { method: 'POST', url: '/api/articles', payload: `{"data":{"title":"Fits","tags":${deep(6)}}}` })
  t.equal(fits.status, 200, '8 levels are read')
  t.same(fits.body.data.tags, JSON.parse(deep(6)))
  t.equal((await call(s, { url: `/api/articles?filters${'[$and][0]'.repeat(2)}[title][$eq]=x` })).status, 200, 'filters within the depth')
})

t.test('limits.inputDepth: the data of a write through the document service, when it asks', async (t) => {
  const s = await setup(t)
  const articles = s.app.contentApi.documents(ARTICLE)
  const tags = JSON.parse(deep(12))
  await t.rejects(articles.create({ data: { title: 'Deep', tags }, limits: true }), { name: 'ValidationError', code: 'FCA_ERR_LIMIT', details: { limit: 'limits.inputDepth', max: 8 } })
  t.same((await articles.create({ data: { title: 'Deep', tags } })).tags, tags, 'application code is not bounded unless it asks')
})

t.test('limits.populateDepth: every form, every kind of attribute, counted in levels', async (t) => {
  const s = await setup(t)
  const { ids } = s
  // Three levels are fine (on A6 alone, to stay within limits.maxRows).
  const ok = async (url: string): Promise<void> => { t.equal((await call(s, { url })).status, 200, url) }
  await ok('/api/articles?filters[title]=A6&populate[category][populate][articles][populate][authors]=true')
  await ok('/api/articles?filters[title]=A6&populate=category.articles.authors')
  await ok('/api/articles?filters[title]=A6&populate[category][populate][articles][populate]=*')
  await ok('/api/articles?filters[title]=A6&populate[category][populate][articles][populate][seo]=true&populate[authors][populate][articles][populate][blocks]=true')
  await ok(`/api/categories/${ids.C1}?populate[articles][populate][localizations][populate]=*`)

  for (const [url, what] of [
    ['/api/articles?populate[category][populate][articles][populate][authors][populate][articles]=true', 'four relations, object form'],
    ['/api/articles?populate=category.articles.authors.articles', 'four relations, dotted form'],
    ['/api/articles?populate[0]=authors&populate[1]=category.articles.category.articles', 'the list form'],
    ['/api/articles?populate[category][populate][articles][populate][category][populate]=*', 'populate=* as the fourth level'],
    ['/api/articles?populate[category][populate][articles][populate][localizations][populate][seo]=true', 'a component as the fourth level, under localizations'],
    [`/api/articles/${ids.A1}?populate=category.articles.authors.articles`, 'a single document']
  ]) limited(t, await call(s, { url }), 'populateDepth', what)

  const before = (await s.app.contentApi.documents(ARTICLE).findMany({ fields: ['id'] })).length
  limited(t, await call(s, { method: 'POST', url: '/api/articles?populate=category.articles.authors.articles', payload: JSON.stringify({ data: { title: 'Refused' } }) }), 'populateDepth', 'the response of a write')
  t.equal((await s.app.contentApi.documents(ARTICLE).findMany({ fields: ['id'] })).length, before, 'nothing was written')
})

t.test('limits.maxRows: the rows of a response, populated rows included', async (t) => {
  const s = await setup(t)
  const { ids } = s
  // 6 articles: a page size over the budget is fine while the rows are not.
  const page = await call(s, { url: '/api/articles?pagination[pageSize]=25' })
  t.equal(page.status, 200)
  t.equal(page.body.data.length, 6)

  // 2 categories + 6 articles + 9 author links = 17: within 20, checked by a probe of its own.
  const nested = await call(s, { url: '/api/categories?populate[articles][populate][authors]=true' })
  t.equal(nested.status, 200, '17 rows')
  t.equal(nested.statements.length, 2, 'the probe, then the read')
  // ... and those authors' articles: 21 more, 38. Only the probe runs.
  limited(t, await call(s, { url: '/api/categories?populate[articles][populate][authors][populate][articles]=true' }), 'maxRows', '38 rows', 1)
  // The same rows as the rendering: the populate's filters and per-parent windows apply.
  const filtered = '/api/categories?populate[articles][filters][title][$in][0]=A1&populate[articles][filters][title][$in][1]=A5&populate[articles][populate][authors][populate][articles]=true'
  t.equal((await call(s, { url: filtered })).status, 200, 'A1 and A5 only: 2 + 2 + 4 + 10 = 18')
  t.equal((await call(s, { url: '/api/categories?populate[articles][limit]=1&populate[articles][populate][authors][populate][articles]=true' })).status, 200, 'one article per category (A1, A5): 18')

  // One level deep, the probe runs inside the read, which renders nothing past the budget.
  limited(t, await call(s, { url: '/api/articles?populate[category]=true&populate[authors]=true' }), 'maxRows', '6 + 6 categories + 9 authors = 21 rows', 1)
  const flat = await call(s, { url: '/api/articles?populate[authors]=true' })
  t.equal(flat.status, 200, '6 + 9 = 15 rows')
  t.equal(flat.statements.length, 1, 'one statement')
  // A static bound within the budget needs no probe: 6 + 6 + 6 * 1 = 18.
  t.equal((await call(s, { url: '/api/articles?pagination[pageSize]=6&populate[category]=true&populate[authors][limit]=1' })).status, 200)

  // One document: C2, A5 and A6, their 3 author links, those authors' 7 articles: 13.
  t.equal((await call(s, { url: `/api/categories/${ids.C2}?populate[articles][populate][authors][populate][articles]=true` })).status, 200)
  limited(t, await call(s, { url: `/api/categories/${ids.C1}?populate[articles][populate][authors][populate][articles]=true` }), 'maxRows', 'C1: 1 + 4 + 6 + 14 = 25 rows', 1)
})

t.test('limits.maxRows counts the rows the caller may see', async (t) => {
  const s = await setup(t)
  // The public role sees U1 only: 2 + 6 + 3 links to U1 + 3 times its 3 articles = 20.
  await s.app.contentApi.permissions.grant('public', ['api::author.author.find'], { conditions: { name: 'U1' } })
  const answer = await call(s, { url: '/api/categories?populate[articles][populate][authors][populate][articles]=true' })
  t.equal(answer.status, 200)
  t.same(answer.body.data.flatMap((c: any) => c.articles.flatMap((a: any) => a.authors.map((u: any) => u.name))), ['U1', 'U1', 'U1'])
})

t.test('limits.maxRows: a write whose response would be over the budget is rolled back', async (t) => {
  const s = await setup(t)
  const articles = s.app.contentApi.documents(ARTICLE)
  const before = (await articles.findMany({ fields: ['id'] })).length
  const answer = await call(s, {
    method: 'POST',
    url: '/api/articles?populate[category][populate][articles][populate][authors]=true',
    payload: JSON.stringify({ data: { title: 'A7', category: s.ids.C1, authors: [s.ids.U1, s.ids.U2, s.ids.U3, s.ids.U4] } })
  })
  // A7, C1, C1's 5 articles and their 10 author links: 17 rows.
  t.equal(answer.status, 200)
  // A8's 4 authors, their 17 articles, and those articles' authors: over.
  const over = await call(s, {
    method: 'POST',
    url: '/api/articles?populate[authors][populate][articles][populate][authors]=true',
    payload: JSON.stringify({ data: { title: 'A8', authors: [s.ids.U1, s.ids.U2, s.ids.U3, s.ids.U4] } })
  })
  t.equal(over.status, 400)
  t.same(over.body.error.details, { limit: 'limits.maxRows', max: 20 })
  t.equal((await articles.findMany({ fields: ['id'] })).length, before + 1, 'A7 was written, A8 was not')
})

t.test('application code is unbounded unless it asks for the limits', async (t) => {
  const s = await setup(t)
  const categories = s.app.contentApi.documents('api::category.category')
  const populate = { articles: { populate: { authors: { populate: { articles: { populate: { category: true } } } } } } }
  t.equal((await categories.findMany({ populate })).length, 2, 'four levels, 59 rows: no bound')
  await t.rejects(categories.findMany({ populate, limits: true }), { code: 'FCA_ERR_LIMIT', details: { limit: 'limits.populateDepth', max: 3 } }, 'with `limits: true`, the REST bounds')
  await t.rejects(categories.findMany({ populate: { articles: { populate: { authors: { populate: { articles: true } } } } }, limits: true }), { name: 'ValidationError', details: { limit: 'limits.maxRows', max: 20 } })
  await t.rejects(categories.findFirst({ populate, limits: true }), { name: 'ValidationError', details: { limit: 'limits.populateDepth' } })
})
