import http from 'node:http'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { defineContentType } from '../../lib/index.js'
import { build } from '../helpers/build.js'

/**
 * What a caller reaches beyond a query's root type: relations, media, `localizations`, in
 * populate (REST and GraphQL), filters, sort and counts. Each type reached shows only what its
 * `find` grant allows, row-level conditions and field-level limits included, enforced in SQL;
 * with `draftsRequirePermission`, a draft read needs `findDrafts` of every draft & publish type
 * it reaches. And what bounds a query's nesting.
 */

const USER = 'plugin::users-permissions.user'
const PROJECT = 'api::project.project'
const NOTE = 'api::note.note'
const PAGE = 'api::page.page'
const ARTICLE = 'api::article.article'
const CATEGORY = 'api::category.category'
const PASSWORD = 'Password123!'

const project = defineContentType({
  kind: 'collectionType',
  collectionName: 'projects',
  info: { singularName: 'project', pluralName: 'projects' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string' },
    notes: { type: 'relation', relation: 'oneToMany', target: NOTE, mappedBy: 'project' }
  }
})

const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes' },
  options: { draftAndPublish: false },
  attributes: {
    title: { type: 'string' },
    body: { type: 'text' },
    owner: { type: 'relation', relation: 'manyToOne', target: USER },
    project: { type: 'relation', relation: 'manyToOne', target: PROJECT, inversedBy: 'notes' }
  }
})

const page = defineContentType({
  kind: 'collectionType',
  collectionName: 'pages',
  info: { singularName: 'page', pluralName: 'pages' },
  options: { draftAndPublish: false },
  pluginOptions: { i18n: { localized: true } },
  attributes: { title: { type: 'string' }, body: { type: 'text' }, team: { type: 'string' } }
})

const category = defineContentType({
  kind: 'collectionType',
  collectionName: 'categories',
  info: { singularName: 'category', pluralName: 'categories' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string' },
    articles: { type: 'relation', relation: 'oneToMany', target: ARTICLE, mappedBy: 'category' }
  }
})

const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string' },
    body: { type: 'text' },
    category: { type: 'relation', relation: 'manyToOne', target: CATEGORY, inversedBy: 'articles' },
    related: { type: 'relation', relation: 'manyToMany', target: ARTICLE },
    author: { type: 'relation', relation: 'manyToOne', target: USER }
  }
})

const models = [project, note, page, category, article]
const options = { models, publicAccess: false, graphql: { format: 'flat' as const }, i18n: { locales: ['en', 'fr'], defaultLocale: 'en' } }
const invalidKey = (key: string) => ({ status: 400, name: 'ValidationError', message: `Invalid key ${key}` })
const FORBIDDEN = { data: null, error: { status: 403, name: 'ForbiddenError', message: 'Forbidden', details: {} } }

interface Answer { status: number, json: any, text: string }

function client (app: FastifyInstance) {
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token?: string, payload?: unknown): Promise<Answer> => {
    const res = await app.inject({
      method,
      url,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> })
    })
    return { status: res.statusCode, json: res.body === '' ? undefined : JSON.parse(res.body), text: res.body }
  }
  const gql = async (query: string, token?: string, variables?: Record<string, unknown>): Promise<Answer> =>
    await call('POST', '/graphql', token, { query, variables })
  return { call, gql }
}

async function register (app: FastifyInstance, username: string): Promise<{ jwt: string, id: number, documentId: string }> {
  const res = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username, email: `${username}@example.com`, password: PASSWORD } })
  if (res.statusCode !== 200) throw new Error(`register ${username}: ${res.body}`)
  const { jwt, user } = res.json()
  return { jwt, id: user.id, documentId: user.documentId }
}

