import t from 'tap'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { defineComponent, defineContentType, ValidationError, type Document, type QueryParams } from '../../lib/index.js'
import { build } from '../helpers/build.js'

/**
 * Draft & publish as Strapi v5's document model does it: one row per (documentId, locale,
 * version), the draft with `published_at IS NULL`. Every transition is driven through the document
 * service and, where REST exposes it, through `app.inject()`, and checked both in the answers and
 * in the stored rows.
 */

const seo = defineComponent({
  collectionName: 'components_shared_seos',
  info: { displayName: 'Seo' },
  attributes: { metaTitle: { type: 'string' } }
})

/** Draft & publish, not localized, with a relation to a type without D&P and a component. */
const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string', required: true },
    slug: { type: 'uid', targetField: 'title' },
    views: { type: 'integer' },
    category: { type: 'relation', relation: 'manyToOne', target: 'api::category.category', inversedBy: 'articles' },
    seo: { type: 'component', component: 'shared.seo', repeatable: false }
  }
})

/** No draft & publish: one row per document, always published; it links to D&P articles. */
const category = defineContentType({
  kind: 'collectionType',
  collectionName: 'categories',
  info: { singularName: 'category', pluralName: 'categories', displayName: 'Category' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string' },
    articles: { type: 'relation', relation: 'oneToMany', target: 'api::article.article', mappedBy: 'category' }
  }
})

/** Unidirectional links from a type without D&P to a D&P type (no inverse attribute). */
const shelf = defineContentType({
  kind: 'collectionType',
  collectionName: 'shelves',
  info: { singularName: 'shelf', pluralName: 'shelves', displayName: 'Shelf' },
  options: { draftAndPublish: false },
  attributes: {
    label: { type: 'string' },
    picks: { type: 'relation', relation: 'oneToMany', target: 'api::article.article' }
  }
})

