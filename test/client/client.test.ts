import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import qs from 'qs'
import { ContentApiClientError, createClient, toQueryString, type FetchLike } from '../../lib/client/index.js'
import { build } from '../helpers/build.js'
import { components, models } from '../fixtures/typed-models.js'
import type { Schemas } from '../types/generated/content-types.js'

/**
 * `fastify-content-api/client` against a running app over real HTTP (127.0.0.1, a port of the
 * kernel's choosing): Strapi's query syntax serialized as the REST API reads it, every call of a
 * collection and a single type, the auth header, an injected fetch, and errors thrown with
 * Strapi's envelope.
 */

t.test('the query string is what qs writes for Strapi\'s syntax', async (t) => {
  const cases: Array<Record<string, unknown>> = [
    { filters: { $or: [{ title: { $containsi: 'a b' } }, { views: { $gt: 3 } }], category: { name: { $eq: 'x&y=z' } } } },
    { populate: { category: { fields: ['name'], populate: { articles: { fields: ['title'] } } }, blocks: { on: { 'shared.quote': true } } } },
    { sort: ['title:desc', 'views'], pagination: { page: 2, pageSize: 5 }, fields: ['title'], status: 'draft', locale: 'fr' },
    { populate: '*', filters: { views: { $in: [1, 2] }, kind: { $null: true } }, skipped: undefined }
  ]
  for (const params of cases) t.equal(decodeURIComponent(toQueryString(params)), decodeURIComponent(qs.stringify(params, { encodeValuesOnly: true })))
  t.equal(toQueryString({ filters: { publishedAt: { $lt: new Date('2026-01-02T03:04:05.000Z') } } }), 'filters[publishedAt][$lt]=2026-01-02T03%3A04%3A05.000Z')
  t.equal(toQueryString({ fields: [] }), '', 'an empty list is left out')
})

t.test('the client module imports nothing of the server', async (t) => {
  const dir = new URL('../../lib/client/', import.meta.url)
  for (const file of await readdir(dir)) {
    const source = await readFile(new URL(file, dir), 'utf8')
    for (const [statement, from] of source.matchAll(/^(?:import|export)\s[^;]*?from '([^']+)'/gm)) {
      const typeOnly = /^(?:import|export) type /.test(statement)
      t.ok(typeOnly || from.startsWith('./'), `${file}: ${statement.split('\n')[0]}`)
    }
  }
})