t.test('row-level conditions hold wherever a type is read through a relation', async (t) => {
  const { app } = await build(t, options)
  const { call, gql } = client(app)
  const alice = await register(app, 'alice')
  const bob = await register(app, 'bob')
  const projects = app.contentApi.documents(PROJECT)
  const notes = app.contentApi.documents(NOTE)
  const shared = await projects.create({ data: { name: 'Shared' } })
  await notes.create({ data: { title: 'A1', body: 'alice one', owner: alice.documentId, project: shared.documentId } })
  await notes.create({ data: { title: 'B1', body: 'bob one', owner: bob.documentId, project: shared.documentId } })
  await notes.create({ data: { title: 'B2', body: 'bob two', owner: bob.documentId, project: shared.documentId } })
  const owned = { conditions: { owner: { id: { $eq: '$user.id' } } } }
  await app.contentApi.permissions.grant('authenticated', [`${NOTE}.find`], owned)
  await app.contentApi.permissions.grant('authenticated', [`${PROJECT}.find`])

  const titles = (notesOf: Array<{ title: string }>): string[] => notesOf.map((n) => n.title).sort()
  const populated = await call('GET', '/api/projects?populate=notes', alice.jwt)
  t.equal(populated.status, 200)
  t.strictSame(titles(populated.json.data[0].notes), ['A1'], 'populate shows only the notes Alice may find')
  t.strictSame(titles((await call('GET', '/api/projects?populate=notes', bob.jwt)).json.data[0].notes), ['B1', 'B2'], 'and Bob only his (each caller gets their own statement)')
  t.strictSame(titles((await call('GET', '/api/projects?populate=*', alice.jwt)).json.data[0].notes), ['A1'], 'populate=*')
  t.strictSame(titles((await call('GET', '/api/projects?populate[notes][filters][title][$startsWith]=B', alice.jwt)).json.data[0].notes), [],
    'the request\'s own populate filters cannot widen them')
  t.strictSame((await call('GET', '/api/projects?populate[notes][count]=true', alice.jwt)).json.data[0].notes, { count: 1 }, 'counts count visible rows only')
  t.strictSame((await call('GET', '/api/projects?populate[notes][count]=true', bob.jwt)).json.data[0].notes, { count: 2 })

  t.equal((await call('GET', '/api/projects?filters[notes][title][$eq]=B1', alice.jwt)).json.data.length, 0, 'filters through the relation see visible rows only')
  t.equal((await call('GET', '/api/projects?filters[notes][title][$eq]=A1', alice.jwt)).json.data.length, 1)
  t.equal((await call('GET', '/api/projects?filters[notes][title][$eq]=B1', bob.jwt)).json.data.length, 1)
  await projects.create({ data: { name: 'Bob only' } }).then(async (p) => await notes.create({ data: { title: 'B3', owner: bob.documentId, project: p.documentId } }))
  t.strictSame((await call('GET', '/api/projects?filters[notes][$null]=true', alice.jwt)).json.data.map((p: { name: string }) => p.name), ['Bob only'],
    'a project whose notes Alice cannot see has none, for her')
  const names = async (url: string, jwt: string): Promise<string[]> => (await call('GET', url, jwt)).json.data.map((p: { name: string }) => p.name)
  t.strictSame(await names('/api/projects?filters[notes][title][$ne]=A1&sort=name', alice.jwt), [], 'Bob\'s notes do not make Shared match for Alice')
  t.strictSame(await names('/api/projects?filters[notes][title][$ne]=A1&sort=name', bob.jwt), ['Bob only', 'Shared'], 'they do for Bob')
  t.strictSame(await names('/api/projects?sort=notes.title:desc&filters[name][$eq]=Shared', alice.jwt), ['Shared'], 'sort through the relation')

  const viaGraphql = await gql('{ projects(sort: "name") { name notes { title } notes_connection { nodes { title } } } }', alice.jwt)
  t.strictSame(viaGraphql.json, { data: { projects: [{ name: 'Bob only', notes: [], notes_connection: { nodes: [] } }, { name: 'Shared', notes: [{ title: 'A1' }], notes_connection: { nodes: [{ title: 'A1' }] } }] } },
    'GraphQL nested fields, connections included')
  const filteredGraphql = await gql('{ projects(filters: { notes: { title: { eq: "B1" } } }) { name } }', alice.jwt)
  t.strictSame(filteredGraphql.json, { data: { projects: [] } }, 'and GraphQL filters through relations')

  // A user list limited to the caller's own account holds through any path.
  await app.contentApi.permissions.grant('authenticated', [`${USER}.find`], { conditions: { id: { $eq: '$user.id' } } })
  await app.contentApi.permissions.grant('authenticated', ['plugin::users-permissions.role.find'])
  const users = await call('GET', '/api/users?populate[role][populate][users][fields][0]=email', alice.jwt)
  t.equal(users.status, 200)
  t.strictSame(users.json.map((u: any) => u.role.users.map((v: { email: string }) => v.email)), [['alice@example.com']], 'role.users shows Alice herself only')
  t.strictSame(titles((await call('GET', '/api/notes?populate=owner', alice.jwt)).json.data.map((n: any) => ({ title: n.owner.username }))), ['alice'])
})

