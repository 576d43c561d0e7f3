import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import contentApi, { defineContentType, type Document } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { dialectName, type TestDatabase } from '../helpers/database.js'

/**
 * Concurrent writers on one database: two app instances (two pools on one schema, as two
 * processes behind a load balancer would be) and many requests at once on the same document,
 * the same new locale, the same relation lists from both sides. After each burst, SQL checks what
 * the database holds: one draft and at most one published row per (document, locale), order
 * values unique per owner row, nothing lost; and every answer is the right one, never a 500.
 *
 * On PGlite (one session, every transaction queued) the bursts run one after another; on
 * PostgreSQL (DATABASE_URL) they really overlap.
 */

const POST = 'api::post.post'
const TAG = 'api::tag.tag'
const CATEGORY = 'api::category.category'
const BURST = 50

const models = [
  defineContentType({
    kind: 'collectionType',
    collectionName: 'posts',
    info: { singularName: 'post', pluralName: 'posts', displayName: 'Post' },
    options: { draftAndPublish: true },
    pluginOptions: { i18n: { localized: true } },
    attributes: {
      title: { type: 'string', required: true, pluginOptions: { i18n: { localized: true } } },
      category: { type: 'relation', relation: 'manyToOne', target: CATEGORY, inversedBy: 'posts' },
      tags: { type: 'relation', relation: 'manyToMany', target: TAG, inversedBy: 'posts' }
    }
  }),
  defineContentType({
    kind: 'collectionType',
    collectionName: 'categories',
    info: { singularName: 'category', pluralName: 'categories', displayName: 'Category' },
    options: { draftAndPublish: true },
    attributes: {
      name: { type: 'string' },
      posts: { type: 'relation', relation: 'oneToMany', target: POST, mappedBy: 'category' }
    }
  }),
  defineContentType({
    kind: 'collectionType',
    collectionName: 'tags',
    info: { singularName: 'tag', pluralName: 'tags', displayName: 'Tag' },
    options: { draftAndPublish: false },
    attributes: {
      name: { type: 'string' },
      posts: { type: 'relation', relation: 'manyToMany', target: POST, mappedBy: 'tags' }
    }
  })
]
const options = { models, i18n: { locales: ['en', 'fr'], defaultLocale: 'en' } }

interface Instances {
  apps: [FastifyInstance, FastifyInstance]
  db: Kysely<any>
}

/** Two apps on one schema: the first synced it; the second only connects, as a second process would. */
async function instances (tt: Parameters<typeof build>[0]): Promise<Instances & { database: TestDatabase }> {
  const { app, database } = await build(tt, options)
  const second = Fastify({ logger: false, pluginTimeout: 120_000 })
  await second.register(contentApi, {
    ...options,
    auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false },
    schemaSync: { mode: 'off' },
    db: database.connectAgain()
  })
  await second.ready()
  // Closed before the first app's teardown drops the schema (tap runs teardowns last-in, first-out).
  tt.teardown(async () => { await second.close() })
  return { apps: [app, second], db: database.db, database }
}

// One pair for the whole file: each test works on its own documents.
const { apps, db, database } = await instances(t)

interface Answer { status: number, body: { data: any, error?: unknown } }

/** `count` requests at once, alternating between the two instances. */
async function burst (apps: Instances['apps'], count: number, request: (i: number) => { method: 'POST' | 'PUT', url: string, payload: Record<string, unknown> }): Promise<Answer[]> {
  return await Promise.all(Array.from({ length: count }, async (_, i) => {
    const res = await apps[i % 2].inject({ ...request(i), headers: { 'content-type': 'application/json' } })
    return { status: res.statusCode, body: res.json() }
  }))
}