t.test('a typed client against a running app', async (t) => {
  const { app } = await build(t, { models, components })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const sent: Array<{ url: string, headers: Record<string, string> }> = []
  const recording: FetchLike = async (url, init) => {
    sent.push({ url, headers: init.headers })
    return await fetch(url, init)
  }
  const api = createClient<Schemas>({ baseUrl: `http://127.0.0.1:${port}/api/`, fetch: recording, headers: { 'x-app': 'test' } })
  const categories = api.collection('categories')
  const articles = api.collection('articles')

  const { data: news } = await categories.create({ name: 'News' })
  t.equal(news.name, 'News')
  const created = await articles.create(
    { title: 'First', views: 10, kind: 'news', category: news.documentId, seo: { metaTitle: 'm' }, blocks: [{ __component: 'shared.quote', text: 'q' }] },
    { populate: ['category'] }
  )
  t.equal(created.data.category?.name, 'News', 'create answers what populate asks')
  for (let i = 0; i < 3; i++) await articles.create({ title: `Other ${i}`, views: i })
  t.equal(sent[0].headers['x-app'], 'test', 'the headers option is sent')
  t.equal(sent[0].headers['content-type'], 'application/json')

  const page = await articles.find({
    filters: { $or: [{ views: { $gte: 10 } }, { title: { $endsWith: '2' } }] },
    populate: { category: { fields: ['name'] }, blocks: { on: { 'shared.quote': { fields: ['text'] } } } },
    fields: ['title', 'views'],
    sort: 'views:desc',
    pagination: { page: 1, pageSize: 1 }
  })
  t.same(page.data.map((a) => a.title), ['First'])
  t.same(page.meta.pagination, { page: 1, pageSize: 1, pageCount: 2, total: 2 })
  t.same(page.data[0].category, { id: page.data[0].category!.id, documentId: news.documentId, name: 'News' })
  t.same(page.data[0].blocks.map((b) => [b.__component, b.text]), [['shared.quote', 'q']])
  t.match(sent.at(-1)!.url, /\?filters\[\$or\]\[0\]\[views\]\[\$gte\]=10&/, 'the bracket form, brackets unencoded')

  const walked: string[] = []
  let after = ''
  for (;;) {
    const { data, meta } = await articles.find({ fields: ['title'], sort: 'title', pagination: { after, pageSize: 3 } })
    walked.push(...data.map((a) => a.title))
    const next = 'next' in meta.pagination ? meta.pagination.next : null
    if (next === null) break
    after = next
  }
  t.same(walked, ['First', 'Other 0', 'Other 1', 'Other 2'], 'a cursor walk: each page\'s next cursor sent back as after')

  const one = await articles.findOne(created.data.documentId, { populate: '*' })
  t.equal(one.data.seo?.metaTitle, 'm')
  t.equal(one.data.cover, undefined, 'populate=* leaves out media the public role may not read')

  const updated = await articles.update(created.data.documentId, { views: 11 }, { fields: ['views'] })
  t.same(updated.data, { id: updated.data.id, documentId: created.data.documentId, views: 11 })

  await articles.delete(created.data.documentId)
  const missing = await articles.findOne(created.data.documentId).catch((err: unknown) => err)
  t.ok(missing instanceof ContentApiClientError, 'an error answer is thrown as ContentApiClientError')
  t.match(missing, { status: 404, name: 'NotFoundError', envelope: { data: null, error: { status: 404, name: 'NotFoundError' } } })

  const invalid = await articles.find({ filters: { nope: 1 } } as never).catch((err: unknown) => err) as ContentApiClientError
  t.match(invalid, { status: 400, name: 'ValidationError', message: 'Invalid key nope', details: { key: 'nope', source: 'query', param: 'filters' } })

  const raw = await api.request<{ data: Array<{ title: string }> }>('GET', '/articles', { query: { fields: ['title'], sort: 'title' } })
  t.same(raw.data.map((a) => a.title), ['Other 0', 'Other 1', 'Other 2'], 'request() calls any route with the same handling')

  const home = api.single('homepage')
  t.equal((await home.update({ headline: 'Hi' })).data.headline, 'Hi')
  t.equal((await home.find({ fields: ['headline'] })).data.headline, 'Hi')
  await home.delete()
  t.match(await home.find().catch((err: unknown) => err), { status: 404 })
})

t.test('the auth option sends a bearer token', async (t) => {
  const { app } = await build(t, { models, components })
  await app.contentApi.permissions.revoke('public', ['api::tag.tag.find'])
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const baseUrl = `http://127.0.0.1:${port}/api`
  const { accessKey } = await app.contentApi.apiTokens.create({ name: 'reader', type: 'read-only' })

  const anonymous = await createClient<Schemas>({ baseUrl }).collection('tags').find().catch((err: unknown) => err)
  t.match(anonymous, { status: 403, name: 'ForbiddenError' })
  let calls = 0
  const tokened = createClient<Schemas>({ baseUrl, auth: async () => { calls++; return accessKey } })
  t.same((await tokened.collection('tags').find()).data, [])
  t.equal(calls, 1, 'a function is asked for the token at each request')
  const untyped = createClient({ baseUrl, auth: accessKey })
  t.same((await untyped.collection('tags').find({ fields: ['label'] })).meta.pagination, { page: 1, pageSize: 25, pageCount: 0, total: 0 })
})

t.test('an answer outside the envelope', async (t) => {
  const proxy: FetchLike = async () => ({ ok: false, status: 502, statusText: 'Bad Gateway', text: async () => '<html>bad gateway</html>' })
  const err = await createClient({ baseUrl: 'http://127.0.0.1:1/api', fetch: proxy }).collection('tags').find().catch((e: unknown) => e)
  t.match(err, { status: 502, name: 'HttpError', message: 'Bad Gateway', details: {} })
})
