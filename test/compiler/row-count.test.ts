import t, { type Test } from 'tap'
import { compileFindPage } from '../../lib/compiler/find.js'
import { defineContentType } from '../../lib/index.js'
import { createRegistry } from '../../lib/model/registry.js'
import { parseQuery, type RawQuery } from '../../lib/query/index.js'
import { rowCountsInUse } from '../../lib/schema/row-counts.js'
import { build } from '../helpers/build.js'
import { compiler } from '../helpers/sql-compiler.js'

/**
 * The total of a page from the row counts triggers keep (lib/compiler/row-count.ts): the SQL and
 * parameters of each case, then the executed total, which must equal `count(*)`. Cases that the
 * counts cannot answer (filters, row-level permissions, locale fallbacks) keep `count(*)`.
 */

const post = defineContentType({
  kind: 'collectionType',
  collectionName: 'posts',
  info: { singularName: 'post', pluralName: 'posts', displayName: 'Post' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: { title: { type: 'string', pluginOptions: { i18n: { localized: true } } }, views: { type: 'integer' } }
})
const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
  options: { draftAndPublish: false },
  attributes: { text: { type: 'string' } }
})

const registry = createRegistry([post, note])
const i18n = { locales: ['en', 'fr'], defaultLocale: 'en', fallbacks: { fr: ['en'] } }

const { app, database } = await build(t, { models: [post, note], i18n })
const posts = app.contentApi.documents('api::post.post')
for (const title of ['a', 'b', 'c']) {
  const { documentId } = await posts.create({ data: { title, views: title.charCodeAt(0) } })
  if (title !== 'c') await posts.update({ documentId, locale: 'fr', data: { title: `${title} fr` }, status: 'draft' })
}
await posts.create({ data: { title: 'd' }, status: 'draft' })
await app.contentApi.documents('api::note.note').create({ data: { text: 'x' } })
await app.contentApi.documents('api::note.note').create({ data: { text: 'y' } })

const { tables: rowCounts } = await rowCountsInUse(database.db, registry)
const OPTIONS = { escapeLikeWildcards: false, rowCounts }

const SUM = 'select coalesce(sum(c.n), 0)::int as "count" from "content_api_row_counts" as "c" where "c"."table_name" = '

async function check (t: Test, uid: string, query: RawQuery, expected: { count: RegExp, parameters: unknown[], total: number }): Promise<void> {
  const model = registry.get(uid)!
  const tree = parseQuery(model, { fields: [], pagination: { pageSize: 1 }, ...query }, {
    registry, limits: { defaultLimit: 25, maxLimit: 100, withCount: true }, i18n, allowAllLocales: true
  })
  const compiled = compileFindPage(compiler, model, tree, OPTIONS).compile()
  const total = /else \(\((.*)\)\) end from/s.exec(compiled.sql)?.[1] ?? ''
  t.match(total, expected.count, 'the count\'s SQL')
  t.same(compiled.parameters.slice(-expected.parameters.length), expected.parameters, 'its parameters')
  const row = await compileFindPage(database.db, model, tree, OPTIONS).executeTakeFirstOrThrow()
  t.equal(row.total, expected.total, 'the total')
  const plain = await compileFindPage(database.db, model, tree, { escapeLikeWildcards: false }).executeTakeFirstOrThrow()
  t.equal(plain.total, expected.total, 'count(*) says the same')
}

t.test('the tables the counts are kept for', async (t) => {
  t.ok(rowCounts.has('posts') && rowCounts.has('notes'))
})

t.test('an unfiltered total sums the counts of its keys', async (t) => {
  t.test('published, one locale', async (t) => {
    await check(t, 'api::post.post', {}, { count: new RegExp(`^${esc(SUM)}\\$5 and "c"."published" = \\$6 and "c"."locale" = \\$7$`), parameters: ['posts', true, 'en'], total: 3 })
  })
  t.test('drafts, one locale', async (t) => {
    await check(t, 'api::post.post', { status: 'draft', locale: 'en' }, { count: /"c"."published" = \$\d+ and "c"."locale" = \$\d+$/, parameters: ['posts', false, 'en'], total: 4 })
  })
  t.test('a list of locales: the sum over their keys', async (t) => {
    await check(t, 'api::post.post', { status: 'draft', locale: ['en', 'fr'] }, { count: /"c"."published" = \$\d+ and "c"."locale" in \(\$\d+, \$\d+\)$/, parameters: ['posts', false, 'en', 'fr'], total: 6 })
  })
  t.test('every locale: no locale condition, a sum over them', async (t) => {
    await check(t, 'api::post.post', { status: 'draft', locale: '*' }, { count: /"c"."table_name" = \$\d+ and "c"."published" = \$\d+$/, parameters: ['posts', false], total: 6 })
  })
  t.test('a publication cohort reads the rows: count(*)', async (t) => {
    await check(t, 'api::post.post', { status: 'draft', hasPublishedVersion: 'false' }, { count: /^select count\(\*\)::int as "count" from "posts" as "t" where/, parameters: ['en'], total: 1 })
  })
  t.test('a type with neither draft & publish nor i18n: the table\'s one key', async (t) => {
    await check(t, 'api::note.note', {}, { count: new RegExp(`^${esc(SUM)}\\$\\d+$`), parameters: ['notes'], total: 2 })
  })
})

t.test('what the counts cannot answer is counted row by row', async (t) => {
  t.test('filters', async (t) => {
    await check(t, 'api::post.post', { filters: { views: { $gt: 97 } } }, {
      count: /^select count\(\*\)::int as "count" from "posts" as "t" where \("t"."published_at" is not null and "t"."locale" = \$\d+ and "t"."views" > \$\d+\)$/,
      parameters: ['en', 97],
      total: 2
    })
  })
  t.test('a locale with fallbacks', async (t) => {
    await check(t, 'api::post.post', { locale: 'fr', status: 'draft' }, { count: /^select count\(\*\)::int .* not exists/s, parameters: ['fr', 'en'], total: 4 })
  })
  t.test('a table whose counts are not kept', async (t) => {
    const model = registry.get('api::note.note')!
    const tree = parseQuery(model, { pagination: { pageSize: 1 } }, { registry, limits: { defaultLimit: 25, maxLimit: 100, withCount: true }, i18n, allowAllLocales: true })
    const compiled = compileFindPage(compiler, model, tree, { escapeLikeWildcards: false, rowCounts: new Set(['posts']) }).compile()
    t.match(compiled.sql, /else \(\(select count\(\*\)::int as "count" from "notes"/)
  })
})

t.test('REST: the total follows creates, publications, unpublications and deletes', async (t) => {
  const total = async (query: string): Promise<number> => {
    const res = await app.inject({ method: 'GET', url: `/api/posts?pagination[pageSize]=1&${query}` })
    return res.json().meta.pagination.total
  }
  t.equal(await total(''), 3)
  const { documentId } = await posts.create({ data: { title: 'e' } })
  t.equal(await total(''), 4, 'a create')
  await posts.unpublish({ documentId })
  t.equal(await total(''), 3, 'an unpublish')
  t.equal(await total('status=draft'), 5)
  await posts.publish({ documentId })
  t.equal(await total(''), 4, 'a publish')
  await posts.delete({ documentId })
  t.equal(await total(''), 3, 'a delete')
  t.equal(await total('status=draft&locale=*'), 6)
  t.equal(await total('locale=fr&status=draft'), 4, 'fallbacks: counted row by row')
})

function esc (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
