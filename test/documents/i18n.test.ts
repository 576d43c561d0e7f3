import t from 'tap'
import { sql } from 'kysely'
import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { ConfigurationError, defineContentType, ValidationError, type QueryParams } from '../../lib/index.js'
import { build } from '../helpers/build.js'

/**
 * Internationalisation as Strapi v5's document model does it: a localized document has one row
 * per locale (and, with draft & publish, per version), all sharing one documentId. The `locale`
 * parameter picks the rows every read and write addresses; non-localized attributes hold one
 * value for all locales; unique values are unique per locale; `localizations` populates the other
 * locales. Fallback chains (`i18n.fallbacks`) are this library's addition.
 */

const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: {
    title: { type: 'string', required: true },
    slug: { type: 'uid', targetField: 'title' },
    code: { type: 'string', unique: true },
    views: { type: 'integer' },
    // Shared by every locale of a document.
    sku: { type: 'string', pluginOptions: { i18n: { localized: false } } },
    price: { type: 'integer', pluginOptions: { i18n: { localized: false } } },
    category: { type: 'relation', relation: 'manyToOne', target: 'api::category.category', inversedBy: 'articles' }
  }
})

/** Neither localized nor draft & publish. */
const category = defineContentType({
  kind: 'collectionType',
  collectionName: 'categories',
  info: { singularName: 'category', pluralName: 'categories', displayName: 'Category' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', unique: true },
    articles: { type: 'relation', relation: 'oneToMany', target: 'api::article.article', mappedBy: 'category' }
  }
})

/** Localized without draft & publish: one row per locale. */
const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
  options: { draftAndPublish: false },
  pluginOptions: { i18n: { localized: true } },
  attributes: {
    text: { type: 'string', required: true },
    shared: { type: 'string', pluginOptions: { i18n: { localized: false } } },
    pinned: { type: 'boolean', default: false, pluginOptions: { i18n: { localized: false } } }
  }
})

const homepage = defineContentType({
  kind: 'singleType',
  collectionName: 'homepages',
  info: { singularName: 'homepage', pluralName: 'homepages', displayName: 'Homepage' },
  options: { draftAndPublish: false },
  pluginOptions: { i18n: { localized: true } },
  attributes: { title: { type: 'string' } }
})

const models = [article, category, note, homepage]
const options = { models, i18n: { locales: ['en', 'fr', 'it'], defaultLocale: 'en' } }

const ARTICLE = 'api::article.article'
const CATEGORY = 'api::category.category'
const NOTE = 'api::note.note'

type Row = Record<string, any>
type Doc = Record<string, any>
interface Answer { status: number, json: any }

