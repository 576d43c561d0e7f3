import t from 'tap'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { UnknownContentTypeError, ValidationError, type Document } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { article, everything, homepage } from '../fixtures/models.js'

/**
 * The document service as application code uses it, through `app.contentApi.documents(uid)`,
 * on a real database.
 */

const EVERYTHING = 'api::everything.everything'
const ARTICLE = 'api::article.article'
const HOMEPAGE = 'api::homepage.homepage'
const models = [everything, article, homepage]

async function rows (app: FastifyInstance, table: string): Promise<Array<Record<string, unknown>>> {
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by id`.execute(app.contentApi.db)
  return JSON.parse(JSON.stringify(rows))
}

/** The ValidationError a promise rejects with. */
async function validationError (promise: Promise<unknown>): Promise<ValidationError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof ValidationError) return err
    throw err
  }
  throw new Error('expected a ValidationError')
}

const titles = (docs: Document[]): unknown[] => docs.map((d) => d.title)

t.test('documents(uid)', async (t) => {
  const { app } = await build(t, { models })
  t.equal(app.contentApi.documents(EVERYTHING).model.uid, EVERYTHING)
  t.equal(app.contentApi.documents(EVERYTHING), app.contentApi.documents(EVERYTHING), 'one service per content type')
  t.throws(() => app.contentApi.documents('api::nope.nope'), UnknownContentTypeError)
  try {
    app.contentApi.documents('api::nope.nope')
  } catch (err) {
    t.type(err, UnknownContentTypeError)
    t.equal((err as UnknownContentTypeError).code, 'FCA_ERR_UNKNOWN_CONTENT_TYPE')
    t.equal((err as Error).message, 'Unknown content type "api::nope.nope"')
  }
})

t.test('create, findOne, update, delete', async (t) => {
  const { app } = await build(t, { models })
  const docs = app.contentApi.documents(EVERYTHING)

  const created = await docs.create({ data: { title: 'Hello', count: '3', big: 12, day: '2024-01-31T23:00:00Z', secret: 'pw', note: 'n' } })
  t.match(created, { title: 'Hello', slug: 'hello', count: 3, big: '12', day: '2024-01-31', flag: false })
  t.equal(typeof created.id, 'number')
  t.match(created.documentId, /^[a-z][a-z0-9]{23}$/)
  t.notOk('secret' in created, 'passwords are not returned to application code either')
  t.notOk('note' in created, 'nor private attributes')
  const [stored] = await rows(app, 'everythings')
  t.match(stored.secret, /^\$scrypt\$/, 'the password is stored hashed')
  t.equal(stored.note, 'n')

  t.same(await docs.findOne({ documentId: created.documentId }), created)
  t.same(await docs.findOne({ documentId: created.documentId, fields: ['title'] }), { id: created.id, documentId: created.documentId, title: 'Hello' })
  t.equal(await docs.findOne({ documentId: 'nope' }), null)

  const shaped = await docs.create({ data: { title: 'Shaped' }, fields: 'title,count' })
  t.same(Object.keys(shaped), ['id', 'documentId', 'title', 'count'], 'fields shapes the returned document')

  const updated = await docs.update({ documentId: created.documentId, data: { count: 4, kind: 'news' } })
  t.match(updated, { documentId: created.documentId, title: 'Hello', count: 4, kind: 'news', big: '12' })
  t.equal(await docs.update({ documentId: 'nope', data: { count: 1 } }), null, 'update of an unknown document is null')
  const cleared = await docs.update({ documentId: created.documentId, data: { count: null } })
  t.equal(cleared?.count, null)

  t.same(await docs.delete({ documentId: created.documentId }), { documentId: created.documentId, entries: 1 })
  t.equal(await docs.findOne({ documentId: created.documentId }), null)
  t.same(await docs.delete({ documentId: created.documentId }), { documentId: created.documentId, entries: 0 }, 'deleting again is not an error')
})

t.test('validation errors are thrown as ValidationError', async (t) => {
  const { app } = await build(t, { models })
  const docs = app.contentApi.documents(EVERYTHING)
  const err = await validationError(docs.create({ data: { title: 5, count: 'x' } }))
  t.equal(err.status, 400)
  t.equal(err.message, '2 errors occurred')
  t.same(err.toEnvelope().error.details.errors, [
    { path: ['title'], message: 'title must be a `string` type, but the final value was: `5`.', name: 'ValidationError', value: 5 },
    { path: ['count'], message: 'count must be a `number` type, but the final value was: `NaN` (cast from the value `"x"`).', name: 'ValidationError', value: null }
  ])
  t.equal((await validationError(docs.create({ data: { title: 'x', nope: 1 } }))).message, 'Invalid key nope')
  t.equal((await validationError(docs.findMany({ filters: { nope: 1 } }))).message, 'Invalid key nope', 'reads validate their parameters too')
  t.equal((await validationError(docs.findMany({ sort: 'secret' }))).message, 'Invalid key secret')
  t.same(await docs.findMany({ status: 'archived' as 'draft' }), await docs.findMany({ status: 'draft' }), 'an unknown status reads drafts, as Strapi\'s document service does')
  t.same(await rows(app, 'everythings'), [])
})

t.test('reads: findMany, findFirst, count', async (t) => {
  const { app } = await build(t, { models })
  const docs = app.contentApi.documents(EVERYTHING)
  for (let i = 1; i <= 30; i++) {
    await docs.create({ data: { title: `Doc ${String(i).padStart(2, '0')}`, count: i, kind: i % 3 === 0 ? 'news' : 'opinion', flag: i % 2 === 0 } })
  }

  t.test('without pagination: every match', async (t) => {
    const all = await docs.findMany()
    t.equal(all.length, 30, 'more than the REST default page size')
    t.same(all.map((d) => d.count), Array.from({ length: 30 }, (_, i) => i + 1), 'in id order')
    t.equal((await docs.findMany({ filters: { kind: 'news' } })).length, 10)
  })

  t.test('filters', async (t) => {
    t.same((await docs.findMany({ filters: { count: { $gt: 27 } } })).map((d) => d.count), [28, 29, 30])
    t.same((await docs.findMany({ filters: { title: { $contains: 'c 1' } } })).map((d) => d.count), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    t.same((await docs.findMany({ filters: { $or: [{ count: 1 }, { count: { $in: [5, 6] } }] } })).map((d) => d.count), [1, 5, 6])
    t.same((await docs.findMany({ filters: { $and: [{ kind: 'news' }, { flag: true }], count: { $lt: 20 } } })).map((d) => d.count), [6, 12, 18])
    t.same((await docs.findMany({ filters: { count: { $between: [3, 5] }, $not: { count: 4 } } })).map((d) => d.count), [3, 5])
    t.same(await docs.findMany({ filters: { title: { $eq: 'nothing' } } }), [])
  })

  t.test('sort', async (t) => {
    t.same((await docs.findMany({ sort: 'count:desc', filters: { count: { $lte: 3 } } })).map((d) => d.count), [3, 2, 1])
    t.same((await docs.findMany({ sort: ['kind:asc', 'count:desc'], filters: { count: { $lte: 4 } } })).map((d) => d.count), [3, 4, 2, 1])
    t.same((await docs.findMany({ sort: { count: 'desc' }, filters: { count: { $lte: 3 } } })).map((d) => d.count), [3, 2, 1])
    t.same((await docs.findMany({ sort: [{ flag: 'desc' }, { count: 'asc' }], filters: { count: { $lte: 4 } } })).map((d) => d.count), [2, 4, 1, 3])
  })

  t.test('fields', async (t) => {
    const [first] = await docs.findMany({ fields: ['title', 'count'], filters: { count: 1 } })
    t.same(Object.keys(first), ['id', 'documentId', 'title', 'count'])
    const [second] = await docs.findMany({ fields: 'kind', filters: { count: 2 } })
    t.same(Object.keys(second), ['id', 'documentId', 'kind'])
  })

  t.test('pagination', async (t) => {
    t.same((await docs.findMany({ pagination: { page: 2, pageSize: 4 } })).map((d) => d.count), [5, 6, 7, 8])
    t.same((await docs.findMany({ pagination: { start: 10, limit: 3 } })).map((d) => d.count), [11, 12, 13])
    t.same((await docs.findMany({ page: 3, pageSize: 10 })).map((d) => d.count), [21, 22, 23, 24, 25, 26, 27, 28, 29, 30])
    t.same((await docs.findMany({ start: 28 })).map((d) => d.count), [29, 30])
    t.same((await docs.findMany({ limit: 2, sort: 'count:desc' })).map((d) => d.count), [30, 29])
    t.equal((await docs.findMany({ pagination: { pageSize: 1000 } })).length, 30, 'a page larger than maxLimit is clamped to it (100)')
    t.same(await docs.findMany({ pagination: { page: 9, pageSize: 10 } }), [])
  })

  t.test('findFirst', async (t) => {
    t.equal((await docs.findFirst())?.count, 1)
    t.equal((await docs.findFirst({ sort: 'count:desc' }))?.count, 30)
    t.equal((await docs.findFirst({ filters: { kind: 'news' }, sort: 'count:desc' }))?.count, 30)
    t.equal((await docs.findFirst({ filters: { kind: 'news', flag: false } }))?.count, 3)
    t.equal(await docs.findFirst({ filters: { count: { $gt: 100 } } }), null)
  })

  t.test('count', async (t) => {
    t.equal(await docs.count(), 30)
    t.equal(await docs.count({ filters: { kind: 'news' } }), 10)
    t.equal(await docs.count({ filters: { count: { $gt: 100 } } }), 0)
  })
})

t.test('draft & publish through the service', async (t) => {
  const { app } = await build(t, { models })
  const articles = app.contentApi.documents(ARTICLE)

  const published = await articles.create({ data: { title: 'Live' } })
  t.match(published.publishedAt, /Z$/, 'create publishes by default')
  const draft = await articles.create({ data: { title: 'Draft' }, status: 'draft' })
  t.equal(draft.publishedAt, null)

  t.same(titles(await articles.findMany()), ['Live'], 'reads address the published versions by default')
  t.same(titles(await articles.findMany({ status: 'draft' })), ['Live', 'Draft'])
  t.equal(await articles.count(), 1)
  t.equal(await articles.count({ status: 'draft' }), 2)
  t.equal(await articles.findOne({ documentId: draft.documentId }), null)
  t.equal((await articles.findOne({ documentId: draft.documentId, status: 'draft' }))?.title, 'Draft')

  const edited = await articles.update({ documentId: published.documentId, data: { title: 'Live, edited' }, status: 'draft' })
  t.match(edited, { title: 'Live, edited', publishedAt: null }, 'status: draft edits the draft only')
  t.equal((await articles.findOne({ documentId: published.documentId }))?.title, 'Live')
  const republished = await articles.update({ documentId: published.documentId, data: {} })
  t.match(republished, { title: 'Live, edited', publishedAt: String }, 'an update without status publishes the draft')
  t.equal((await articles.findOne({ documentId: published.documentId }))?.title, 'Live, edited')
  t.equal(republished?.id, published.id, 'the published row is updated in place')

  t.same(await articles.delete({ documentId: published.documentId }), { documentId: published.documentId, entries: 2 }, 'draft and published versions are deleted together')
  t.same(titles(await articles.findMany({ status: 'draft' })), ['Draft'])
})

t.test('single types: upsertSingle', async (t) => {
  const { app } = await build(t, { models })
  const home = app.contentApi.documents(HOMEPAGE)
  const first = await home.upsertSingle({ data: { title: 'One' } })
  const second = await home.upsertSingle({ data: { title: 'Two' } })
  t.equal(second.documentId, first.documentId)
  t.equal(second.title, 'Two')
  t.equal(await home.count(), 1)
  t.same(await home.delete({ documentId: null }), { documentId: first.documentId, entries: 1 }, 'documentId null addresses the single document')
  t.same(await home.delete({ documentId: null }), { documentId: null, entries: 0 })
})

t.test('a failed write leaves nothing behind', async (t) => {
  const { app } = await build(t, { models })
  const docs = app.contentApi.documents(EVERYTHING)
  const articles = app.contentApi.documents(ARTICLE)
  const taken = await docs.create({ data: { title: 'Taken', code: 'TAKEN' } })
  const mine = await docs.create({ data: { title: 'Mine', code: 'MINE', count: 1 } })
  await articles.create({ data: { title: 'Article', slug: 'taken-slug' } })
  const before = { everythings: await rows(app, 'everythings'), articles: await rows(app, 'articles') }

  const create = await validationError(docs.create({ data: { title: 'Duplicate', code: 'TAKEN' } }))
  t.same(create.toEnvelope().error, {
    status: 400,
    name: 'ValidationError',
    message: 'This attribute must be unique',
    details: { errors: [{ path: ['code'], message: 'This attribute must be unique', name: 'ValidationError', value: 'TAKEN' }] }
  })
  // The update statement runs before the uniqueness check: the transaction must undo it.
  const update = await validationError(docs.update({ documentId: mine.documentId, data: { title: 'Changed', count: 2, code: 'TAKEN' } }))
  t.equal(update.message, 'This attribute must be unique')
  await validationError(articles.create({ data: { title: 'Other', slug: 'taken-slug' } }))
  await validationError(articles.create({ data: { title: 'Other', slug: 'taken-slug' }, status: 'draft' }))

  t.same({ everythings: await rows(app, 'everythings'), articles: await rows(app, 'articles') }, before, 'every row as it was')
  t.equal((await docs.findOne({ documentId: mine.documentId }))?.title, 'Mine')
  t.equal((await docs.findOne({ documentId: taken.documentId }))?.code, 'TAKEN')
})

t.test('uniqueness', async (t) => {
  const { app } = await build(t, { models })
  const articles = app.contentApi.documents(ARTICLE)
  const doc = await articles.create({ data: { title: 'Own', slug: 'own' } })
  t.equal((await articles.update({ documentId: doc.documentId, data: { slug: 'own', views: 2 } }))?.views, 2, 'a document does not collide with its own versions')
  const draft = await articles.create({ data: { title: 'Draft', slug: 'draft-slug' }, status: 'draft' })
  const clash = await validationError(articles.create({ data: { title: 'Clash', slug: 'draft-slug' } }))
  t.equal(clash.message, 'This attribute must be unique', 'a published document may not take a draft\'s value')
  t.equal((await articles.findOne({ documentId: draft.documentId, status: 'draft' }))?.slug, 'draft-slug')
  const generated = await articles.create({ data: { title: 'Draft slug' } })
  t.equal(generated.slug, 'draft-slug-1', 'a generated uid takes the next free suffix instead')
})

t.test('concurrent creates of the same unique value: exactly one succeeds', async (t) => {
  const { app } = await build(t, { models })
  const docs = app.contentApi.documents(EVERYTHING)
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => docs.create({ data: { title: `Racer ${i}`, code: 'RACE' } })))
  const fulfilled = results.filter((r) => r.status === 'fulfilled')
  const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  t.equal(fulfilled.length, 1, 'one create succeeds')
  t.equal(rejected.length, 4)
  for (const r of rejected) {
    t.type(r.reason, ValidationError)
    t.equal(r.reason.status, 400)
    t.equal(r.reason.message, 'This attribute must be unique')
  }
  t.equal(await docs.count({ filters: { code: 'RACE' } }), 1, 'one row holds the value')

  const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => app.inject({ method: 'POST', url: '/api/everythings', payload: { data: { title: `Http ${i}`, code: 'HTTP' } } })))
  t.same(answers.map((a) => a.statusCode).sort(), [200, 400, 400, 400, 400], 'the same through REST')
  for (const a of answers.filter((a) => a.statusCode === 400)) t.equal(a.json().error.message, 'This attribute must be unique')

  const others = await Promise.all([1, 2, 3, 4, 5].map((i) => docs.create({ data: { title: `Other ${i}` } })))
  const updates = await Promise.allSettled(others.map((d) => docs.update({ documentId: d.documentId, data: { code: 'UPDATED' } })))
  t.equal(updates.filter((r) => r.status === 'fulfilled').length, 1, 'concurrent updates to the same value: one succeeds')
  t.equal(await docs.count({ filters: { code: 'UPDATED' } }), 1)

  const slugs = await Promise.all([1, 2, 3, 4, 5].map(() => docs.create({ data: { title: 'Same title' } })))
  t.same(slugs.map((d) => d.slug).sort(), ['same-title', 'same-title-1', 'same-title-2', 'same-title-3', 'same-title-4'], 'concurrent generated uids never collide')
})