/** Draft & publish and localized, for the locale-scoped transitions. */
const page = defineContentType({
  kind: 'collectionType',
  collectionName: 'pages',
  info: { singularName: 'page', pluralName: 'pages', displayName: 'Page' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: { title: { type: 'string', required: true } }
})

const options = {
  models: [article, category, shelf, page],
  components: { 'shared.seo': seo },
  i18n: { locales: ['en', 'fr'], defaultLocale: 'en' }
}

const ARTICLE = 'api::article.article'
const CATEGORY = 'api::category.category'
const SHELF = 'api::shelf.shelf'
const PAGE = 'api::page.page'
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

type Row = Record<string, any>
type Doc = Record<string, any>

/** The stored rows of one document, by locale (when localized), drafts first, as plain JSON. */
async function versions (app: FastifyInstance, table: string, documentId: string): Promise<Row[]> {
  const { rows } = await sql<Row>`select * from ${sql.table(table)} where document_id = ${documentId} order by id`.execute(app.contentApi.db)
  const key = (r: Row): string => `${String(r.locale ?? '')}:${r.published_at === null ? 0 : 1}`
  return (JSON.parse(JSON.stringify(rows)) as Row[]).sort((a, b) => key(a).localeCompare(key(b)))
}

async function rejection (promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

interface Answer { status: number, json: any }

async function call (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<Answer> {
  const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
  return { status: res.statusCode, json: res.body === '' ? undefined : JSON.parse(res.body) }
}

async function post (app: FastifyInstance, url: string, data: Record<string, unknown>): Promise<Doc> {
  const res = await call(app, 'POST', url, { data })
  if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(res.json)}`)
  return res.json.data
}

/**
 * Read parameters with `populate`, which the document service takes (docs/documents.md) but
 * `QueryParams` does not declare yet.
 */
const withPopulate = (params: QueryParams & { documentId: string, populate: unknown }): QueryParams & { documentId: string } => params

const titles = (docs: ReadonlyArray<Record<string, unknown>>): unknown[] => docs.map((d) => d.title)

t.test('create a draft (status: draft)', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)

  t.test('document service', async (t) => {
    const draft = await articles.create({ data: { title: 'Service draft' }, status: 'draft' })
    t.match(draft, { title: 'Service draft', slug: 'service-draft', publishedAt: null })
    const stored = await versions(app, 'articles', draft.documentId)
    t.equal(stored.length, 1, 'only a draft row')
    t.match(stored[0], { id: draft.id, published_at: null })
    t.notOk(titles(await articles.findMany()).includes('Service draft'), 'invisible to default reads')
    t.equal(await articles.findOne({ documentId: draft.documentId }), null)
    t.equal(await articles.count({ filters: { documentId: draft.documentId } }), 0)
    t.ok(titles(await articles.findMany({ status: 'draft' })).includes('Service draft'), 'visible with status: draft')
    t.match(await articles.findOne({ documentId: draft.documentId, status: 'draft' }), { id: draft.id, title: 'Service draft', publishedAt: null })
    t.equal(await articles.count({ status: 'draft', filters: { documentId: draft.documentId } }), 1)
  })

  t.test('REST ?status=draft', async (t) => {
    const draft = await post(app, '/api/articles?status=draft', { title: 'REST draft' })
    t.match(draft, { title: 'REST draft', publishedAt: null })
    t.equal((await versions(app, 'articles', draft.documentId)).length, 1, 'only a draft row')
    const list = await call(app, 'GET', '/api/articles')
    t.notOk(titles(list.json.data).includes('REST draft'), 'not in the default list')
    t.equal((await call(app, 'GET', `/api/articles/${draft.documentId}`)).status, 404, 'no published version to get')
    t.ok(titles((await call(app, 'GET', '/api/articles?status=draft')).json.data).includes('REST draft'))
    const one = await call(app, 'GET', `/api/articles/${draft.documentId}?status=draft`)
    t.match(one, { status: 200, json: { data: { id: draft.id, documentId: draft.documentId, title: 'REST draft', publishedAt: null } } })
  })
})

t.test('create published (the REST default)', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)

  for (const [via, create] of [
    ['document service', async () => await articles.create({ data: { title: 'Service live', views: 1 } })],
    ['REST', async () => await post(app, '/api/articles', { title: 'REST live', views: 1 })]
  ] as const) {
    t.test(via, async (t) => {
      const doc: Doc = await create()
      t.match(doc.publishedAt, ISO_DATETIME, 'the published version is returned')
      const [draft, published] = await versions(app, 'articles', doc.documentId)
      t.equal((await versions(app, 'articles', doc.documentId)).length, 2, 'a draft and a published row')
      t.equal(draft.published_at, null)
      t.not(published.published_at, null)
      t.equal(published.id, doc.id, 'the returned id is the published row\'s')
      t.ok(draft.id < published.id, 'the draft row is written first, as Strapi does')
      t.equal(draft.document_id, published.document_id, 'one documentId')
      t.equal(draft.title, published.title)
      t.equal(draft.views, published.views)
      const read = await call(app, 'GET', `/api/articles/${doc.documentId}`)
      t.match(read.json.data, { id: doc.id, title: doc.title, publishedAt: ISO_DATETIME })
      const asDraft = await call(app, 'GET', `/api/articles/${doc.documentId}?status=draft`)
      t.match(asDraft.json.data, { id: draft.id, title: doc.title, publishedAt: null }, 'status=draft reads the draft row')
    })
  }
})

t.test('edit the draft while published (status: draft)', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)

  t.test('document service', async (t) => {
    const live = await articles.create({ data: { title: 'Live', views: 10 } })
    const edited = await articles.update({ documentId: live.documentId, data: { title: 'Live (edited)' }, status: 'draft' })
    t.match(edited, { title: 'Live (edited)', views: 10, publishedAt: null })
    t.match(await articles.findOne({ documentId: live.documentId }), { id: live.id, title: 'Live', publishedAt: live.publishedAt, updatedAt: live.updatedAt }, 'the published version is unchanged')
    t.equal((await articles.findOne({ documentId: live.documentId, status: 'draft' }))?.title, 'Live (edited)')
    t.same(titles(await articles.findMany({ filters: { documentId: live.documentId } })), ['Live'])
    t.same(titles(await articles.findMany({ status: 'draft', filters: { title: { $contains: 'edited' } } })), ['Live (edited)'], 'like the oracle\'s "modified" articles')
  })

  t.test('REST PUT ?status=draft', async (t) => {
    const live = await post(app, '/api/articles', { title: 'REST live', views: 3 })
    const res = await call(app, 'PUT', `/api/articles/${live.documentId}?status=draft`, { data: { title: 'REST live (edited)' } })
    t.equal(res.status, 200)
    t.match(res.json.data, { title: 'REST live (edited)', views: 3, publishedAt: null })
    const published = await call(app, 'GET', `/api/articles/${live.documentId}`)
    t.same(published.json.data, live, 'the published version is exactly as it was')
    t.equal((await call(app, 'GET', `/api/articles/${live.documentId}?status=draft`)).json.data.title, 'REST live (edited)')
    const [draft, pub] = await versions(app, 'articles', live.documentId)
    t.equal(draft.title, 'REST live (edited)')
    t.equal(pub.title, 'REST live')
  })

  t.test('REST PUT without status publishes the edit', async (t) => {
    const live = await post(app, '/api/articles', { title: 'Republish me' })
    await call(app, 'PUT', `/api/articles/${live.documentId}?status=draft`, { data: { title: 'Republished' } })
    const res = await call(app, 'PUT', `/api/articles/${live.documentId}`, { data: { views: 5 } })
    t.match(res.json.data, { id: live.id, title: 'Republished', views: 5, publishedAt: ISO_DATETIME })
    t.equal((await versions(app, 'articles', live.documentId)).length, 2)
  })
})

t.test('publish', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const categories = app.contentApi.documents(CATEGORY)
  const travel = await categories.create({ data: { name: 'Travel' } })
  const food = await categories.create({ data: { name: 'Food' } })
  const populate = { category: { fields: ['name'] }, seo: true }

  t.test('a never-published draft: the published row is created from the draft', async (t) => {
    const draft = await articles.create({ data: { title: 'First', views: 1, category: travel.documentId, seo: { metaTitle: 'First SEO' } }, status: 'draft' })
    const result = await articles.publish({ documentId: draft.documentId })
    t.equal(result.documentId, draft.documentId)
    t.equal(result.entries.length, 1)
    t.match(result.entries[0], { documentId: draft.documentId, title: 'First', views: 1, publishedAt: ISO_DATETIME })
    const stored = await versions(app, 'articles', draft.documentId)
    t.equal(stored.length, 2)
    t.equal(stored[0].id, draft.id, 'the draft row stays')
    const published = await articles.findOne(withPopulate({ documentId: draft.documentId, populate }))
    t.match(published, { title: 'First', category: { name: 'Travel' }, seo: { metaTitle: 'First SEO' } }, 'relations and components are copied')
    t.not((published as Doc).seo.id, (await articles.findOne(withPopulate({ documentId: draft.documentId, status: 'draft', populate })) as Doc).seo.id, 'each version owns its own component row')
  })

  t.test('a published document with draft edits: the published row takes the draft\'s values and keeps its id', async (t) => {
    const live = await articles.create({ data: { title: 'Before', views: 1, category: travel.documentId, seo: { metaTitle: 'Before SEO' } } })
    await articles.update({ documentId: live.documentId, data: { title: 'After', views: 2, category: food.documentId, seo: { metaTitle: 'After SEO' } }, status: 'draft' })
    t.match(await articles.findOne(withPopulate({ documentId: live.documentId, populate })), { title: 'Before', category: { name: 'Travel' }, seo: { metaTitle: 'Before SEO' } }, 'before publishing, the published version is untouched')
    const result = await articles.publish({ documentId: live.documentId })
    t.match(result.entries[0], { id: live.id, title: 'After', views: 2 })
    const published = await articles.findOne(withPopulate({ documentId: live.documentId, populate }))
    t.match(published, { id: live.id, title: 'After', views: 2, category: { name: 'Food' }, seo: { metaTitle: 'After SEO' } })
    t.not((published as Doc).publishedAt, live.publishedAt, 'publishedAt is the time of this publication')
    t.equal((await versions(app, 'articles', live.documentId)).length, 2, 'still two rows')
    const food2 = await categories.findOne(withPopulate({ documentId: food.documentId, populate: { articles: { fields: ['title'] } } }))
    t.same(titles((food2 as Doc).articles), ['After'], 'the inverse side sees the published version once')
  })

  t.test('publishing without draft changes is idempotent', async (t) => {
    const live = await articles.create({ data: { title: 'Stable' } })
    await articles.publish({ documentId: live.documentId })
    await articles.publish({ documentId: live.documentId })
    t.equal((await versions(app, 'articles', live.documentId)).length, 2)
    t.match(await articles.findOne({ documentId: live.documentId }), { id: live.id, title: 'Stable' })
  })

  t.test('an unknown document: nothing published', async (t) => {
    const result = await articles.publish({ documentId: 'doesnotexist000000000000' }).catch((err: unknown) => String(err))
    t.same(result, { documentId: 'doesnotexist000000000000', entries: [] })
  })

  t.test('types without draft & publish cannot be published', async (t) => {
    t.type(await rejection(categories.publish({ documentId: travel.documentId })), ValidationError)
    t.type(await rejection(categories.unpublish({ documentId: travel.documentId })), ValidationError)
    t.type(await rejection(categories.discardDraft({ documentId: travel.documentId })), ValidationError)
  })
})

t.test('unpublish', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const live = await articles.create({ data: { title: 'Going away', seo: { metaTitle: 'SEO' } } })
  await articles.update({ documentId: live.documentId, data: { title: 'Going away (draft)' }, status: 'draft' })

  t.same(await articles.unpublish({ documentId: live.documentId }), { documentId: live.documentId, entries: 1 })
  const stored = await versions(app, 'articles', live.documentId)
  t.equal(stored.length, 1, 'the published row is gone')
  t.equal(stored[0].published_at, null, 'the draft is kept')
  t.equal(stored[0].title, 'Going away (draft)', 'with its edits')
  t.equal(await articles.findOne({ documentId: live.documentId }), null)
  t.equal((await call(app, 'GET', `/api/articles/${live.documentId}`)).status, 404)
  t.match(await articles.findOne(withPopulate({ documentId: live.documentId, status: 'draft', populate: { seo: true } })), { title: 'Going away (draft)', seo: { metaTitle: 'SEO' } })
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from components_shared_seos`.execute(app.contentApi.db)
  t.equal(rows[0].n, 1, 'the published row\'s component went with it')
  t.same(await articles.unpublish({ documentId: live.documentId }), { documentId: live.documentId, entries: 0 }, 'unpublishing again removes nothing')

  const republished = await articles.publish({ documentId: live.documentId })
  t.match(republished.entries[0], { title: 'Going away (draft)', publishedAt: ISO_DATETIME }, 'it can be published again')
})

t.test('discardDraft', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const categories = app.contentApi.documents(CATEGORY)
  const travel = await categories.create({ data: { name: 'Travel' } })
  const food = await categories.create({ data: { name: 'Food' } })
  const populate = { category: { fields: ['name'] }, seo: true }

  const live = await articles.create({ data: { title: 'Kept', views: 1, category: travel.documentId, seo: { metaTitle: 'Kept SEO' } } })
  const draftBefore = await articles.findOne({ documentId: live.documentId, status: 'draft' })
  await articles.update({ documentId: live.documentId, data: { title: 'Thrown away', views: 99, category: food.documentId, seo: { metaTitle: 'Thrown SEO' } }, status: 'draft' })

  const result = await articles.discardDraft({ documentId: live.documentId })
  t.equal(result.entries.length, 1)
  t.match(result.entries[0], { id: draftBefore?.id, title: 'Kept', views: 1, publishedAt: null }, 'the draft row is reset, keeping its id')
  t.match(await articles.findOne(withPopulate({ documentId: live.documentId, status: 'draft', populate })), { title: 'Kept', views: 1, category: { name: 'Travel' }, seo: { metaTitle: 'Kept SEO' } }, 'relations and components too')
  t.match(await articles.findOne(withPopulate({ documentId: live.documentId, populate })), { id: live.id, title: 'Kept', category: { name: 'Travel' } }, 'the published version is untouched')
  t.equal((await versions(app, 'articles', live.documentId)).length, 2)

  const draftOnly = await articles.create({ data: { title: 'Never published' }, status: 'draft' })
  t.same(await articles.discardDraft({ documentId: draftOnly.documentId }), { documentId: draftOnly.documentId, entries: [] }, 'nothing to discard to without a published version')
  t.equal((await articles.findOne({ documentId: draftOnly.documentId, status: 'draft' }))?.title, 'Never published')
})

