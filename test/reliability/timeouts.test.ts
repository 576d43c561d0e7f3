import t from 'tap'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { schemaLockKey } from '../../lib/schema/index.js'
import { Scratch, assertGraphqlUnavailable, assertUnavailable, needsPostgres, postBody, sleep, startApp } from './helpers.js'

/**
 * The pool's bounds: a statement over `pool.statementTimeoutMs` and a wait for a connection over
 * `pool.connectionTimeoutMs` answer 503 in about that time, never a hang; schema sync is not cut
 * by the statement timeout; the settings reach every session.
 */
t.setTimeout(60_000)

const GRAPHQL_QUERY = '{ posts { data { id } } }'

t.test('a statement over statementTimeoutMs: 503 in about that time (REST, GraphQL, writes), then served again', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app, logs } = await startApp(t, { db: scratch.url(), pool: { statementTimeoutMs: 300 } })
  t.equal((await app.inject({ method: 'POST', url: '/api/posts', payload: postBody('first') })).statusCode, 200)

  const locker = await scratch.admin.connect()
  t.teardown(() => { locker.release() })
  await locker.query('begin')
  await locker.query('lock table posts in access exclusive mode')

  let start = Date.now()
  const read = await app.inject('/api/posts')
  const elapsed = Date.now() - start
  assertUnavailable(t, read, 'a read behind the lock')
  t.ok(elapsed >= 280 && elapsed < 1500, `answered after ${elapsed} ms (statementTimeoutMs 300)`)
  t.comment(`statement timeout 300 ms: the read answered 503 after ${elapsed} ms`)
  assertUnavailable(t, await app.inject({ method: 'POST', url: '/api/posts', payload: postBody('blocked') }), 'a write behind the lock')
  start = Date.now()
  assertGraphqlUnavailable(t, await app.inject({ method: 'POST', url: '/graphql', payload: { query: GRAPHQL_QUERY } }), 'GraphQL behind the lock')
  t.comment(`GraphQL answered 503 after ${Date.now() - start} ms`)
  t.ok(logs.some((l) => l.level === 40 && l.err?.code === '57014'), 'the cause (57014) is logged as a warning')

  await locker.query('rollback')
  const res = await app.inject('/api/posts')
  t.equal(res.statusCode, 200, 'served again once the lock is gone')
  t.same(res.json().data.map((p: { title: string }) => p.title), ['first'], 'the write that timed out wrote nothing')
})

t.test('the pool exhausted: a request waits connectionTimeoutMs, then 503', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app } = await startApp(t, { db: scratch.url(), pool: { size: 1, connectionTimeoutMs: 300 } })
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  const held = app.contentApi.db.connection().execute(async (db) => {
    await sql`select 1`.execute(db)
    await released
  })
  await sleep(50)

  const start = Date.now()
  const res = await app.inject('/api/posts')
  const elapsed = Date.now() - start
  assertUnavailable(t, res, 'no connection free')
  t.ok(elapsed >= 280 && elapsed < 1500, `answered after ${elapsed} ms (connectionTimeoutMs 300)`)
  t.comment(`pool exhausted, connection timeout 300 ms: 503 after ${elapsed} ms`)
  assertUnavailable(t, await app.inject({ method: 'POST', url: '/api/auth/local', payload: { identifier: 'a@b.c', password: 'secret-123' } }), 'the auth routes too')
  assertUnavailable(t, await app.inject('/api/upload/files'), 'the upload routes too')

  release()
  await held
  t.equal((await app.inject('/api/posts')).statusCode, 200, 'served again once the connection is free')
})

/** Holds the schema-sync lock of `scratch`'s schema for `ms`, from another session. */
async function holdSchemaLock (scratch: Scratch, ms: number): Promise<void> {
  const client = await scratch.admin.connect()
  try {
    await client.query('begin')
    await client.query('select pg_advisory_xact_lock($1::bigint)', [schemaLockKey(scratch.schema).toString()])
    await sleep(ms)
    await client.query('commit')
  } finally {
    client.release()
  }
}