/** Statuses of a burst's answers with how many of each, e.g. `{ 200: 50 }`. */
function statuses (answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

/** (document, locale, draft?) groups holding more than one row, in any content-type table. */
async function duplicateVersions (db: Kysely<any>, table: string, localized: boolean): Promise<unknown[]> {
  const locale = localized ? sql`locale` : sql`null`
  const { rows } = await sql`
    select document_id, ${locale} as locale, published_at is null as draft, count(*)::int as rows
    from ${sql.table(table)} group by 1, 2, 3 having count(*) > 1`.execute(db)
  return rows
}

/**
 * Positions shared by two different related documents in one row's list, for one order column
 * of a link table: `owner` is the column of the row whose list it is, `other` the related row.
 * (A row links to every version of a related document with one position, so versions of one
 * document share it by design; two documents never may.)
 */
async function orderTies (db: Kysely<any>, link: { table: string, owner: string, other: string, order: string, otherTable: string }): Promise<unknown[]> {
  const { rows } = await sql`
    select l.${sql.ref(link.owner)} as owner, l.${sql.ref(link.order)} as position, count(distinct r.document_id)::int as documents
    from ${sql.table(link.table)} l join ${sql.table(link.otherTable)} r on r.id = l.${sql.ref(link.other)}
    where l.${sql.ref(link.order)} is not null
    group by 1, 2 having count(distinct r.document_id) > 1`.execute(db)
  return rows
}

const POST_TAGS = { table: 'posts_tags_lnk', post: 'post_id', tag: 'tag_id', tagOrder: 'tag_ord', postOrder: 'post_ord' }
const POST_CATEGORY = { table: 'posts_category_lnk', post: 'post_id', category: 'category_id', postOrder: 'post_ord' }

t.test('the same new locale created from two instances at once: one draft and one published row', async (t) => {
  const created = await apps[0].inject({ method: 'POST', url: '/api/posts', payload: { data: { title: 'en' } } })
  const documentId = created.json().data.documentId as string

  const answers = await burst(apps, BURST, (i) => ({ method: 'PUT', url: `/api/posts/${documentId}?locale=fr`, payload: { data: { title: `fr ${i}` } } }))

  t.same(statuses(answers), { 200: BURST }, 'every writer is answered 200: the first creates the locale, the others update it')
  for (const [i, answer] of answers.entries()) {
    t.match(answer.body.data, { documentId, locale: 'fr', title: `fr ${i}` }, `answer ${i} shows its own write`)
  }
  t.same(await duplicateVersions(db, 'posts', true), [])
  const { rows } = await sql<{ drafts: number, published: number }>`
    select count(*) filter (where published_at is null)::int as drafts, count(*) filter (where published_at is not null)::int as published
    from posts where document_id = ${documentId} and locale = 'fr'`.execute(db)
  t.same(rows, [{ drafts: 1, published: 1 }])
})

t.test('publish, unpublish and discard the same document from two instances at once', async (t) => {
  const [a, b] = apps.map((app) => app.contentApi.documents(POST))
  const draft = await a.create({ data: { title: 'draft' }, status: 'draft' })
  const documentId = draft.documentId

  const published = await Promise.allSettled(Array.from({ length: BURST }, async (_, i) => await (i % 2 === 0 ? a : b).publish({ documentId })))
  t.same(published.filter((r) => r.status === 'rejected'), [])
  for (const result of published) {
    if (result.status === 'fulfilled') t.match(result.value.entries, [{ documentId, locale: 'en', title: 'draft', publishedAt: String }])
  }
  t.same(await duplicateVersions(db, 'posts', true), [])

  // Every action at once: whatever the interleaving, each answers and the rows stay a valid pair.
  const actions = [
    async (s: typeof a) => await s.publish({ documentId }),
    async (s: typeof a) => await s.unpublish({ documentId }),
    async (s: typeof a) => await s.discardDraft({ documentId }),
    async (s: typeof a) => await s.update({ documentId, data: { title: 'edited' } })
  ]
  const mixed = await Promise.allSettled(Array.from({ length: BURST }, async (_, i) => await actions[i % actions.length](i % 2 === 0 ? a : b)))
  t.same(mixed.filter((r) => r.status === 'rejected'), [])
  t.same(await duplicateVersions(db, 'posts', true), [])
  const { rows } = await sql<{ drafts: number }>`select count(*)::int as drafts from posts where document_id = ${documentId} and published_at is null`.execute(db)
  t.same(rows, [{ drafts: 1 }], 'the draft is never lost nor doubled')
})

t.test('documents created at once, linked to the same category: each gets its own position in the category', async (t) => {
  const category = (await apps[0].inject({ method: 'POST', url: '/api/categories', payload: { data: { name: 'news' } } })).json().data.documentId as string

  const answers = await burst(apps, BURST, (i) => ({ method: 'POST', url: '/api/posts?populate=category', payload: { data: { title: `post ${i}`, category } } }))

  t.same(statuses(answers), { 200: BURST })
  for (const answer of answers) t.match(answer.body.data, { category: { documentId: category } })
  t.same(await orderTies(db, { table: POST_CATEGORY.table, owner: POST_CATEGORY.category, other: POST_CATEGORY.post, order: POST_CATEGORY.postOrder, otherTable: 'posts' }), [])
  const listed = await apps[1].inject({ method: 'GET', url: `/api/categories/${category}?populate[posts][fields][0]=title&populate[posts][limit]=100` })
  t.equal(listed.json().data.posts.length, BURST, 'no link is lost')
})

for (const { name, related, link, table } of [
  { name: 'a category (the direct create)', related: 'categories', link: (id: string) => ({ category: id }), table: POST_CATEGORY },
  { name: 'a tag at a position (the general path)', related: 'tags', link: (id: string) => ({ tags: { connect: [{ documentId: id, position: { end: true } }] } }), table: POST_TAGS }
] as const) {
  t.test(`a create linking ${name} does not wait for another one in flight; a writer of it waits for both`, {
    skip: dialectName !== 'postgres' && 'only PostgreSQL runs two transactions at once'
  }, async (t) => {
    const target = (await apps[0].inject({ method: 'POST', url: `/api/${related}`, payload: { data: { name: 'busy' } } })).json().data.documentId as string
    // The first create stays in its transaction (its after hook runs there, before the commit)
    // until released: it holds whatever it locked.
    let release!: () => void
    const released = new Promise<void>((resolve) => { release = resolve })
    let reached!: () => void
    const inFlight = new Promise<void>((resolve) => { reached = resolve })
    const unsubscribe = apps[0].contentApi.lifecycles.subscribe({
      models: [POST],
      async afterCreate (event) {
        if ((event.result as Document).title !== 'held') return
        reached()
        await released
      }
    })
    t.teardown(() => { release(); unsubscribe() })

    const held = apps[0].inject({ method: 'POST', url: '/api/posts', payload: { data: { title: 'held', ...link(target) } } })
    await inFlight
    const second = apps[1].inject({ method: 'POST', url: '/api/posts', payload: { data: { title: 'second', ...link(target) } } })
    const bound = new Promise<'waiting'>((resolve) => { setTimeout(() => { resolve('waiting') }, 10_000).unref() })
    const answered = await Promise.race([second, bound])
    t.not(answered, 'waiting', 'the second create is answered while the first is still in its transaction')
    if (answered !== 'waiting') t.equal(answered.statusCode, 200)

    // An update of the related document waits for the create in flight: it asks for one of its
    // rows (a tuple lock, held while waiting) until the create commits.
    const rename = apps[1].inject({ method: 'PUT', url: `/api/${related}/${target}`, payload: { data: { name: 'renamed' } } })
    const waiting = sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'tuple' and relation = ${related}::regclass`
    while ((await waiting.execute(db)).rows[0].n === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    release()
    t.equal((await held).statusCode, 200)
    t.equal((await rename).statusCode, 200)

    const listed = await apps[1].inject({ method: 'GET', url: `/api/${related}/${target}?populate[posts][fields][0]=title&status=draft` })
    t.same(listed.json().data.posts.map((p: Document) => p.title), ['held', 'second'], 'both in the list, in the order they were linked')
    const owner = 'category' in table ? table.category : table.tag
    t.same(await orderTies(db, { table: table.table, owner, other: table.post, order: table.postOrder, otherTable: 'posts' }), [], 'one position per post in its list')
  })
}

t.test('one list appended to from both sides at once: positions stay unique on both sides, nothing is lost', async (t) => {
  const tag = (await apps[0].inject({ method: 'POST', url: '/api/tags', payload: { data: { name: 'hot' } } })).json().data.documentId as string
  const other = (await apps[0].inject({ method: 'POST', url: '/api/tags', payload: { data: { name: 'cold' } } })).json().data.documentId as string
  const posts: string[] = []
  for (let i = 0; i < BURST; i++) {
    posts.push((await apps[i % 2].inject({ method: 'POST', url: '/api/posts', payload: { data: { title: `post ${i}` } } })).json().data.documentId as string)
  }

  // Even requests write a post (the owning side) connecting both tags; odd ones write the tag
  // (the inverse side) connecting that post, at the start of its list or at its end.
  const answers = await burst(apps, BURST, (i) => i % 2 === 0
    ? { method: 'PUT', url: `/api/posts/${posts[i]}`, payload: { data: { tags: { connect: [tag, other] } } } }
    : { method: 'PUT', url: `/api/tags/${tag}`, payload: { data: { posts: { connect: [{ documentId: posts[i], position: i % 4 === 1 ? { start: true } : { end: true } }] } } } })

  t.same(statuses(answers), { 200: BURST })
  for (const link of [
    { owner: POST_TAGS.post, other: POST_TAGS.tag, order: POST_TAGS.tagOrder, otherTable: 'tags' },
    { owner: POST_TAGS.tag, other: POST_TAGS.post, order: POST_TAGS.postOrder, otherTable: 'posts' }
  ]) {
    t.same(await orderTies(db, { table: POST_TAGS.table, ...link }), [], `${link.order}: one document per position of each list`)
  }
  const listed = await apps[1].inject({ method: 'GET', url: `/api/tags/${tag}?populate[posts][fields][0]=title&populate[posts][limit]=100&status=draft` })
  t.same(listed.json().data.posts.map((p: Document) => p.documentId).sort(), [...posts].sort(), 'every connect holds')
})

t.test('users registering at once: one position each in the role\'s list', async (t) => {
  // Fewer than the other bursts: each registration first hashes a password (scrypt, four at a
  // time on libuv's threads), so their transactions overlap four by four.
  const answers = await burst(apps, 16, (i) => ({
    method: 'POST', url: '/api/auth/local/register', payload: { username: `user${i}`, email: `user${i}@example.com`, password: 'Password123' }
  }))
  t.same(statuses(answers), { 200: 16 })
  t.same(await orderTies(db, { table: 'up_users_role_lnk', owner: 'role_id', other: 'user_id', order: 'user_ord', otherTable: 'up_users' }), [])
})

t.test('the version index is the backstop: a second draft written around the lock is refused, and the request answers 503', {
  skip: dialectName !== 'postgres' && 'only PostgreSQL runs two transactions at once'
}, async (t) => {
  const documentId = (await apps[0].inject({ method: 'POST', url: '/api/posts', payload: { data: { title: 'en' } } })).json().data.documentId as string
  const put = { method: 'PUT' as const, url: `/api/posts/${documentId}?locale=fr`, payload: { data: { title: 'ours' } } }

  // Another program on the database, which does not lock the document, inserts the French draft
  // and keeps its transaction open until the request waits for it on the index.
  let commit!: () => void
  const committing = new Promise<void>((resolve) => { commit = resolve })
  let holderXid!: (xid: string) => void
  const xid = new Promise<string>((resolve) => { holderXid = resolve })
  const holder = database.connectAgain().transaction().execute(async (trx) => {
    await sql`insert into posts (document_id, locale, title) values (${documentId}, 'fr', 'theirs')`.execute(trx)
    const { rows } = await sql<{ xid: string }>`select backend_xid::text as xid from pg_stat_activity where pid = pg_backend_pid()`.execute(trx)
    holderXid(rows[0].xid)
    await committing
  })
  const waiting = sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'transactionid' and transactionid = ${await xid}::xid and not granted`
  const answer = apps[1].inject(put)
  while ((await waiting.execute(db)).rows[0].n === 0) await new Promise((resolve) => setTimeout(resolve, 20))
  commit()
  await holder

  const res = await answer
  t.equal(res.statusCode, 503)
  t.match(res.json(), { data: null, error: { status: 503, name: 'ServiceUnavailableError', message: /concurrent write/ } })
  t.same(await duplicateVersions(db, 'posts', true), [], 'the index kept one draft')
  const again = await apps[1].inject(put)
  t.equal(again.statusCode, 200, 'the same request again succeeds')
  t.match(again.json().data, { documentId, locale: 'fr', title: 'ours' })
})

t.test('a role created at once from both instances (as at two first starts) exists once', async (t) => {
  const { apps, db } = await instances(t)
  const editor = { name: 'Editor', type: 'editor', description: 'Edits' }
  await Promise.all(Array.from({ length: 20 }, async (_, i) => { await apps[i % 2].contentApi.permissions.createRole(editor) }))
  const roles = await sql<{ n: number }>`select count(*)::int as n from up_roles where type = 'editor'`.execute(db)
  t.equal(roles.rows[0].n, 1, 'one editor role')
})