t.test('delete', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const pages = app.contentApi.documents(PAGE)

  t.test('every version goes (service)', async (t) => {
    const doc = await articles.create({ data: { title: 'Doomed', seo: { metaTitle: 'x' } } })
    await articles.update({ documentId: doc.documentId, data: { title: 'Doomed (draft)' }, status: 'draft' })
    t.same(await articles.delete({ documentId: doc.documentId }), { documentId: doc.documentId, entries: 2 })
    t.same(await versions(app, 'articles', doc.documentId), [])
    t.equal(await articles.findOne({ documentId: doc.documentId, status: 'draft' }), null)
  })

  t.test('every version goes (REST)', async (t) => {
    const doc = await post(app, '/api/articles', { title: 'REST doomed' })
    const res = await app.inject({ method: 'DELETE', url: `/api/articles/${doc.documentId}` })
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    t.same(await versions(app, 'articles', doc.documentId), [])
    t.equal((await call(app, 'GET', `/api/articles/${doc.documentId}?status=draft`)).status, 404)
  })

  t.test('a draft-only document', async (t) => {
    const doc = await articles.create({ data: { title: 'Draft doomed' }, status: 'draft' })
    t.same(await articles.delete({ documentId: doc.documentId }), { documentId: doc.documentId, entries: 1 })
    t.same(await versions(app, 'articles', doc.documentId), [])
  })

  t.test('with a locale, only that locale\'s versions (service and REST)', async (t) => {
    const doc = await pages.create({ data: { title: 'Hello' } })
    await pages.update({ documentId: doc.documentId, locale: 'fr', data: { title: 'Bonjour' } })
    t.equal((await versions(app, 'pages', doc.documentId)).length, 4, 'draft and published, en and fr')
    t.same(await pages.delete({ documentId: doc.documentId, locale: 'fr' }), { documentId: doc.documentId, entries: 2 })
    t.same((await versions(app, 'pages', doc.documentId)).map((r) => r.locale), ['en', 'en'])

    await pages.update({ documentId: doc.documentId, locale: 'fr', data: { title: 'Bonjour' } })
    const res = await app.inject({ method: 'DELETE', url: `/api/pages/${doc.documentId}?locale=fr` })
    t.equal(res.statusCode, 204)
    t.same((await versions(app, 'pages', doc.documentId)).map((r) => r.locale), ['en', 'en'], 'REST ?locale=fr')
    t.equal((await call(app, 'GET', `/api/pages/${doc.documentId}`)).json.data.title, 'Hello')

    await call(app, 'DELETE', `/api/pages/${doc.documentId}`)
    t.same(await versions(app, 'pages', doc.documentId), [], 'without a locale: the default locale\'s')
  })

  t.test('locale * deletes every locale', async (t) => {
    const doc = await pages.create({ data: { title: 'All' } })
    await pages.update({ documentId: doc.documentId, locale: 'fr', data: { title: 'Tout' } })
    t.same(await pages.delete({ documentId: doc.documentId, locale: '*' }), { documentId: doc.documentId, entries: 4 })
    t.same(await versions(app, 'pages', doc.documentId), [])
  })
})

