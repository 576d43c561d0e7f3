import t, { type Test } from 'tap'
import { createHmac } from 'node:crypto'
import Fastify from 'fastify'
import contentApi, { ValidationError, defineContentType } from '../../lib/index.js'
import { build } from '../helpers/build.js'

/**
 * `app.contentApi.apiTokens`: keys shown once and stored only as an HMAC, listing without keys,
 * revoking and regenerating, `lastUsedAt`, lifespans, and the checks on what may be created.
 */

const SALT = 'test-api-token-salt-0123456789'
const KEY = /^[0-9a-f]{256}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const TOKEN_KEYS = ['createdAt', 'description', 'documentId', 'expiresAt', 'id', 'lastUsedAt', 'lifespan', 'name', 'permissions', 'type']
const HOUR = 60 * 60 * 1000

const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
  options: { draftAndPublish: false },
  attributes: { title: { type: 'string' } }
})

const { app, database } = await build(t, { models: [note], publicAccess: false, auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false, credentialsCacheMs: 0 } })
const tokens = app.contentApi.apiTokens
const db = app.contentApi.db

async function status (key: string, method: 'GET' | 'POST' = 'GET'): Promise<number> {
  const res = await app.inject({ method, url: '/api/notes', headers: { authorization: `Bearer ${key}` }, ...(method === 'POST' ? { payload: { data: { title: 'x' } } } : {}) })
  return res.statusCode
}

