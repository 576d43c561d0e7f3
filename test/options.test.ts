import t from 'tap'
import Fastify from 'fastify'
import { sql } from 'kysely'
import contentApi, { ConfigurationError, type ContentApiOptions } from '../lib/index.js'
import { resolveOptions } from '../lib/options/index.js'
import { build } from './helpers/build.js'
import { createTestDatabase } from './helpers/database.js'
import { article, homepage } from './fixtures/models.js'

/**
 * Options are validated once, at registration: every problem is reported in one
 * `ConfigurationError`, and an app with bad options never starts (nothing is connected or
 * created). Valid options get their defaults.
 */

/** Registers the plugin with `options` and returns the error `ready()` rejects with. */
async function rejection (t: { teardown (fn: () => Promise<void>): void }, options: unknown): Promise<{ err: unknown, app: ReturnType<typeof Fastify> }> {
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await app.close().catch(() => {}) })
  app.register(contentApi, options as ContentApiOptions)
  try {
    await app.ready()
  } catch (err) {
    return { err, app }
  }
  throw new Error(`expected registration to fail for ${JSON.stringify(options)}`)
}

async function problems (t: { teardown (fn: () => Promise<void>): void }, options: unknown): Promise<string[]> {
  const { err, app } = await rejection(t, options)
  if (!(err instanceof ConfigurationError)) throw err
  if (app.hasDecorator('contentApi')) throw new Error('the app was decorated although its options are invalid')
  return err.problems
}

t.test('a ConfigurationError lists every problem at once', async (t) => {
  const { err } = await rejection(t, {
    models: [article],
    nope: true,
    rest: { prefix: 5, defaultLimit: 'x', extra: 1 },
    db: 42
  })
  t.type(err, ConfigurationError)
  const e = err as ConfigurationError
  t.equal(e.name, 'ConfigurationError')
  t.equal(e.code, 'FCA_ERR_CONFIGURATION')
  t.same(e.problems, [
    'options: unknown option(s) nope',
    'rest: unknown option(s) extra',
    'rest.prefix: must be string',
    'rest.defaultLimit: must be integer',
    'db: expected a Kysely instance, a PostgreSQL connection string, { connectionString }, { primary, replicas }, { pglite } or { dataDir }'
  ])
  t.equal(e.message, `Invalid fastify-content-api options:\n${e.problems.map((p) => `  - ${p}`).join('\n')}`, 'the message lists each problem on its own line')
})

t.test('unknown option keys, at every level', async (t) => {
  t.same(await problems(t, { models: [article], model: [article] }), ['options: unknown option(s) model'])
  t.same(await problems(t, { models: [article], rest: { perPage: 10 } }), ['rest: unknown option(s) perPage'])
  t.same(await problems(t, { models: [article], schemaSync: { force: true } }), ['schemaSync: unknown option(s) force'])
  t.same(await problems(t, { models: [article], i18n: { fallback: 'en' } }), ['i18n: unknown option(s) fallback'])
  t.same(await problems(t, { models: [article], query: { caseSensitive: true } }), ['query: unknown option(s) caseSensitive'])
})