t.test('publishedAt in a body is ignored', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const past = '2001-01-01T00:00:00.000Z'

  const draft = await post(app, '/api/articles?status=draft', { title: 'Not published', publishedAt: past })
  t.equal(draft.publishedAt, null, 'a draft stays a draft')
  t.equal((await versions(app, 'articles', draft.documentId)).length, 1)

  const live = await post(app, '/api/articles', { title: 'Published now', publishedAt: past })
  t.not(live.publishedAt, past, 'the publication time is the server\'s')
  t.match(live.publishedAt, ISO_DATETIME)

  const res = await call(app, 'PUT', `/api/articles/${live.documentId}`, { data: { publishedAt: null } })
  t.equal(res.status, 200)
  t.match(res.json.data.publishedAt, ISO_DATETIME, 'publishedAt: null does not unpublish (oracle update-publishedAt-null)')
  t.equal((await versions(app, 'articles', live.documentId)).length, 2)

  const service = await articles.create({ data: { title: 'Service', publishedAt: past }, status: 'draft' })
  t.equal(service.publishedAt, null, 'the document service ignores it too')
})

t.test('types without draft & publish', async (t) => {
  const { app } = await build(t, options)
  const categories = app.contentApi.documents(CATEGORY)

  const created = await categories.create({ data: { name: 'Always' } })
  t.match(created.publishedAt, ISO_DATETIME, 'publishedAt is set on creation')
  const stored = await versions(app, 'categories', created.documentId)
  t.equal(stored.length, 1, 'one row')
  t.not(stored[0].published_at, null)

  const draftRequested = await categories.create({ data: { name: 'Asked as draft' }, status: 'draft' })
  t.match(draftRequested.publishedAt, ISO_DATETIME, 'status: draft does not apply')
  const rest = await post(app, '/api/categories?status=draft', { name: 'REST draft?' })
  t.match(rest.publishedAt, ISO_DATETIME)

  const updated = await call(app, 'PUT', `/api/categories/${created.documentId}?status=draft`, { data: { name: 'Always (edited)' } })
  t.match(updated.json.data, { name: 'Always (edited)', publishedAt: ISO_DATETIME })
  t.equal((await versions(app, 'categories', created.documentId)).length, 1)

  const published = await call(app, 'GET', '/api/categories?sort=name')
  const drafts = await call(app, 'GET', '/api/categories?sort=name&status=draft')
  t.same(drafts.json, published.json, 'status=draft lists the same documents')
  t.equal(published.json.data.length, 3)
  t.equal((await call(app, 'GET', `/api/categories/${created.documentId}?status=draft`)).status, 200)
})

