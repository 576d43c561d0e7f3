import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import contentApi, { ConfigurationError, type ContentApiOptions } from '../../lib/index.js'
import { createTestDatabase, dialectName, embeddedOnly } from '../helpers/database.js'

/**
 * Development secrets shared through the database (lib/schema/stored-secrets.ts): instances on
 * one database without `auth.jwtSecret` / `auth.apiTokenSalt` use the ones the first instance
 * stored in `content_api_secrets`, so each accepts the others' JWTs and API tokens; four
 * simultaneous starts store one pair; a configured secret wins; production still refuses to
 * start without them. On PGlite (one process, one session) and on PostgreSQL (DATABASE_URL).
 */

const PASSWORD = 'Password123!'

// Only development and test (or no NODE_ENV) may start without secrets.
if (process.env.NODE_ENV !== undefined && process.env.NODE_ENV !== 'development') process.env.NODE_ENV = 'test'

interface Instance { app: FastifyInstance, logs: string[] }

/** An app on `db` with the given auth options, its log lines collected. */
async function instance (t: { teardown: (fn: () => Promise<void>) => void }, db: ContentApiOptions['db'], auth: ContentApiOptions['auth'] = {}): Promise<Instance> {
  const logs: string[] = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter((line) => line !== ''))
      done()
    }
  })
  const app = Fastify({ logger: { level: 'info', stream }, pluginTimeout: 120_000 })
  t.teardown(async () => { await app.close() })
  await app.register(contentApi, { models: [], db, auth: { rateLimit: false, ...auth } })
  await app.ready()
  return { app, logs }
}

async function registerUser (app: FastifyInstance, username: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username, email: `${username}@example.com`, password: PASSWORD } })
  if (res.statusCode !== 200) throw new Error(`register: ${res.statusCode} ${res.body}`)
  return res.json().jwt as string
}

async function me (app: FastifyInstance, jwt: string): Promise<number> {
  return (await app.inject({ method: 'GET', url: '/api/users/me', headers: { authorization: `Bearer ${jwt}` } })).statusCode
}

async function withToken (app: FastifyInstance, accessKey: string): Promise<number> {
  return (await app.inject({ method: 'GET', url: '/api/users', headers: { authorization: `Bearer ${accessKey}` } })).statusCode
}

async function storedRows (db: Kysely<any>): Promise<Array<{ name: string, value: string }>> {
  const { rows } = await sql<{ name: string, value: string }>`select name, value from content_api_secrets order by name`.execute(db)
  return rows
}

t.test('two instances on one database: a JWT or an API token from A is accepted by B', async (t) => {
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const a = await instance(t, database.db)
  const b = await instance(t, database.connectAgain())

  const jwt = await registerUser(a.app, 'alice')
  t.equal(await me(b.app, jwt), 200, "B accepts A's JWT")
  const token = await a.app.contentApi.apiTokens.create({ name: 'shared', type: 'full-access' })
  t.equal(await withToken(b.app, token.accessKey), 200, "B accepts A's API token")
  t.equal(await me(a.app, await registerUser(b.app, 'bob')), 200, "and A accepts B's")

  const rows = await storedRows(database.db)
  t.strictSame(rows.map((r) => r.name), ['apiTokenSalt', 'jwtSecret'], 'one row per secret')
  t.ok(rows.every((r) => /^[0-9a-f]{64}$/.test(r.value)), '32 random bytes each')
  for (const { logs } of [a, b]) {
    const warning = logs.find((line) => line.includes('stored in the database'))
    t.match(warning, /auth\.jwtSecret or auth\.apiTokenSalt/, 'the warning names both options')
    t.ok(rows.every((r) => !logs.some((line) => line.includes(r.value))), 'no value is ever logged')
  }
})

t.test('four simultaneous starts store one pair, and all four agree', async (t) => {
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const started = performance.now()
  const instances = await Promise.all([0, 1, 2, 3].map(async (i) => await instance(t, i === 0 ? database.db : database.connectAgain())))
  t.comment(`four simultaneous starts (${dialectName}): ${(performance.now() - started).toFixed(0)} ms`)
  t.equal((await storedRows(database.db)).length, 2, 'one jwtSecret and one apiTokenSalt')
  const jwt = await registerUser(instances[0]!.app, 'carol')
  const token = await instances[3]!.app.contentApi.apiTokens.create({ name: 'everywhere', type: 'full-access' })
  for (const [i, { app }] of instances.entries()) {
    t.equal(await me(app, jwt), 200, `instance ${i} accepts the JWT`)
    t.equal(await withToken(app, token.accessKey), 200, `instance ${i} accepts the API token`)
  }
})