t.test('wrong types', async (t) => {
  t.same(await problems(t, { models: 'article' }), ['models: must be array'])
  t.same(await problems(t, { models: [article], components: [] }), ['components: must be object'])
  t.same(await problems(t, { models: [article], rest: { maxLimit: 0, withCount: 'yes' } }), [
    'rest.maxLimit: must be >= 1',
    'rest.withCount: must be boolean'
  ])
  t.same(await problems(t, { models: [article], rest: { defaultLimit: 2.5 } }), ['rest.defaultLimit: must be integer'])
  t.same(await problems(t, { models: [article], rest: { prefix: 'api' } }), ['rest.prefix: must match pattern "^/"'])
  t.same(await problems(t, { models: [article], query: { escapeLikeWildcards: 1 } }), ['query.escapeLikeWildcards: must be boolean'])
  t.same(await problems(t, { models: [article], auth: { urls: { server: 'api.example.com' } } }), ['auth.urls.server: must match pattern "^https?://"'])
  t.same(await problems(t, { models: [article], i18n: { locales: [] } }), ['i18n.locales: must NOT have fewer than 1 items'])
  t.same(await problems(t, { models: [article], i18n: { locales: 'en' } }), ['i18n.locales: must be array'])
  t.same(await problems(t, { models: [article], rest: 'fast' }), ['rest: must be object'])

  const mode = await problems(t, { models: [article], schemaSync: { mode: 'always', allowDestructive: 'yes' } })
  t.ok(mode.some((p) => p.startsWith('schemaSync.mode: ')), 'schemaSync.mode is reported')
  t.ok(mode.includes('schemaSync.allowDestructive: must be boolean'))
})

t.test('rest.defaultLimit greater than rest.maxLimit', async (t) => {
  t.same(await problems(t, { models: [article], rest: { defaultLimit: 200 } }), ['rest.defaultLimit must not be greater than rest.maxLimit'],
    'against the default maxLimit of 100')
  t.same(await problems(t, { models: [article], rest: { defaultLimit: 20, maxLimit: 10 } }), ['rest.defaultLimit must not be greater than rest.maxLimit'])
})

t.test('i18n.defaultLocale must be one of i18n.locales', async (t) => {
  t.same(await problems(t, { models: [article], i18n: { defaultLocale: 'fr' } }), ['i18n.defaultLocale "fr" is not one of i18n.locales'],
    'against the default locales ["en"]')
  t.same(await problems(t, { models: [article], i18n: { locales: ['fr', 'de'] } }), ['i18n.defaultLocale "en" is not one of i18n.locales'],
    'the default defaultLocale "en" must be listed too')
  t.same(await problems(t, { models: [article], rest: { defaultLimit: 200 }, i18n: { locales: ['en'], defaultLocale: 'fr' } }), [
    'rest.defaultLimit must not be greater than rest.maxLimit',
    'i18n.defaultLocale "fr" is not one of i18n.locales'
  ], 'both cross-option problems together')
})

t.test('cross-option problems are listed together with the other problems', async (t) => {
  t.same(await problems(t, { models: [article], nope: 1, rest: { defaultLimit: 200 }, i18n: { defaultLocale: 'fr' } }), [
    'options: unknown option(s) nope',
    'rest.defaultLimit must not be greater than rest.maxLimit',
    'i18n.defaultLocale "fr" is not one of i18n.locales'
  ])
})

t.test('bad db values', async (t) => {
  const message = 'db: expected a Kysely instance, a PostgreSQL connection string, { connectionString }, { primary, replicas }, { pglite } or { dataDir }'
  for (const db of [42, true, null, [], ['postgres://localhost/db'], { dataDir: 5 }, { host: 'localhost' }, { connectionString: 5 }, { pglite: 'memory' }, { dataDir: '/tmp/x', extra: 1 }]) {
    t.test(`db: ${JSON.stringify(db)}`, async (t) => {
      t.same(await problems(t, { models: [article], db, schemaSync: { mode: 'off' } }), [message])
    })
  }
})

