import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { createTestDatabase } from '../helpers/database.js'
import { Scratch, needsPostgres, postBody, sleep, startApp } from './helpers.js'

/**
 * `app.close()` stops taking requests, lets those in flight finish within `shutdown.timeoutMs`,
 * then closes the pool: no write a client was told succeeded is lost, none is half-written, and
 * close returns within the bound even when a request hangs.
 */
t.setTimeout(60_000)

interface Answer { status: number, body: string, connection?: string, error?: string }

/** One request over real HTTP; a network failure is an answer too (`status` 0). */
async function request (agent: http.Agent, port: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return await new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }) })
      res.on('error', (err) => { resolve({ status: 0, body: '', error: (err as NodeJS.ErrnoException).code ?? err.message }) })
    })
    req.on('error', (err) => { resolve({ status: 0, body: '', error: (err as NodeJS.ErrnoException).code ?? err.message }) })
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

async function listen (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as net.AddressInfo).port
}

t.test('shutdown under load: in-flight writes finish, every acknowledged one is stored, whole', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app, logs } = await startApp(t, { db: scratch.url(), pool: { size: 4 }, shutdown: { timeoutMs: 5000 } })
  const port = await listen(app)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  t.teardown(() => { agent.destroy() })

  const t0 = Date.now()
  let closeAt = Infinity
  let closedAt = Infinity
  const answers: Array<Answer & { n: string, start: number, end: number }> = []
  // When the server had read each request's head: a request a client has sent on a keep-alive
  // connection that the server had not read yet when close began may be reset, the race every
  // HTTP/1.1 client must be ready for (RFC 9112, 9.6); a request the server had read must be answered.
  const received = new Map<string, number>()
  app.server.prependListener('request', (req: http.IncomingMessage) => { received.set(String(req.headers['x-request-n']), Date.now() - t0) })
  let next = 0
  const worker = async (): Promise<void> => {
    // Until the server refuses: then every client has seen the shutdown.
    for (;;) {
      const start = Date.now() - t0
      const n = String(next++)
      const answer = await request(agent, port, 'POST', '/api/posts', postBody(`shutdown-${n}`), { 'x-request-n': n })
      answers.push({ ...answer, n, start, end: Date.now() - t0 })
      if (answer.status !== 200) return
    }
  }
  const workers = Array.from({ length: 8 }, worker)
  await sleep(600)
  closeAt = Date.now() - t0
  await app.close()
  closedAt = Date.now() - t0
  await Promise.all(workers)

  const took = closedAt - closeAt
  // Keep-alive connections left open would hold server.close() until the bound (5 s) cuts them.
  t.ok(took < 3000, `app.close() returned after ${took} ms, well within shutdown.timeoutMs 5000`)
  const inFlight = answers.filter((a) => (received.get(a.n) ?? Infinity) < closeAt && a.end > closeAt)
  t.ok(inFlight.length > 0 && inFlight.every((a) => a.status === 200), `the ${inFlight.length} requests in flight when close began were answered 200`)
  t.ok(inFlight.some((a) => a.connection === 'close'), 'with Connection: close, so that their clients let go')
  const others = answers.filter((a) => a.status !== 200)
  t.same(others.filter((a) => !(a.status === 0 || (a.status === 503 && a.body.includes('"Service Unavailable"')))), [],
    'the requests after: refused (the server stopped listening) or 503')
  t.comment(`close began at ${closeAt} ms with ${inFlight.length} writes in flight; app.close() took ${took} ms; ` +
    `after it: ${others.map((a) => a.status === 0 ? a.error : a.status).join(', ')}`)

  const acknowledged = answers.filter((a) => a.status === 200).map((a) => JSON.parse(a.body).data.documentId as string)
  const stored = await scratch.documentIds()
  t.same(acknowledged.filter((id) => !stored.has(id)), [], `all ${acknowledged.length} acknowledged writes are stored`)
  t.same(await scratch.halfWritten(), [], 'none is half-written')
  t.equal(await scratch.settledBackends(), 0, 'the pool is closed')
  t.same(logs.filter((l) => l.level >= 50), [], 'nothing logged as an error')
})

