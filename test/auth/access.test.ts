import t from 'tap'
import { createHmac } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { defineContentType, type Document } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { matchesOracle } from '../helpers/oracle.js'
import { oracleOptions } from '../fixtures/oracle/models.js'
import { loadOracleSeed, seedOracle } from '../fixtures/oracle/seed.js'

/**
 * Who may do what: private by default, public grants, the three API-token types against every
 * action, expired, revoked and regenerated tokens, malformed and tampered credentials, blocked
 * and deleted users, permission changes without a restart, row-level conditions, field-level
 * limits, relation reads (populate, filters, sort) that need the target's find permission,
 * `draftsRequirePermission`, and the oracle's recorded auth answers.
 */

const ARTICLE = 'api::article.article'
const CATEGORY = 'api::category.category'
const NOTE = 'api::note.note'
const HOMEPAGE = 'api::homepage.homepage'
const USER = 'plugin::users-permissions.user'
const JWT_SECRET = 'test-jwt-secret-0123456789'
const PASSWORD = 'Password123!'

const category = defineContentType({
  kind: 'collectionType',
  collectionName: 'categories',
  info: { singularName: 'category', pluralName: 'categories', displayName: 'Category' },
  options: { draftAndPublish: false },
  attributes: { name: { type: 'string' } }
})

const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string' },
    body: { type: 'text' },
    views: { type: 'integer' },
    category: { type: 'relation', relation: 'manyToOne', target: CATEGORY }
  }
})

const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
  options: { draftAndPublish: false },
  attributes: {
    title: { type: 'string' },
    owner: { type: 'relation', relation: 'manyToOne', target: USER }
  }
})

const homepage = defineContentType({
  kind: 'singleType',
  collectionName: 'homepages',
  info: { singularName: 'homepage', pluralName: 'homepages', displayName: 'Homepage' },
  options: { draftAndPublish: false },
  attributes: { title: { type: 'string' } }
})

const models = [category, article, note, homepage]

const FORBIDDEN = { data: null, error: { status: 403, name: 'ForbiddenError', message: 'Forbidden', details: {} } }
const NOT_FOUND = { data: null, error: { status: 404, name: 'NotFoundError', message: 'Not Found', details: {} } }
const unauthorized = (message: string) => ({ data: null, error: { status: 401, name: 'UnauthorizedError', message, details: {} } })
const INVALID_CREDENTIALS = unauthorized('Missing or invalid credentials')
const invalidKey = (key: string) => ({ status: 400, name: 'ValidationError', message: `Invalid key ${key}` })

interface Answer { status: number, json: any, text: string }
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