t.test('a connection string of another database is refused by its option, naming only the scheme', async (t) => {
  const expected = '(expected postgres:// or postgresql://, e.g. postgres://user:password@host:5432/database)'
  const off = { mode: 'off' as const }
  t.same(await problems(t, { models: [article], db: 'mysql://root:secret@db/app', schemaSync: off }), [`db: mysql:// is not a PostgreSQL connection string ${expected}`])
  t.same(await problems(t, { models: [article], db: 'sqlite:app.db', schemaSync: off }), [`db: sqlite: is not a PostgreSQL connection string ${expected}`])
  t.same(await problems(t, { models: [article], db: { connectionString: 'http://db:5432/app' }, schemaSync: off }), [`db.connectionString: http:// is not a PostgreSQL connection string ${expected}`])
  t.same(await problems(t, { models: [article], db: 'app.db', schemaSync: off }), [`db: not a PostgreSQL connection string, it has no scheme ${expected}`],
    'no scheme: pg would read it relative to postgres://base')
  t.same(await problems(t, { models: [article], db: { primary: 'mysql://p/db', replicas: [{ connectionString: 'MySQL://r/db' }] }, schemaSync: off }), [
    `db.primary: mysql:// is not a PostgreSQL connection string ${expected}`,
    `db.replicas[0].connectionString: mysql:// is not a PostgreSQL connection string ${expected}`
  ])
  t.same(await problems(t, { models: [article], db: 'postgres://127.0.0.1:1/none', notifications: { connectionString: 'redis://cache:6379' }, schemaSync: off }),
    [`notifications.connectionString: redis:// is not a PostgreSQL connection string ${expected}`])
  for (const db of ['postgres://app@db/app', 'postgresql://app@db/app', 'POSTGRES://db/app', '/var/run/postgresql app', 'socket:/var/run/postgresql?db=app']) {
    t.doesNotThrow(() => resolveOptions({ models: [], db }), `${db}: accepted`)
  }
  t.notMatch(JSON.stringify(await problems(t, { models: [article], db: 'mysql://root:secret@db/app', schemaSync: off })), /secret/, 'no password in the message')
})

t.test('db: { primary, replicas }: checked per server, defaults filled in', async (t) => {
  t.same(await problems(t, {
    models: [article],
    db: { primary: '', replicas: ['postgres://r1/db', { connectionString: 5 }, { connectionString: 'postgres://r3/db', max: 0 }, 7], probeIntervalMs: 1, maxLagMs: -1, extra: true },
    schemaSync: { mode: 'off' }
  }), [
    'db.extra: not an option of { primary, replicas } (expected primary, replicas, probeIntervalMs, maxLagMs)',
    'db.primary: expected a PostgreSQL connection string or { connectionString, max }',
    'db.replicas[1].connectionString: must be a PostgreSQL connection string',
    'db.replicas[2].max: must be an integer >= 1',
    'db.replicas[3]: expected a PostgreSQL connection string or { connectionString, max }',
    'db.probeIntervalMs: must be an integer >= 10 (milliseconds)',
    'db.maxLagMs: must be an integer >= 0 (milliseconds), or null'
  ])
  t.same(await problems(t, { models: [article], db: { primary: 'postgres://p/db', replicas: 'postgres://r/db' }, schemaSync: { mode: 'off' } }),
    ['db.replicas: must be an array of connection strings or { connectionString, max }'])
  const resolved = resolveOptions({ models: [], db: { primary: { connectionString: 'postgres://p/db', max: 4 }, replicas: ['postgres://r/db'] }, pool: { size: 3 } })
  t.same(resolved.db, { primary: { connectionString: 'postgres://p/db', max: 4 }, replicas: ['postgres://r/db'], probeIntervalMs: 1000, maxLagMs: null })
  t.equal(resolved.pool.size, 3, 'pool.size is every pool\'s size unless a server sets its own max')
})