async function call (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<Answer> {
  const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
  return { status: res.statusCode, json: res.body === '' ? undefined : JSON.parse(res.body) }
}

async function write (app: FastifyInstance, method: 'POST' | 'PUT', url: string, data: Record<string, unknown>): Promise<Doc> {
  const res = await call(app, method, url, { data })
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.json)}`)
  return res.json.data
}

const list = async (app: FastifyInstance, url: string): Promise<Doc[]> => (await call(app, 'GET', url)).json.data

/** [locale, title] of each document of a list answer. */
const pairs = (docs: Doc[]): Array<[unknown, unknown]> => docs.map((d) => [d.locale, d.title ?? d.text])

/** The stored rows of one document as [locale, published?, column] triples. */
async function stored (app: FastifyInstance, table: string, documentId: string, column: string): Promise<unknown[]> {
  const { rows } = await sql<Row>`select * from ${sql.table(table)} where document_id = ${documentId} order by locale, published_at nulls first`.execute(app.contentApi.db)
  return rows.map((r) => [r.locale, r.published_at !== null, r[column]])
}

const VALIDATION_400 = { data: null, error: { status: 400, name: 'ValidationError' } }

t.test('the locale parameter on reads and writes', async (t) => {
  const { app } = await build(t, options)

  const hello = await write(app, 'POST', '/api/articles', { title: 'Hello', code: 'A' })
  const bonjour = await write(app, 'PUT', `/api/articles/${hello.documentId}?locale=fr`, { title: 'Bonjour', code: 'A' })
  const frOnly = await write(app, 'POST', '/api/articles?locale=fr', { title: 'Seulement', code: 'B' })
  const itOnly = await write(app, 'POST', '/api/articles?locale=it', { title: 'Solo', code: 'C' })

  t.test('create', async (t) => {
    t.equal(hello.locale, 'en', 'no locale: the default locale')
    t.equal(frOnly.locale, 'fr')
    t.not(frOnly.documentId, hello.documentId, 'POST always creates a new document')
    t.same(await stored(app, 'articles', frOnly.documentId, 'title'), [['fr', false, 'Seulement'], ['fr', true, 'Seulement']])
    const ignored = await write(app, 'POST', '/api/articles', { title: 'Data locale', locale: 'fr' })
    t.equal(ignored.locale, 'en', 'data.locale is ignored: the locale comes from the query')
  })

  t.test('update in an existing locale', async (t) => {
    const updated = await write(app, 'PUT', `/api/articles/${hello.documentId}?locale=fr`, { views: 3 })
    t.match(updated, { documentId: hello.documentId, id: bonjour.id, locale: 'fr', title: 'Bonjour', views: 3 })
    t.equal((await call(app, 'GET', `/api/articles/${hello.documentId}`)).json.data.views, null, 'the en version is untouched')
    const en = await write(app, 'PUT', `/api/articles/${hello.documentId}`, { views: 1 })
    t.match(en, { locale: 'en', views: 1 }, 'no locale: the default locale')
  })

  t.test('list', async (t) => {
    t.same(pairs(await list(app, '/api/articles?sort=title')), [['en', 'Data locale'], ['en', 'Hello']], 'no locale: the default locale only')
    t.same(pairs(await list(app, '/api/articles?locale=fr&sort=title')), [['fr', 'Bonjour'], ['fr', 'Seulement']])
    t.same(pairs(await list(app, '/api/articles?locale=it')), [['it', 'Solo']])
    const all = [['fr', 'Bonjour'], ['en', 'Data locale'], ['en', 'Hello'], ['fr', 'Seulement'], ['it', 'Solo']]
    t.same(pairs(await list(app, '/api/articles?locale=*&sort=title')), all, 'locale=* lists every locale')
    t.same(pairs(await list(app, '/api/articles?locale=all&sort=title')), [], 'locale=all is a locale code like any other, as in Strapi 5: no document has it')
    const paged = await call(app, 'GET', '/api/articles?locale=*&sort=title&pagination[pageSize]=2&pagination[page]=2')
    t.same(pairs(paged.json.data), [['en', 'Hello'], ['fr', 'Seulement']])
    t.same(paged.json.meta.pagination, { page: 2, pageSize: 2, pageCount: 3, total: 5 }, 'each locale version counts')
    t.same((await list(app, '/api/articles?locale=*&sort=title')).filter((d) => d.documentId === hello.documentId).map((d) => d.locale), ['fr', 'en'], 'a document appears once per locale')

    const articles = app.contentApi.documents(ARTICLE)
    t.same((await articles.findMany({ locale: 'fr', sort: 'title' })).map((d) => d.title), ['Bonjour', 'Seulement'])
    t.equal((await articles.findMany({ locale: '*' })).length, 5)
    t.equal(await articles.count({ locale: '*' }), 5)
    t.equal(await articles.count({ locale: 'fr' }), 2)
    t.equal(await articles.count(), 2)
  })

  t.test('get one', async (t) => {
    t.match((await call(app, 'GET', `/api/articles/${hello.documentId}`)).json.data, { title: 'Hello', locale: 'en' })
    t.match((await call(app, 'GET', `/api/articles/${hello.documentId}?locale=fr`)).json.data, { id: bonjour.id, title: 'Bonjour', locale: 'fr' })
    t.equal((await call(app, 'GET', `/api/articles/${hello.documentId}?locale=it`)).status, 404, 'no version in that locale')
    t.equal((await call(app, 'GET', `/api/articles/${frOnly.documentId}`)).status, 404, 'a fr-only document has no default-locale version')
    t.equal((await call(app, 'GET', `/api/articles/${hello.documentId}?locale=*`)).status, 404, 'single-document reads take the locale literally')
    const articles = app.contentApi.documents(ARTICLE)
    t.equal((await articles.findOne({ documentId: hello.documentId, locale: 'fr' }))?.title, 'Bonjour')
    t.equal(await articles.findOne({ documentId: frOnly.documentId }), null)
  })

  t.test('delete', async (t) => {
    const doc = await write(app, 'POST', '/api/articles', { title: 'Three locales' })
    await write(app, 'PUT', `/api/articles/${doc.documentId}?locale=fr`, { title: 'Trois langues' })
    await write(app, 'PUT', `/api/articles/${doc.documentId}?locale=it`, { title: 'Tre lingue' })
    t.equal((await call(app, 'DELETE', `/api/articles/${doc.documentId}?locale=fr`)).status, 204)
    t.same((await stored(app, 'articles', doc.documentId, 'title')).map((r: any) => r[0]), ['en', 'en', 'it', 'it'], '?locale=fr: only the fr versions')
    t.equal((await call(app, 'DELETE', `/api/articles/${doc.documentId}`)).status, 204)
    t.same((await stored(app, 'articles', doc.documentId, 'title')).map((r: any) => r[0]), ['it', 'it'], 'no locale: the default locale\'s')
    t.equal((await call(app, 'GET', `/api/articles/${doc.documentId}?locale=it`)).json.data.title, 'Tre lingue')
    t.same(await app.contentApi.documents(ARTICLE).delete({ documentId: doc.documentId, locale: 'it' }), { documentId: doc.documentId, entries: 2 })
  })

  t.test('locale=* on delete removes every locale; locale=all is a locale that is not configured', async (t) => {
    const doc = await write(app, 'POST', '/api/articles', { title: 'Gone' })
    await write(app, 'PUT', `/api/articles/${doc.documentId}?locale=fr`, { title: 'Parti' })
    t.match(await call(app, 'DELETE', `/api/articles/${doc.documentId}?locale=all`), { status: 400, json: VALIDATION_400 }, 'as a write in locale=de is')
    t.equal((await stored(app, 'articles', doc.documentId, 'title')).length, 4, 'locale=all: nothing deleted')
    t.equal((await call(app, 'DELETE', `/api/articles/${doc.documentId}?locale=*`)).status, 204)
    t.same(await stored(app, 'articles', doc.documentId, 'title'), [], 'locale=*')
  })

  t.test('untouched by the tests above', async (t) => {
    t.equal((await call(app, 'GET', `/api/articles/${itOnly.documentId}?locale=it`)).json.data.title, 'Solo')
  })
})

t.test('unknown locales', async (t) => {
  const { app } = await build(t, options)
  const doc = await write(app, 'POST', '/api/articles', { title: 'Hello' })
  const articles = app.contentApi.documents(ARTICLE)

  t.test('reads: an empty list, a 404 (as the oracle records locale-unknown)', async (t) => {
    t.same((await call(app, 'GET', '/api/articles?locale=de')).json, { data: [], meta: { pagination: { page: 1, pageSize: 25, pageCount: 0, total: 0 } } })
    t.equal((await call(app, 'GET', `/api/articles/${doc.documentId}?locale=de`)).status, 404)
    t.same(await articles.findMany({ locale: 'de' }), [])
    t.equal(await articles.findOne({ documentId: doc.documentId, locale: 'de' }), null)
  })

  t.test('writes: 400', async (t) => {
    const create = await call(app, 'POST', '/api/articles?locale=de', { data: { title: 'Hallo' } })
    t.match(create, { status: 400, json: VALIDATION_400 }, 'POST')
    const update = await call(app, 'PUT', `/api/articles/${doc.documentId}?locale=de`, { data: { title: 'Hallo' } })
    t.match(update, { status: 400, json: VALIDATION_400 }, 'PUT')
    const remove = await call(app, 'DELETE', `/api/articles/${doc.documentId}?locale=de`)
    t.match(remove, { status: 400, json: VALIDATION_400 }, 'DELETE')
    await t.rejects(articles.create({ data: { title: 'Hallo' }, locale: 'de' }), ValidationError)
    await t.rejects(articles.update({ documentId: doc.documentId, data: { title: 'Hallo' }, locale: 'de' }), ValidationError)
    t.same((await stored(app, 'articles', doc.documentId, 'title')).map((r: any) => r[0]), ['en', 'en'], 'nothing written')
    t.equal(await articles.count({ locale: '*' }), 1)
  })

  t.test('a non-string locale is a 400', async (t) => {
    t.match(await call(app, 'GET', '/api/articles?locale[a]=en'), { status: 400, json: VALIDATION_400 })
    t.match(await call(app, 'GET', '/api/articles?locale[0][a]=en'), { status: 400, json: VALIDATION_400 }, 'in a list too')
    t.match(await call(app, 'GET', `/api/articles/${doc.documentId}?locale[a]=en`), { status: 400, json: VALIDATION_400 })
    t.match(await call(app, 'GET', `/api/articles/${doc.documentId}?locale[0]=en&locale[1]=fr`), { status: 400, json: VALIDATION_400 },
      'one document takes one locale, as Strapi\'s findOne does')
  })
})

t.test('a list of locales on a list reads each of them (Strapi: locale in (...))', async (t) => {
  const { app } = await build(t, options)
  const doc = await write(app, 'POST', '/api/articles', { title: 'Hello' })
  await write(app, 'PUT', `/api/articles/${doc.documentId}?locale=fr`, { title: 'Bonjour' })
  await write(app, 'PUT', `/api/articles/${doc.documentId}?locale=it`, { title: 'Ciao' })
  await write(app, 'POST', '/api/articles?locale=fr', { title: 'Salut' })
  const list = async (query: string): Promise<{ titles: string[], total: number }> => {
    const res = await call(app, 'GET', `/api/articles?sort=title&${query}`)
    t.equal(res.status, 200, query)
    return { titles: res.json.data.map((d: { title: string }) => d.title), total: res.json.meta.pagination.total }
  }
  t.same(await list('locale[0]=en&locale[1]=fr'), { titles: ['Bonjour', 'Hello', 'Salut'], total: 3 })
  t.same(await list('locale[0]=it&locale[1]=it'), { titles: ['Ciao'], total: 1 }, 'a repeated code counts once')
  t.same(await list('locale[0]=en&locale[1]=de'), { titles: ['Hello'], total: 1 }, 'an unknown code matches nothing')
  t.same(await list('locale[0]=*&locale[1]=fr'), { titles: ['Bonjour', 'Salut'], total: 2 }, '* in a list is a code like any other')
  t.same(await list('locale[0]=fr&locale[1]=it&filters[title][$startsWith]=S'), { titles: ['Salut'], total: 1 }, 'with filters')
  t.same(await app.contentApi.documents(ARTICLE).count({ locale: ['en', 'it'] }), 2, 'the document service takes an array too')
})

t.test('PUT ?locale=fr on an existing documentId creates the fr version', async (t) => {
  const { app } = await build(t, options)
  const en = await write(app, 'POST', '/api/articles', { title: 'Hello', views: 5, sku: 'SKU-1', price: 10 })

  t.test('validated as a creation', async (t) => {
    const missing = await call(app, 'PUT', `/api/articles/${en.documentId}?locale=fr`, { data: { views: 1 } })
    t.match(missing, { status: 400, json: { error: { name: 'ValidationError', details: { errors: [{ path: ['title'] }] } } } }, 'required attributes are required')
    t.same((await stored(app, 'articles', en.documentId, 'locale')).map((r: any) => r[0]), ['en', 'en'], 'nothing written')
  })

  t.test('same documentId, new rows, shared attributes from the existing locale', async (t) => {
    const fr = await write(app, 'PUT', `/api/articles/${en.documentId}?locale=fr`, { title: 'Bonjour' })
    t.match(fr, { documentId: en.documentId, locale: 'fr', title: 'Bonjour', slug: 'bonjour', views: null, sku: 'SKU-1', price: 10, publishedAt: String })
    t.not(fr.id, en.id)
    t.same(await stored(app, 'articles', en.documentId, 'title'), [['en', false, 'Hello'], ['en', true, 'Hello'], ['fr', false, 'Bonjour'], ['fr', true, 'Bonjour']])
    t.match((await call(app, 'GET', `/api/articles/${en.documentId}?locale=fr&status=draft`)).json.data, { title: 'Bonjour', sku: 'SKU-1', publishedAt: null })
  })

  t.test('?status=draft creates only the draft of the new locale', async (t) => {
    const fr = await write(app, 'PUT', `/api/articles/${en.documentId}?locale=it&status=draft`, { title: 'Ciao' })
    t.match(fr, { locale: 'it', title: 'Ciao', publishedAt: null, sku: 'SKU-1' })
    t.same((await stored(app, 'articles', en.documentId, 'title')).filter((r: any) => r[0] === 'it'), [['it', false, 'Ciao']])
    t.equal((await call(app, 'GET', `/api/articles/${en.documentId}?locale=it`)).status, 404)
  })

  t.test('an unknown documentId is still a 404', async (t) => {
    t.equal((await call(app, 'PUT', '/api/articles/doesnotexist000000000000?locale=fr', { data: { title: 'x' } })).status, 404)
    t.equal(await app.contentApi.documents(ARTICLE).update({ documentId: 'doesnotexist000000000000', locale: 'fr', data: { title: 'x' } }), null)
  })

  t.test('through the document service', async (t) => {
    const notes = app.contentApi.documents(NOTE)
    const a = await notes.create({ data: { text: 'One', shared: 'S' } })
    const b = await notes.update({ documentId: a.documentId, locale: 'fr', data: { text: 'Un' } })
    t.match(b, { documentId: a.documentId, locale: 'fr', text: 'Un', shared: 'S', publishedAt: String })
    t.equal(await notes.count({ locale: '*' }), 2)
  })
})

t.test('non-localized attributes are shared by every locale', async (t) => {
  const { app } = await build(t, options)
  const articles = app.contentApi.documents(ARTICLE)
  const notes = app.contentApi.documents(NOTE)

  t.test('the default rule: localized unless pluginOptions.i18n.localized is false', async (t) => {
    const fields = articles.model.fields
    t.same(['title', 'slug', 'code', 'views', 'sku', 'price'].map((name) => [name, fields.get(name)?.localized]),
      [['title', true], ['slug', true], ['code', true], ['views', true], ['sku', false], ['price', false]])
    t.equal(app.contentApi.documents(CATEGORY).model.fields.get('name')?.localized, false, 'nothing is localized on a non-localized type')
  })

  t.test('an update in one locale changes the others (no draft & publish)', async (t) => {
    const en = await notes.create({ data: { text: 'One', shared: 'first' } })
    await notes.update({ documentId: en.documentId, locale: 'fr', data: { text: 'Un' } })
    await notes.update({ documentId: en.documentId, locale: 'it', data: { text: 'Uno' } })
    await notes.update({ documentId: en.documentId, locale: 'fr', data: { shared: 'second' } })
    t.same(await stored(app, 'notes', en.documentId, 'shared'), [['en', true, 'second'], ['fr', true, 'second'], ['it', true, 'second']])
    t.same(await stored(app, 'notes', en.documentId, 'text'), [['en', true, 'One'], ['fr', true, 'Un'], ['it', true, 'Uno']], 'localized attributes keep their own values')
    const rest = await write(app, 'PUT', `/api/notes/${en.documentId}?locale=it`, { shared: 'third' })
    t.equal(rest.shared, 'third')
    t.equal((await call(app, 'GET', `/api/notes/${en.documentId}`)).json.data.shared, 'third', 'through REST')
  })

  t.test('an update in one locale changes the others (draft & publish, REST)', async (t) => {
    const en = await write(app, 'POST', '/api/articles', { title: 'Shared', sku: 'OLD', price: 1 })
    await write(app, 'PUT', `/api/articles/${en.documentId}?locale=fr`, { title: 'Partagé' })
    await write(app, 'PUT', `/api/articles/${en.documentId}`, { sku: 'NEW' })
    t.match((await call(app, 'GET', `/api/articles/${en.documentId}?locale=fr&status=draft`)).json.data, { title: 'Partagé', sku: 'NEW', price: 1 }, 'the fr draft')
    t.match((await call(app, 'GET', `/api/articles/${en.documentId}?locale=fr`)).json.data, { title: 'Partagé', sku: 'NEW', price: 1 }, 'the published fr version')
    t.same((await list(app, `/api/articles?locale=*&filters[documentId][$eq]=${en.documentId}&fields[0]=sku&sort=locale`)).map((d) => d.sku), ['NEW', 'NEW'], 'every published locale')
  })

  t.test('a draft edit of a shared attribute reaches the other locales\' drafts only', async (t) => {
    const en = await articles.create({ data: { title: 'Draft share', sku: 'A' } })
    await articles.update({ documentId: en.documentId, locale: 'fr', data: { title: 'Partage brouillon' } })
    await articles.update({ documentId: en.documentId, data: { sku: 'B' }, status: 'draft' })
    t.same(await stored(app, 'articles', en.documentId, 'sku'), [['en', false, 'B'], ['en', true, 'A'], ['fr', false, 'B'], ['fr', true, 'A']])
  })

  t.test('a shared attribute with a default keeps its value when a new locale leaves it out', async (t) => {
    const en = await notes.create({ data: { text: 'Pinned', pinned: true } })
    const fr = await notes.update({ documentId: en.documentId, locale: 'fr', data: { text: 'Épinglé' } })
    t.equal(fr?.pinned, true, 'the new locale takes the existing value, not the default')
    t.same(await stored(app, 'notes', en.documentId, 'pinned'), [['en', true, true], ['fr', true, true]], 'and the existing locale keeps it')
  })

  t.test('a value sent for the new locale replaces the shared one everywhere', async (t) => {
    const en = await notes.create({ data: { text: 'Two', shared: 'en value' } })
    const fr = await notes.update({ documentId: en.documentId, locale: 'fr', data: { text: 'Deux', shared: 'fr value' } })
    t.equal(fr?.shared, 'fr value')
    t.same(await stored(app, 'notes', en.documentId, 'shared'), [['en', true, 'fr value'], ['fr', true, 'fr value']])
  })
})

t.test('unique and uid attributes are unique per locale', async (t) => {
  const { app } = await build(t, options)
  const a = await write(app, 'POST', '/api/articles', { title: 'Same', slug: 'same', code: 'X' })

  t.test('the same value in another locale, of another document', async (t) => {
    const b = await write(app, 'POST', '/api/articles?locale=fr', { title: 'Same', slug: 'same', code: 'X' })
    t.match(b, { locale: 'fr', slug: 'same', code: 'X' })
    t.not(b.documentId, a.documentId)
  })

  t.test('the same value in another locale of the same document', async (t) => {
    const it = await write(app, 'PUT', `/api/articles/${a.documentId}?locale=it`, { title: 'Same', slug: 'same', code: 'X' })
    t.match(it, { documentId: a.documentId, locale: 'it', slug: 'same', code: 'X' })
  })

  t.test('a duplicate within a locale is a 400', async (t) => {
    const slug = await call(app, 'POST', '/api/articles', { data: { title: 'Other', slug: 'same' } })
    t.match(slug, { status: 400, json: { error: { name: 'ValidationError', message: 'This attribute must be unique', details: { errors: [{ path: ['slug'] }] } } } })
    const code = await call(app, 'POST', '/api/articles?locale=fr', { data: { title: 'Autre', code: 'X' } })
    t.match(code, { status: 400, json: { error: { message: 'This attribute must be unique', details: { errors: [{ path: ['code'] }] } } } })
    const other = await write(app, 'POST', '/api/articles?locale=fr', { title: 'Autre', code: 'Y' })
    const update = await call(app, 'PUT', `/api/articles/${other.documentId}?locale=fr`, { data: { code: 'X' } })
    t.match(update, { status: 400, json: { error: { message: 'This attribute must be unique' } } }, 'on update too')
    const newLocale = await call(app, 'PUT', `/api/articles/${other.documentId}?locale=it`, { data: { title: 'Altro', code: 'X' } })
    t.match(newLocale, { status: 400, json: { error: { message: 'This attribute must be unique' } } }, 'and on the creation of a locale')
  })

  t.test('a generated uid takes a free suffix within its locale only', async (t) => {
    const en = await write(app, 'POST', '/api/articles', { title: 'Same' })
    t.equal(en.slug, 'same-1')
    const it = await write(app, 'POST', '/api/articles?locale=it', { title: 'Fresh' })
    t.equal(it.slug, 'fresh')
  })
})

t.test('populate=localizations', async (t) => {
  const { app } = await build(t, options)
  const travel = await app.contentApi.documents(CATEGORY).create({ data: { name: 'Travel' } })
  const en = await write(app, 'POST', '/api/articles', { title: 'Hello', views: 1, category: travel.documentId })
  const fr = await write(app, 'PUT', `/api/articles/${en.documentId}?locale=fr`, { title: 'Bonjour', views: 2, category: travel.documentId })
  const it = await write(app, 'PUT', `/api/articles/${en.documentId}?locale=it&status=draft`, { title: 'Ciao', views: 3 })
  await write(app, 'PUT', `/api/articles/${en.documentId}?locale=fr&status=draft`, { title: 'Bonjour (brouillon)' })
  const alone = await write(app, 'POST', '/api/articles', { title: 'Alone' })

  t.test('the other locales, in the same status, with every field by default', async (t) => {
    const one = (await call(app, 'GET', `/api/articles/${en.documentId}?populate=localizations`)).json.data
    t.same(one.localizations, [fr], 'published: the published fr version only, with every field')
    const drafts = (await call(app, 'GET', `/api/articles/${en.documentId}?status=draft&populate=localizations`)).json.data
    t.same(pairs(drafts.localizations), [['fr', 'Bonjour (brouillon)'], ['it', 'Ciao']], 'draft: the drafts')
    t.ok(drafts.localizations.every((l: Doc) => l.publishedAt === null && l.documentId === en.documentId))
    t.same((await call(app, 'GET', `/api/articles/${alone.documentId}?populate=localizations`)).json.data.localizations, [], 'none: an empty array')
    t.not(it.id, undefined)
  })

  t.test('from another locale', async (t) => {
    const one = (await call(app, 'GET', `/api/articles/${en.documentId}?locale=fr&populate[localizations][fields][0]=title&populate[localizations][fields][1]=locale`)).json.data
    t.same(one.localizations, [{ id: en.id, documentId: en.documentId, title: 'Hello', locale: 'en' }])
  })

  t.test('fields, sort, filters and nested populate', async (t) => {
    const url = `/api/articles/${en.documentId}?status=draft&fields[0]=title&populate[localizations][fields][0]=title&populate[localizations][fields][1]=views` +
      '&populate[localizations][sort]=views:desc&populate[localizations][populate][category][fields][0]=name'
    const one = (await call(app, 'GET', url)).json.data
    t.same(one.localizations.map((l: Doc) => [l.title, l.views, l.category?.name ?? null]), [['Ciao', 3, null], ['Bonjour (brouillon)', 2, 'Travel']])
    t.same(Object.keys(one.localizations[0]).sort(), ['category', 'documentId', 'id', 'title', 'views'])
    const filtered = (await call(app, 'GET', `/api/articles/${en.documentId}?status=draft&populate[localizations][filters][views][$gt]=2&populate[localizations][fields][0]=title`)).json.data
    t.same(filtered.localizations.map((l: Doc) => l.title), ['Ciao'])
  })

  t.test('on lists, and through the document service', async (t) => {
    const docs = await list(app, '/api/articles?sort=title&fields[0]=title&populate[localizations][fields][0]=locale')
    t.same(docs.map((d) => [d.title, d.localizations.map((l: Doc) => l.locale)]), [['Alone', []], ['Hello', ['fr']]])
    const service = await app.contentApi.documents(ARTICLE).findOne({ documentId: en.documentId, status: 'draft', populate: { localizations: { fields: ['locale'] } } } as QueryParams & { documentId: string })
    t.same((service as Doc).localizations.map((l: Doc) => l.locale), ['fr', 'it'])
  })

  t.test('populate=* includes localizations on localized types only', async (t) => {
    const one = (await call(app, 'GET', `/api/articles/${en.documentId}?populate=*`)).json.data
    t.ok('localizations' in one)
    t.same(pairs(one.localizations), [['fr', 'Bonjour']])
    t.ok('category' in one)
    const cat = (await call(app, 'GET', `/api/categories/${travel.documentId}?populate=*`)).json.data
    t.notOk('localizations' in cat)
  })

  t.test('a type without i18n has no localizations', async (t) => {
    t.match(await call(app, 'GET', '/api/categories?populate=localizations'), { status: 400, json: { error: { name: 'ValidationError', message: 'Invalid key localizations' } } })
  })
})

t.test('filters and locales', async (t) => {
  const { app } = await build(t, options)
  const en = await write(app, 'POST', '/api/articles', { title: 'Hello' })
  await write(app, 'PUT', `/api/articles/${en.documentId}?locale=fr`, { title: 'Bonjour' })
  await write(app, 'POST', '/api/articles?locale=fr', { title: 'Salut' })
  await write(app, 'POST', '/api/articles?locale=it', { title: 'Ciao' })
  await write(app, 'POST', '/api/articles', { title: 'Alone' })

  t.test('a filter on locale replaces the default-locale scope', async (t) => {
    const fr = await call(app, 'GET', '/api/articles?filters[locale][$eq]=fr&sort=title')
    t.same(pairs(fr.json.data), [['fr', 'Bonjour'], ['fr', 'Salut']])
    t.equal(fr.json.meta.pagination.total, 2)
    t.same(pairs(await list(app, '/api/articles?filters[locale][$in][0]=fr&filters[locale][$in][1]=it&sort=title')), [['fr', 'Bonjour'], ['it', 'Ciao'], ['fr', 'Salut']])
    t.same(pairs(await list(app, '/api/articles?filters[$or][0][locale]=it&filters[$or][1][title]=Alone&sort=title')), [['en', 'Alone'], ['it', 'Ciao']], 'inside $or too')
    t.same(pairs(await list(app, '/api/articles?locale=en&filters[locale][$eq]=fr')), [], 'with an explicit locale both apply')
    t.same((await app.contentApi.documents(ARTICLE).findMany({ filters: { locale: 'it' } })).map((d) => d.title), ['Ciao'], 'document service')
  })

  t.test('filters on localizations are ignored, as Strapi ignores them', async (t) => {
    const all = await list(app, '/api/articles?sort=title')
    t.same(await list(app, '/api/articles?sort=title&filters[localizations][id][$notNull]=true'), all)
    t.same(await list(app, '/api/articles?sort=title&filters[localizations][title][$eq]=nothing'), all)
    t.same(await list(app, '/api/articles?sort=title&filters[localizations][locale][$eq]=fr'), all)
  })

  t.test('filters apply to single-document reads in the requested locale', async (t) => {
    t.equal((await call(app, 'GET', `/api/articles/${en.documentId}?locale=fr&filters[title][$eq]=Bonjour`)).status, 200)
    t.equal((await call(app, 'GET', `/api/articles/${en.documentId}?locale=fr&filters[title][$eq]=Hello`)).status, 404)
  })
})

t.test('non-localized types ignore locale', async (t) => {
  const { app } = await build(t, options)
  const categories = app.contentApi.documents(CATEGORY)
  const travel = await write(app, 'POST', '/api/categories?locale=fr', { name: 'Travel' })
  t.notOk('locale' in travel, 'no locale field')
  await write(app, 'POST', '/api/categories?locale=de', { name: 'Food' })
  const all = await list(app, '/api/categories?sort=name')
  t.same(all.map((c) => c.name), ['Food', 'Travel'])
  for (const locale of ['fr', 'de', '*', 'all']) {
    t.same(await list(app, `/api/categories?sort=name&locale=${locale}`), all, `list ?locale=${locale}`)
  }
  t.same((await call(app, 'GET', `/api/categories/${travel.documentId}?locale=fr`)).json.data, travel, 'get one')
  t.match(await write(app, 'PUT', `/api/categories/${travel.documentId}?locale=it`, { name: 'Trips' }), { documentId: travel.documentId, name: 'Trips' }, 'update')
  t.equal(await categories.count(), 2, 'no new document')
  t.equal((await call(app, 'DELETE', `/api/categories/${travel.documentId}?locale=fr`)).status, 204)
  t.equal(await categories.count(), 1, 'delete')
  t.same((await categories.findMany({ locale: 'de', fields: ['name'] })).map((c) => c.name), ['Food'], 'document service')
})

t.test('a localized single type', async (t) => {
  const { app } = await build(t, options)
  const en = await write(app, 'PUT', '/api/homepage', { title: 'Welcome' })
  const fr = await write(app, 'PUT', '/api/homepage?locale=fr', { title: 'Bienvenue' })
  t.equal(fr.documentId, en.documentId, 'one document, two locales')
  t.equal(fr.locale, 'fr')
  t.equal((await call(app, 'GET', '/api/homepage')).json.data.title, 'Welcome')
  t.equal((await call(app, 'GET', '/api/homepage?locale=fr')).json.data.title, 'Bienvenue')
  t.equal((await call(app, 'GET', '/api/homepage?locale=it')).status, 404)
  await call(app, 'DELETE', '/api/homepage?locale=fr')
  t.equal((await call(app, 'GET', '/api/homepage?locale=fr')).status, 404)
  t.equal((await call(app, 'GET', '/api/homepage')).json.data.title, 'Welcome')
})

t.test('fallback chains (i18n.fallbacks)', async (t) => {
  const i18n = { locales: ['en', 'fr', 'fr-CA'], defaultLocale: 'en', fallbacks: { 'fr-CA': ['fr', 'en'] } }
  const { app } = await build(t, { models, i18n })
  const articles = app.contentApi.documents(ARTICLE)

  // A: en, fr, fr-CA   B: en, fr   C: en only   D: fr-CA only   E: fr only   F: it (draft) — see below
  const a = await articles.create({ data: { title: 'A en' } })
  await articles.update({ documentId: a.documentId, locale: 'fr', data: { title: 'A fr' } })
  await articles.update({ documentId: a.documentId, locale: 'fr-CA', data: { title: 'A fr-CA' } })
  const b = await articles.create({ data: { title: 'B en' } })
  await articles.update({ documentId: b.documentId, locale: 'fr', data: { title: 'B fr' } })
  const c = await articles.create({ data: { title: 'C en' } })
  const d = await articles.create({ data: { title: 'D fr-CA' }, locale: 'fr-CA' })
  const e = await articles.create({ data: { title: 'E fr' }, locale: 'fr' })
  // G: published in en, only a draft in fr-CA: published reads fall back to en.
  const g = await articles.create({ data: { title: 'G en' } })
  await articles.update({ documentId: g.documentId, locale: 'fr-CA', data: { title: 'G fr-CA draft' }, status: 'draft' })

  t.test('list: each document once, in the first locale of the chain it has', async (t) => {
    const res = await call(app, 'GET', '/api/articles?locale=fr-CA&sort=title&fields[0]=title&fields[1]=locale')
    t.same(pairs(res.json.data), [['fr-CA', 'A fr-CA'], ['fr', 'B fr'], ['en', 'C en'], ['fr-CA', 'D fr-CA'], ['fr', 'E fr'], ['en', 'G en']])
    t.equal(res.json.meta.pagination.total, 6)
    t.same(new Set(res.json.data.map((x: Doc) => x.documentId)).size, 6, 'no document twice')
  })

  t.test('counts and pagination', async (t) => {
    const page2 = await call(app, 'GET', '/api/articles?locale=fr-CA&sort=title&pagination[page]=2&pagination[pageSize]=4')
    t.same(pairs(page2.json.data), [['fr', 'E fr'], ['en', 'G en']])
    t.same(page2.json.meta.pagination, { page: 2, pageSize: 4, pageCount: 2, total: 6 })
    const offset = await call(app, 'GET', '/api/articles?locale=fr-CA&sort=title:desc&pagination[start]=1&pagination[limit]=2')
    t.same(pairs(offset.json.data), [['fr', 'E fr'], ['fr-CA', 'D fr-CA']])
    t.same(offset.json.meta.pagination, { start: 1, limit: 2, total: 6 })
    t.equal(await articles.count({ locale: 'fr-CA' }), 6)
    t.equal((await articles.findMany({ locale: 'fr-CA' })).length, 6)
  })

  t.test('get one', async (t) => {
    const expected: Array<[string, string, string]> = [[a.documentId, 'fr-CA', 'A fr-CA'], [b.documentId, 'fr', 'B fr'], [c.documentId, 'en', 'C en'], [g.documentId, 'en', 'G en']]
    for (const [documentId, locale, title] of expected) {
      t.match((await call(app, 'GET', `/api/articles/${documentId}?locale=fr-CA`)).json.data, { documentId, locale, title }, title)
      t.match(await articles.findOne({ documentId, locale: 'fr-CA' }), { locale, title }, `${title} (service)`)
    }
    t.match((await call(app, 'GET', `/api/articles/${g.documentId}?locale=fr-CA&status=draft`)).json.data, { locale: 'fr-CA', title: 'G fr-CA draft' }, 'the chain is walked in the requested status')
  })

  t.test('filters apply to the version served', async (t) => {
    t.same(pairs(await list(app, '/api/articles?locale=fr-CA&filters[title][$startsWith]=A%20')), [['fr-CA', 'A fr-CA']])
    t.same(pairs(await list(app, '/api/articles?locale=fr-CA&filters[title][$eq]=A%20en')), [], 'a document served in fr-CA is not matched by its en title')
  })

  t.test('only the chain of the requested locale applies', async (t) => {
    t.same(pairs(await list(app, '/api/articles?locale=fr&sort=title')), [['fr', 'A fr'], ['fr', 'B fr'], ['fr', 'E fr']], 'fr has no chain')
    t.same(pairs(await list(app, '/api/articles?sort=title')).map((p) => p[1]), ['A en', 'B en', 'C en', 'G en'])
    t.equal((await list(app, '/api/articles?locale=*')).length, 9, 'locale=* lists every published version (G has no published fr-CA)')
    t.equal((await call(app, 'GET', `/api/articles/${c.documentId}?locale=fr`)).status, 404)
    t.equal((await call(app, 'GET', `/api/articles/${d.documentId}?locale=fr`)).status, 404)
    t.not(e.documentId, d.documentId)
  })

  t.test('off by default', async (t) => {
    const { app: plain } = await build(t, { models, i18n: { locales: ['en', 'fr', 'fr-CA'], defaultLocale: 'en' } })
    const docs = plain.contentApi.documents(ARTICLE)
    const x = await docs.create({ data: { title: 'X en' } })
    await docs.update({ documentId: x.documentId, locale: 'fr', data: { title: 'X fr' } })
    await docs.create({ data: { title: 'Y fr-CA' }, locale: 'fr-CA' })
    t.same(pairs(await list(plain, '/api/articles?locale=fr-CA')), [['fr-CA', 'Y fr-CA']])
    t.equal((await call(plain, 'GET', `/api/articles/${x.documentId}?locale=fr-CA`)).status, 404)
  })
})

t.test('an invalid fallback configuration is a ConfigurationError', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a chain naming an unknown locale', { locales: ['en', 'fr'], defaultLocale: 'en', fallbacks: { fr: ['de'] } }, /"de" is not one of i18n.locales/],
    ['a chain for an unknown locale', { locales: ['en', 'fr'], defaultLocale: 'en', fallbacks: { de: ['en'] } }, /"de" is not one of i18n.locales/],
    ['a chain that is not an array', { locales: ['en', 'fr'], defaultLocale: 'en', fallbacks: { fr: 'en' } }, /i18n\.fallbacks/],
    ['an empty locale code', { locales: ['en', 'fr'], defaultLocale: 'en', fallbacks: { fr: [''] } }, /i18n\.fallbacks/]
  ]
  for (const [name, i18n, message] of cases) {
    const app = Fastify({ pluginTimeout: 120_000 })
    t.teardown(async () => { await app.close().catch(() => {}) })
    const err = await app.register(contentApi, { models, i18n: i18n as any, schemaSync: { mode: 'off' } }).ready().then(() => null, (e: unknown) => e)
    t.type(err, ConfigurationError, name)
    t.match((err as Error)?.message, message, `${name}: message`)
  }
})
