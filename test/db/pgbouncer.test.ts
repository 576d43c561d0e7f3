import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import contentApi, { defineContentType, type ContentApiOptions } from '../../lib/index.js'
import { DATABASE_URL } from '../helpers/database.js'
import { pgbouncerVersion, startPgBouncer, type Bouncer } from './pgbouncer.js'

/**
 * The plugin behind PgBouncer in transaction mode (`pool.transactionPooling: true`): every
 * transaction may land on another server connection, so nothing may rely on a session. Two apps
 * share one PgBouncer (two server connections for four client connections each), so their
 * transactions and statements are spread over both server connections.
 */
t.setTimeout(90_000)

const version = pgbouncerVersion()
const skip = DATABASE_URL === undefined || DATABASE_URL === ''
  ? 'DATABASE_URL is not set: PgBouncer needs a PostgreSQL server behind it'
  : version === null
    ? 'the pgbouncer binary is not installed (Debian/Ubuntu: apt-get install pgbouncer; macOS: brew install pgbouncer): the PgBouncer tests are skipped'
    : false
/** PgBouncer 1.21 tracks protocol-level named statements when `max_prepared_statements` > 0. */
const tracksStatements = version !== null && (version[0] > 1 || version[1] >= 21)

const item = defineContentType({
  kind: 'collectionType',
  collectionName: 'items',
  info: { singularName: 'item', pluralName: 'items', displayName: 'Item' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string', required: true },
    slug: { type: 'string', unique: true },
    rank: { type: 'integer' }
  }
})
const ITEM_ACTIONS = ['find', 'findOne', 'create', 'update', 'delete', 'publish'].map((a) => `api::item.item.${a}`)

/** An app, and the warnings it logged about the pooler. */
interface Started { app: FastifyInstance, warnings: string[] }

async function start (bouncer: Bouncer, pool: ContentApiOptions['pool'] = {}): Promise<Started> {
  const warnings: string[] = []
  const write = (line: string): void => {
    const { msg } = JSON.parse(line)
    if (msg.includes('pooler')) warnings.push(msg)
  }
  const app = Fastify({ logger: { level: 'warn', stream: { write } } })
  await app.register(contentApi, {
    models: [item],
    db: bouncer.url,
    pool: { size: 4, transactionPooling: true, ...pool },
    notifications: { connectionString: bouncer.directUrl },
    auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false }
  })
  await app.ready()
  return { app, warnings }
}