t.test('an app with bad options never starts and touches nothing', async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await app.close().catch(() => {}) })
  app.register(contentApi, { models: [article], db: database.db, rest: { defaultLimit: 0 } })
  await t.rejects(async () => { await app.ready() }, ConfigurationError)
  t.notOk(app.hasDecorator('contentApi'))
  await t.rejects(app.listen({ port: 0, host: '127.0.0.1' }), 'listen fails too')
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_schema = current_schema()`.execute(database.db)
  t.equal(rows[0].n, 0, 'no table was created')
  t.equal((await sql<{ x: number }>`select 1 as x`.execute(database.db)).rows[0].x, 1, 'the Kysely instance given is still usable')
})

t.test('graphql and upload options are checked with the others, before any DDL runs', async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await app.close().catch(() => {}) })
  app.register(contentApi, {
    models: [article],
    db: database.db,
    rest: { defaultLimit: 0 },
    graphql: { endpoint: 'graphql', depthLimit: 0 },
    upload: { maxFiles: 0, provider: 'ftp' as 'local' }
  })
  const err = await app.ready().then(() => null, (e: unknown) => e)
  t.type(err, ConfigurationError)
  t.same((err as ConfigurationError).problems, [
    'rest.defaultLimit: must be >= 1',
    'graphql.endpoint: expected a path starting with /',
    'graphql.depthLimit: expected an integer of at least 1',
    'upload.maxFiles: must be >= 1',
    'upload.provider: expected "local", "s3" or an object with upload(file) and delete(file) methods'
  ], 'one error lists the problems of every section')
  t.match((err as ConfigurationError).message, /^Invalid fastify-content-api options:\n {2}- /)
  t.notOk(app.hasDecorator('contentApi'))
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_schema = current_schema()`.execute(database.db)
  t.equal(rows[0].n, 0, 'no table was created')

  t.same(await problems(t, { models: [article], graphql: { endpoint: 'graphql' } }), ['graphql.endpoint: expected a path starting with /'], 'a typo in graphql.endpoint alone')
  t.same(await problems(t, { models: [article], graphql: 'on' }), ['graphql: expected an object or false'])
  t.same(await problems(t, { models: [article], upload: { sizeLimt: 10 } }), ['upload: unknown option(s) sizeLimt'], 'a typo in an upload option alone')
})

t.test('graphql and upload options are reported before the database is connected to', async (t) => {
  // Nothing listens on port 1: were the database reached first, the error would be ECONNREFUSED.
  const db = 'postgres://nobody@127.0.0.1:1/nothing'
  t.same(await problems(t, { models: [article], db, graphql: { endpoint: 'graphql' } }), ['graphql.endpoint: expected a path starting with /'])
  t.same(await problems(t, { models: [article], db, upload: { local: { baseUrl: 'uploads' } } }), ['upload.local.baseUrl: must match pattern "^/[^?#]*[^/?#]$"'])
})

t.test('graphql and upload defaults are filled in by the same step', async (t) => {
  const resolved = resolveOptions({ models: [] })
  t.match(resolved.graphql, { endpoint: '/graphql', shadowCRUD: true, depthLimit: 10, amountLimit: 100, defaultLimit: 10, format: 'entity' })
  t.match(resolved.upload, { enabled: true, sizeLimit: 1_000_000_000, maxFiles: 20, provider: 'local', local: { directory: 'public/uploads', baseUrl: '/uploads', serve: true } })
  t.equal(resolveOptions({ models: [], graphql: false }).graphql, null, 'graphql: false turns GraphQL off')
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(() => app.close())
  await app.register(contentApi, { models: [article], db: database.db, graphql: false, upload: { enabled: false }, schemaSync: { mode: 'off' } })
  await app.ready()
  t.equal(app.contentApi.graphql, null)
  t.equal(app.contentApi.upload, null)
})