t.test('status=draft on list, get-one and populate', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const categories = app.contentApi.documents(CATEGORY)
  const shelves = app.contentApi.documents(SHELF)

  const travel = await categories.create({ data: { name: 'Travel' } })
  const live = await articles.create({ data: { title: 'Live', category: travel.documentId } })
  const modified = await articles.create({ data: { title: 'Modified', category: travel.documentId } })
  await articles.update({ documentId: modified.documentId, data: { title: 'Modified (draft)' }, status: 'draft' })
  const draft = await articles.create({ data: { title: 'Draft only', category: travel.documentId }, status: 'draft' })
  const shelf = await shelves.create({ data: { label: 'Picks', picks: [live.documentId, modified.documentId, draft.documentId] } })

  t.test('list', async (t) => {
    const published = await call(app, 'GET', '/api/articles?sort=title&fields[0]=title&fields[1]=publishedAt')
    t.same(titles(published.json.data), ['Live', 'Modified'])
    t.ok(published.json.data.every((d: Doc) => ISO_DATETIME.test(d.publishedAt)))
    t.equal(published.json.meta.pagination.total, 2)
    const explicit = await call(app, 'GET', '/api/articles?status=published&sort=title&fields[0]=title&fields[1]=publishedAt')
    t.same(explicit.json, published.json, 'status=published is the default')
    const drafts = await call(app, 'GET', '/api/articles?status=draft&sort=title&fields[0]=title&fields[1]=publishedAt')
    t.same(titles(drafts.json.data), ['Draft only', 'Live', 'Modified (draft)'], 'every document\'s draft, published or not')
    t.ok(drafts.json.data.every((d: Doc) => d.publishedAt === null))
    t.equal(drafts.json.meta.pagination.total, 3)
    t.same(titles(await articles.findMany({ status: 'draft', sort: 'title' })), ['Draft only', 'Live', 'Modified (draft)'])
    t.equal(await articles.count({ status: 'draft' }), 3)
    t.equal(await articles.count(), 2)
  })

  t.test('get one', async (t) => {
    t.match((await call(app, 'GET', `/api/articles/${modified.documentId}?fields[0]=title`)).json.data, { id: modified.id, title: 'Modified' })
    const asDraft = (await call(app, 'GET', `/api/articles/${modified.documentId}?status=draft&fields[0]=title`)).json.data
    t.match(asDraft, { title: 'Modified (draft)' })
    t.not(asDraft.id, modified.id)
    t.equal((await call(app, 'GET', `/api/articles/${draft.documentId}`)).status, 404)
    t.equal((await call(app, 'GET', `/api/articles/${draft.documentId}?status=draft`)).json.data.title, 'Draft only')
  })

  t.test('populated D&P relations follow the status (inverse side)', async (t) => {
    const url = `/api/categories/${travel.documentId}?populate[articles][fields][0]=title&populate[articles][fields][1]=publishedAt&populate[articles][sort]=title`
    const published = (await call(app, 'GET', url)).json.data
    t.same(titles(published.articles), ['Live', 'Modified'])
    t.ok(published.articles.every((a: Doc) => a.publishedAt !== null))
    const drafts = (await call(app, 'GET', `${url}&status=draft`)).json.data
    t.same(titles(drafts.articles), ['Draft only', 'Live', 'Modified (draft)'])
    t.ok(drafts.articles.every((a: Doc) => a.publishedAt === null))
    const list = (await call(app, 'GET', '/api/categories?status=draft&populate[articles][count]=true')).json.data
    t.same(list[0].articles, { count: 3 }, 'counts follow the status too')
    t.same((await call(app, 'GET', '/api/categories?populate[articles][count]=true')).json.data[0].articles, { count: 2 })
  })

  t.test('populated D&P relations follow the status (owner side, unidirectional)', async (t) => {
    const url = `/api/shelves/${shelf.documentId}?populate[picks][fields][0]=title`
    t.same(titles((await call(app, 'GET', url)).json.data.picks), ['Live', 'Modified'], 'stored order, published versions')
    t.same(titles((await call(app, 'GET', `${url}&status=draft`)).json.data.picks), ['Live', 'Modified (draft)', 'Draft only'])
    const populated = await shelves.findOne(withPopulate({ documentId: shelf.documentId, status: 'draft', populate: { picks: { fields: ['title'] } } }))
    t.same(titles((populated as Doc).picks), ['Live', 'Modified (draft)', 'Draft only'], 'through the document service too')
  })

  t.test('publishing the draft-only article makes it appear in published populates', async (t) => {
    await articles.publish({ documentId: draft.documentId })
    const url = `/api/shelves/${shelf.documentId}?populate[picks][fields][0]=title`
    t.same(titles((await call(app, 'GET', url)).json.data.picks), ['Live', 'Modified', 'Draft only'])
    const category = (await call(app, 'GET', `/api/categories/${travel.documentId}?populate[articles][fields][0]=title&populate[articles][sort]=title`)).json.data
    t.same(titles(category.articles), ['Draft only', 'Live', 'Modified'])
    await articles.unpublish({ documentId: draft.documentId })
    t.same(titles((await call(app, 'GET', url)).json.data.picks), ['Live', 'Modified'], 'and disappear when unpublished')
    t.same(titles((await call(app, 'GET', `${url}&status=draft`)).json.data.picks), ['Live', 'Modified (draft)', 'Draft only'], 'the draft keeps its place')
  })

  t.test('the article\'s own relation to a type without D&P ignores the status', async (t) => {
    const asDraft = (await call(app, 'GET', `/api/articles/${draft.documentId}?status=draft&populate[category][fields][0]=name`)).json.data
    t.same(asDraft.category, { id: travel.id, documentId: travel.documentId, name: 'Travel' })
  })
})