t.test('schema sync is not cut by the statement timeout: it waits for the schema lock longer', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  // Longer than the statement timeout and than the client-side bound past it (200 + 1000 ms).
  const holding = holdSchemaLock(scratch, 1800)
  await sleep(100)
  const start = Date.now()
  const { app } = await startApp(t, { db: scratch.url(), pool: { statementTimeoutMs: 200 } })
  t.ok(Date.now() - start >= 1600, `the plugin's pool: sync waited ${Date.now() - start} ms for the lock, past statementTimeoutMs 200`)
  await holding
  t.equal((await app.inject('/api/posts')).statusCode, 200)
  t.ok(app.contentApi.schemaPlan.applied)
})

t.test('a Kysely of the application\'s with a statement_timeout: sync is exempt, requests answer 503', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const pool = new pg.Pool({ connectionString: scratch.url(), max: 2, statement_timeout: 200 })
  pool.on('error', () => {})
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  t.teardown(async () => { await db.destroy() })
  const holding = holdSchemaLock(scratch, 800)
  await sleep(100)
  const start = Date.now()
  const { app } = await startApp(t, { db })
  t.ok(Date.now() - start >= 600, `sync waited ${Date.now() - start} ms for the lock under set local statement_timeout = 0`)
  await holding

  const locker = await scratch.admin.connect()
  t.teardown(() => { locker.release() })
  await locker.query('begin')
  await locker.query('lock table posts in access exclusive mode')
  assertUnavailable(t, await app.inject('/api/posts'), 'the application\'s own timeout, answered 503 too')
  await locker.query('rollback')
  const { rows } = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)
  t.equal(rows[0].statement_timeout, '200ms', 'the set local of sync did not outlive its transaction')
})

t.test('the settings reach every session; db.max is still the pool size', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app } = await startApp(t, { db: { connectionString: scratch.url(), max: 2 }, pool: { statementTimeoutMs: 1500, idleInTransactionTimeoutMs: 2500 } })
  const { rows } = await sql<{ s: string, i: string, jit: string }>`select current_setting('statement_timeout') as s, current_setting('idle_in_transaction_session_timeout') as i, current_setting('jit') as jit`.execute(app.contentApi.db)
  t.same(rows[0], { s: '1500ms', i: '2500ms', jit: 'off' }, 'the timeouts, and JIT off beside the connection string\'s own options')
  t.equal((await app.inject('/api/posts')).statusCode, 200, 'the connection string\'s search_path holds too')
  await Promise.all(Array.from({ length: 6 }, async () => await sql`select pg_sleep(0.1)`.execute(app.contentApi.db)))
  // Plus the change listener's session (lib/db/notifications.ts), which is not the pool's.
  t.equal(await scratch.backends(), 3, 'six concurrent statements on two connections (db.max), besides the listener')

  // `options` given in the config rather than in the connection string: kept beside jit = off.
  const plain = new URL(scratch.url())
  plain.searchParams.delete('options')
  const { app: configOptions } = await startApp(t, { db: { connectionString: plain.toString(), options: `-c search_path=${scratch.schema}` } as any })
  const fromConfig = await sql<{ jit: string }>`select current_setting('jit') as jit`.execute(configOptions.contentApi.db)
  t.equal(fromConfig.rows[0].jit, 'off', 'JIT off beside the config\'s own options')
  t.equal((await configOptions.inject('/api/posts')).statusCode, 200, 'the config\'s search_path holds too')

  const { app: jitOn } = await startApp(t, { db: scratch.url(), pool: { jit: true } })
  const jit = await sql<{ jit: string }>`select current_setting('jit') as jit`.execute(jitOn.contentApi.db)
  t.equal(jit.rows[0].jit, 'on', 'pool.jit: true leaves the server\'s setting')
})
