import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import contentApi, { type ChangeEvent } from '../../lib/index.js'
import { createTestDatabase, DATABASE_URL, dialectName, type TestDatabase } from '../helpers/database.js'
import { StatementCounter } from '../helpers/statements.js'
import { until } from '../scale-out/instances.js'
import { oracleOptions } from '../fixtures/oracle/models.js'

/**
 * What `POST /api/articles` sends (docs/documents.md, "What a create sends"): a published
 * article with a category and authors (the oracle's article: draft & publish, i18n) in two
 * statements inside its transaction (the locks, which read the targets; the rows and links of
 * both versions, which also renders the answer), three when the answer populates (then the
 * re-read), so a regression to a statement per link or per version fails here.
 * A target that does not exist, or no longer does, is Strapi's 400 with nothing written; a
 * generated slug already taken gets its suffix; both take the general path. An update that
 * publishes copies each relation's links, and the media links, to the published row in one
 * statement each (lib/documents/versions.ts).
 */

const ARTICLE = 'api::article.article'

interface Setup { app: FastifyInstance, counter: StatementCounter, database: TestDatabase, ids: Record<string, string> }

/** Notifications for a Kysely given on the test's schema: the listener's session in that schema, so that the derived channel is the writers'. */
function notificationsOf (database: TestDatabase, channel?: string): { connectionString: string, channel?: string } {
  const url = new URL(DATABASE_URL!)
  url.searchParams.set('options', `-c search_path=${database.schema}`)
  return { connectionString: url.toString(), ...(channel === undefined ? {} : { channel }) }
}

/** `notify`: with notifications on (PostgreSQL), as an app with other instances runs; `channel`: on a channel given. */
async function setup (t: Test, notify = false, channel?: string): Promise<Setup> {
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
    auth: { ...oracleOptions.auth, rateLimit: false },
    db: database.db.withPlugin(counter),
    ...(notify ? { notifications: notificationsOf(database, channel) } : {})
  })
  await app.ready()
  await app.contentApi.permissions.grant('public', [`${ARTICLE}.create`, `${ARTICLE}.find`, 'api::category.category.find', 'api::author.author.find'])
  const ids: Record<string, string> = {}
  ids.C1 = (await app.contentApi.documents('api::category.category').create({ data: { name: 'C1' } })).documentId
  for (const name of ['U1', 'U2', 'U3']) ids[name] = (await app.contentApi.documents('api::author.author').create({ data: { name } })).documentId
  return { app, counter, database, ids }
}

async function post (s: Setup, data: Record<string, unknown>, query = '', uid = 'articles') {
  let response!: Awaited<ReturnType<FastifyInstance['inject']>>
  const statements = await s.counter.during(async () => {
    response = await s.app.inject({ method: 'POST', url: `/api/${uid}${query}`, payload: { data } })
  })
  return { status: response.statusCode, body: response.json(), statements }
}

/** Every row of the articles table and of its relation link tables, for "nothing written". */
async function snapshot (database: TestDatabase): Promise<unknown> {
  const { rows } = await sql<{ n: string }>`select (select count(*) from articles) || '/' || (select count(*) from articles_category_lnk) || '/' ||
    (select count(*) from articles_authors_lnk) as n`.execute(database.db)
  return rows[0].n
}