t.test('field-level limits hold wherever a type is read through a relation', async (t) => {
  const { app } = await build(t, options)
  const { call, gql } = client(app)
  const categories = app.contentApi.documents(CATEGORY)
  const articles = app.contentApi.documents(ARTICLE)
  const news = await categories.create({ data: { name: 'News' } })
  const first = await articles.create({ data: { title: 'First', body: 'BODY-1', category: news.documentId } })
  await articles.create({ data: { title: 'Second', body: 'BODY-2', category: news.documentId, related: [first.documentId] } })
  const { permissions } = app.contentApi
  await permissions.grant('public', [`${ARTICLE}.find`], { fields: ['title', 'category', 'related'] })
  await permissions.grant('public', [`${CATEGORY}.find`])

  for (const url of [
    '/api/articles?fields=title&populate[category][populate][articles][fields][0]=body',
    '/api/articles?populate[related][fields][0]=body',
    '/api/articles?filters[related][body][$eq]=BODY-1',
    '/api/articles?sort=related.body',
    '/api/articles?populate[related][filters][body][$eq]=BODY-1',
    '/api/articles?populate[related][sort]=body',
    '/api/categories?filters[articles][body][$eq]=BODY-1',
    '/api/categories?sort=articles.body'
  ]) {
    const res = await call('GET', url)
    t.equal(res.status, 400, url)
    t.match(res.json.error, invalidKey('body'), `${url}: Invalid key body`)
  }
  const back = await call('GET', '/api/categories?populate=articles')
  t.equal(back.status, 200)
  t.strictSame(Object.keys(back.json.data[0].articles[0]).sort(), ['createdAt', 'documentId', 'id', 'publishedAt', 'title', 'updatedAt'],
    'a populated type shows the attributes its find grant lists')
  t.notMatch(back.text, /BODY-/)
  t.notMatch((await call('GET', '/api/articles?populate=*')).text, /BODY-/, 'populate=* too')
  t.match((await call('GET', '/api/categories?populate[articles][populate]=author')).json.error, invalidKey('author'), 'an unlisted relation of a populated type')

  const viaGraphql = await gql('{ categories { articles { title body } } }')
  t.notOk(viaGraphql.json.data?.categories, 'GraphQL: selecting an unlisted field of a related type fails the root field')
  t.match(viaGraphql.json.errors[0], { message: 'Invalid key body', extensions: { code: 'BAD_USER_INPUT' } })
  t.notMatch((await gql('{ categories { articles(filters: { body: { eq: "BODY-1" } }) { title } } }')).text, /"title"/, 'nor filter on it')
  t.strictSame((await gql('{ categories { articles(sort: "title") { title } } }')).json, { data: { categories: [{ articles: [{ title: 'First' }, { title: 'Second' }] }] } })
})