t.test('a configured secret wins; the other one is still the stored one', async (t) => {
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const stored = await instance(t, database.db)
  const storedJwt = await registerUser(stored.app, 'dave')
  const token = await stored.app.contentApi.apiTokens.create({ name: 'salted', type: 'full-access' })
  const before = await storedRows(database.db)

  const configured = await instance(t, database.connectAgain(), { jwtSecret: 'configured-jwt-secret-0123456789' })
  t.equal(await me(configured.app, storedJwt), 401, 'the stored jwtSecret is not used where one is configured')
  t.equal(await me(configured.app, (await configured.app.inject({ method: 'POST', url: '/api/auth/local', payload: { identifier: 'dave', password: PASSWORD } })).json().jwt), 200,
    'its own JWTs are signed with the configured one')
  t.equal(await withToken(configured.app, token.accessKey), 200, 'the unconfigured apiTokenSalt is the stored one')
  const warning = configured.logs.find((line) => line.includes('stored in the database'))
  t.match(warning, /auth\.apiTokenSalt/, 'the warning names the missing one')
  t.notMatch(warning, /auth\.jwtSecret/, 'not the configured one')
  t.strictSame(await storedRows(database.db), before, 'the stored values are left as they were')

  const both = await instance(t, database.connectAgain(), { jwtSecret: 'configured-jwt-secret-0123456789', apiTokenSalt: 'configured-api-token-salt-0123456789' })
  t.equal(await withToken(both.app, token.accessKey), 401, 'with both configured, nothing stored is used')
  t.notOk(both.logs.some((line) => line.includes('auth.')), 'and nothing is said about secrets')
})

t.test('a database where the secrets table is missing and both secrets are configured: nothing is created', async (t) => {
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  await instance(t, database.db, { jwtSecret: 'configured-jwt-secret-0123456789', apiTokenSalt: 'configured-api-token-salt-0123456789' })
  const { rows } = await sql<{ present: boolean }>`select to_regclass('content_api_secrets') is not null as present`.execute(database.db)
  t.equal(rows[0]?.present, false)
})

t.test('schema sync not applying (dryRun): the table is only planned, and a per-process secret is used', async (t) => {
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const logs: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { logs.push(String(chunk)); done() } })
  const app = Fastify({ logger: { level: 'warn', stream } })
  t.teardown(async () => { await app.close() })
  await app.register(contentApi, { models: [], db: database.db, schemaSync: { mode: 'dryRun' }, auth: { rateLimit: false } })
  await app.ready()
  t.ok(app.contentApi.schemaPlan.statements.some((s) => s.startsWith('create table "content_api_secrets"')), 'the plan holds the table')
  const { rows } = await sql<{ present: boolean }>`select to_regclass('content_api_secrets') is not null as present`.execute(database.db)
  t.equal(rows[0]?.present, false, 'nothing created')
  t.ok(logs.some((line) => line.includes('using a throwaway one')), 'the warning says the secret is per process')
})

t.test('production without secrets still refuses to start, before touching the database', async (t) => {
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const previous = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  let err: unknown = null
  try {
    await app.register(contentApi, { models: [], db: database.db })
    await app.ready()
  } catch (e) {
    err = e
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = previous
    await app.close().catch(() => {})
  }
  t.type(err, ConfigurationError)
  t.strictSame((err as ConfigurationError).problems, ['auth.jwtSecret is required in production', 'auth.apiTokenSalt is required in production'])
  const { rows } = await sql<{ present: boolean }>`select to_regclass('content_api_secrets') is not null as present`.execute(database.db)
  t.equal(rows[0]?.present, false, 'no secrets table')
})

t.test('embedded PGlite on disk: a restart keeps the secrets (users stay signed in)', { skip: embeddedOnly }, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'fca-stored-secrets-'))
  t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  const first = Fastify({ logger: false, pluginTimeout: 120_000 })
  await first.register(contentApi, { models: [], db: { dataDir }, auth: { rateLimit: false } })
  const jwt = await registerUser(first, 'erin')
  const token = await first.contentApi.apiTokens.create({ name: 'kept', type: 'full-access' })
  await first.close()

  const second = await instance(t, { dataDir })
  t.equal(await me(second.app, jwt), 200, 'the JWT of the first run is accepted by the second')
  t.equal(await withToken(second.app, token.accessKey), 200, 'and the API token')
})