t.test('app.inject() requests in flight: close waits for them too, before closing the pool', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app } = await startApp(t, { db: scratch.url(), pool: { size: 2 } })
  // server.close() does not wait for these: they never had a connection.
  const writes = Array.from({ length: 6 }, async (_, i) => await app.inject({ method: 'POST', url: '/api/posts', payload: postBody(`inject-${i}`) }))
  await sleep(20)
  await app.close()
  const answers = await Promise.all(writes)
  t.same(answers.map((a) => a.statusCode), [200, 200, 200, 200, 200, 200], 'every one answered 200')
  t.equal((await scratch.documentIds()).size, 6, 'and stored')
})

t.test('a request that hangs past shutdown.timeoutMs: close returns at the bound, its write rolled back', { skip: needsPostgres }, async (t) => {
  const scratch = await Scratch.create(t)
  const { app, logs } = await startApp(t, { db: scratch.url(), shutdown: { timeoutMs: 800 }, pool: { statementTimeoutMs: 30000 } })
  const port = await listen(app)
  const agent = new http.Agent({ keepAlive: true })
  t.teardown(() => { agent.destroy() })
  t.equal((await request(agent, port, 'POST', '/api/posts', postBody('first'))).status, 200)

  // The write inserts its rows, then waits on a lock another session holds on a table it needs.
  const locker = await scratch.admin.connect()
  t.teardown(() => { locker.release() })
  await locker.query('begin')
  await locker.query('lock table components_shared_tags in access exclusive mode')
  const hung = request(agent, port, 'POST', '/api/posts', postBody('hung'))
  await sleep(200)

  const start = Date.now()
  await app.close()
  const took = Date.now() - start
  t.ok(took >= 750 && took < 2000, `app.close() returned after ${took} ms (shutdown.timeoutMs 800)`)
  t.comment(`a hung write: app.close() returned after ${took} ms (bound 800 ms)`)
  const answer = await hung
  t.equal(answer.status, 0, `the hung request's connection was cut (${answer.error})`)
  await locker.query('rollback')
  t.same([...await scratch.documentIds()].length, 1, 'the cut write left nothing: its transaction rolled back')
  t.same(await scratch.halfWritten(), [])
  t.equal(await scratch.settledBackends(), 0, 'the pool is closed')
  t.ok(logs.some((l) => l.level === 40 && /still in flight after shutdown.timeoutMs/.test(l.msg)), 'the cut is logged')
})

/**
 * A request reaches the server after close began only on a connection that was busy then and
 * whose response left before close (a stream): it is pipelined behind that response.
 */
async function arrivingWhileClosing (t: { teardown (fn: () => Promise<void>): void }, return503OnClosing: boolean): Promise<{ late: string, tookMs: number }> {
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const { app } = await startApp(t, { db: database.db, shutdown: { timeoutMs: 2000 } }, { return503OnClosing, pluginTimeout: 120_000 }, (app) => {
    app.get('/stream', async (_request, reply) => {
      const body = new Readable({ read () {} })
      body.push('part;')
      setTimeout(() => { body.push('end'); body.push(null) }, 400)
      return await reply.type('text/plain').send(body)
    })
  })
  const port = await listen(app)
  const socket = net.connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { received += chunk })
  const ended = new Promise((resolve) => socket.on('close', resolve))
  socket.write('GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await sleep(100)
  const start = Date.now()
  const closed = app.close()
  await sleep(50)
  socket.write('GET /api/posts HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await closed
  const tookMs = Date.now() - start
  await ended
  // What follows the streamed response (its last chunk, then the chunked terminator).
  return { late: received.slice(received.indexOf('HTTP/1.1', received.indexOf('end'))), tookMs }
}

t.test('a request arriving while closing: 503 in the envelope when the server lets the plugin answer', async (t) => {
  const envelope = await arrivingWhileClosing(t, false)
  t.match(envelope.late, /^HTTP\/1\.1 503 /, 'return503OnClosing: false: a 503...')
  t.match(envelope.late, /retry-after: 1/i, '...with Retry-After...')
  t.match(envelope.late, /connection: close/i, '...closing its connection...')
  t.ok(envelope.late.endsWith(JSON.stringify({ data: null, error: { status: 503, name: 'ServiceUnavailableError', message: 'Service Unavailable', details: {} } })), '...in Strapi\'s envelope')
  t.ok(envelope.tookMs < 1500, `close did not wait for the idle connection to time out (${envelope.tookMs} ms)`)

  const fastify = await arrivingWhileClosing(t, true)
  t.match(fastify.late, /^HTTP\/1\.1 503 /, 'Fastify\'s default (return503OnClosing): a 503 too...')
  t.ok(fastify.late.endsWith('{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}'), '...in Fastify\'s format, which no hook can change')
})