t.test('invalid models fail the same way, before anything is touched', async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await app.close().catch(() => {}) })
  app.register(contentApi, { models: [{ ...article, attributes: { title: { type: 'strin' } } }] as any, db: database.db })
  const err = await app.ready().then(() => null, (e: unknown) => e)
  t.type(err, ConfigurationError)
  t.match((err as ConfigurationError).message, /^Invalid content-type models:\n {2}- /)
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_schema = current_schema()`.execute(database.db)
  t.equal(rows[0].n, 0, 'no table was created')
})

t.test('defaults', async (t) => {
  const { app } = await build(t, { models: [article, homepage] })
  t.equal(app.contentApi.schemaPlan.applied, true, 'schemaSync.mode defaults to apply')
  t.ok(app.contentApi.schemaPlan.statements.length > 0)
  t.equal((await app.inject('/api/articles')).statusCode, 200, 'rest.prefix defaults to /api')
  t.equal((await app.inject('/api/homepage')).statusCode, 404)

  for (let i = 0; i < 30; i++) await app.contentApi.documents('api::article.article').create({ data: { title: `A${i}` } })
  const list = (await app.inject('/api/articles')).json()
  t.equal(list.data.length, 25, 'rest.defaultLimit defaults to 25')
  t.same(list.meta.pagination, { page: 1, pageSize: 25, pageCount: 2, total: 30 }, 'rest.withCount defaults to true')
  const big = (await app.inject('/api/articles?pagination[pageSize]=1000')).json()
  t.equal(big.meta.pagination.pageSize, 100, 'rest.maxLimit defaults to 100')

  await app.contentApi.documents('api::article.article').create({ data: { title: '100% sure' } })
  await app.contentApi.documents('api::article.article').create({ data: { title: '100 percent' } })
  const like = (await app.inject('/api/articles?filters[title][$startsWith]=100%25')).json()
  t.same(like.data.map((d: { title: string }) => d.title).sort(), ['100 percent', '100% sure'], 'query.escapeLikeWildcards defaults to false: % is a wildcard')
})

t.test('an option given as undefined is an option not given', async (t) => {
  // As a configuration writes it: `auth: secret === undefined ? undefined : { jwtSecret: secret }`.
  const groups = ['rest', 'schemaSync', 'i18n', 'query', 'limits', 'auth', 'pool', 'shutdown', 'notifications', 'policies', 'components', 'graphql', 'upload', 'webhooks'] as const
  const { app } = await build(t, { models: [article, homepage], ...Object.fromEntries(groups.map((group) => [group, undefined])) })
  t.equal(app.contentApi.schemaPlan.applied, true, 'schemaSync: the tables were created')
  await app.contentApi.documents('api::article.article').create({ data: { title: 'Hello' } })
  const list = await app.inject('/api/articles')
  t.equal(list.statusCode, 200, 'rest: the routes are under /api')
  t.same(list.json().meta.pagination, { page: 1, pageSize: 25, pageCount: 1, total: 1 }, 'rest: the default page')
  const graphql = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ articles { meta { pagination { total } } } }' } })
  t.same(graphql.json(), { data: { articles: { meta: { pagination: { total: 1 } } } } }, 'graphql: on, at /graphql')

  for (const group of groups) {
    t.same(resolveOptions({ models: [article], [group]: undefined }), resolveOptions({ models: [article] }), `${group}: undefined resolves as left out`)
  }
})

t.test('rest options', async (t) => {
  const { app } = await build(t, { models: [article, homepage], rest: { prefix: '/content', defaultLimit: 2, maxLimit: 3, withCount: false } })
  t.equal((await app.inject('/content/articles')).statusCode, 200, 'the routes moved to the prefix')
  t.equal((await app.inject('/content/homepage')).statusCode, 404)
  const old = await app.inject('/api/articles')
  t.equal(old.statusCode, 404)
  t.same(old.json(), { message: 'Route GET:/api/articles not found', error: 'Not Found', statusCode: 404 }, '/api is the application\'s again')
  const missing = await app.inject('/content/nope')
  t.same(missing.json(), { data: null, error: { status: 404, name: 'NotFoundError', message: 'Not Found', details: {} } }, 'the envelope 404 moved too')

  for (let i = 0; i < 5; i++) await app.inject({ method: 'POST', url: '/content/articles', payload: { data: { title: `A${i}` } } })
  const list = (await app.inject('/content/articles')).json()
  t.equal(list.data.length, 2, 'defaultLimit')
  t.same(list.meta.pagination, { page: 1, pageSize: 2 }, 'withCount: false leaves out total and pageCount')
  const clamped = (await app.inject('/content/articles?pagination[pageSize]=50&pagination[withCount]=true')).json()
  t.same(clamped.meta.pagination, { page: 1, pageSize: 3, pageCount: 2, total: 5 }, 'maxLimit clamps, withCount=true asks for the count')
})

t.test('schemaSync and query options', async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(() => app.close())
  await app.register(contentApi, { models: [article], db: database.db, schemaSync: { mode: 'dryRun' } })
  await app.ready()
  t.equal(app.contentApi.schemaPlan.applied, false)
  t.ok(app.contentApi.schemaPlan.statements.some((s) => s.startsWith('create table "articles"')), 'the plan is computed')
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_schema = current_schema() and table_name = 'articles'`.execute(app.contentApi.db)
  t.equal(rows[0].n, 0, 'dryRun creates nothing')

  const escaped = await build(t, { models: [article], query: { escapeLikeWildcards: true } })
  const articles = escaped.app.contentApi.documents('api::article.article')
  await articles.create({ data: { title: '100% sure' } })
  await articles.create({ data: { title: '100 percent' } })
  const like = (await escaped.app.inject('/api/articles?filters[title][$startsWith]=100%25')).json()
  t.same(like.data.map((d: { title: string }) => d.title), ['100% sure'], '% is matched literally')
})

