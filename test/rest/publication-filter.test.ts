import t from 'tap'
import { compileFindPage } from '../../lib/compiler/find.js'
import { defineContentType } from '../../lib/index.js'
import { createRegistry } from '../../lib/model/registry.js'
import { parseQuery } from '../../lib/query/index.js'
import { build } from '../helpers/build.js'
import { compiler } from '../helpers/sql-compiler.js'

/**
 * Strapi 5's publication cohorts (`publicationFilter`, and the deprecated `hasPublishedVersion`
 * that means one of two of them), as @strapi/utils' publication filter decides them: the SQL
 * the compiler adds, then every cohort through REST and the flat GraphQL shape.
 *
 * The documents, in `en` unless said: `same` published and not edited since; `draft` never
 * published; `edited` published, then its draft edited; `split` published in `en` with a `fr`
 * draft never published.
 */

const post = defineContentType({
  kind: 'collectionType',
  collectionName: 'posts',
  info: { singularName: 'post', pluralName: 'posts', displayName: 'Post' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: { title: { type: 'string', pluginOptions: { i18n: { localized: true } } } }
})
const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
  options: { draftAndPublish: false },
  attributes: { text: { type: 'string' } }
})
const tag = defineContentType({
  kind: 'collectionType',
  collectionName: 'tags',
  info: { singularName: 'tag', pluralName: 'tags', displayName: 'Tag' },
  options: { draftAndPublish: false },
  attributes: { name: { type: 'string' }, posts: { type: 'relation', relation: 'oneToMany', target: 'api::post.post' } }
})
const i18n = { locales: ['en', 'fr'], defaultLocale: 'en' }
const registry = createRegistry([post, note, tag])

const { app } = await build(t, { models: [post, note, tag], i18n, graphql: { format: 'flat' } })
const posts = app.contentApi.documents('api::post.post')
const same = await posts.create({ data: { title: 'same' } })
const draftOnly = await posts.create({ data: { title: 'draft' }, status: 'draft' })
const edited = await posts.create({ data: { title: 'edited' } })
// The draft's updated_at must come after the published row's.
await new Promise((resolve) => setTimeout(resolve, 5))
await posts.update({ documentId: edited.documentId, data: { title: 'edited again' }, status: 'draft' })
const split = await posts.create({ data: { title: 'split' } })
await posts.update({ documentId: split.documentId, locale: 'fr', data: { title: 'split fr' }, status: 'draft' })
await app.contentApi.documents('api::note.note').create({ data: { text: 'n' } })
await app.contentApi.documents('api::tag.tag').create({ data: { name: 'all', posts: [same.documentId, draftOnly.documentId, edited.documentId] } })

async function titles (query: string): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: `/api/posts?fields[0]=title&sort=title&${query}` })
  t.equal(res.statusCode, 200, query)
  return res.json().data.map((d: { title: string }) => d.title)
}

t.test('the SQL: one exists on the other version of the same document (and locale)', async (t) => {
  const model = registry.get('api::post.post')!
  const sqlOf = (raw: Record<string, unknown>): string => compileFindPage(compiler, model, parseQuery(model, raw, {
    registry, limits: { defaultLimit: 25, maxLimit: 100, withCount: true }, i18n, allowAllLocales: true
  }), { escapeLikeWildcards: false }).compile().sql
  t.match(sqlOf({ status: 'draft', publicationFilter: 'has-published-version' }),
    'exists (select 1 from "posts" as "t_version"\n    where "t_version"."document_id" = "t"."document_id" and "t_version"."locale" is not distinct from "t"."locale" and "t_version"."published_at" is not null)')
  t.match(sqlOf({ status: 'draft', hasPublishedVersion: 'false' }),
    'not exists (select 1 from "posts" as "t_version"\n    where "t_version"."document_id" = "t"."document_id" and "t_version"."published_at" is not null)', 'document-scoped: no locale')
  t.match(sqlOf({ publicationFilter: 'modified' }), 'and "t_version"."published_at" is null and "t_version"."updated_at" > "t"."updated_at")')
  t.match(sqlOf({ publicationFilter: 'never-published' }), /and false/, 'never published yet published: nothing')
  t.notMatch(sqlOf({ publicationFilter: 'modified' }), 'content_api_row_counts', 'the total is counted, not read from the row counts')
})