t.test('a published create with a category and two authors: three statements, the links of both versions in order', async (t) => {
  const s = await setup(t)
  // The first create warms the access check's caches; the second is measured.
  await post(s, { title: 'Warm', category: s.ids.C1, authors: [s.ids.U1] })
  const answer = await post(s, { title: 'Counted', views: 42, kind: 'news', category: s.ids.C1, authors: [s.ids.U2, s.ids.U1] })
  t.equal(answer.status, 200)
  t.match(answer.body.data, { title: 'Counted', slug: 'counted', views: 42, kind: 'news', locale: 'en', publishedAt: String })
  t.same(answer.statements.map((statement) => statement.kind), ['CompiledQuery', 'CompiledQuery'], 'two statements besides begin and commit: the locks, then the rows, links and answer')

  const documentId = answer.body.data.documentId as string
  const { rows } = await sql<{ published: boolean, category: string, authors: string[], ords: number[], article_ord: number }>`
    select a.published_at is not null as published,
      (select c.name from articles_category_lnk l join categories c on c.id = l.category_id where l.article_id = a.id) as category,
      (select array_agg(u.name order by l.author_ord) from articles_authors_lnk l join authors u on u.id = l.author_id where l.article_id = a.id) as authors,
      (select array_agg(l.author_ord order by l.author_ord) from articles_authors_lnk l where l.article_id = a.id) as ords,
      (select l.article_ord from articles_category_lnk l where l.article_id = a.id) as article_ord
    from articles a where a.document_id = ${documentId} order by a.id`.execute(s.database.db)
  t.same(rows.map((r) => r.published), [false, true], 'a draft row, then its published row')
  const { rows: [warm] } = await sql<{ ord: number }>`select max(l.article_ord) as ord from articles_category_lnk l join articles a on a.id = l.article_id
    where a.title = 'Warm'`.execute(s.database.db)
  for (const row of rows) {
    t.equal(row.category, 'C1')
    t.same(row.authors, ['U2', 'U1'], 'the authors in the order given')
    t.same(row.ords.map(Number), [1, 2])
    t.ok(Number(row.article_ord) > Number(warm.ord), 'at the end of the category\'s list, after Warm')
  }
  t.equal(Number(rows[0].article_ord), Number(rows[1].article_ord), 'the same place in the list for both versions')
  // Above every position a reordering of the list gives (1, 2, ... n): 2^31 + the draft's link id.
  const { rows: [link] } = await sql<{ id: number }>`select l.id from articles_category_lnk l join articles a on a.id = l.article_id
    where a.document_id = ${documentId} and a.published_at is null`.execute(s.database.db)
  t.equal(Number(rows[0].article_ord), 2 ** 31 + link.id, 'the position is 2^31 + the link\'s id')

  const list = await s.app.inject({ method: 'GET', url: '/api/articles?populate[authors]=true&populate[category]=true&sort=id' })
  t.same(list.json().data.map((a: any) => [a.title, a.category.name, a.authors.map((u: any) => u.name)]), [['Warm', 'C1', ['U1']], ['Counted', 'C1', ['U2', 'U1']]])
})

t.test('an update that publishes copies each relation\'s links, and the media links, in one statement each; the published version follows the draft', async (t) => {
  const s = await setup(t)
  await s.app.contentApi.permissions.grant('public', [`${ARTICLE}.update`, `${ARTICLE}.findOne`])
  const created = await post(s, { title: 'Before', category: s.ids.C1, authors: [s.ids.U1, s.ids.U2] })
  const documentId = created.body.data.documentId as string
  const before = await sql<{ id: number }>`select l.id from articles_authors_lnk l join articles a on a.id = l.article_id
    join authors u on u.id = l.author_id where a.document_id = ${documentId} and a.published_at is not null and u.name = 'U2'`.execute(s.database.db)

  let response!: Awaited<ReturnType<FastifyInstance['inject']>>
  const statements = await s.counter.during(async () => {
    response = await s.app.inject({ method: 'PUT', url: `/api/articles/${documentId}`, payload: { data: { title: 'After', authors: [s.ids.U2, s.ids.U3] } } })
  })
  t.equal(response.statusCode, 200)
  const touching = (table: string): number => statements.filter((statement) => statement.tables.includes(table)).length
  // Neither is in the update's data: every statement on them is the publish's copy.
  t.equal(touching('files_related_mph'), 1, 'the media links copied in one statement')
  t.equal(touching('articles_category_lnk'), 1, 'the category link copied in one statement')

  const listed = await s.app.inject({ method: 'GET', url: `/api/articles/${documentId}?populate[authors]=true&populate[category]=true` })
  t.match(listed.json().data, { title: 'After', category: { name: 'C1' } })
  t.same(listed.json().data.authors.map((u: any) => u.name), ['U2', 'U3'], 'the published version has the draft\'s authors, in its order')
  const after = await sql<{ id: number }>`select l.id from articles_authors_lnk l join articles a on a.id = l.article_id
    join authors u on u.id = l.author_id where a.document_id = ${documentId} and a.published_at is not null and u.name = 'U2'`.execute(s.database.db)
  t.same(after.rows, before.rows, 'a link both versions keep is kept, not deleted and inserted again')
})

/**
 * The answer the create's own statement renders, from the rows its insert returns, is the
 * document as any later read of it renders it from the table: every field, defaults and
 * generated values included, in the version (published or draft) and fields asked for. An answer
 * that populates is read back by a statement of its own, after the links are written.
 */