t.test('behind PgBouncer in transaction mode', { skip }, async (t) => {
  // The database's own statement_timeout is the pool's, as docs/operations.md#pgbouncer advises:
  // statements outside a transaction run under it.
  const bouncer = await startPgBouncer(t, { poolSize: 2, maxPreparedStatements: tracksStatements ? 100 : 0, statementTimeoutMs: 500 })
  t.comment(`PgBouncer ${version!.join('.')}, pool_mode = transaction, default_pool_size = 2${tracksStatements ? ', max_prepared_statements = 100' : ''}`)
  const pool = { statementTimeoutMs: 500, ...(tracksStatements ? { preparedStatements: true } : {}) }

  // Both start at once: schema sync runs under its transaction-level lock, once.
  const [started, other] = await Promise.all([start(bouncer, pool), start(bouncer, pool)])
  const [a, b] = [started.app, other.app]
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  t.strictSame([...started.warnings, ...other.warnings], [], 'the server\'s settings are the pool\'s: no warning')
  t.equal(a.contentApi.schemaPlan.statements.length + b.contentApi.schemaPlan.statements.length > 0, true, 'one of them created the tables')
  t.equal((await a.inject('/api/items')).statusCode, 403, 'both serve')
  await a.contentApi.permissions.grant('public', ITEM_ACTIONS)
  const tables = await bouncer.direct.query<{ n: number }>("select count(*)::int as n from pg_tables where tablename = 'items'")
  t.equal(tables.rows[0].n, 1)

  await t.test('the pool\'s settings hold inside each transaction and leave nothing on the server connection', async (t) => {
    const inside = await a.contentApi.db.transaction().execute(async (trx) =>
      (await sql<{ statement: string, idle: string, jit: string }>`select current_setting('statement_timeout') as statement, current_setting('idle_in_transaction_session_timeout') as idle, current_setting('jit') as jit`.execute(trx)).rows[0])
    t.strictSame(inside, { statement: '500ms', idle: '30s', jit: 'off' })
    const server = (await bouncer.direct.query<{ s: string }>("select current_setting('statement_timeout') as s")).rows[0].s
    for (let i = 0; i < 4; i++) {
      const outside = (await sql<{ s: string }>`select current_setting('statement_timeout') as s`.execute(a.contentApi.db)).rows[0].s
      t.equal(outside, server, 'outside a transaction: the server\'s own setting (set local ended with its transaction)')
    }
  })

  await t.test('creates, updates and publishes', async (t) => {
    const heard: string[] = []
    b.contentApi.documents('api::item.item').onChange((event) => { if (event?.origin === 'remote') heard.push(event.action) })
    const created = await a.inject({ method: 'POST', url: '/api/items', payload: { data: { title: 'First', slug: 'first', rank: 1 } } })
    t.equal(created.statusCode, 200, created.body)
    const { documentId } = created.json().data
    const updated = await b.inject({ method: 'PUT', url: `/api/items/${documentId}`, payload: { data: { title: 'First, updated' } } })
    t.equal(updated.statusCode, 200, updated.body)
    t.equal((await a.inject(`/api/items/${documentId}?status=draft`)).json().data.title, 'First, updated', 'A reads what B wrote')
    await b.contentApi.documents('api::item.item').publish({ documentId })
    const published = await a.inject(`/api/items/${documentId}`)
    t.equal(published.statusCode, 200)
    t.equal(published.json().data.title, 'First, updated')
    t.equal((await b.inject({ method: 'DELETE', url: `/api/items/${documentId}` })).statusCode, 204)
    t.equal((await a.inject(`/api/items/${documentId}`)).statusCode, 404)
    // A's create reached B through the listener's direct connection, beside PgBouncer.
    for (let i = 0; i < 100 && !heard.includes('create'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    t.ok(heard.includes('create'), `B heard A's create (${heard.join(', ')})`)
  })

  await t.test('concurrent creates through both apps: each unique value stored once', async (t) => {
    const slugs = Array.from({ length: 20 }, (_, i) => `slug-${i}`)
    const answers = await Promise.all(slugs.flatMap((slug) => [a, b].map(async (app, n) =>
      (await app.inject({ method: 'POST', url: '/api/items', payload: { data: { title: `${slug} via ${n}`, slug } } })).statusCode)))
    t.equal(answers.filter((s) => s === 200).length, slugs.length, 'one create per value succeeds')
    t.equal(answers.filter((s) => s === 400).length, slugs.length, 'the other is refused as a duplicate')
    // A create stores the draft and its published version: one document per value.
    const rows = await bouncer.direct.query<{ slug: string, n: number }>("select slug, count(distinct document_id)::int as n from items where slug like 'slug-%' group by slug")
    t.equal(rows.rows.length, slugs.length)
    t.ok(rows.rows.every((r) => r.n === 1), 'no value stored by two documents')
  })

  await t.test(tracksStatements ? 'reads as named statements (PgBouncer tracks them)' : 'reads run unnamed by default (PgBouncer < 1.21 cannot carry named statements)', async (t) => {
    const shapes = ['/api/items?sort=slug', '/api/items?filters[rank][$null]=true', '/api/items?fields[0]=title', '/api/items?pagination[pageSize]=5']
    const answers = await Promise.all(Array.from({ length: 80 }, async (_, i) =>
      await (i % 2 === 0 ? a : b).inject(shapes[i % shapes.length])))
    const failed = answers.filter((r) => r.statusCode !== 200)
    t.equal(failed.length, 0, `${answers.length} concurrent reads over ${shapes.length} shapes through both apps answered 200${failed.length > 0 ? `; first failure: ${failed[0].body}` : ''}`)
  })

  await t.test('an app whose pool is stricter than the server warns at start-up, saying what to set', async (t) => {
    const { app, warnings } = await start(bouncer, { ...pool, statementTimeoutMs: 200, jit: false })
    await app.close()
    t.equal(warnings.length, 1)
    t.match(warnings[0], /statements outside a transaction .* alter role <role> set statement_timeout = 200/)
  })

  await t.test('the statement timeout: a write or a read behind a lock answers 503 in about statementTimeoutMs', async (t) => {
    const locker = await bouncer.direct.connect()
    t.teardown(() => { locker.release() })
    await locker.query('begin')
    await locker.query('lock table items in access exclusive mode')
    let start = Date.now()
    const write = await a.inject({ method: 'PUT', url: '/api/items/nope', payload: { data: { title: 'blocked' } } })
    const writeMs = Date.now() - start
    t.equal(write.statusCode, 503, write.body)
    t.ok(writeMs >= 450 && writeMs < 1400, `the write answered after ${writeMs} ms (statementTimeoutMs 500, set local in its transaction)`)
    start = Date.now()
    const read = await b.inject('/api/items?sort=title')
    const readMs = Date.now() - start
    t.equal(read.statusCode, 503, read.body)
    t.ok(readMs >= 450 && readMs < 1400, `the read answered after ${readMs} ms (outside a transaction: the database's statement_timeout, before the client's deadline of 1500 ms)`)
    const waiting = await bouncer.direct.query('select pid from pg_stat_activity where datname = current_database() and wait_event_type = \'Lock\'')
    t.strictSame(waiting.rows, [], 'no statement left waiting on the server')
    t.comment(`behind a lock: write 503 after ${writeMs} ms, read 503 after ${readMs} ms`)
    await locker.query('rollback')
    t.equal((await a.inject('/api/items')).statusCode, 200, 'served again once the lock is gone')
    t.equal((await b.inject('/api/items')).statusCode, 200)
  })
})
