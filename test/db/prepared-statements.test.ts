import t from 'tap'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { PreparedStatements } from '../../lib/db/prepared-statements.js'
import { needsPostgres, postBody, Scratch, sleep, startApp } from '../reliability/helpers.js'

/**
 * The reads the plugin caches run as named statements on its own pool, so PostgreSQL parses and
 * plans them once per connection (lib/db/prepared-statements.ts). The apps here have a pool of one
 * connection, so a query through `app.contentApi.db` reads `pg_prepared_statements` of the very
 * session that served the requests.
 */

interface Prepared { name: string, runs: number }

/** The plugin's named statements on the pool's one connection, with how often each ran. */
async function prepared (app: FastifyInstance): Promise<Prepared[]> {
  const { rows } = await sql<Prepared>`
    select name, (generic_plans + custom_plans)::int as runs from pg_prepared_statements
    where name like 'fca\_%' order by name`.execute(app.contentApi.db)
  return rows
}

async function createPosts (app: FastifyInstance, titles: string[]): Promise<string[]> {
  const ids: string[] = []
  for (const title of titles) {
    const res = await app.inject({ method: 'POST', url: '/api/posts', payload: postBody(title) })
    if (res.statusCode !== 200) throw new Error(`create failed: ${res.body}`)
    ids.push(res.json().data.documentId)
  }
  return ids
}

const LIST = '/api/posts?sort=title&populate=tags'

t.test('the registry: one name per text, a hash of it, and no more than its bound', async (t) => {
  const registry = new PreparedStatements(2)
  registry.add('select 1')
  registry.add('select 1')
  t.match(registry.nameOf('select 1'), /^fca_[\w-]{16}$/)
  const other = new PreparedStatements()
  other.add('select 1')
  t.equal(other.nameOf('select 1'), registry.nameOf('select 1'), 'the same name in every registry: it is the text\'s')
  registry.add('select 2')
  t.not(registry.nameOf('select 2'), registry.nameOf('select 1'))
  registry.add('select 3')
  t.equal(registry.nameOf('select 3'), undefined, 'past the bound a text runs unnamed')
  t.equal(registry.size, 2)
})

t.test('REST reads run as named statements; the one-document statement serves every documentId', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app } = await startApp(t, { db: scratch.url(), pool: { size: 1 } })
  const ids = await createPosts(app, ['alpha', 'beta', 'gamma'])
  // A REST create's statements are named too (docs/documents.md#what-a-create-sends); the reads' are compared below.
  const writes = new Set((await prepared(app)).map((p) => p.name))
  t.ok(writes.size >= 1, 'a REST create runs named statements')
  const readsNamed = async (): Promise<Prepared[]> => (await prepared(app)).filter((p) => !writes.has(p.name))
  t.same(await readsNamed(), [], 'no read named yet')

  const list = await app.inject(LIST)
  t.same(list.json().data.map((p: { title: string }) => p.title), ['alpha', 'beta', 'gamma'])
  const afterList = await readsNamed()
  t.ok(afterList.length >= 1, 'the list is a named statement')
  t.same((await app.inject(LIST)).json(), list.json(), 'read again: the same answer')
  const again = await readsNamed()
  t.same(again.map((p) => p.name), afterList.map((p) => p.name), 'from the same statements')
  t.ok(again.every((p, i) => p.runs > afterList[i].runs), 'each run once more, without being prepared again')

  const one = await app.inject(`/api/posts/${ids[0]}?populate=tags`)
  t.equal(one.json().data.documentId, ids[0])
  const afterOne = await readsNamed()
  t.ok(afterOne.length > afterList.length, 'the one-document read is named')
  for (const [i, title] of ['alpha', 'beta', 'gamma'].entries()) {
    const res = await app.inject(`/api/posts/${ids[i]}?populate=tags`)
    t.equal(res.json().data.documentId, ids[i], `${title}: its own document`)
    t.same(res.json().data.tags.map((tag: { label: string }) => tag.label), [0, 1, 2].map((k) => `${title}-${k}`), `${title}: its own tags`)
  }
  t.equal((await app.inject('/api/posts/no-such-document?populate=tags')).statusCode, 404, 'no such document: the same statement')
  t.same((await readsNamed()).filter((p) => !afterList.some((l) => l.name === p.name)).length, afterOne.length - afterList.length,
    'no statement per documentId: the documentId is bound at execution')

  const query = '{ posts(pagination: { pageSize: 5 }) { data { id attributes { title } } } }'
  const graphql = await app.inject({ method: 'POST', url: '/graphql', payload: { query } })
  t.equal(graphql.json().data.posts.data.length, 3)
  t.equal((await readsNamed()).length, afterOne.length + 1, 'a GraphQL read is named too')

  const named = await readsNamed()
  await app.contentApi.documents('api::post.post').findMany({ filters: { title: { $eq: 'alpha' } }, sort: 'title' })
  t.same((await readsNamed()).map((p) => p.name), named.map((p) => p.name), 'a read of application code is not named')
})

