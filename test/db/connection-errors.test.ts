import t from 'tap'
import Fastify from 'fastify'
import contentApi, { DatabaseConnectionError, type DatabaseOption } from '../../lib/index.js'
import { connectionTarget } from '../../lib/db/connection-error.js'
import { DATABASE_URL, dialectName } from '../helpers/database.js'
import { freePort } from '../helpers/net.js'
import { article } from '../fixtures/models.js'

/**
 * A database that cannot be reached at start fails `app.ready()` with a DatabaseConnectionError
 * naming the option and the target (host:port, never the password), not the driver's raw error.
 */

async function startError (t: { teardown: (fn: () => Promise<void>) => void }, db: DatabaseOption): Promise<Error> {
  const app = Fastify({ logger: false })
  t.teardown(async () => { await app.close() })
  const started = async (): Promise<void> => {
    await app.register(contentApi, { models: [article], db, pool: { connectionTimeoutMs: 5000 } })
    await app.ready()
  }
  return await started().then(() => { throw new Error('the app started') }, (err: Error) => err)
}

t.test('a closed port: could not connect, with the target and the socket error', async (t) => {
  const port = await freePort()
  const err = await startError(t, `postgres://app:secret@127.0.0.1:${port}/app`)
  t.ok(err instanceof DatabaseConnectionError)
  t.match(err, { name: 'DatabaseConnectionError', code: 'FCA_ERR_DB_CONNECTION', message: `db: could not connect to 127.0.0.1:${port} (ECONNREFUSED)` })
  t.match((err.cause as { code: string }).code, 'ECONNREFUSED', 'the driver\'s error is its cause')
  t.notMatch(err.message, /secret/)
})

t.test('a host that does not resolve: not found, by its name', async (t) => {
  const err = await startError(t, { connectionString: 'postgres://app:secret@nohost.invalid:5432/app' })
  t.match(err, { code: 'FCA_ERR_DB_CONNECTION', message: /^db: host "nohost\.invalid" not found \((ENOTFOUND|EAI_AGAIN)\)$/ })
})

t.test('db.primary of { primary, replicas } is named as such', async (t) => {
  const port = await freePort()
  const err = await startError(t, { primary: `postgres://127.0.0.1:${port}/app`, replicas: [] })
  t.match(err, { code: 'FCA_ERR_DB_CONNECTION', message: `db.primary: could not connect to 127.0.0.1:${port} (ECONNREFUSED)` })
})

t.test('a database that does not exist on a reachable server', { skip: dialectName === 'postgres' ? false : 'DATABASE_URL is not set: no PostgreSQL server' }, async (t) => {
  const url = new URL(DATABASE_URL!)
  url.pathname = '/fca_no_such_database'
  const err = await startError(t, url.href)
  t.match(err, { code: 'FCA_ERR_DB_CONNECTION', message: new RegExp(`^db: ${connectionTarget({ connectionString: url.href }).replace(/\./g, '\\.')} refused the connection: database does not exist \\(3D000: database "fca_no_such_database" does not exist\\)$`) })
})

t.test('the target of a config: its fields, its URL, then pg\'s defaults', async (t) => {
  t.equal(connectionTarget({ connectionString: 'postgres://u:p@db.internal:6543/app' }), 'db.internal:6543')
  t.equal(connectionTarget({ connectionString: 'postgres://u:p@db.internal/app' }), 'db.internal:5432')
  t.equal(connectionTarget({ connectionString: 'postgres://db.internal/app', host: 'other', port: 7000 }), 'other:7000')
  t.equal(connectionTarget({}), 'localhost:5432')
})
