import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import contentApi from '../../lib/index.js'
import { createTestDatabase } from '../helpers/database.js'
import { isAuthLookup, StatementCounter } from '../helpers/statements.js'
import { oracleOptions } from '../fixtures/oracle/models.js'
import { seedOracle } from '../fixtures/oracle/seed.js'

/**
 * "One SQL statement per request": populate, filters through relations, sort through relations,
 * counts and pagination all compile into a single statement, however deep the populate and
 * however many rows come back. The one exception is `limits.maxRows` (lib/compiler/row-budget.ts):
 * a REST read whose populate nests more than one level deep, and whose rows the query alone does
 * not bound, runs its row-budget probe first, as a statement of its own; a one-level populate
 * checks it inside the read's statement. The plugin's database is the test database's Kysely
 * wrapped with a plugin that sees every query Kysely executes (raw `sql` included), so nothing
 * can slip past.
 */

async function buildCounted (t: { teardown (fn: () => Promise<void>): void }): Promise<{ app: FastifyInstance, counter: StatementCounter }> {
  const database = await createTestDatabase()
  const counter = new StatementCounter()
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, {
    ...oracleOptions,
    auth: { jwtSecret: 'statements-jwt-secret-0123456789', apiTokenSalt: 'statements-token-salt-0123456789', rateLimit: false },
    db: database.db.withPlugin(counter)
  })
  await app.ready()
  // Content is private by default: the public role gets every content action, and reading files
  // (populating media needs it), as the oracle's public role had.
  const actions = [...app.contentApi.registry.contentTypes.values()].filter((ct) => ct.uid.startsWith('api::'))
    .flatMap((ct) => ['find', 'findOne', 'create', 'update', 'delete'].map((action) => `${ct.uid}.${action}`))
  await app.contentApi.permissions.grant('public', [...actions, 'plugin::upload.content-api.find', 'plugin::upload.content-api.findOne'])
  return { app, counter }
}

const DEEP = '/api/articles?populate[category][populate][articles][populate][authors]=true'

t.test('the counter sees every statement, writes included', async (t) => {
  const { app, counter } = await buildCounted(t)
  const written = await counter.during(async () => {
    await app.inject({ method: 'POST', url: '/api/categories', payload: { data: { name: 'Counted' } } })
  })
  t.ok(written.length > 1, `a create runs several statements in its transaction (${written.length})`)
  t.ok(written.some((s) => s.kind === 'CompiledQuery'), 'the insert, sent compiled (the direct create), is seen')
  const found = await app.contentApi.documents('api::category.category').findFirst({ filters: { name: 'Counted' } })
  t.ok(found !== null, 'and it wrote the category')
  t.ok(written.every((s) => !isAuthLookup(s)), 'permission lookups are not counted')
})

