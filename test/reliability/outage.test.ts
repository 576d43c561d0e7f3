import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { DATABASE_URL } from '../helpers/database.js'
import { TcpProxy } from './proxy.js'
import { Scratch, assertGraphqlUnavailable, assertUnavailable, needsPostgres, postBody, sleep, startApp } from './helpers.js'

/**
 * The database goes away and comes back, through a proxy the test breaks (the shared PostgreSQL
 * server itself is never stopped): requests answer 503 quickly, or within the configured
 * bounds when the network goes silent, never hang, and the app serves again by itself.
 */
t.setTimeout(60_000)

async function proxied (t: { teardown (fn: () => Promise<void>): void }): Promise<TcpProxy> {
  const target = new URL(DATABASE_URL!)
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port === '' ? 5432 : target.port) })
  t.teardown(async () => { await proxy.close() })
  return proxy
}

/** How long until `url` answers 200, polling every 25 ms (at most 5 s). */
async function untilServed (app: FastifyInstance, url: string): Promise<number> {
  const start = Date.now()
  while (Date.now() - start < 5000) {
    if ((await app.inject(url)).statusCode === 200) return Date.now() - start
    await sleep(25)
  }
  return Infinity
}

t.test('the database down (connections reset and refused), then back', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const proxy = await proxied(t)
  // Credentials read on every request: a token is checked against the database before any route runs.
  const { app, logs } = await startApp(t, {
    db: scratch.url(proxy.port),
    pool: { size: 4, connectionTimeoutMs: 1000 },
    auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false, credentialsCacheMs: 0 }
  })
  t.equal((await app.inject({ method: 'POST', url: '/api/posts', payload: postBody('before') })).statusCode, 200)
  const token = { authorization: `Bearer ${(await app.contentApi.apiTokens.create({ name: 'reader', type: 'read-only' })).accessKey}` }

  proxy.cut()
  const start = Date.now()
  assertUnavailable(t, await app.inject('/api/posts'), 'a read')
  const elapsed = Date.now() - start
  t.ok(elapsed < 1000, `answered in ${elapsed} ms, without waiting for a timeout`)
  t.comment(`database down: a read answered 503 after ${elapsed} ms`)
  assertUnavailable(t, await app.inject({ method: 'POST', url: '/api/posts', payload: postBody('during') }), 'a write')
  assertGraphqlUnavailable(t, await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ posts { data { id } } }' } }), 'GraphQL')
  assertUnavailable(t, await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'u', email: 'u@example.com', password: 'secret-123' } }), 'the auth routes')
  assertUnavailable(t, await app.inject({ url: '/api/posts', headers: token }), 'checking an API token')
  assertGraphqlUnavailable(t, await app.inject({ method: 'POST', url: '/graphql', headers: token, payload: { query: '{ posts { data { id } } }' } }), 'checking an API token for GraphQL')
  t.ok(logs.some((l) => l.level === 40 && /terminated|ECONNRESET/.test(`${l.err?.message} ${l.err?.code}`)), 'the causes are logged as warnings')

  proxy.restore()
  const recovery = await untilServed(app, '/api/posts')
  t.ok(recovery < 2000, `served again ${recovery} ms after the database came back`)
  t.comment(`database back: first 200 after ${recovery} ms`)
  t.same((await app.inject('/api/posts')).json().data.map((p: { title: string }) => p.title), ['before'], 'the write during the outage wrote nothing')
  t.same(await scratch.halfWritten(), [])
})

t.test('a silent network: bounded by the read and connection timeouts, never a hang', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const proxy = await proxied(t)
  // One connection, so that which bound applies is known: the idle connection goes silent first.
  const { app } = await startApp(t, { db: scratch.url(proxy.port), pool: { size: 1, connectionTimeoutMs: 400, statementTimeoutMs: 1500 } })
  t.equal((await app.inject('/api/posts')).statusCode, 200)

  proxy.silence()
  let start = Date.now()
  assertUnavailable(t, await app.inject('/api/posts'), 'a query sent into the silence')
  const read = Date.now() - start
  t.ok(read >= 2400 && read < 4000, `gave the connection up after ${read} ms (statementTimeoutMs 1500 + 1000 ms of grace)`)

  start = Date.now()
  assertUnavailable(t, await app.inject('/api/posts'), 'a new connection into the silence')
  const connect = Date.now() - start
  // Had the silent connection gone back to the pool, this request would wait on it 2.5 s.
  t.ok(connect >= 350 && connect < 1500, `gave up connecting after ${connect} ms (connectionTimeoutMs 400)`)
  t.comment(`silent network: 503 after ${read} ms on the open connection, after ${connect} ms on a new one`)

  proxy.restore()
  const recovery = await untilServed(app, '/api/posts')
  t.ok(recovery < 2000, `served again ${recovery} ms after the network came back`)
})