t.test('the embedded PGlite\'s options: db.settings, db.bootSnapshot, db.optimizeWasm', async (t) => {
  const valid = { settings: { shared_buffers: '32MB', work_mem: 8192, fsync: false, 'pg_stat_statements.max': 100 }, bootSnapshot: false as const, optimizeWasm: true }
  t.same(resolveOptions({ models: [article], db: valid }).db, valid, 'valid, with dataDir left out, and kept as given')
  t.same(resolveOptions({ models: [article], db: { dataDir: '/tmp/x', bootSnapshot: '/tmp/x.tar' } }).db, { dataDir: '/tmp/x', bootSnapshot: '/tmp/x.tar' })
  t.same(await problems(t, { models: [article], db: { settings: 'shared_buffers=1MB', bootSnapshot: true, optimizeWasm: 'yes' }, schemaSync: { mode: 'off' } }), [
    'db.bootSnapshot: must be a file path, or false',
    'db.optimizeWasm: must be a boolean',
    'db.settings: must be an object of PostgreSQL settings, e.g. { shared_buffers: \'32MB\' }'
  ])
  t.same(await problems(t, { models: [article], db: { settings: { 'shared_buffers=1MB -c x': '1', Work_Mem: '1MB', work_mem: null, temp_buffers: 'a\nb', wal_buffers: '', maintenance_work_mem: Infinity }, bootSnapshot: '' }, schemaSync: { mode: 'off' } }), [
    'db.bootSnapshot: must be a file path, or false',
    'db.settings.shared_buffers=1MB -c x: not a PostgreSQL setting name',
    'db.settings.Work_Mem: not a PostgreSQL setting name',
    'db.settings.work_mem: must be a string, a number or a boolean',
    'db.settings.temp_buffers: must be a string, a number or a boolean',
    'db.settings.wal_buffers: must be a string, a number or a boolean',
    'db.settings.maintenance_work_mem: must be a string, a number or a boolean'
  ])
})

t.test('notifications: shape, and not with embedded PGlite', async (t) => {
  const db = 'postgres://127.0.0.1:1/none'
  t.same(await problems(t, { models: [article], db, notifications: { channel: 'x'.repeat(64), extra: 1, connectionString: 5 } }), [
    'notifications: unknown option(s) extra',
    'notifications.channel: must be a string of 1 to 63 bytes (a PostgreSQL identifier)',
    'notifications.connectionString: must be a connection string'
  ])
  t.same(await problems(t, { models: [article], db, notifications: true }), ['notifications: must be false or { channel?, connectionString? }'])
  t.same(await problems(t, { models: [article], notifications: { channel: 'events' } }), [
    'notifications: embedded PGlite is one process, with no other instance to notify; remove notifications or use PostgreSQL'
  ])
})
