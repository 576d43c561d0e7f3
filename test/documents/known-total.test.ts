import t from 'tap'
import Fastify from 'fastify'
import { sql } from 'kysely'
import contentApi, { defineContentType } from '../../lib/index.js'
import { build, contentActions } from '../helpers/build.js'

/**
 * A filtered page's total is remembered with the change count of its table, and PostgreSQL
 * checks in the page's own statement whether the table changed since (lib/documents/known-total.ts,
 * lib/compiler/row-count.ts `rememberedCount`). The proof that the count is skipped: a write made
 * with the triggers off (`session_replication_role = replica`, which no application write path
 * uses) moves no change count, so the remembered total is answered. Every write that fires the
 * triggers, from any instance or any SQL, makes the next total exact.
 */

const tag = defineContentType({
  kind: 'collectionType',
  collectionName: 'tags',
  info: { singularName: 'tag', pluralName: 'tags', displayName: 'Tag' },
  options: { draftAndPublish: false },
  attributes: { name: { type: 'string' } }
})
const post = defineContentType({
  kind: 'collectionType',
  collectionName: 'posts',
  info: { singularName: 'post', pluralName: 'posts', displayName: 'Post' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: {
    title: { type: 'string' },
    views: { type: 'integer' },
    tag: { type: 'relation', relation: 'manyToOne', target: 'api::tag.tag' }
  }
})
const i18n = { locales: ['en', 'fr'], defaultLocale: 'en' }

const { app, database } = await build(t, { models: [post, tag], i18n })
const { db } = database
const posts = app.contentApi.documents('api::post.post')
const red = await app.contentApi.documents('api::tag.tag').create({ data: { name: 'red' } })
for (let i = 0; i < 12; i++) await posts.create({ data: { title: `p${i}`, views: i * 10, ...i % 2 === 0 ? { tag: red.documentId } : {} }, status: 'published' })

/** A second instance on the same database, with its own statement cache. */
const other = Fastify({ logger: false, pluginTimeout: 120_000 })
await other.register(contentApi, { models: [post, tag], i18n, db, auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false } })
await other.ready()
await other.contentApi.permissions.grant('public', contentActions(other))
t.teardown(() => other.close())

async function total (url: string, on = app): Promise<number> {
  const res = await on.inject({ method: 'GET', url })
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return res.json().meta.pagination.total
}

/** A published post written with the triggers off: no change count moves. */
async function unseenInsert (views: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    await sql`insert into posts (document_id, locale, title, views, published_at) values (${`unseen${views}`}, 'en', 'unseen', ${views}, now())`.execute(trx)
  })
}

const FILTERED = '/api/posts?filters[views][$gt]=15&pagination[pageSize]=2'

t.test('a filtered total is remembered while the table is unchanged, and exact after any write', async (t) => {
  t.equal(await total(FILTERED), 10, 'counted')
  t.equal(await total(FILTERED), 10, 'asked again: the same total (the steps below show whether it was counted)')
  await unseenInsert(500)
  t.equal(await total(FILTERED), 10, 'a write the triggers did not see is not seen: the count was skipped')
  t.equal(await total('/api/posts?filters[views][$gt]=16&pagination[pageSize]=2'), 11, 'another filter value is its own statement: counted')
  await sql`update posts set title = 'renamed' where title = 'p0'`.execute(db)
  t.equal(await total(FILTERED), 11, 'an update of an unfiltered column changes the table: counted again')
  t.equal(await total(FILTERED, other), 11, 'the other instance counts')
  await other.inject({ method: 'POST', url: '/api/posts', payload: { data: { title: 'new', views: 99 } } })
  t.equal(await total(FILTERED), 12, 'a create on the other instance: exact here')
  t.equal(await total(FILTERED, other), 12, 'and there')
  const gone = await posts.findFirst({ filters: { title: 'new' } })
  await posts.delete({ documentId: gone!.documentId })
  t.equal(await total(FILTERED), 11, 'a delete')
  await unseenInsert(600)
  t.equal(await total(FILTERED), 11, 'remembered again')
})