t.test('localizations show only the rows and attributes the caller may find', async (t) => {
  const { app } = await build(t, options)
  const { call, gql } = client(app)
  const pages = app.contentApi.documents(PAGE)
  const home = await pages.create({ data: { title: 'EN', body: 'EN BODY', team: 'a' } })
  await pages.update({ documentId: home.documentId, locale: 'fr', data: { title: 'FR', body: 'FR HIDDEN BODY', team: 'b' } })
  await pages.update({ documentId: home.documentId, locale: 'en', data: { title: 'EN' } })
  await app.contentApi.permissions.grant('public', [`${PAGE}.find`], { conditions: { team: 'a' }, fields: ['title', 'team'] })

  t.strictSame((await call('GET', '/api/pages?locale=fr')).json.data, [], 'the fr version is outside the conditions')
  for (const url of ['/api/pages?populate=localizations', '/api/pages?populate=*', '/api/pages?populate[localizations][fields][0]=title']) {
    const res = await call('GET', url)
    t.equal(res.status, 200, url)
    t.strictSame(res.json.data[0].localizations, [], `${url}: no fr row`)
  }
  t.match((await call('GET', '/api/pages?populate[localizations][fields][0]=body')).json.error, invalidKey('body'), 'nor its hidden attribute')
  await app.contentApi.permissions.grant('public', [`${PAGE}.find`], { fields: ['title', 'team'] })
  const visible = await call('GET', '/api/pages?populate=localizations')
  t.strictSame(visible.json.data[0].localizations.map((p: any) => [p.title, p.team, 'body' in p]), [['FR', 'b', false]], 'without conditions: the fr row, its listed attributes only')
  t.strictSame((await gql('{ pages { localizations { title team } } }')).json, { data: { pages: [{ localizations: [{ title: 'FR', team: 'b' }] }] } }, 'GraphQL')
  t.match((await gql('{ pages { localizations { body } } }')).json.errors[0], { message: 'Invalid key body' })

  await app.contentApi.permissions.revoke('public', [`${PAGE}.find`])
  await app.contentApi.permissions.grant('public', [`${PAGE}.findOne`])
  t.match((await call('GET', `/api/pages/${home.documentId}?populate=localizations`)).json.error, invalidKey('localizations'),
    'localizations are a read of the type: they need its find')
  t.notOk('localizations' in (await call('GET', `/api/pages/${home.documentId}?populate=*`)).json.data, 'and populate=* leaves them out')
})

t.test('draftsRequirePermission reaches every draft & publish type of a draft read', async (t) => {
  const { app } = await build(t, { ...options, auth: { draftsRequirePermission: true } })
  const { call, gql } = client(app)
  const categories = app.contentApi.documents(CATEGORY)
  const articles = app.contentApi.documents(ARTICLE)
  const news = await categories.create({ data: { name: 'News' } })
  const published = await articles.create({ data: { title: 'Published', category: news.documentId } })
  await articles.create({ data: { title: 'DRAFT ONLY', category: news.documentId }, status: 'draft' })
  const { permissions } = app.contentApi
  await permissions.grant('public', [`${CATEGORY}.find`, `${CATEGORY}.findDrafts`, `${ARTICLE}.find`, `${ARTICLE}.update`])

  t.equal((await call('GET', '/api/categories?status=draft')).status, 200, 'the category\'s own drafts: granted')
  t.match((await call('GET', '/api/categories?status=draft&populate[articles][fields][0]=title')).json.error, invalidKey('articles'),
    'its articles\' drafts need article.findDrafts')
  t.notOk('articles' in (await call('GET', '/api/categories?status=draft&populate=*')).json.data[0], 'populate=* leaves them out')
  t.equal((await call('GET', '/api/categories?populate=articles')).json.data[0].articles.length, 1, 'published reads are unaffected')
  t.match((await gql('{ categories(status: DRAFT) { articles { title } } }')).json.errors[0], { extensions: { code: 'FORBIDDEN' } }, 'GraphQL too')

  t.strictSame((await call('PUT', `/api/articles/${published.documentId}?status=draft`, undefined, { data: {} })).json, FORBIDDEN, 'REST writes answering a draft')
  const mutation = await gql(`mutation { updateArticle(documentId: "${published.documentId}", status: DRAFT, data: { title: "Edited" }) { title } }`)
  t.match(mutation.json.errors[0], { extensions: { code: 'FORBIDDEN' } }, 'and GraphQL mutations with status: DRAFT')
  t.equal((await articles.findOne({ documentId: published.documentId, status: 'draft' }))?.title, 'Published', 'wrote nothing')

  await permissions.grant('public', [`${ARTICLE}.findDrafts`])
  const drafts = await call('GET', '/api/categories?status=draft&populate[articles][fields][0]=title&populate[articles][sort]=title')
  t.strictSame(drafts.json.data[0].articles.map((a: { title: string }) => a.title), ['DRAFT ONLY', 'Published'], 'granted: the drafts')
})