t.test('REST: every cohort, on drafts and on published rows', async (t) => {
  const draft = (filter: string): Promise<string[]> => titles(`status=draft&publicationFilter=${filter}`)
  const published = (filter: string): Promise<string[]> => titles(`publicationFilter=${filter}`)
  t.same(await draft('never-published'), ['draft'])
  t.same(await draft('has-published-version'), ['edited again', 'same', 'split'])
  t.same(await draft('modified'), ['edited again'])
  t.same(await draft('unmodified'), ['same', 'split'])
  t.same(await draft('published-with-draft'), [], 'a published-only cohort read as drafts')
  t.same(await published('never-published'), [])
  t.same(await published('has-published-version'), ['edited', 'same', 'split'])
  t.same(await published('modified'), ['edited'])
  t.same(await published('unmodified'), ['same', 'split'])
  t.same(await published('published-with-draft'), ['edited', 'same', 'split'])
  t.same(await published('published-without-draft'), [], 'publishing keeps the draft')
  t.test('pair-scoped or document-scoped: a locale never published of a published document', async (t) => {
    t.same(await titles('status=draft&locale=fr&publicationFilter=never-published'), ['split fr'])
    t.same(await titles('status=draft&locale=fr&publicationFilter=never-published-document'), [])
    t.same(await titles('status=draft&locale=fr&publicationFilter=has-published-version-document'), ['split fr'])
  })
  t.test('hasPublishedVersion: the document-scoped pair; publicationFilter wins', async (t) => {
    t.same(await titles('status=draft&hasPublishedVersion=false'), ['draft'])
    t.same(await titles('status=draft&hasPublishedVersion=true'), ['edited again', 'same', 'split'])
    t.same(await titles('status=draft&hasPublishedVersion=true&publicationFilter=modified'), ['edited again'])
    const res = await app.inject({ method: 'GET', url: '/api/posts?status=draft&hasPublishedVersion=false' })
    t.equal(res.json().meta.pagination.total, 1, 'the total counts the cohort')
  })
  t.test('one document too', async (t) => {
    const res = await app.inject({ method: 'GET', url: `/api/posts/${edited.documentId}?publicationFilter=unmodified` })
    t.equal(res.statusCode, 404)
  })
  t.test('a type without draft & publish checks the values and ignores them', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/api/notes?hasPublishedVersion=false' })
    t.equal(res.json().data.length, 1)
  })
  t.test('populated draft & publish relations follow the cohort, under any root', async (t) => {
    const populated = async (query: string): Promise<string[]> => {
      const res = await app.inject({ method: 'GET', url: `/api/tags?populate[posts][fields][0]=title&${query}` })
      return res.json().data[0].posts.map((p: { title: string }) => p.title).sort()
    }
    t.same(await populated('status=draft'), ['draft', 'edited again', 'same'])
    t.same(await populated('status=draft&hasPublishedVersion=false'), ['draft'])
    t.same(await populated('status=draft&publicationFilter=unmodified'), ['same'])
    t.same(await populated('publicationFilter=modified'), ['edited'])
  })
  t.test('a bad value is a 400', async (t) => {
    const bad = await app.inject({ method: 'GET', url: '/api/posts?publicationFilter=sometimes' })
    t.equal(bad.statusCode, 400)
    t.match(bad.json().error, { name: 'ValidationError', message: /^Invalid value for 'publicationFilter'\. Expected one of: never-published, /, details: { param: 'publicationFilter' } })
    const legacy = await app.inject({ method: 'GET', url: '/api/notes?hasPublishedVersion=yes' })
    t.same(legacy.json().error, {
      status: 400, name: 'ValidationError', message: "Invalid value for 'hasPublishedVersion'. Expected boolean or 'true'/'false' string.", details: { source: 'query', param: 'hasPublishedVersion' }
    })
  })
})

t.test('GraphQL (flat): publicationFilter and hasPublishedVersion on root reads', async (t) => {
  const gql = async (query: string): Promise<any> => (await app.inject({ method: 'POST', url: '/graphql', payload: { query } })).json()
  t.same((await gql('{ posts(status: DRAFT, publicationFilter: MODIFIED) { title } }')).data.posts, [{ title: 'edited again' }])
  t.same((await gql('{ posts_connection(status: DRAFT, hasPublishedVersion: false) { nodes { title } pageInfo { total } } }')).data.posts_connection,
    { nodes: [{ title: 'draft' }], pageInfo: { total: 1 } })
  t.same((await gql(`{ post(documentId: "${edited.documentId}", publicationFilter: UNMODIFIED) { title } }`)).data.post, null)
  t.same((await gql('{ notes(hasPublishedVersion: false) { text } }')).data.notes, [{ text: 'n' }], 'accepted on every type')
  t.same((await gql('{ tags(status: DRAFT, publicationFilter: NEVER_PUBLISHED) { posts { title } } }')).data.tags, [{ posts: [{ title: 'draft' }] }], 'and relations follow it')
  t.match((await gql('{ posts(publicationState: LIVE) { title } }')).errors[0].message, 'Did you mean "publicationFilter"?', 'as graphql-js tells a Strapi client')
  t.match((await gql('{ posts(publicationFilter: SOMETIMES) { title } }')).errors[0].message, /Value "SOMETIMES" does not exist in "PublicationFilter" enum/)
})