function client (app: FastifyInstance) {
  return async (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
    let json: unknown
    try { json = res.body === '' ? undefined : JSON.parse(res.body) } catch { json = undefined }
    return { status: res.statusCode, json, text: res.body }
  }
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const sign = (algorithm: 'sha256' | 'sha512', input: string, secret = JWT_SECRET): string => createHmac(algorithm, secret).update(input).digest('base64url')

// Real waits (JWT and token expiry, the permission cache TTL) and PGlite boots: more than the default on a busy machine.
t.setTimeout(300_000)
const { app, database } = await build(t, { models, publicAccess: false })
const call = client(app)
const { permissions, apiTokens } = app.contentApi
const articles = app.contentApi.documents(ARTICLE)
const categories = app.contentApi.documents(CATEGORY)
const notes = app.contentApi.documents(NOTE)

async function register (username: string, target = call): Promise<{ jwt: string, user: Document }> {
  const res = await target('POST', '/api/auth/local/register', { username, email: `${username}@example.com`, password: PASSWORD })
  if (res.status !== 200) throw new Error(`register ${username}: ${res.status} ${res.text}`)
  return res.json
}

const travel = await categories.create({ data: { name: 'Travel' } })
for (let i = 0; i < 3; i++) await articles.create({ data: { title: `Article ${i}`, body: `Body ${i}`, views: i, category: travel.documentId } })
const draftOnly = await articles.create({ data: { title: 'Draft only', body: 'unpublished' }, status: 'draft' })
const someArticle = (await articles.findFirst({ sort: 'id' }))!

/** One request per content action on articles and the homepage, each on a fresh target when it writes. */
async function actions (headers: Record<string, string>): Promise<Record<string, number>> {
  const doomed = await articles.create({ data: { title: 'To update or delete' } })
  await app.contentApi.documents(HOMEPAGE).upsertSingle({ data: { title: 'Home' } })
  const statuses = {
    [`${ARTICLE}.find`]: (await call('GET', '/api/articles', undefined, headers)).status,
    [`${ARTICLE}.findOne`]: (await call('GET', `/api/articles/${someArticle.documentId}`, undefined, headers)).status,
    [`${ARTICLE}.create`]: (await call('POST', '/api/articles', { data: { title: 'Created' } }, headers)).status,
    [`${ARTICLE}.update`]: (await call('PUT', `/api/articles/${doomed.documentId}`, { data: { title: 'Updated' } }, headers)).status,
    [`${ARTICLE}.delete`]: (await call('DELETE', `/api/articles/${doomed.documentId}`, undefined, headers)).status,
    [`${HOMEPAGE}.update`]: (await call('PUT', '/api/homepage', { data: { title: 'Home' } }, headers)).status,
    [`${HOMEPAGE}.find`]: (await call('GET', '/api/homepage', undefined, headers)).status,
    [`${HOMEPAGE}.delete`]: (await call('DELETE', '/api/homepage', undefined, headers)).status
  }
  for (const left of await articles.findMany({ filters: { title: { $in: ['To update or delete', 'Created', 'Updated'] } } })) {
    await articles.delete({ documentId: left.documentId })
  }
  return statuses
}

/** The status each action answers when it is allowed. */
const ALLOWED: Record<string, number> = {
  [`${ARTICLE}.find`]: 200,
  [`${ARTICLE}.findOne`]: 200,
  [`${ARTICLE}.create`]: 200,
  [`${ARTICLE}.update`]: 200,
  [`${ARTICLE}.delete`]: 204,
  [`${HOMEPAGE}.update`]: 200,
  [`${HOMEPAGE}.find`]: 200,
  [`${HOMEPAGE}.delete`]: 204
}
const expected = (allowed: (action: string) => boolean): Record<string, number> =>
  Object.fromEntries(Object.entries(ALLOWED).map(([action, status]) => [action, allowed(action) ? status : 403]))

t.test('private by default', async (t) => {
  t.strictSame(await actions({}), expected(() => false), 'no grant: every action is a 403')
  const res = await call('GET', '/api/articles')
  t.strictSame(res.json, FORBIDDEN, 'the Forbidden envelope')
  t.strictSame((await call('GET', '/api/categories')).json, FORBIDDEN)
  t.strictSame((await call('GET', '/api/notes')).json, FORBIDDEN)
  t.equal((await call('GET', '/api/articles/unknown000000000000000000')).status, 403, 'the check comes before the lookup: no 404 to probe with')
  t.equal((await call('PATCH' as Method, '/api/articles')).status, 405, 'other methods stay a 405')
  t.equal(await articles.count(), 3, 'nothing was written')
  t.equal(await app.contentApi.documents(HOMEPAGE).count(), 1)
})

t.test('public grants', async (t) => {
  await permissions.grant('public', [`${ARTICLE}.find`])
  t.strictSame(await actions({}), expected((a) => a === `${ARTICLE}.find`), 'find only')
  await permissions.grant('public', [`${ARTICLE}.findOne`, `${HOMEPAGE}.find`])
  t.strictSame(await actions({}), expected((a) => [`${ARTICLE}.find`, `${ARTICLE}.findOne`, `${HOMEPAGE}.find`].includes(a)), 'granting more keeps what was granted')
  const list = await call('GET', '/api/articles')
  t.strictSame(list.json.data.map((a: { title: string }) => a.title), ['Article 0', 'Article 1', 'Article 2'])

  const user = await register('reader')
  t.strictSame((await call('GET', '/api/articles', undefined, bearer(user.jwt))).json, FORBIDDEN, 'a user does not inherit the public role\'s grants')
  await permissions.revoke('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`, `${HOMEPAGE}.find`])
  t.strictSame(await actions({}), expected(() => false), 'revoked')
})

t.test('user roles', async (t) => {
  const alice = await register('alice')
  const editor = await register('editor')
  await permissions.createRole({ name: 'Editor', type: 'editor' })
  const editorRole = await app.contentApi.documents('plugin::users-permissions.role').findFirst({ filters: { type: 'editor' } })
  await app.contentApi.documents(USER).update({ documentId: editor.user.documentId, data: { role: editorRole!.documentId } })
  await permissions.grant('authenticated', [`${ARTICLE}.find`, `${ARTICLE}.findOne`])
  await permissions.grant('editor', Object.keys(ALLOWED))

  t.strictSame(await actions(bearer(alice.jwt)), expected((a) => a === `${ARTICLE}.find` || a === `${ARTICLE}.findOne`), 'authenticated: its grants')
  t.strictSame(await actions(bearer(editor.jwt)), expected(() => true), 'another role: its own grants')
  t.strictSame(await actions({}), expected(() => false), 'the public role is unchanged')
  t.strictSame((await call('GET', '/api/users/me', undefined, bearer(editor.jwt))).json, FORBIDDEN, 'a custom role holds no default grant (user.me)')
  await permissions.revoke('authenticated', [`${ARTICLE}.find`, `${ARTICLE}.findOne`])
  await permissions.revoke('editor', Object.keys(ALLOWED))
})

t.test('API tokens: every type against every action', async (t) => {
  const readOnly = await apiTokens.create({ name: 'read-only', type: 'read-only' })
  t.strictSame(await actions(bearer(readOnly.accessKey)), expected((a) => a.endsWith('.find') || a.endsWith('.findOne')), 'read-only: find and findOne')

  const full = await apiTokens.create({ name: 'full-access', type: 'full-access' })
  t.strictSame(await actions(bearer(full.accessKey)), expected(() => true), 'full-access: everything')

  const list = [`${ARTICLE}.find`, `${ARTICLE}.update`, `${HOMEPAGE}.delete`]
  const custom = await apiTokens.create({ name: 'custom', type: 'custom', permissions: list })
  t.strictSame(await actions(bearer(custom.accessKey)), expected((a) => list.includes(a)), 'custom: exactly its list')

  t.strictSame(await actions({}), expected(() => false), 'tokens grant nothing to anonymous callers')
  t.equal((await call('GET', '/api/articles', undefined, { authorization: `bearer ${readOnly.accessKey}` })).status, 200, 'the scheme is case-insensitive')
  t.equal((await call('GET', '/api/articles', undefined, { authorization: `  Bearer   ${readOnly.accessKey}  ` })).status, 200, 'surrounding spaces are ignored')
})

t.test('expired, revoked and regenerated tokens', async (t) => {
  const expiring = await apiTokens.create({ name: 'expiring', type: 'full-access', lifespan: 1 })
  await sleep(10)
  const expired = await call('GET', '/api/articles', undefined, bearer(expiring.accessKey))
  t.equal(expired.status, 401)
  t.strictSame(expired.json, unauthorized('Token expired'))
  // Callers are remembered by their header for credentialsCacheMs (5 s here), never past expiry.
  const brief = await apiTokens.create({ name: 'brief', type: 'full-access', lifespan: 1500 })
  t.equal((await call('GET', '/api/articles', undefined, bearer(brief.accessKey))).status, 200, 'before its expiry')
  await sleep(1600)
  t.strictSame((await call('GET', '/api/articles', undefined, bearer(brief.accessKey))).json, unauthorized('Token expired'), 'used just before, then expired: refused at once')
  const lasting = await apiTokens.create({ name: 'lasting', type: 'full-access', lifespan: 60_000 })
  t.equal((await call('GET', '/api/articles', undefined, bearer(lasting.accessKey))).status, 200, 'a token within its lifespan works')

  const revoked = await apiTokens.create({ name: 'revoked', type: 'full-access' })
  t.equal((await call('GET', '/api/articles', undefined, bearer(revoked.accessKey))).status, 200)
  t.equal(await apiTokens.revoke(revoked.id), true)
  t.strictSame((await call('GET', '/api/articles', undefined, bearer(revoked.accessKey))).json, INVALID_CREDENTIALS, 'a revoked token stops working at once')

  const rotated = await apiTokens.create({ name: 'rotated', type: 'full-access' })
  t.equal((await call('GET', '/api/articles', undefined, bearer(rotated.accessKey))).status, 200)
  const fresh = await apiTokens.regenerate('rotated')
  t.type(fresh, 'string')
  t.strictSame((await call('GET', '/api/articles', undefined, bearer(rotated.accessKey))).json, INVALID_CREDENTIALS, 'the old key stops working at once')
  t.equal((await call('GET', '/api/articles', undefined, bearer(fresh!))).status, 200, 'the new key works')
})

t.test('malformed and unknown credentials', async (t) => {
  await permissions.grant('public', [`${ARTICLE}.find`])
  t.equal((await call('GET', '/api/articles')).status, 200, 'the route is public')
  const unknown = await call('GET', '/api/articles', undefined, bearer('not-a-valid-token'))
  t.equal(unknown.status, 401, 'an unknown token is a 401 even on a public route')
  t.strictSame(unknown.json, INVALID_CREDENTIALS)
  t.strictSame((await call('GET', '/api/articles', undefined, bearer('a'.repeat(256)))).json, INVALID_CREDENTIALS, 'a key-shaped unknown token')

  const anonymous: Array<[string, string]> = [
    ['an empty bearer', 'Bearer '],
    ['a bare scheme', 'Bearer'],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['another scheme', 'Token not-a-valid-token'],
    ['three parts', 'Bearer not-a-valid-token extra'],
    ['an empty header', '']
  ]
  for (const [what, authorization] of anonymous) {
    t.equal((await call('GET', '/api/articles', undefined, { authorization })).status, 200, `${what}: anonymous on a public route`)
    t.strictSame((await call('GET', '/api/categories', undefined, { authorization })).json, FORBIDDEN, `${what}: anonymous on a private route`)
  }
  await permissions.revoke('public', [`${ARTICLE}.find`])
})

t.test('tampered, foreign and expired JWTs', async (t) => {
  await permissions.grant('authenticated', [`${ARTICLE}.find`])
  const mallory = await register('mallory')
  const victim = await register('victim')
  t.equal((await call('GET', '/api/articles', undefined, bearer(mallory.jwt))).status, 200, 'the genuine JWT works')

  const [header, payload, signature] = mallory.jwt.split('.')
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>
  const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11)
  const otherPayload = b64({ ...claims, id: victim.user.id })
  const noneHeader = b64({ alg: 'none', typ: 'JWT' })
  const hs512Header = b64({ alg: 'HS512', typ: 'JWT' })
  const hs256Header = b64({ alg: 'HS256', typ: 'JWT' })

  const forged: Array<[string, string]> = [
    ['a flipped signature character', [header, payload, flipped].join('.')],
    ['a changed payload with the old signature', [header, otherPayload, signature].join('.')],
    ['alg none, no signature', `${noneHeader}.${otherPayload}.`],
    ['alg none, two parts', `${noneHeader}.${otherPayload}`],
    ['alg none, the old signature', `${noneHeader}.${otherPayload}.${signature}`],
    ['HS512 signed with the right secret (the algorithm is pinned)', `${hs512Header}.${otherPayload}.${sign('sha512', `${hs512Header}.${otherPayload}`)}`],
    ['HS256 signed with another secret', `${hs256Header}.${otherPayload}.${sign('sha256', `${hs256Header}.${otherPayload}`, 'another-secret-0123456789')}`],
    ['a truncated signature', [header, payload, signature.slice(0, -2)].join('.')]
  ]
  for (const [what, jwt] of forged) {
    const res = await call('GET', '/api/articles', undefined, bearer(jwt))
    t.equal(res.status, 401, what)
    t.strictSame(res.json, INVALID_CREDENTIALS, `${what}: treated as no JWT, then as an unknown API token`)
  }
  const resigned = `${hs256Header}.${otherPayload}.${sign('sha256', `${hs256Header}.${otherPayload}`)}`
  t.equal((await call('GET', '/api/users/me', undefined, bearer(resigned))).json.username, 'victim', 'control: the same claims signed with the secret are accepted')

  const { app: other } = await build(t, { models, publicAccess: false, auth: { jwtSecret: 'a-different-secret-0123456789' } })
  await other.contentApi.permissions.grant('authenticated', [`${ARTICLE}.find`])
  const foreign = await register('mallory', client(other))
  t.ok(await app.contentApi.documents(USER).findFirst({ filters: { id: foreign.user.id } }), 'a user with its id exists here too')
  t.strictSame((await call('GET', '/api/articles', undefined, bearer(foreign.jwt))).json, INVALID_CREDENTIALS, 'its JWT is refused here')
})

t.test('blocked and deleted users', async (t) => {
  const blocked = await register('blocked_user')
  const deleted = await register('deleted_user')
  t.equal((await call('GET', '/api/articles', undefined, bearer(blocked.jwt))).status, 200)
  const users = app.contentApi.documents(USER)
  await users.update({ documentId: blocked.user.documentId, data: { blocked: true } })
  const res = await call('GET', '/api/articles', undefined, bearer(blocked.jwt))
  t.equal(res.status, 401, 'the JWT of a blocked user')
  t.strictSame(res.json, unauthorized('Invalid credentials'))
  t.strictSame((await call('GET', '/api/users/me', undefined, bearer(blocked.jwt))).json, unauthorized('Invalid credentials'))

  await users.delete({ documentId: deleted.user.documentId })
  t.strictSame((await call('GET', '/api/articles', undefined, bearer(deleted.jwt))).json, unauthorized('Invalid credentials'), 'the JWT of a deleted user')

  await users.update({ documentId: blocked.user.documentId, data: { blocked: false } })
  t.equal((await call('GET', '/api/articles', undefined, bearer(blocked.jwt))).status, 200, 'unblocked: the same JWT works again')
  await permissions.revoke('authenticated', [`${ARTICLE}.find`])
})

t.test('an expired JWT is no JWT', async (t) => {
  const { app: shortLived } = await build(t, { models, publicAccess: false, auth: { jwtExpiresIn: 1 } })
  await shortLived.contentApi.permissions.grant('authenticated', [`${ARTICLE}.find`])
  const { jwt } = await register('ephemeral', client(shortLived))
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as { iat: number, exp: number }
  t.equal(claims.exp - claims.iat, 1, 'jwtExpiresIn: 1 second')
  const before = await client(shortLived)('GET', '/api/articles', undefined, bearer(jwt))
  // Within the second it was issued in; a slow machine may already be past it.
  if (Date.now() < claims.exp * 1000 - 100) t.equal(before.status, 200, 'valid, and now remembered by its header')
  await sleep(2100)
  const res = await client(shortLived)('GET', '/api/articles', undefined, bearer(jwt))
  t.equal(res.status, 401)
  t.strictSame(res.json, INVALID_CREDENTIALS, 'then not an API token either')
})

t.test('permission changes apply without a restart', async (t) => {
  const user = await register('changing')
  const statuses = []
  statuses.push((await call('GET', '/api/categories', undefined, bearer(user.jwt))).status)
  await permissions.grant('authenticated', [`${CATEGORY}.find`])
  statuses.push((await call('GET', '/api/categories', undefined, bearer(user.jwt))).status)
  await permissions.revoke('authenticated', [`${CATEGORY}.find`])
  statuses.push((await call('GET', '/api/categories', undefined, bearer(user.jwt))).status)
  await permissions.grant('public', [`${CATEGORY}.find`])
  statuses.push((await call('GET', '/api/categories')).status)
  await permissions.revoke('public', [`${CATEGORY}.find`])
  statuses.push((await call('GET', '/api/categories')).status)
  t.strictSame(statuses, [403, 200, 403, 200, 403])
})

t.test('another instance sees permission changes within the cache TTL', async (t) => {
  const second = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await second.close() })
  // A 1 s cache on the second instance (the default is 5 s): the same expiry, sooner.
  await second.register(contentApi, { models, db: database.connectAgain(), auth: { jwtSecret: JWT_SECRET, apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false, credentialsCacheMs: 1000 } })
  await second.ready()
  const other = client(second)
  t.equal((await other('GET', '/api/categories')).status, 403, 'cached: no grant')
  await permissions.grant('public', [`${CATEGORY}.find`])
  t.equal((await call('GET', '/api/categories')).status, 200, 'this instance: at once')
  await sleep(1100)
  t.equal((await other('GET', '/api/categories')).status, 200, 'the other: once its 1 s cache entry expires')
  await permissions.revoke('public', [`${CATEGORY}.find`])
})

