import tap from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import contentApi, { ConfigurationError, type ContentApiOptions } from '../../lib/index.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { freePort, reachable } from '../helpers/net.js'

/**
 * The auth rate limit kept in Redis (auth.rateLimit.redis): instances on one Redis count
 * against one limit; an unreachable Redis lets logins through (logged) instead of answering 500
 * or hanging; a client the plugin made from a URL is closed with the app. Runs against the
 * machine's Redis on 127.0.0.1:6379 (skipped when none answers there); the outage tests start
 * and stop a redis-server of their own on another port.
 */

const REDIS_URL = 'redis://127.0.0.1:6379'
const SECRETS = { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789' }
const PASSWORD = 'Password123!'
/** This run's keys: every test's nameSpace starts with it, and teardown deletes them. */
const RUN_PREFIX = `fca-test-rl-${process.pid}-${randomBytes(4).toString('hex')}:`

interface Logged { level: number, msg: string }

/** An app on `db` whose log lines at info and above are collected. */
async function instance (t: { teardown: (fn: () => Promise<void> | void) => void }, db: TestDatabase['db'], rateLimit: NonNullable<ContentApiOptions['auth']>['rateLimit']): Promise<{ app: FastifyInstance, logs: Logged[] }> {
  const logs: Logged[] = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') logs.push(JSON.parse(line))
      done()
    }
  })
  const app = Fastify({ logger: { level: 'info', stream }, pluginTimeout: 120_000 })
  t.teardown(async () => { await app.close() })
  await app.register(contentApi, { models: [], db, auth: { ...SECRETS, rateLimit } })
  await app.ready()
  return { app, logs }
}

async function register (app: FastifyInstance, username: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username, email: `${username}@example.com`, password: PASSWORD } })
  if (res.statusCode !== 200) throw new Error(`register: ${res.statusCode} ${res.body}`)
}

/** One login: its status and how long it took. */
async function login (app: FastifyInstance, identifier: string): Promise<{ status: number, ms: number, body: any }> {
  const started = performance.now()
  const res = await app.inject({ method: 'POST', url: '/api/auth/local', payload: { identifier, password: PASSWORD } })
  return { status: res.statusCode, ms: performance.now() - started, body: res.json() }
}

async function waitFor (what: string, check: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

tap.test('options: a store that is not a redis URL or an ioredis client is refused at start-up', async (t) => {
  const refused = async (redis: unknown): Promise<string[]> => {
    const app = Fastify({ logger: false })
    try {
      await app.register(contentApi, { models: [], db: { connectionString: 'postgres://nobody@127.0.0.1:1/none' }, auth: { ...SECRETS, rateLimit: { max: 3, redis: redis as string } } })
      await app.ready()
      return []
    } catch (err) {
      t.type(err, ConfigurationError)
      return (err as ConfigurationError).problems
    } finally {
      await app.close().catch(() => {})
    }
  }
  const url = 'auth.rateLimit.redis: must be a redis:// or rediss:// URL (e.g. redis://127.0.0.1:6379/0), or an ioredis client'
  t.strictSame(await refused('http://127.0.0.1:6379'), [url], 'an http URL')
  t.strictSame(await refused('127.0.0.1:6379'), [url], 'no scheme')
  t.strictSame(await refused('redis://'), [url], 'no host')
  t.strictSame(await refused({ get: () => {} }), ['auth.rateLimit.redis: must be an ioredis client (new Redis(...)) or a redis:// or rediss:// URL'], 'an object that is no client')
  t.strictSame(await refused(42), ['auth.rateLimit.redis: must be an ioredis client (new Redis(...)) or a redis:// or rediss:// URL'], 'a number')
})

tap.test('a URL without the ioredis package installed: a ConfigurationError that says so', async (t) => {
  const script = fileURLToPath(new URL('../fixtures/rate-limit-redis-url.ts', import.meta.url))
  const hook = fileURLToPath(new URL('../fixtures/without-ioredis.mjs', import.meta.url))
  const child = spawn(process.execPath, ['--import=tsx', `--import=${hook}`, script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => { output += String(chunk) })
  child.stderr!.on('data', (chunk) => { output += String(chunk) })
  const code = await new Promise<number | string>((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve('killed after 60 s') }, 60_000)
    child.once('exit', (code) => { clearTimeout(timer); resolve(code ?? -1) })
  })
  t.equal(code, 0, output)
  t.match(output, 'ConfigurationError: ', output)
  t.match(output, 'auth.rateLimit.redis: a URL needs the ioredis package (npm install ioredis), or pass an ioredis client')
})