const row = async (id: number): Promise<Record<string, any>> => await db.selectFrom('strapi_api_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

async function rejects (t: Test, promise: Promise<unknown>, message: string | RegExp, what: string): Promise<void> {
  try {
    await promise
    t.fail(`${what}: should have been refused`)
  } catch (err) {
    t.type(err, ValidationError, `${what}: a ValidationError`)
    t.match((err as Error).message, message, what)
  }
}

t.test('create: the key is shown once and only its HMAC is stored', async (t) => {
  const before = Date.now()
  const created = await tokens.create({ name: 'ci', type: 'read-only', description: 'CI builds' })
  t.strictSame(Object.keys(created).sort(), [...TOKEN_KEYS, 'accessKey'].sort())
  t.match(created.accessKey, KEY, '256 hex characters')
  t.match(created, { name: 'ci', type: 'read-only', description: 'CI builds', permissions: [], lastUsedAt: null, expiresAt: null, lifespan: null })
  t.match(created.createdAt, ISO)
  t.ok(Date.parse(created.createdAt) >= before - 1000)

  const stored = await row(created.id)
  t.not(stored.access_key, created.accessKey, 'the column does not hold the key')
  t.equal(stored.access_key, createHmac('sha512', SALT).update(created.accessKey).digest('hex'), 'it holds HMAC-SHA512(key, salt)')
  t.equal(stored.access_key, tokens.hash(created.accessKey))
  t.match(stored.access_key, /^[0-9a-f]{128}$/)
  t.notMatch(JSON.stringify(stored), created.accessKey, 'the key is nowhere in the row')

  const other = await tokens.create({ name: 'other', type: 'read-only' })
  t.not(other.accessKey, created.accessKey, 'keys are random')
  t.equal(await status(created.accessKey), 200, 'the key authenticates')
})

t.test('list: never a key', async (t) => {
  const list = await tokens.list()
  t.strictSame(list.map((token) => token.name), ['ci', 'other'], 'in creation order')
  for (const token of list) {
    t.strictSame(Object.keys(token).sort(), TOKEN_KEYS, `${token.name}: no accessKey`)
    t.notOk('accessKey' in token)
  }
  const hashes = (await db.selectFrom('strapi_api_tokens').select('access_key').execute()).map((r) => r.access_key as string)
  const text = JSON.stringify(list)
  for (const hash of hashes) t.notOk(text.includes(hash), 'nor the stored hash')
})

t.test('findByKey', async (t) => {
  const created = await tokens.create({ name: 'lookup', type: 'full-access' })
  t.match(await tokens.findByKey(created.accessKey), { id: created.id, name: 'lookup', type: 'full-access' })
  t.equal(await tokens.findByKey('f'.repeat(256)), null, 'an unknown key')
  t.equal(await tokens.findByKey(tokens.hash(created.accessKey)), null, 'the stored hash is not a key')
  t.equal(await tokens.findByKey(''), null)
})

t.test('revoke', async (t) => {
  const byName = await tokens.create({ name: 'revoke-by-name', type: 'full-access' })
  const byId = await tokens.create({ name: 'revoke-by-id', type: 'full-access' })
  t.equal(await status(byName.accessKey), 200)
  t.equal(await tokens.revoke('revoke-by-name'), true, 'by name')
  t.equal(await tokens.revoke(byId.id), true, 'by id')
  t.equal(await status(byName.accessKey), 401, 'a revoked key stops working at once')
  t.equal(await status(byId.accessKey), 401)
  t.equal(await tokens.revoke('revoke-by-name'), false, 'again: nothing to revoke')
  t.equal(await tokens.revoke(99999), false, 'an unknown id')
  t.notOk((await tokens.list()).some((token) => token.name.startsWith('revoke-')), 'gone from the list')
  const reused = await tokens.create({ name: 'revoke-by-name', type: 'read-only' })
  t.equal(reused.name, 'revoke-by-name', 'the name is free again')
})

t.test('regenerate', async (t) => {
  const created = await tokens.create({ name: 'rotate', type: 'full-access', description: 'rotated' })
  const key = await tokens.regenerate('rotate')
  t.match(key, KEY)
  t.not(key, created.accessKey)
  t.equal(await status(created.accessKey), 401, 'the old key stops working at once')
  t.equal(await status(key!), 200, 'the new one works')
  t.equal((await row(created.id)).access_key, tokens.hash(key!), 'only its HMAC is stored')
  const again = await tokens.regenerate(created.id)
  t.equal(await status(key!), 401, 'by id too')
  t.equal(await status(again!), 200)
  t.match((await tokens.list()).find((token) => token.id === created.id), { name: 'rotate', type: 'full-access', description: 'rotated' }, 'the token is otherwise the same')
  t.equal(await tokens.regenerate('no-such-token'), null)
  t.equal(await tokens.regenerate(99999), null)
})

t.test('lastUsedAt', async (t) => {
  const created = await tokens.create({ name: 'usage', type: 'read-only' })
  t.equal(created.lastUsedAt, null)
  const before = Date.now()
  t.equal(await status(created.accessKey), 200)
  const first = (await tokens.list()).find((token) => token.id === created.id)!.lastUsedAt
  t.match(first, ISO, 'set on use')
  t.ok(Date.parse(first!) >= before - 1000 && Date.parse(first!) <= Date.now() + 1000, 'to now')
  await status(created.accessKey)
  t.equal((await tokens.list()).find((token) => token.id === created.id)!.lastUsedAt, first, 'written at most hourly: unchanged by the next use')

  const old = new Date(Date.now() - 2 * HOUR).toISOString()
  await db.updateTable('strapi_api_tokens').set({ last_used_at: old }).where('id', '=', created.id).execute()
  await status(created.accessKey)
  const refreshed = (await tokens.list()).find((token) => token.id === created.id)!.lastUsedAt
  t.ok(Date.parse(refreshed!) > Date.parse(old) + HOUR, 'rewritten once the last write is over an hour old')

  t.equal(await status(created.accessKey, 'POST'), 403, 'a refused use')
  const unused = await tokens.create({ name: 'unused', type: 'read-only' })
  await app.inject({ method: 'GET', url: '/api/notes', headers: { authorization: 'Bearer not-this-one' } })
  t.equal((await tokens.list()).find((token) => token.id === unused.id)!.lastUsedAt, null, 'other tokens are not touched')
})

t.test('lifespan and expiry', async (t) => {
  const week = 7 * 24 * HOUR
  const created = await tokens.create({ name: 'weekly', type: 'read-only', lifespan: week })
  t.equal(created.lifespan, week)
  t.equal(Date.parse(created.expiresAt!) - Date.parse(created.createdAt), week, 'expiresAt = createdAt + lifespan')
  t.equal(await status(created.accessKey), 200)

  const brief = await tokens.create({ name: 'brief', type: 'read-only', lifespan: 1 })
  await new Promise((resolve) => setTimeout(resolve, 10))
  const res = await app.inject({ method: 'GET', url: '/api/notes', headers: { authorization: `Bearer ${brief.accessKey}` } })
  t.equal(res.statusCode, 401)
  t.strictSame(JSON.parse(res.body), { data: null, error: { status: 401, name: 'UnauthorizedError', message: 'Token expired', details: {} } })
  t.equal((await tokens.list()).find((token) => token.id === brief.id)?.lastUsedAt, null, 'a refused expired token was not "used"')

  const unlimited = await tokens.create({ name: 'unlimited', type: 'read-only', lifespan: null })
  t.equal(unlimited.expiresAt, null)
  for (const lifespan of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    await rejects(t, tokens.create({ name: `bad-lifespan-${String(lifespan)}`, type: 'read-only', lifespan }), 'API token lifespan must be a positive number of milliseconds', `lifespan ${String(lifespan)}`)
  }
})

t.test('custom tokens need permissions', async (t) => {
  await rejects(t, tokens.create({ name: 'custom-none', type: 'custom' }), 'A custom API token needs a list of permissions', 'no list')
  await rejects(t, tokens.create({ name: 'custom-empty', type: 'custom', permissions: [] }), 'A custom API token needs a list of permissions', 'an empty list')
  const custom = await tokens.create({ name: 'custom-notes', type: 'custom', permissions: ['api::note.note.create'] })
  t.strictSame(custom.permissions, ['api::note.note.create'])
  t.equal(await status(custom.accessKey, 'POST'), 200, 'it may do what it lists')
  t.equal(await status(custom.accessKey), 403, 'and nothing else')

  const readOnly = await tokens.create({ name: 'read-with-list', type: 'read-only', permissions: ['api::note.note.create'] })
  t.strictSame(readOnly.permissions, [], 'other types ignore a list')
  t.equal(await status(readOnly.accessKey, 'POST'), 403)

  const unknown = await tokens.create({ name: 'custom-unknown', type: 'custom', permissions: ['api::nope.nope.find'] }).then(() => null, (err: Error) => err)
  t.type(unknown, ValidationError, 'an action no route has is refused, as Strapi validates custom permissions')
})

t.test('names and types', async (t) => {
  await rejects(t, tokens.create({ name: 'ci', type: 'full-access' }), 'An API token named "ci" already exists', 'a duplicate name')
  t.equal((await tokens.list()).filter((token) => token.name === 'ci').length, 1)
  await rejects(t, tokens.create({ name: '', type: 'read-only' }), 'API token name is required', 'an empty name')
  await rejects(t, tokens.create({ name: '   ', type: 'read-only' }), 'API token name is required', 'a blank name')
  await rejects(t, tokens.create({ type: 'read-only' } as any), 'API token name is required', 'no name')
  await rejects(t, tokens.create({ name: 'typeless', type: 'admin' as any }), 'API token type must be read-only, full-access or custom', 'an unknown type')

  const results = await Promise.allSettled([tokens.create({ name: 'race', type: 'read-only' }), tokens.create({ name: 'race', type: 'read-only' })])
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'two concurrent creates of one name: one wins')
})

t.test('an imported key', async (t) => {
  const accessKey = 'a'.repeat(64)
  const imported = await tokens.create({ name: 'imported', type: 'read-only', accessKey })
  t.equal(imported.accessKey, accessKey, 'a key migrated from Strapi keeps working')
  t.equal((await row(imported.id)).access_key, tokens.hash(accessKey))
  t.equal(await status(accessKey), 200)
})

t.test('another salt voids every key', async (t) => {
  const created = await tokens.create({ name: 'salted', type: 'full-access' })
  const restarted = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await restarted.close() })
  // The same database, restarted with another salt (or none in development: the one stored in the database).
  await restarted.register(contentApi, { models: [note], db: database.connectAgain(), auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'a-different-salt-0123456789', rateLimit: false } })
  await restarted.ready()
  const res = await restarted.inject({ method: 'GET', url: '/api/notes', headers: { authorization: `Bearer ${created.accessKey}` } })
  t.equal(res.statusCode, 401, 'a key stored under one salt does not authenticate under another')
  t.equal(await status(created.accessKey), 200, 'under its own salt it does')
})