t.test('row-level conditions', async (t) => {
  const a = await register('owner_a')
  const b = await register('owner_b')
  const owned = { conditions: { owner: { id: { $eq: '$user.id' } } } }
  await permissions.grant('authenticated', [`${NOTE}.find`, `${NOTE}.update`, `${NOTE}.delete`], owned)
  await permissions.grant('authenticated', [`${NOTE}.findOne`], owned)
  const a1 = await notes.create({ data: { title: 'A1', owner: a.user.documentId } })
  const a2 = await notes.create({ data: { title: 'A2', owner: a.user.documentId } })
  const b1 = await notes.create({ data: { title: 'B1', owner: b.user.documentId } })
  await notes.create({ data: { title: 'nobody\'s' } })
  const asA = bearer(a.jwt)
  const asB = bearer(b.jwt)
  const titles = (res: Answer): string[] => res.json.data.map((n: { title: string }) => n.title)

  const listA = await call('GET', '/api/notes?sort=title', undefined, asA)
  t.strictSame(titles(listA), ['A1', 'A2'], 'A sees only their notes')
  t.strictSame(listA.json.meta.pagination, { page: 1, pageSize: 25, pageCount: 1, total: 2 }, 'and the total counts only those')
  const listB = await call('GET', '/api/notes', undefined, asB)
  t.strictSame(titles(listB), ['B1'])
  t.equal(listB.json.meta.pagination.total, 1)
  const paged = await call('GET', '/api/notes?sort=title&pagination[pageSize]=1&pagination[page]=2', undefined, asA)
  t.strictSame(titles(paged), ['A2'])
  t.strictSame(paged.json.meta.pagination, { page: 2, pageSize: 1, pageCount: 2, total: 2 }, 'pages of the permitted rows')
  t.strictSame(titles(await call('GET', '/api/notes?pagination[start]=0&pagination[limit]=10&sort=title', undefined, asA)), ['A1', 'A2'], 'offset pagination')

  t.strictSame(titles(await call('GET', '/api/notes?filters[title][$eq]=B1', undefined, asA)), [], 'the caller\'s filters cannot reach other rows')
  t.strictSame(titles(await call('GET', '/api/notes?filters[$or][0][title][$eq]=B1&filters[$or][1][title][$eq]=A2', undefined, asA)), ['A2'], 'not even through $or')
  t.match((await call('GET', `/api/notes?filters[owner][id][$eq]=${b.user.id}`, undefined, asA)).json.error, invalidKey('owner'),
    'filtering through owner needs user.find, which the conditions do not')

  t.equal((await call('GET', `/api/notes/${a1.documentId}`, undefined, asA)).json.data.title, 'A1', 'A reads their note')
  t.strictSame((await call('GET', `/api/notes/${a1.documentId}`, undefined, asB)).json, NOT_FOUND, 'B gets a 404 on A\'s note')
  t.strictSame((await call('PUT', `/api/notes/${a1.documentId}`, { data: { title: 'hijacked' } }, asB)).json, NOT_FOUND, 'B cannot update it')
  t.equal((await call('DELETE', `/api/notes/${a1.documentId}`, undefined, asB)).status, 204, 'a delete that matches nothing is a 204, as in Strapi')
  t.equal((await notes.findOne({ documentId: a1.documentId }))?.title, 'A1', 'but A\'s note is untouched')

  const updated = await call('PUT', `/api/notes/${a1.documentId}`, { data: { title: 'A1 edited' } }, asA)
  t.equal(updated.status, 200, 'A edits their note')
  t.equal(updated.json.data.title, 'A1 edited')
  t.equal((await call('DELETE', `/api/notes/${a2.documentId}`, undefined, asA)).status, 204)
  t.equal(await notes.findOne({ documentId: a2.documentId }), null, 'A deletes their note')
  t.strictSame(titles(await call('GET', '/api/notes', undefined, asB)), ['B1'], 'B\'s view is unchanged')
  t.equal((await notes.findOne({ documentId: b1.documentId }))?.title, 'B1')

  // What a write leaves must match the conditions as well.
  await permissions.grant('authenticated', [`${NOTE}.create`], owned)
  t.match((await call('POST', '/api/notes', { data: { title: 'A3', owner: a.user.documentId } }, asA)).json.error, invalidKey('owner'),
    'writing a relation needs the target\'s find, as in Strapi')
  // Users may find themselves only: they can name no other owner than themselves.
  await permissions.grant('authenticated', [`${USER}.find`], { conditions: { id: { $eq: '$user.id' } } })
  const mine = await call('POST', '/api/notes', { data: { title: 'A3', owner: a.user.documentId } }, asA)
  t.equal(mine.status, 200, 'A creates a note they own')
  const forged = await call('POST', '/api/notes', { data: { title: 'forged', owner: b.user.documentId } }, asA)
  t.equal(forged.status, 400, 'but not one owned by B, a user A cannot see: as for a user that does not exist')
  t.match(forged.json.error.message, /Document with id/)
  t.strictSame((await call('POST', '/api/notes', { data: { title: 'ownerless' } }, asA)).json, FORBIDDEN, 'nor one owned by nobody: outside the conditions')
  t.equal(await notes.findFirst({ filters: { title: { $in: ['forged', 'ownerless'] } } }), null, 'the refused creates wrote nothing')
  t.equal((await call('PUT', `/api/notes/${a1.documentId}`, { data: { title: 'given away', owner: b.user.documentId } }, asA)).status, 400,
    'A cannot give their note to B')
  t.strictSame((await call('PUT', `/api/notes/${a1.documentId}`, { data: { title: 'given away', owner: null } }, asA)).json, FORBIDDEN,
    'nor to nobody: the update would leave the conditions')
  t.match(await notes.findOne({ documentId: a1.documentId, populate: ['owner'] }), { title: 'A1 edited', owner: { documentId: a.user.documentId } },
    'the refused update changed nothing')
  t.equal((await call('PUT', `/api/notes/${a1.documentId}`, { data: { owner: a.user.documentId } }, asA)).status, 200, 'an update that keeps it theirs is fine')

  const full = await apiTokens.create({ name: 'notes-full', type: 'full-access' })
  t.equal((await call('GET', '/api/notes', undefined, bearer(full.accessKey))).json.meta.pagination.total, 4, 'a full-access token has no conditions')

  await permissions.grant('public', [`${NOTE}.find`], owned)
  t.strictSame((await call('GET', '/api/notes')).json, FORBIDDEN, '$user.id without a user: forbidden, not everything')
  await permissions.revoke('public', [`${NOTE}.find`])

  await permissions.grant('authenticated', [`${NOTE}.find`], { conditions: { owner: { documentId: { $eq: '$user.documentId' } } } })
  t.strictSame(titles(await call('GET', '/api/notes', undefined, asB)), ['B1'], '$user.documentId')
  await permissions.grant('authenticated', [`${NOTE}.find`], { conditions: { $or: [{ owner: { id: { $eq: '$user.id' } } }, { title: { $startsWith: 'nobody' } }] } })
  t.strictSame(titles(await call('GET', '/api/notes?sort=title', undefined, asB)), ['B1', 'nobody\'s'], 'conditions in the filters syntax, $or included')
  await permissions.revoke('authenticated', [`${NOTE}.find`, `${NOTE}.findOne`, `${NOTE}.create`, `${NOTE}.update`, `${NOTE}.delete`, `${USER}.find`])
})