t.test('the status a route checks is the status its query runs with', async (t) => {
  const { app } = await build(t, { ...options, auth: { draftsRequirePermission: true } })
  await app.contentApi.documents(ARTICLE).create({ data: { title: 'SECRET DRAFT' }, status: 'draft' })
  await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`])
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  // Over a real connection: `inject` drops a URL's fragment, a raw request keeps it.
  const raw = async (path: string): Promise<{ status: number, body: string }> => await new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = ''
      res.on('data', (chunk) => { body += String(chunk) })
      res.on('end', () => { resolve({ status: res.statusCode!, body }) })
    })
    request.on('error', reject)
    request.end()
  })
  t.equal((await raw('/api/articles?status=draft')).status, 403)
  for (const path of ['/api/articles#?status=draft', '/api/articles#x?status=draft', '/api/articles?x=1#&status=draft']) {
    const answer = await raw(path)
    t.ok(answer.status === 200 || answer.status === 403, `${path}: published documents, or refused`)
    t.notMatch(answer.body, /SECRET DRAFT/, `${path}: never the draft`)
  }
})

t.test('nesting is bounded; dotted paths cannot reach Object.prototype', async (t) => {
  const { app } = await build(t, { ...options, publicAccess: true })
  const { call } = client(app)
  await app.contentApi.permissions.grant('public', [`${USER}.find`, 'plugin::users-permissions.role.find'])
  const deep = (n: number): string => Array.from({ length: n }, () => 'category.articles').join('.')
  t.equal((await call('GET', `/api/articles?populate=${deep(3)}`)).status, 200, '6 levels (limits.populateDepth): fine')
  const dotted6 = Array.from({ length: 6 }, (_, i) => i % 2 === 0 ? 'articles' : 'category').join('.')
  for (const url of [`/api/articles?populate=${deep(4)}`, `/api/articles?populate[category][populate]=${dotted6}`, `/api/users?populate=${Array.from({ length: 1000 }, () => 'role.users').join('.')}`]) {
    const res = await call('GET', url)
    t.equal(res.status, 400, `${url.slice(0, 60)}...`)
    t.same(res.json.error.details, { limit: 'limits.populateDepth', max: 6 })
  }
  // Sort paths go as deep as the query string's bracket form can (20 relations).
  for (const url of [`/api/articles?sort=${deep(11)}.title`, `/api/articles?sort=${deep(500)}.title`]) {
    const res = await call('GET', url)
    t.equal(res.status, 400, `${url.slice(0, 60)}...`)
    t.match(res.json.error.message, /deeper than 20 levels/)
  }
  for (const url of ['/api/articles?populate=__proto__.polluted', '/api/articles?populate=category.constructor.prototype', '/api/articles?populate[0]=__proto__']) {
    const res = await call('GET', url)
    t.equal(res.status, 400, url)
    t.equal(({} as Record<string, unknown>).populate, undefined, `${url}: Object.prototype untouched`)
  }
})

t.test('writes neither link nor unlink what the caller cannot see', async (t) => {
  const { app } = await build(t, options)
  const { call } = client(app)
  const alice = await register(app, 'alice')
  const bob = await register(app, 'bob')
  const projects = app.contentApi.documents(PROJECT)
  const notes = app.contentApi.documents(NOTE)
  const { permissions } = app.contentApi
  const mine = await projects.create({ data: { name: 'Mine' } })
  const aliceNote = await notes.create({ data: { title: 'A1', owner: alice.documentId } })
  const bobNote = await notes.create({ data: { title: 'B1', owner: bob.documentId, project: mine.documentId } })
  const owned = { conditions: { owner: { id: { $eq: '$user.id' } } } }
  await permissions.grant('authenticated', [`${PROJECT}.update`, `${PROJECT}.create`])

  const unreadable = await call('PUT', `/api/projects/${mine.documentId}`, alice.jwt, { data: { notes: { connect: [aliceNote.documentId] } } })
  t.equal(unreadable.status, 400, 'a relation to a type the caller may not find: 400, as in Strapi')
  t.match(unreadable.json.error, invalidKey('notes'))
  t.match((await call('POST', '/api/projects', alice.jwt, { data: { name: 'x', notes: [1, 2, 3] } })).json.error, invalidKey('notes'), 'by id too: no probing which ids exist')

  await permissions.grant('authenticated', [`${NOTE}.find`], owned)
  const stolen = await call('PUT', `/api/projects/${mine.documentId}`, alice.jwt, { data: { notes: { connect: [bobNote.documentId] } } })
  t.equal(stolen.status, 400, 'connecting a note Alice cannot see: as for one that does not exist')
  t.match(stolen.json.error.message, new RegExp(`Document with id "${bobNote.documentId}"`))
  t.equal((await call('PUT', `/api/projects/${mine.documentId}`, alice.jwt, { data: { notes: { connect: [{ id: bobNote.id }] } } })).status, 400, 'by row id too')
  t.equal((await call('PUT', `/api/projects/${mine.documentId}`, alice.jwt, { data: { notes: { disconnect: [bobNote.documentId] } } })).status, 400, 'nor disconnect it')
  const set = await call('PUT', `/api/projects/${mine.documentId}`, alice.jwt, { data: { notes: [aliceNote.documentId] } })
  t.equal(set.status, 200, 'set with the notes Alice sees')
  const linked = await projects.findOne({ documentId: mine.documentId, populate: { notes: { sort: 'title' } } })
  t.strictSame((linked!.notes as Array<{ title: string }>).map((n) => n.title), ['A1', 'B1'], 'keeps the links to the notes she cannot see')
})

t.test('a localized write addresses one locale: its version must be the caller\'s', async (t) => {
  const { app } = await build(t, options)
  const { call } = client(app)
  const pages = app.contentApi.documents(PAGE)
  const page = await pages.create({ data: { title: 'EN', team: 'a' } })
  await pages.update({ documentId: page.documentId, locale: 'fr', data: { title: 'FR', team: 'b' } })
  const other = await pages.create({ data: { title: 'EN2', team: 'a' } })
  await pages.update({ documentId: other.documentId, locale: 'fr', data: { title: 'FR2', team: 'b' } })
  await app.contentApi.permissions.grant('public', [`${PAGE}.update`, `${PAGE}.delete`, `${PAGE}.find`], { conditions: { team: 'a' } })
  const title = async (documentId: string, locale: string): Promise<unknown> => (await pages.findOne({ documentId, locale }))?.title

  t.equal((await call('PUT', `/api/pages/${page.documentId}?locale=fr`, undefined, { data: { title: 'PWNED', team: 'a' } })).status, 404, 'the fr version is not the caller\'s')
  t.equal(await title(page.documentId, 'fr'), 'FR', 'unchanged')
  t.equal((await call('PUT', `/api/pages/${page.documentId}?locale=en`, undefined, { data: { title: 'EN edited' } })).status, 200, 'the en version is')
  t.equal((await call('DELETE', `/api/pages/${page.documentId}?locale=fr`)).status, 204)
  t.equal(await title(page.documentId, 'fr'), 'FR', 'a delete of the fr version deletes nothing')
  t.equal((await call('DELETE', `/api/pages/${other.documentId}?locale=*`)).status, 204)
  t.equal(await title(other.documentId, 'en'), undefined, 'every locale: the caller\'s versions go')
  t.equal(await title(other.documentId, 'fr'), 'FR2', 'the others stay')

  const onlyEn = await pages.create({ data: { title: 'EN3', team: 'a' } })
  const created = await call('PUT', `/api/pages/${onlyEn.documentId}?locale=fr`, undefined, { data: { title: 'FR3', team: 'a' } })
  t.equal(created.status, 200, 'a new locale of a document that is the caller\'s in another locale')
  t.equal(await title(onlyEn.documentId, 'fr'), 'FR3')
  const theirs = await pages.create({ data: { title: 'EN4', team: 'b' } })
  t.equal((await call('PUT', `/api/pages/${theirs.documentId}?locale=fr`, undefined, { data: { title: 'FR4', team: 'a' } })).status, 404,
    'not of one that is nowhere the caller\'s')
  t.equal(await title(theirs.documentId, 'fr'), undefined, 'created nothing')
  const another = await pages.create({ data: { title: 'EN5', team: 'a' } })
  t.strictSame((await call('PUT', `/api/pages/${another.documentId}?locale=fr`, undefined, { data: { title: 'FR5', team: 'b' } })).json, FORBIDDEN,
    'and the new version must satisfy the conditions too')
  t.equal(await title(another.documentId, 'fr'), undefined, 'the refused new locale was rolled back')
})