t.test('any status but published reads and writes drafts, as Strapi 5\'s document service (defaultToDraft)', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const doc = await articles.create({ data: { title: 'Any' } })
  await articles.update({ documentId: doc.documentId, data: { title: 'Any (edited)' }, status: 'draft' })
  const draftOnly = await articles.create({ data: { title: 'Draft only' }, status: 'draft' })
  const titles = async (url: string): Promise<string[]> => {
    const res = await call(app, 'GET', url)
    t.equal(res.status, 200, url)
    return res.json.data.map((a: { title: string }) => a.title).sort()
  }
  const drafts = await titles('/api/articles?status=draft')
  t.same(drafts, ['Any (edited)', 'Draft only'])
  t.same(await titles('/api/articles'), ['Any'], 'no status: published')
  for (const status of ['archived', '', 'PUBLISHED', 'Draft', 'draft%20']) {
    t.same(await titles(`/api/articles?status=${status}`), drafts, `status=${status} reads drafts`)
  }
  t.same(await titles('/api/articles?status[0]=published'), drafts, 'a list is not "published" either')
  t.equal((await call(app, 'GET', `/api/articles/${draftOnly.documentId}?status=archived`)).json.data.title, 'Draft only', 'get one')
  t.same((await titles('/api/categories?status=archived')), await titles('/api/categories'), 'a type without draft & publish ignores it')

  const created = await call(app, 'POST', '/api/articles?status=archived', { data: { title: 'Created as draft' } })
  t.equal(created.status, 200)
  t.equal(created.json.data.publishedAt, null, 'create: the draft alone')
  t.equal(await articles.findOne({ documentId: created.json.data.documentId }), null, 'nothing published')
  const updated = await call(app, 'PUT', `/api/articles/${doc.documentId}?status=archived`, { data: { title: 'Any (second edit)' } })
  t.equal(updated.json.data.publishedAt, null, 'update: the draft alone')
  t.equal((await articles.findOne({ documentId: doc.documentId }))?.title, 'Any', 'the published version is untouched')
  t.same(await articles.findMany({ status: 'archived' as 'draft' }), await articles.findMany({ status: 'draft' }), 'the document service too')
  t.equal((await articles.create({ data: { title: 'x' }, status: 'archived' as 'draft' })).publishedAt, null)
})