t.test('field-level limits', async (t) => {
  await permissions.grant('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`], { fields: ['title', 'views'] })
  await permissions.grant('public', [`${ARTICLE}.create`, `${ARTICLE}.update`], { fields: ['title'] })
  await permissions.grant('public', [`${CATEGORY}.find`])

  const list = await call('GET', '/api/articles?sort=id')
  t.equal(list.status, 200)
  t.strictSame(Object.keys(list.json.data[0]).sort(), ['createdAt', 'documentId', 'id', 'publishedAt', 'title', 'updatedAt', 'views'], 'only the listed attributes (and system fields)')
  const one = await call('GET', `/api/articles/${someArticle.documentId}`)
  t.notOk('body' in one.json.data, 'findOne too')
  t.equal(one.json.data.title, 'Article 0')
  t.strictSame(Object.keys((await call('GET', '/api/articles?fields[0]=title')).json.data[0]).sort(), ['documentId', 'id', 'title'], 'a listed field may be chosen')
  t.strictSame(Object.keys((await call('GET', '/api/articles?fields=*')).json.data[0]).sort(), Object.keys(list.json.data[0]).sort(), '* means the permitted fields')

  t.match((await call('GET', '/api/articles?fields[0]=body')).json.error, invalidKey('body'), 'naming an unlisted field in fields: 400')
  t.match((await call('GET', '/api/articles?fields=title,body')).json.error, invalidKey('body'))
  t.match((await call('GET', `/api/articles/${someArticle.documentId}?fields[0]=body`)).json.error, invalidKey('body'))
  const sorted = await call('GET', '/api/articles?sort=body')
  t.equal(sorted.status, 400, 'naming an unlisted field in sort: 400')
  t.match(sorted.json.error, invalidKey('body'))
  const filtered = await call('GET', '/api/articles?filters[body][$startsWith]=Body')
  t.equal(filtered.status, 400, 'filtering on an unlisted field would reveal its values: 400')
  t.match(filtered.json.error, invalidKey('body'))
  t.equal((await call('GET', '/api/articles?filters[$or][0][body][$null]=false&filters[$or][1][title][$null]=false')).status, 400, 'nor inside $or')
  t.equal((await call('GET', '/api/articles?sort=views:desc&filters[views][$gte]=1')).json.data.length, 2, 'listed fields sort and filter')

  const populated = await call('GET', '/api/articles?populate=category')
  t.equal(populated.status, 400, 'a relation not in the list is not readable either, even with the target\'s find')
  t.match(populated.json.error, invalidKey('category'))
  const star = await call('GET', '/api/articles?populate=*')
  t.equal(star.status, 200)
  t.notOk('category' in star.json.data[0], 'and populate=* leaves it out')

  const created = await call('POST', '/api/articles', { data: { title: 'Limited' } })
  t.equal(created.status, 200)
  t.strictSame(Object.keys(created.json.data).sort(), ['createdAt', 'documentId', 'id', 'publishedAt', 'title', 'updatedAt'], 'the answer shows the create permission\'s fields')
  const refused = await call('POST', '/api/articles', { data: { title: 'Too much', body: 'not allowed' } })
  t.equal(refused.status, 400, 'writing an unlisted field: 400')
  t.match(refused.json.error, invalidKey('body'))
  t.match((await call('POST', '/api/articles', { data: { title: 'Related', category: travel.documentId } })).json.error, invalidKey('category'), 'relations too')
  t.match((await call('PUT', `/api/articles/${created.json.data.documentId as string}`, { data: { views: 5 } })).json.error, invalidKey('views'), 'readable is not writable')
  t.equal((await call('PUT', `/api/articles/${created.json.data.documentId as string}`, { data: { title: 'Limited, edited' } })).status, 200)
  t.equal(await articles.count({ filters: { title: { $in: ['Too much', 'Related'] } } }), 0, 'refused writes wrote nothing')
  const stored = await articles.findOne({ documentId: created.json.data.documentId })
  t.match(stored, { title: 'Limited, edited', views: null, body: null })
  await articles.delete({ documentId: created.json.data.documentId })
  await permissions.revoke('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`, `${ARTICLE}.create`, `${ARTICLE}.update`, `${CATEGORY}.find`])
})

t.test('relations need the target\'s find permission', async (t) => {
  await permissions.grant('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`])
  for (const url of ['/api/articles?populate=category', '/api/articles?populate[category]=true', '/api/articles?populate[category][fields][0]=name',
    '/api/articles?populate[0]=category', `/api/articles/${someArticle.documentId}?populate=category`]) {
    const res = await call('GET', url)
    t.equal(res.status, 400, url)
    t.match(res.json.error, invalidKey('category'), `${url}: Invalid key category`)
  }
  const star = await call('GET', '/api/articles?populate=*')
  t.equal(star.status, 200, 'populate=* leaves the relation out')
  t.notOk('category' in star.json.data[0])
  t.match((await call('GET', '/api/articles?filters[category][name][$eq]=Travel')).json.error, invalidKey('category'), 'filters through the relation')
  t.match((await call('GET', '/api/articles?sort=category.name')).json.error, invalidKey('category'), 'sort through the relation')

  await permissions.grant('public', [`${CATEGORY}.find`])
  t.equal((await call('GET', '/api/articles?populate=category&sort=id')).json.data[0].category.name, 'Travel', 'granted: populated')
  t.equal((await call('GET', '/api/articles?populate=*&sort=id')).json.data[0].category.name, 'Travel', 'and in populate=*')
  t.equal((await call('GET', '/api/articles?filters[category][name][$eq]=Travel')).json.data.length, 3, 'filters')
  t.equal((await call('GET', '/api/articles?sort=category.name')).status, 200, 'sort')
  await permissions.revoke('public', [`${CATEGORY}.find`])

  const readOnly = await apiTokens.create({ name: 'populate-read', type: 'read-only' })
  t.equal((await call('GET', '/api/articles?populate=category&sort=id', undefined, bearer(readOnly.accessKey))).json.data[0].category.name, 'Travel', 'a read-only token reads every type')
  const custom = await apiTokens.create({ name: 'populate-custom', type: 'custom', permissions: [`${ARTICLE}.find`] })
  t.match((await call('GET', '/api/articles?populate=category', undefined, bearer(custom.accessKey))).json.error, invalidKey('category'), 'a custom token only its list')

  await permissions.grant('public', [`${NOTE}.find`])
  t.match((await call('GET', '/api/notes?populate=owner')).json.error, invalidKey('owner'), 'users need plugin::users-permissions.user.find')
  await permissions.grant('public', [`${USER}.find`])
  t.equal((await call('GET', '/api/notes?populate=owner')).status, 200)
  for (const key of ['password', 'resetPasswordToken', 'confirmationToken']) {
    const res = await call('GET', `/api/notes?filters[owner][${key}][$null]=false`)
    t.equal(res.status, 400, `no filtering on owner.${key}, even with user.find`)
    t.notMatch(res.text, /\$scrypt\$/)
  }
  const populatedOwners = await call('GET', '/api/notes?populate=owner')
  t.notMatch(populatedOwners.text, /"password"|\$scrypt\$|resetPasswordToken|confirmationToken/, 'a populated user has no secrets')
  await permissions.revoke('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`, `${NOTE}.find`, `${USER}.find`])
})

t.test('drafts', async (t) => {
  await permissions.grant('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`])
  const drafts = await call('GET', '/api/articles?status=draft')
  t.equal(drafts.status, 200, 'by default, find is enough to read drafts, as in Strapi')
  t.ok(drafts.json.data.some((a: { title: string }) => a.title === 'Draft only'))
  t.equal((await call('GET', `/api/articles/${draftOnly.documentId}?status=draft`)).status, 200)
  await permissions.revoke('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`])
})

t.test('draftsRequirePermission', async (t) => {
  const { app: strict } = await build(t, { models, publicAccess: false, auth: { draftsRequirePermission: true } })
  const call = client(strict)
  const docs = strict.contentApi.documents(ARTICLE)
  await docs.create({ data: { title: 'Published' } })
  const draft = await docs.create({ data: { title: 'Draft' }, status: 'draft' })
  await strict.contentApi.permissions.grant('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`])

  t.equal((await call('GET', '/api/articles')).status, 200, 'published reads need find only')
  t.equal((await call('GET', '/api/articles?status=published')).status, 200)
  t.strictSame((await call('GET', '/api/articles?status=draft')).json, FORBIDDEN, 'status=draft needs findDrafts')
  t.strictSame((await call('GET', `/api/articles/${draft.documentId}?status=draft`)).json, FORBIDDEN, 'on findOne too')
  t.strictSame((await call('GET', '/api/articles?status=archived')).json, FORBIDDEN, 'any status that reads drafts needs it')
  t.strictSame((await call('GET', `/api/articles/${draft.documentId}?status=`)).json, FORBIDDEN)

  await strict.contentApi.permissions.grant('public', [`${ARTICLE}.findDrafts`])
  const granted = await call('GET', '/api/articles?status=draft')
  t.equal(granted.status, 200, 'granted')
  t.strictSame(granted.json.data.map((a: { title: string }) => a.title).sort(), ['Draft', 'Published'])
  t.equal((await call('GET', `/api/articles/${draft.documentId}?status=draft`)).json.data.title, 'Draft')
  await strict.contentApi.permissions.revoke('public', [`${ARTICLE}.find`])
  t.strictSame((await call('GET', '/api/articles?status=draft')).json, FORBIDDEN, 'findDrafts alone is not find')

  const full = await strict.contentApi.apiTokens.create({ name: 'drafts-full', type: 'full-access' })
  t.equal((await call('GET', '/api/articles?status=draft', undefined, bearer(full.accessKey))).status, 200, 'a full-access token reads drafts')
  const readOnly = await strict.contentApi.apiTokens.create({ name: 'drafts-read', type: 'read-only' })
  t.strictSame((await call('GET', '/api/articles?status=draft', undefined, bearer(readOnly.accessKey))).json, FORBIDDEN, 'a read-only token holds find and findOne only')
  t.equal((await call('GET', '/api/articles', undefined, bearer(readOnly.accessKey))).status, 200)
  const custom = await strict.contentApi.apiTokens.create({ name: 'drafts-custom', type: 'custom', permissions: [`${ARTICLE}.find`, `${ARTICLE}.findDrafts`] })
  t.equal((await call('GET', '/api/articles?status=draft', undefined, bearer(custom.accessKey))).status, 200, 'a custom token with findDrafts')
})

t.test('the oracle\'s recorded auth answers', async (t) => {
  const { app: oracle } = await build(t, { ...oracleOptions, publicAccess: false })
  const seed = loadOracleSeed()
  const seeded = await seedOracle(oracle, seed)
  const call = async (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    await oracle.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
  const token = (type: string): Record<string, string> => bearer(seed.tokens.find((k) => k.type === type)!.accessKey)
  const full = token('full-access')
  const read = token('read-only')
  const art0 = seeded.articles[0]

  // In the order of ../shared/oracle/requests.json.
  matchesOracle(t, await call('GET', '/api/secrets'), 'secrets-no-token')
  matchesOracle(t, await call('GET', '/api/secrets?sort=label', undefined, full), 'secrets-full-token')
  const login = await call('POST', '/api/auth/local', { identifier: 'seed@example.com', password: 'Password123!' })
  const jwt = bearer((JSON.parse(login.body) as { jwt: string }).jwt)
  matchesOracle(t, await call('GET', '/api/secrets', undefined, jwt), 'secrets-jwt')
  matchesOracle(t, await call('GET', '/api/secrets/whatever'), 'secrets-one-no-token')
  matchesOracle(t, await call('GET', '/api/articles', undefined, bearer('not-a-valid-token')), 'invalid-token')
  matchesOracle(t, await call('GET', '/api/secrets', undefined, bearer('not-a-valid-token')), 'invalid-token-private')
  matchesOracle(t, await call('GET', '/api/articles?pagination[pageSize]=1', undefined, { authorization: 'Bearer ' }), 'empty-bearer')
  matchesOracle(t, await call('GET', '/api/articles?pagination[pageSize]=1', undefined, { authorization: 'Basic dXNlcjpwYXNz' }), 'basic-auth-scheme')
  matchesOracle(t, await call('GET', '/api/articles?pagination[pageSize]=2&fields[0]=title', undefined, read), 'read-token-list')
  matchesOracle(t, await call('GET', '/api/articles?status=draft&pagination[pageSize]=2&fields[0]=title', undefined, full), 'full-token-list-drafts')
  matchesOracle(t, await call('GET', '/api/users'), 'users-list-public')
  matchesOracle(t, await call('GET', '/api/users', undefined, full), 'users-list-full-token')
  matchesOracle(t, await call('GET', '/api/users/count'), 'users-count-public')
  matchesOracle(t, await call('GET', '/api/users/me', undefined, full), 'users-me-full-token')
  matchesOracle(t, await call('GET', '/api/users-permissions/roles'), 'up-roles-public')
  matchesOracle(t, await call('GET', '/api/i18n/locales'), 'i18n-locales')

  const newUser = { username: 'oracle_new', email: 'oracle_new@example.com', password: 'Password123!' }
  matchesOracle(t, await call('POST', '/api/auth/local/register', newUser), 'auth-register-ok', 'POST')
  matchesOracle(t, await call('POST', '/api/auth/local/register', newUser), 'auth-register-duplicate', 'POST')
  matchesOracle(t, await call('POST', '/api/auth/local/register', { username: 'oracle_bad', email: 'not-an-email', password: 'Password123!' }), 'auth-register-bad-email', 'POST')
  matchesOracle(t, await call('POST', '/api/auth/local/register', { username: 'oracle_x', email: 'x@example.com', password: 'Password123!', role: 1 }), 'auth-register-extra-field', 'POST')
  matchesOracle(t, await call('POST', '/api/auth/local', { identifier: 'seed@example.com', password: 'Password123!' }), 'auth-login-ok', 'POST')
  matchesOracle(t, await call('POST', '/api/auth/local', { identifier: 'seeduser', password: 'Password123!' }), 'auth-login-username', 'POST')
  matchesOracle(t, await call('POST', '/api/auth/local', { identifier: 'nobody@example.com', password: 'Password123!' }), 'auth-login-unknown-user', 'POST')
  matchesOracle(t, await call('POST', '/api/auth/local', { password: 'Password123!' }), 'auth-login-missing-identifier', 'POST')
  matchesOracle(t, await call('GET', '/api/users/me?populate=role', undefined, jwt), 'users-me-populate-role')
  matchesOracle(t, await call('GET', '/api/users/me'), 'users-me-no-auth')
  matchesOracle(t, await call('GET', '/api/articles?pagination[pageSize]=2&fields[0]=title', undefined, jwt), 'jwt-list-articles')

  matchesOracle(t, await call('POST', '/api/articles', { data: { title: 'No auth' } }), 'create-no-auth', 'POST')
  matchesOracle(t, await call('POST', '/api/articles', { data: { title: 'Read token' } }, read), 'create-read-token', 'POST')
  matchesOracle(t, await call('PUT', `/api/articles/${art0}`, { data: { title: 'x' } }), 'update-no-auth', 'PUT')
  matchesOracle(t, await call('PUT', '/api/homepage', { data: { title: 'x' } }), 'homepage-put-no-auth', 'PUT')
  matchesOracle(t, await call('DELETE', `/api/articles/${art0}`), 'delete-no-auth', 'DELETE')
  matchesOracle(t, await call('DELETE', `/api/articles/${art0}`, undefined, read), 'delete-read-token', 'DELETE')
  t.equal((await call('GET', `/api/articles/${art0}`)).statusCode, 200, 'the refused writes left the article in place')
})
