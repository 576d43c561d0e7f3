import t from 'tap'
import Fastify from 'fastify'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import contentApi, { ConfigurationError, type ContentApiOptions } from '../../lib/index.js'
import { resolveOptions } from '../../lib/options/index.js'

/**
 * The `pool` and `shutdown` options: defaults, bounds, and the forms of `db` they apply to.
 * Invalid ones fail the registration before anything connects.
 */

async function problems (t: { teardown (fn: () => Promise<void>): void }, options: Record<string, unknown>): Promise<string[]> {
  const app = Fastify({ logger: false })
  t.teardown(async () => { await app.close().catch(() => {}) })
  app.register(contentApi, { models: [], ...options } as ContentApiOptions)
  const err = await app.ready().then(() => null, (err: unknown) => err)
  if (!(err instanceof ConfigurationError)) throw new Error(`expected a ConfigurationError, got ${String(err)}`)
  return err.problems
}

const URL = 'postgres://nobody@127.0.0.1:1/none'

t.test('defaults', async (t) => {
  const resolved = resolveOptions({ models: [], db: URL })
  t.same(resolved.pool, { size: 10, connectionTimeoutMs: 5000, idleTimeoutMs: 10000, statementTimeoutMs: 5000, idleInTransactionTimeoutMs: 30000, jit: false, preparedStatements: true, maxPreparedStatements: 100, transactionPooling: false })
  t.same(resolved.shutdown, { timeoutMs: 10000 })
  t.equal(resolveOptions({ models: [], db: { connectionString: URL, max: 3 } }).pool.size, 3, 'db.max, the older spelling, is the pool size')
  t.same(resolveOptions({ models: [] }).shutdown, { timeoutMs: 10000 }, 'the shutdown bound applies to any database')
})

t.test('pool.transactionPooling: named statements off unless asked for', async (t) => {
  t.equal(resolveOptions({ models: [], db: URL, pool: { transactionPooling: true }, notifications: false }).pool.preparedStatements, false, 'off behind a transaction-mode pooler')
  t.equal(resolveOptions({ models: [], db: URL, pool: { transactionPooling: true, preparedStatements: true }, notifications: { connectionString: URL } }).pool.preparedStatements, true, 'on when the application says its pooler tracks them (PgBouncer 1.21+)')
  t.same(await problems(t, { db: URL, pool: { transactionPooling: 'yes' } }), ['pool.transactionPooling: must be boolean'])
  t.same(await problems(t, { db: URL, pool: { transactionPooling: true } }),
    ['notifications.connectionString: required with pool.transactionPooling (a pooler in transaction mode cannot LISTEN): a direct connection to PostgreSQL, or notifications: false'],
    'the change listener cannot LISTEN through the pooler')
  t.equal(resolveOptions({ models: [], db: URL, pool: { transactionPooling: true }, notifications: false }).pool.transactionPooling, true, 'notifications: false needs no direct connection')
})

t.test('bounds and unknown keys', async (t) => {
  t.same(await problems(t, { db: URL, pool: { size: 0, connectionTimeoutMs: 0, statementTimeoutMs: -1, idleTimeoutMs: 1.5, preparedStatements: 'no', nope: 1 }, shutdown: { timeoutMs: -1 } }), [
    'pool: unknown option(s) nope',
    'pool.size: must be >= 1',
    'pool.connectionTimeoutMs: must be >= 1',
    'pool.idleTimeoutMs: must be integer',
    'pool.statementTimeoutMs: must be >= 0',
    'pool.preparedStatements: must be boolean',
    'shutdown.timeoutMs: must be >= 0'
  ])
  t.same(await problems(t, { db: URL, pool: { maxPreparedStatements: 0 } }), ['pool.maxPreparedStatements: must be >= 1'])
})

t.test('pool options with a database the plugin does not pool: refused, not ignored', async (t) => {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: URL }) }) })
  t.teardown(async () => { await db.destroy() })
  const hint = 'only for the pool the plugin creates from a connection string; set it on your own pool or PGlite (docs/operations.md)'
  t.same(await problems(t, { db, pool: { statementTimeoutMs: 1000 } }), [`pool.statementTimeoutMs: ${hint}`], 'a Kysely of your own')
  t.same(await problems(t, { db, pool: { preparedStatements: false } }), [`pool.preparedStatements: ${hint}`], 'a Kysely of your own: its statements are its own')
  t.same(await problems(t, { pool: { size: 2, connectionTimeoutMs: 10 } }), [`pool.size, pool.connectionTimeoutMs: ${hint}`], 'the embedded PGlite')
  t.same(await problems(t, { db: { dataDir: '/tmp/x' }, pool: { size: 2 } }), [`pool.size: ${hint}`], 'a PGlite data directory')
})

t.test('db.max and pool.size together: a conflict', async (t) => {
  t.same(await problems(t, { db: { connectionString: URL, max: 3 }, pool: { size: 4 } }), ['db.max and pool.size set the same thing: keep pool.size'])
  t.same(await problems(t, { db: { connectionString: URL, max: 'x' } }), ['db.max: must be an integer >= 1'])
})