t.test('DELETE: status=draft is a 400 (Strapi: 500), any other status is ignored', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const doc = await articles.create({ data: { title: 'Kept' } })
  const refused = await call(app, 'DELETE', `/api/articles/${doc.documentId}?status=draft`)
  t.same(refused.json, {
    data: null,
    error: { status: 400, name: 'ValidationError', message: 'Cannot delete a draft document', details: { key: 'status', source: 'query', param: 'status' } }
  })
  t.equal(await articles.count({ status: 'draft' }), 1, 'nothing deleted')
  t.equal((await call(app, 'DELETE', `/api/articles/${doc.documentId}?status=archived`)).status, 204)
  t.equal(await articles.count({ status: 'draft' }), 0, 'every version deleted')
  const category = await app.contentApi.documents(CATEGORY).create({ data: { name: 'Gone' } })
  t.equal((await call(app, 'DELETE', `/api/categories/${category.documentId}?status=draft`)).status, 204, 'a type without draft & publish ignores it')
})

t.test('publish and unpublish in one locale (localized D&P type)', async (t) => {
  const { app } = await build(t, options)
  const pages = app.contentApi.documents(PAGE)
  const doc = await pages.create({ data: { title: 'Hello' }, status: 'draft' })
  await pages.update({ documentId: doc.documentId, locale: 'fr', data: { title: 'Bonjour' }, status: 'draft' })

  const fr = await pages.publish({ documentId: doc.documentId, locale: 'fr' })
  t.match(fr.entries, [{ title: 'Bonjour', locale: 'fr' }], 'only the fr version is published')
  t.equal(await pages.findOne({ documentId: doc.documentId }), null, 'en stays a draft')
  t.equal((await pages.findOne({ documentId: doc.documentId, locale: 'fr' }))?.title, 'Bonjour')

  const all = await pages.publish({ documentId: doc.documentId, locale: '*' })
  t.same(all.entries.map((e: Document) => e.locale).sort(), ['en', 'fr'], 'locale * publishes every locale')

  t.same(await pages.unpublish({ documentId: doc.documentId, locale: 'en' }), { documentId: doc.documentId, entries: 1 })
  t.equal(await pages.findOne({ documentId: doc.documentId }), null)
  t.equal((await pages.findOne({ documentId: doc.documentId, locale: 'fr' }))?.title, 'Bonjour', 'fr is still published')
  t.same(await pages.unpublish({ documentId: doc.documentId, locale: '*' }), { documentId: doc.documentId, entries: 1 })
  t.same((await versions(app, 'pages', doc.documentId)).map((r) => [r.locale, r.published_at]), [['en', null], ['fr', null]])
})