t.test('the answer rendered by the create\'s own statement is the document as read afterwards', async (t) => {
  const s = await setup(t)
  await s.app.contentApi.permissions.grant('public', [`${ARTICLE}.findOne`, 'api::author.author.create', 'api::author.author.findOne'])
  await post(s, { title: 'Warm', category: s.ids.C1 })
  const read = async (url: string) => (await s.app.inject({ method: 'GET', url })).json().data

  const published = await post(s, { title: 'Rendered', views: 7, rating: 4.5, publishDate: '2026-11-26', tags: ['a', { b: 1 }], kind: 'review', category: s.ids.C1 })
  t.equal(published.statements.length, 2)
  t.match(published.body.data, { title: 'Rendered', slug: 'rendered', featured: false, views: 7, rating: 4.5, publishDate: '2026-11-26', kind: 'review', locale: 'en', publishedAt: String })
  t.same(published.body.data, await read(`/api/articles/${published.body.data.documentId as string}`), 'the published version, as a read renders it')

  const draft = await post(s, { title: 'Draft only', authors: [s.ids.U1] }, '?status=draft')
  t.equal(draft.statements.length, 2)
  t.equal(draft.body.data.publishedAt, null, 'the draft version')
  t.same(draft.body.data, await read(`/api/articles/${draft.body.data.documentId as string}?status=draft`))

  const fields = await post(s, { title: 'Some fields', category: s.ids.C1 }, '?fields[0]=title&fields[1]=views')
  t.equal(fields.statements.length, 2)
  t.same(Object.keys(fields.body.data).sort(), ['documentId', 'id', 'title', 'views'], 'only the fields asked for')

  const author = await post(s, { name: 'Ada', email: 'ada@example.com', internalNote: 'private' }, '', 'authors')
  t.equal(author.status, 200)
  t.equal(author.statements.length, 1, 'nothing to lock (no relation, no unique value): one statement, its row and its answer')
  t.notOk('internalNote' in author.body.data, 'a private field is not rendered')
  t.same(author.body.data, await read(`/api/authors/${author.body.data.documentId as string}`))

  const populated = await post(s, { title: 'Populated', category: s.ids.C1, authors: [s.ids.U2] }, '?populate[category]=true&populate[authors]=true')
  t.equal(populated.statements.length, 3, 'populating: the links are read back by a statement of their own')
  t.equal(populated.body.data.category.name, 'C1')
  t.same(populated.body.data.authors.map((a: { name: string }) => a.name), ['U2'])
})

t.test('a create linking a missing or deleted document is a 400, with nothing written', async (t) => {
  const s = await setup(t)
  await s.app.contentApi.documents('api::author.author').delete({ documentId: s.ids.U3 })
  const before = await snapshot(s.database)
  const missing = await post(s, { title: 'Missing category', category: 'nosuchdocumentid0000000', authors: [s.ids.U1] })
  t.equal(missing.status, 400)
  t.match(missing.body.error, { name: 'ValidationError', message: 'Document with id "nosuchdocumentid0000000", locale "null" not found' })
  const deleted = await post(s, { title: 'Deleted author', category: s.ids.C1, authors: [s.ids.U1, s.ids.U3] })
  t.equal(deleted.status, 400)
  t.match(deleted.body.error, { name: 'ValidationError', message: `Document with id "${s.ids.U3}", locale "null" not found` })
  t.equal(await snapshot(s.database), before, 'no article row and no link written')
  t.equal((await post(s, { title: 'Fine', category: s.ids.C1, authors: [s.ids.U1] })).status, 200, 'the next create goes through')
})