t.test('a page\'s statement is planned once: its row limit is in its text, so PostgreSQL keeps the generic plan', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app } = await startApp(t, { db: scratch.url(), pool: { size: 1 } })
  await createPosts(app, ['alpha'])
  // Enough published rows that a plan for an unknown limit (PostgreSQL assumes a tenth of the
  // table) reads them all, and costs more than one made for 25.
  await scratch.admin.query(`insert into posts (document_id, title, created_at, updated_at, published_at)
    select substr(md5(g::text), 1, 24), 'post ' || g, now(), now(), now() from generate_series(1, 5000) as g`)
  await scratch.admin.query('analyze')
  for (let i = 0; i < 10; i++) t.equal((await app.inject(LIST)).json().data.length, 25)
  const { rows: page } = await sql<{ statement: string, generic: number, custom: number }>`
    select statement, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
    where name like 'fca\_%' and statement like '%"page"%'`.execute(app.contentApi.db)
  t.equal(page.length, 1, 'the list is one named statement')
  t.match(page[0].statement, /"t"\."id" asc limit 25\)/, 'the page size in its text, and no offset on a first page')
  // PostgreSQL plans the first five executions for their values, then compares the generic plan.
  t.ok(page[0].generic >= 4, `the generic plan kept after the first five (generic ${page[0].generic}, custom ${page[0].custom})`)

  const second = await app.inject(`${LIST}&pagination[page]=2`)
  t.equal(second.json().data.length, 25)
  t.notSame(second.json().data, (await app.inject(LIST)).json().data, 'page 2 is other documents')
  const { rows: later } = await sql<{ statement: string }>`
    select statement from pg_prepared_statements where name like 'fca\_%' and statement like '%"page"%offset $%'`.execute(app.contentApi.db)
  t.equal(later.length, 1, 'a later page is a statement of its own')
  t.match(later[0].statement, /"t"\."id" asc limit 25 offset \$\d+\)/, 'its offset a parameter')
})

t.test('pool.preparedStatements: false sends every statement unnamed, with the same answers', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app: named } = await startApp(t, { db: scratch.url(), pool: { size: 1 } })
  const ids = await createPosts(named, ['alpha', 'beta'])
  const { app: unnamed } = await startApp(t, { db: scratch.url(), pool: { size: 1, preparedStatements: false } })
  for (const url of [LIST, `/api/posts/${ids[0]}?populate=tags`, `/api/posts/${ids[1]}`, '/api/posts?filters[title][$eq]=beta']) {
    for (let i = 0; i < 2; i++) {
      const [a, b] = [await named.inject(url), await unnamed.inject(url)]
      t.equal(b.statusCode, 200, url)
      t.same(b.json(), a.json(), `${url}: the same answer`)
    }
  }
  t.ok((await prepared(named)).length >= 3, 'named where it is on')
  t.same(await prepared(unnamed), [], 'none where it is off')
})

t.test('pool.maxPreparedStatements bounds the statements a connection keeps; past it reads run unnamed', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app } = await startApp(t, { db: scratch.url(), pool: { size: 1, maxPreparedStatements: 2 } })
  const [id] = await createPosts(app, ['alpha'])
  const urls = [LIST, `/api/posts/${id}?populate=tags`, `/api/posts/${id}`, '/api/posts?filters[title][$eq]=alpha']
  const first = await Promise.all(urls.map(async (url) => (await app.inject(url)).json()))
  t.equal((await prepared(app)).length, 2, 'the first two shapes are named, no more')
  for (const [i, url] of urls.entries()) t.same((await app.inject(url)).json(), first[i], `${url}: the same answer named or not`)
  t.equal((await prepared(app)).length, 2, 'still two')
})

t.test('a connection lost takes its statements with it; the next one prepares them again', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  // No change listener: the app's only session is the pool's one connection.
  const { app } = await startApp(t, { db: scratch.url(), pool: { size: 1 }, notifications: false })
  const [id] = await createPosts(app, ['alpha'])
  const url = `/api/posts/${id}?populate=tags`
  const writes = new Set((await prepared(app)).map((p) => p.name))
  const before = (await app.inject(url)).json()
  const names = (await prepared(app)).map((p) => p.name).filter((name) => !writes.has(name))
  t.ok(names.length >= 1)

  t.equal(await scratch.terminate(), 1, 'the pool\'s one connection is terminated')
  for (let i = 0; i < 50 && (await scratch.backends()) > 0; i++) await sleep(20)
  for (let i = 0; i < 3; i++) t.same((await app.inject(url)).json(), before, `read ${i + 1} after the loss`)
  const after = await prepared(app)
  t.same(after.map((p) => p.name), names, 'prepared again under the same names on the new connection (the create\'s are not: it did not run again)')
  t.ok(after.every((p) => p.runs <= 3), 'counted from the new connection')
})