t.test('a page that is not full tells its total, which is remembered too', async (t) => {
  const url = '/api/posts?filters[views][$gt]=95&pagination[pageSize]=25'
  const before = await total(url)
  await unseenInsert(700)
  t.equal(await total(url), before + 1, 'a short page counts its own rows, whatever is remembered')
})

t.test('a cursor page counted on request remembers its total the same way', async (t) => {
  const url = '/api/posts?filters[views][$gt]=15&pagination[after]=&pagination[pageSize]=2&pagination[withCount]=true'
  const before = await total(url)
  t.equal(await total(url), before, 'asked again: the same total')
  await unseenInsert(800)
  t.equal(await total(url), before, 'the count was skipped')
  await sql`update posts set title = 'again' where title = 'p2'`.execute(db)
  t.equal(await total(url), before + 1, 'counted again after a write')
})

t.test('an earlier release\'s trigger function put back: totals are counted, and not matched after this one returns', async (t) => {
  const url = '/api/posts?filters[views][$gt]=25&pagination[pageSize]=2'
  const before = await total(url)
  t.equal(await total(url), before, 'asked again: the same total')
  // An earlier release's instance starting now would `create or replace` its own function: one
  // that keeps no change count (here, none at all).
  const { rows } = await sql<{ body: string }>`select prosrc as body from pg_proc where proname = 'content_api_count_rows' and pronamespace = current_schema()::regnamespace`.execute(db)
  await sql.raw('create or replace function content_api_count_rows() returns trigger language plpgsql as $$ begin return null; end $$').execute(db)
  await sql`insert into posts (document_id, locale, title, views, published_at) values ('old-release', 'en', 'old', 900, now())`.execute(db)
  t.equal(await total(url), before + 1, 'a write through the other function: counted')
  await sql`insert into posts (document_id, locale, title, views, published_at) values ('old-release-2', 'en', 'old', 900, now())`.execute(db)
  t.equal(await total(url), before + 2, 'and another: counted again, nothing was remembered meanwhile')
  // This release's function back (as sync puts it), then a write no trigger sees.
  await sql.raw(`create or replace function content_api_count_rows() returns trigger language plpgsql set search_path from current as $$${rows[0].body}$$`).execute(db)
  await unseenInsert(901)
  t.equal(await total(url), before + 3, 'a change count read before the function was replaced does not match after')
  await unseenInsert(902)
  t.equal(await total(url), before + 3, 'and with this release\'s function back, totals are remembered again')
})

t.test('a publication cohort reads other rows of its own table: remembered, and exact after a publish', async (t) => {
  const url = '/api/posts?status=draft&hasPublishedVersion=false&pagination[pageSize]=1'
  const draft = await posts.create({ data: { title: 'cohort', views: 1 }, status: 'draft' })
  const before = await total(url)
  t.ok(before >= 1, 'drafts never published')
  t.equal(await total(url), before, 'asked again: the same total')
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    await sql`insert into posts (document_id, locale, title, views) values ('unseen-draft', 'en', 'unseen', 1)`.execute(trx)
  })
  t.equal(await total(url), before, 'a draft the triggers did not see: the count was skipped')
  await posts.publish({ documentId: draft.documentId })
  t.equal(await total(url), before, 'a publish adds the published row the cohort tests for: counted again (one less, and the unseen draft)')
})

t.test('a total through a relation is never remembered: link tables keep no change count', async (t) => {
  const url = '/api/posts?filters[tag][name][$eq]=red&pagination[pageSize]=2'
  const before = await total(url)
  t.equal(await total(url), before)
  await sql`insert into posts_tag_lnk (post_id, tag_id) select p.id, (select id from tags limit 1) from posts as p
    where p.title = 'p1' and p.published_at is not null`.execute(db)
  t.equal(await total(url), before + 1, 'a link written by SQL moves no change count, and the total follows it')
})

t.test('an unfiltered total is a sum of the row counts, exact at once', async (t) => {
  const url = '/api/posts?pagination[pageSize]=2'
  const before = await total(url)
  await sql`insert into posts (document_id, locale, title, views, published_at) values ('plain', 'en', 'plain', 1, now())`.execute(db)
  t.equal(await total(url), before + 1)
})