t.test('a generated slug already taken gets its suffix; a given one is a 400', async (t) => {
  const s = await setup(t)
  const first = await post(s, { title: 'Same title', authors: [s.ids.U1] })
  const second = await post(s, { title: 'Same title', authors: [s.ids.U1] })
  t.equal(first.body.data.slug, 'same-title')
  t.equal(second.body.data.slug, 'same-title-1')
  const before = await snapshot(s.database)
  const taken = await post(s, { title: 'Other', slug: 'same-title', category: s.ids.C1 })
  t.equal(taken.status, 400)
  t.match(taken.body.error, { name: 'ValidationError', details: { errors: [{ path: ['slug'], message: 'This attribute must be unique' }] } })
  t.equal(await snapshot(s.database), before, 'nothing written')
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from articles_authors_lnk l join articles a on a.id = l.article_id
    where a.document_id = ${second.body.data.documentId as string}`.execute(s.database.db)
  t.equal(rows[0].n, 2, 'the suffixed document has the links of both versions, once each')
})

/**
 * With other instances to tell (PostgreSQL, notifications on), the direct create announces itself
 * in its second statement (create-direct.ts) instead of a `select pg_notify(...)` of its own. A
 * second app on the same schema is the other instance: it hears each committed create once, as
 * the general path's writes, and nothing of one that rolled back after its statement had run.
 */
const needsPostgres = dialectName === 'postgres' ? false : 'notifications need PostgreSQL (DATABASE_URL)'

/** The other instance: a second app on the same schema (and channel), recording what it hears of articles and the homepage. */
interface Heard {
  /** What was heard of `documentId`, once `count` events of it were (or 2 s passed). */
  of: (documentId: string, count: number) => Promise<ChangeEvent[]>
  all: ChangeEvent[]
}

async function otherInstance (t: Test, s: Setup, channel?: string): Promise<Heard> {
  const other = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await other.close() })
  await other.register(contentApi, { ...oracleOptions, graphql: false, auth: { ...oracleOptions.auth, rateLimit: false }, db: s.database.connectAgain(), notifications: notificationsOf(s.database, channel) })
  await other.ready()
  const heard: ChangeEvent[] = []
  for (const uid of [ARTICLE, 'api::homepage.homepage']) other.contentApi.documents(uid).onChange((event) => { heard.push(event) })
  const ofDocument = (documentId: string): ChangeEvent[] => heard.filter((e) => e.documentId === documentId)
  const of = async (documentId: string, count: number): Promise<ChangeEvent[]> => {
    await until(async () => ofDocument(documentId).length >= count, Date.now(), 2000, 10)
    return ofDocument(documentId)
  }
  return { of, all: heard }
}

t.test('with other instances: the create announces itself in its own statement, once, on commit only', { skip: needsPostgres }, async (t) => {
  const s = await setup(t, true)
  const heard = await otherInstance(t, s)

  await post(s, { title: 'Warm', category: s.ids.C1, authors: [s.ids.U1] })
  const direct = await post(s, { title: 'Announced', category: s.ids.C1, authors: [s.ids.U2, s.ids.U1] })
  t.equal(direct.status, 200)
  t.equal(direct.statements.length, 2, 'two statements besides begin and commit, the notification included')
  t.notOk(direct.statements.some((statement) => statement.kind === 'RawNode'), 'no pg_notify statement of its own')
  const documentId = direct.body.data.documentId as string
  t.same(await heard.of(documentId, 1), [{ uid: ARTICLE, action: 'create', documentId, origin: 'remote' }], 'the other instance hears the create')

  // The statement ran, then a given slug turned out taken: the general path answers the 400 and
  // the transaction rolls back, its notification with it.
  const taken = await post(s, { title: 'Other', slug: 'announced', category: s.ids.C1 })
  t.equal(taken.status, 400)
  // A generated slug taken: the general path writes the document the statement announced.
  const suffixed = await post(s, { title: 'Announced', category: s.ids.C1 })
  t.equal(suffixed.body.data.slug, 'announced-1')
  const suffixedId = suffixed.body.data.documentId as string
  t.same(await heard.of(suffixedId, 1), [{ uid: ARTICLE, action: 'create', documentId: suffixedId, origin: 'remote' }], 'announced once')
  // A single type's first write is an update, as the general path announces it.
  const home = await s.app.contentApi.documents('api::homepage.homepage').upsertSingle({ data: { title: 'Home' } })
  t.same(await heard.of(home.documentId, 1), [{ uid: 'api::homepage.homepage', action: 'update', documentId: home.documentId, origin: 'remote' }])

  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(heard.all.map((e) => e.action), ['create', 'create', 'create', 'update'], 'nothing else heard: not twice, not the rolled-back create')
})

t.test('with other instances on a channel given: the create announces itself on it', { skip: needsPostgres }, async (t) => {
  const channel = `fca_test_${randomBytes(4).toString('hex')}`
  const s = await setup(t, true, channel)
  const heard = await otherInstance(t, s, channel)
  const created = await post(s, { title: 'On a channel', category: s.ids.C1, authors: [s.ids.U1] })
  t.equal(created.status, 200)
  t.notOk(created.statements.some((statement) => statement.kind === 'RawNode'), 'no pg_notify statement of its own')
  const documentId = created.body.data.documentId as string
  t.same(await heard.of(documentId, 1), [{ uid: ARTICLE, action: 'create', documentId, origin: 'remote' }])
})