tap.test('against Redis', { skip: await reachable(6379) ? false : 'no Redis answers on 127.0.0.1:6379 (start redis-server to run these tests)' }, async (t) => {
  const admin = new Redis(REDIS_URL, { lazyConnect: true })
  admin.on('error', () => {})
  await admin.connect()
  t.teardown(async () => {
    let deleted = 0
    for await (const keys of admin.scanStream({ match: `${RUN_PREFIX}*`, count: 1000 })) {
      if ((keys as string[]).length > 0) deleted += await admin.del(...(keys as string[]))
    }
    t.comment(`deleted ${deleted} rate-limit keys`)
    await admin.quit()
  })

  t.test('two instances on one Redis count against one limit', async (t) => {
    const database = await createTestDatabase()
    t.teardown(async () => { await database.drop() })
    const nameSpace = `${RUN_PREFIX}shared:`
    // A counts through the application's client, B through one the plugin makes from the URL.
    const client = new Redis(REDIS_URL)
    client.on('error', () => {})
    t.teardown(async () => { await client.quit() })
    const a = await instance(t, database.db, { max: 3, timeWindow: 60_000, redis: client, nameSpace })
    const b = await instance(t, database.connectAgain(), { max: 3, timeWindow: 60_000, redis: REDIS_URL, nameSpace })
    await register(a.app, 'alternating')

    const statuses: number[] = []
    for (const app of [a.app, b.app, a.app, b.app, a.app]) statuses.push((await login(app, 'alternating')).status)
    t.strictSame(statuses, [200, 200, 200, 429, 429], 'the 4th attempt overall is refused, on whichever instance')
    const refused = await login(b.app, 'alternating')
    t.strictSame(refused.body, { data: null, error: { status: 429, name: 'RateLimitError', message: 'Too many requests, please try again later.', details: {} } }, "in Strapi's envelope")
    t.ok((await admin.keys(`${nameSpace}*`)).length > 0, 'the count is kept under the nameSpace')

    const other = await instance(t, database.connectAgain(), { max: 3, timeWindow: 60_000, redis: REDIS_URL, nameSpace: `${RUN_PREFIX}other-app:` })
    t.equal((await login(other.app, 'alternating')).status, 200, 'another nameSpace on the same Redis counts apart')
    t.equal(client.status, 'ready', "closing nothing of the application's: its client is still open")
  })

  t.test('in memory (the default), the same traffic passes N times the limit', async (t) => {
    const database = await createTestDatabase()
    t.teardown(async () => { await database.drop() })
    const a = await instance(t, database.db, { max: 3, timeWindow: 60_000 })
    const b = await instance(t, database.connectAgain(), { max: 3, timeWindow: 60_000 })
    await register(a.app, 'apart')
    const statuses: number[] = []
    for (const app of [a.app, b.app, a.app, b.app, a.app, b.app, a.app]) statuses.push((await login(app, 'apart')).status)
    t.strictSame(statuses, [200, 200, 200, 200, 200, 200, 429], 'each instance counts its own: 6 pass')
  })

  const redisServer = spawnSync('redis-server', ['--version']).status === 0
  t.test('Redis stops mid-run: logins pass, logged, no 500, bounded; counted again once it is back', { skip: redisServer ? false : 'no redis-server binary to start and stop' }, async (t) => {
    const port = await freePort()
    const start = (): ChildProcess => {
      const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
      child.on('error', (err) => { t.fail(`redis-server: ${err.message}`) })
      t.teardown(() => { child.kill('SIGKILL') })
      return child
    }
    let server = start()
    const until = Date.now() + 10_000
    while (!(await reachable(port))) {
      if (Date.now() > until) throw new Error('redis-server did not start')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const database = await createTestDatabase()
    t.teardown(async () => { await database.drop() })
    const { app, logs } = await instance(t, database.db, { max: 3, timeWindow: 60_000, redis: `redis://127.0.0.1:${port}`, nameSpace: `${RUN_PREFIX}outage:` })
    await register(app, 'outage')
    t.equal((await login(app, 'outage')).status, 200)
    t.equal((await login(app, 'outage')).status, 200)

    server.kill('SIGKILL')
    await new Promise((resolve) => server.once('exit', resolve))
    const during: Array<{ status: number, ms: number }> = []
    for (let i = 0; i < 6; i++) during.push(await login(app, 'outage'))
    t.strictSame(during.map((r) => r.status), [200, 200, 200, 200, 200, 200], 'every login answers (fail open), none 500 or 503')
    const slowest = Math.max(...during.map((r) => r.ms))
    t.comment(`slowest login while Redis is down: ${slowest.toFixed(0)} ms`)
    t.ok(slowest < 1500, `bounded: slowest ${slowest.toFixed(0)} ms`)
    await waitFor('the outage warning', () => logs.some((l) => l.level === 40 && l.msg.includes('Redis is unreachable')), 5000)
    t.equal(logs.filter((l) => l.msg.includes('Redis is unreachable')).length, 1, 'logged once per outage, not per request')

    server = start()
    await waitFor('the reconnection', () => logs.some((l) => l.msg.includes('Redis is back')), 15_000)
    const after: number[] = []
    for (let i = 0; i < 4; i++) after.push((await login(app, 'outage')).status)
    t.strictSame(after, [200, 200, 200, 429], 'counted again (the new server starts from zero)')
  })

  t.test("the application's client pointed where nothing listens: logins pass, bounded", async (t) => {
    const port = await freePort()
    // The options docs/auth.md recommends for a client of one's own.
    const client = new Redis({ host: '127.0.0.1', port, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500 })
    client.on('error', () => {})
    t.teardown(() => { client.disconnect() })
    const database = await createTestDatabase()
    t.teardown(async () => { await database.drop() })
    const { app } = await instance(t, database.db, { max: 1, timeWindow: 60_000, redis: client, nameSpace: `${RUN_PREFIX}nowhere:` })
    await register(app, 'nowhere')
    const results: Array<{ status: number, ms: number }> = []
    for (let i = 0; i < 3; i++) results.push(await login(app, 'nowhere'))
    t.strictSame(results.map((r) => r.status), [200, 200, 200], 'no 500')
    t.ok(Math.max(...results.map((r) => r.ms)) < 1500, 'bounded')
  })

  t.test("the plugin's own client is closed with the app: the process exits by itself", async (t) => {
    const script = fileURLToPath(new URL('../fixtures/rate-limit-redis-app.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import=tsx', script], {
      env: { ...process.env, REDIS_URL, RATE_LIMIT_NAMESPACE: `${RUN_PREFIX}child:` },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout!.on('data', (chunk) => { output += String(chunk) })
    child.stderr!.on('data', (chunk) => { output += String(chunk) })
    const code = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => { child.kill('SIGKILL'); resolve('killed after 60 s: something kept the process alive') }, 60_000)
      child.once('exit', (code) => { clearTimeout(timer); resolve(code ?? -1) })
    })
    t.equal(code, 0, output)
    t.match(output, /logins: 200,200,429/, 'it counted in Redis before closing')
  })
})