t.test('one read statement per request whatever the populate depth, after the row budget\'s probe for a nested populate', async (t) => {
  const { app, counter } = await buildCounted(t)

  const empty = await counter.during(async () => {
    const res = await app.inject(DEEP)
    t.equal(res.statusCode, 200)
    t.same(res.json().data, [], 'no article yet')
  })
  t.same(empty.map((s) => s.kind), ['SelectQueryNode', 'SelectQueryNode'], 'three levels of populate on an empty table: the probe, then the read')

  const seeded = await seedOracle(app)

  const deep = await counter.during(async () => {
    const res = await app.inject(`${DEEP}&pagination[pageSize]=100`)
    t.equal(res.statusCode, 200)
    const data = res.json().data as Array<{ category: { articles: Array<{ authors: unknown[] }> } | null }>
    t.equal(data.length, 50, 'every published en article')
    const withCategory = data.filter((d) => d.category !== null)
    t.ok(withCategory.length > 0 && withCategory.every((d) => Array.isArray(d.category!.articles)), 'category.articles populated')
    t.ok(withCategory.some((d) => d.category!.articles.some((a) => a.authors.length > 0)), 'and their authors')
  })
  t.same(deep.map((s) => s.kind), ['SelectQueryNode', 'SelectQueryNode'], 'three levels of populate over 50 articles: still the probe and one read')
  for (const table of ['articles', 'articles_category_lnk', 'categories', 'articles_authors_lnk', 'authors']) {
    t.ok(deep[1].tables.includes(table), `the read reads ${table}`)
  }
  t.ok(deep[0].tables.includes('articles_authors_lnk'), 'the probe counts the authors through their links')
  t.notOk(deep[0].tables.includes('authors'), 'without reading the authors themselves')

  const bounded = await counter.during(async () => {
    t.equal((await app.inject('/api/articles?populate[category][populate][articles][limit]=3&pagination[pageSize]=100')).statusCode, 200)
  })
  t.equal(bounded.length, 1, 'a nested populate the query bounds (a limit per parent): no probe, one statement')

  const one = await counter.during(async () => {
    const res = await app.inject(`/api/articles/${seeded.articles[0]}?populate=*`)
    t.equal(res.statusCode, 200)
    const data = res.json().data
    for (const key of ['category', 'authors', 'cover', 'seo', 'blocks', 'localizations']) t.ok(key in data, `populate=* renders ${key}`)
  })
  t.same(one.map((s) => s.kind), ['SelectQueryNode'], 'GET /api/articles/:id?populate=*: one statement, the probe inside it')

  const single = await counter.during(async () => {
    const res = await app.inject('/api/homepage?populate[featuredArticles][populate]=*')
    t.equal(res.statusCode, 200)
  })
  t.equal(single.length, 2, 'a single type with nested populate: the probe, then one statement')
})

t.test('the statement count does not grow with the number of rows', async (t) => {
  const { app, counter } = await buildCounted(t)
  await seedOracle(app)
  // [url, statements]: two where a nested populate without a per-parent limit is probed first.
  const urls: Array<[(size: number) => string, number]> = [
    [(size) => `${DEEP}&pagination[pageSize]=${size}`, 2],
    [(size) => `/api/articles?populate=*&pagination[pageSize]=${size}`, 1],
    [(size) => `/api/articles?populate[authors][sort]=name:desc&populate[authors][limit]=1&populate[category][populate][articles][count]=true&pagination[pageSize]=${size}`, 1],
    [(size) => `/api/articles?filters[category][articles][authors][name][$startsWith]=A&filters[seo][metaTitle][$notNull]=true&sort=category.name:desc&pagination[pageSize]=${size}`, 1],
    [(size) => `/api/categories?populate[articles][populate][blocks]=true&populate[articles][populate][seo]=true&pagination[pageSize]=${size}`, 2],
    [(size) => `/api/articles?populate[blocks][on][shared.quote][fields][0]=text&populate[cover][fields][0]=name&pagination[start]=0&pagination[limit]=${size}&pagination[withCount]=false`, 1]
  ]
  for (const [url, statements] of urls) {
    const counts: number[] = []
    for (const size of [1, 10, 100]) {
      counts.push((await counter.during(async () => {
        const res = await app.inject(url(size))
        t.equal(res.statusCode, 200, url(size))
      })).length)
    }
    t.same(counts, [statements, statements, statements], `${url(100)}: ${statements} statement(s) for 1, 10 and 100 rows`)
  }
})

t.test('the document service reads in one statement too (application code has no row budget unless it asks)', async (t) => {
  const { app, counter } = await buildCounted(t)
  const seeded = await seedOracle(app)
  const articles = app.contentApi.documents('api::article.article')
  const many = await counter.during(async () => {
    const docs = await articles.findMany({ populate: { category: { populate: { articles: { populate: ['authors'] } } } } })
    t.equal(docs.length, 50)
  })
  t.equal(many.length, 1, 'findMany with three levels of populate')
  const one = await counter.during(async () => {
    t.ok(await articles.findOne({ populate: '*', documentId: seeded.articles[0] }))
  })
  t.equal(one.length, 1, 'findOne with populate=*')
  const limited = await counter.during(async () => {
    const docs = await articles.findMany({ populate: { category: { populate: { articles: { populate: ['authors'] } } } }, limits: true })
    t.equal(docs.length, 50)
  })
  t.equal(limited.length, 2, 'with `limits: true`, the nested populate is probed first')
})
