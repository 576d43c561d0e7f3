import { spawn, type ChildProcess } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import autocannon, { type Result } from 'autocannon'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import contentApi, { defineContentType } from '../lib/index.js'
import type { AccessControl, AccessGrant } from '../lib/auth/access.js'
import { listBody } from '../lib/rest/format.js'
import { paginationMeta, parseQueryString, searchOf, type QueryTree } from '../lib/query/index.js'
import { median } from './stats.js'

/**
 * What the permission check costs on the list endpoint (the requirement: at most 5% of its
 * throughput). `npx tsx bench/auth-overhead.ts`
 *
 * Two identical server processes of one PostgreSQL-backed app (schema `bench_auth`, dropped and
 * recreated; 1,000 articles) serve `GET /api/articles` (the default page of 25 with its total).
 * Each way of calling it is measured on one server while the other serves `allow-all`, both under
 * autocannon `-c 10 -d 3` at the same time, after a warm-up:
 *
 * - `public`: anonymous, through the public role's grant;
 * - `jwt`: a user's JWT, through the authenticated role's grant;
 * - `api-token`: a read-only API token;
 * - `hand-written`: a plain Fastify route in the same app, no access check, running the same
 *   statement through the same document service (`findPageJson`) and the same envelope;
 * - `allow-all`: the same route of the same app with the access check replaced by an always-allow
 *   one. The plugin offers no option for this: the running `app.contentApi.access` object's `check`
 *   is overwritten (the routes call that very object), so everything else stays the same.
 *
 * Why pairs, measured at once: on a shared machine throughput drifts by more than the 5% budget
 * between runs seconds apart, and a way measured after another would carry that drift. Two
 * servers loaded at the same time share whatever the machine does meanwhile. Both are pinned to
 * the same core (`taskset`), so they are the bottleneck and split it evenly: a way that costs
 * more CPU per request serves fewer requests than its allow-all twin. The servers swap roles every
 * round, and the verdict is the median over the rounds of each way's ratio to its twin.
 *
 * Then, because a few percent of throughput is within a shared machine's noise, the check alone
 * is timed in-process (`checkCost`) and set against the CPU time of a request.
 *
 * Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DOCS (1000),
 * BENCH_CONNECTIONS (10, per server), BENCH_DURATION (3 s), BENCH_WARMUP (1 s), BENCH_ROUNDS (10),
 * and BENCH_SERVER_CPU (the core both servers are pinned to, `0`; `none` to not pin them).
 */

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const SCHEMA = 'bench_auth'
const DOCS = Number(process.env.BENCH_DOCS ?? 1000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const DURATION = Number(process.env.BENCH_DURATION ?? 3)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10)
const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '0'
const POOL_SIZE = 10
const AUTH = { jwtSecret: 'bench-auth-jwt-secret-0123456789', apiTokenSalt: 'bench-auth-api-token-salt-0123456789', rateLimit: false as const }
const ARTICLE = 'api::article.article'
const LIST = '/api/articles'
const HAND_WRITTEN = '/bench/articles'

const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: false },
  attributes: {
    title: { type: 'string', required: true },
    summary: { type: 'text' },
    views: { type: 'integer' },
    featured: { type: 'boolean', default: false },
    kind: { type: 'enumeration', enum: ['news', 'opinion', 'review'] }
  }
})

function database (log?: (sql: string) => void): Kysely<any> {
  return new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, max: POOL_SIZE, options: `-c search_path=${SCHEMA}` }) }),
    log: log === undefined ? undefined : (event) => { if (event.level === 'query') log(event.query.sql) }
  })
}

async function buildApp (db: Kysely<any>): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  app.addHook('onClose', async () => { await db.destroy() })
  await app.register(contentApi, { models: [article], db, auth: AUTH })
  const documents = app.contentApi.documents(ARTICLE)
  // The list without any access check: what the plugin's route does once the check has passed
  // (its query tree parsed once per query string, as the route's memo keeps it).
  const trees = new Map<string, QueryTree>()
  app.get(HAND_WRITTEN, async (request, reply) => {
    const search = searchOf(request.url)
    let tree = trees.get(search)
    if (tree === undefined) {
      tree = documents.queryTree(parseQueryString(`?${search}`, { queryLength: 16384, queryParameters: 1000 }), { list: true })
      trees.set(search, tree)
    }
    const page = await documents.findPageJson(tree, { limits: true })
    return await reply.type('application/json; charset=utf-8').send(listBody(page.json, paginationMeta(tree.pagination, page.total)))
  })
  return app
}

// ---------------------------------------------------------------------------------------------
// The server process.

async function serve (): Promise<void> {
  const app = await buildApp(database())
  const access = app.contentApi.access as AccessControl & { check: AccessControl['check'] }
  const checked = access.check.bind(access)
  const allowAll = async (_request: FastifyRequest): Promise<AccessGrant> =>
    ({ principal: { kind: 'public' }, scope: { conditions: null, fields: null, read: () => ({ conditions: null, fields: null }), drafts: true, key: 'bench:allow-all' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  process.on('message', (message: string) => {
    if (message === 'allow-all') access.check = allowAll
    else if (message === 'checked') access.check = checked
    else if (message === 'cpu') { process.send?.({ cpu: process.cpuUsage() }); return }
    process.send?.({ ack: message })
  })
  process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
}

// ---------------------------------------------------------------------------------------------
// The harness.

interface Credentials { jwt: string, token: string }

async function seed (): Promise<{ credentials: Credentials, statements: Record<string, string[]>, checkNs: Record<string, number> }> {
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  await admin.query(`drop schema if exists ${SCHEMA} cascade`)
  await admin.query(`create schema ${SCHEMA}`)
  await admin.end()

  let captured: string[] | null = null
  const app = await buildApp(database((text) => { captured?.push(text) }))
  try {
    await app.ready()
    const articles = app.contentApi.documents(ARTICLE)
    const kinds = ['news', 'opinion', 'review']
    for (let i = 0; i < DOCS; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, DOCS - i) }, async (_, k) => {
        const n = i + k
        await articles.create({ data: { title: `Article ${String(n).padStart(5, '0')}`, summary: `Summary of article ${n}.`, views: (n * 7919) % 1000, featured: n % 7 === 0, kind: kinds[n % 3] } })
      }))
    }
    await sql`vacuum analyze articles`.execute(app.contentApi.db)
    await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`])
    await app.contentApi.permissions.grant('authenticated', [`${ARTICLE}.find`])
    const registered = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'bench', email: 'bench@example.com', password: 'Password123!' } })
    if (registered.statusCode !== 200) throw new Error(`register: ${registered.statusCode} ${registered.body}`)
    const credentials = { jwt: (JSON.parse(registered.body) as { jwt: string }).jwt, token: (await app.contentApi.apiTokens.create({ name: 'bench', type: 'read-only' })).accessKey }

    // The statements each way runs per request (warm: the role cache filled, lastUsedAt written).
    const statements: Record<string, string[]> = {}
    for (const [name, url, headers] of ways(credentials)) {
      await app.inject({ url, headers })
      captured = []
      const res = await app.inject({ url, headers })
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`)
      statements[name] = captured
      captured = null
    }
    return { credentials, statements, checkNs: await checkCost(app, credentials) }
  } finally {
    await app.close()
  }
}

/**
 * The check on its own, in this process: nanoseconds per `access.check` of the list's action for
 * each caller, once its credentials are cached (as for every request but a caller's first in
 * `credentialsCacheMs`), median of five runs of 100,000 calls. Unlike throughput, this does not
 * drift with the machine's load, and divided by a request's CPU time it is the check's share.
 */
async function checkCost (app: FastifyInstance, credentials: Credentials): Promise<Record<string, number>> {
  const access = app.contentApi.access
  const costs: Record<string, number> = {}
  for (const [name, , headers] of ways(credentials).filter(([name]) => name !== 'hand-written')) {
    const request = (): FastifyRequest => ({ headers }) as unknown as FastifyRequest
    await access.check(request(), { action: 'find', uid: ARTICLE })
    const runs: number[] = []
    for (let run = 0; run < 5; run++) {
      const started = process.hrtime.bigint()
      for (let i = 0; i < 100_000; i++) await access.check(request(), { action: 'find', uid: ARTICLE })
      runs.push(Number(process.hrtime.bigint() - started) / 100_000)
    }
    costs[name] = median(runs)
  }
  return costs
}

type Way = [name: string, url: string, headers: Record<string, string>, mode: 'checked' | 'allow-all']

function ways (credentials: Credentials): Way[] {
  return [
    ['public', LIST, {}, 'checked'],
    ['jwt', LIST, { authorization: `Bearer ${credentials.jwt}` }, 'checked'],
    ['api-token', LIST, { authorization: `Bearer ${credentials.token}` }, 'checked'],
    ['hand-written', HAND_WRITTEN, {}, 'checked']
  ]
}

const ALLOW_ALL: Way = ['allow-all', LIST, {}, 'allow-all']

interface Server { child: ChildProcess, base: string }

async function startServer (): Promise<Server> {
  const command = [process.execPath, '--import', 'tsx', fileURLToPath(import.meta.url), 'serve']
  if (SERVER_CPU !== 'none') command.unshift('taskset', '-c', SERVER_CPU)
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, NODE_ENV: 'production', DATABASE_URL },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => { resolve(message.port) })
    child.once('exit', (code) => { reject(new Error(`the server exited with code ${code}`)) })
  })
  return { child, base: `http://127.0.0.1:${port}` }
}

async function stopServer ({ child }: Server): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

async function ask (child: ChildProcess, message: string): Promise<any> {
  return await new Promise((resolve) => {
    child.once('message', resolve)
    child.send(message)
  })
}

interface Measured { rps: number, p50: number, p99: number, cpuUs: number, non2xx: number, errors: number }

/** Loads both servers at once, each with its way, and measures each. */
async function measurePair (pair: Array<[Server, Way]>): Promise<Measured[]> {
  await Promise.all(pair.map(async ([{ child }, [, , , mode]]) => await ask(child, mode)))
  const load = async ([{ base }, [, url, headers]]: [Server, Way], duration: number): Promise<Result> =>
    await autocannon({ url: base + url, headers, connections: CONNECTIONS, duration })
  await Promise.all(pair.map(async (entry) => await load(entry, WARMUP)))
  const before = await Promise.all(pair.map(async ([{ child }]) => (await ask(child, 'cpu') as { cpu: NodeJS.CpuUsage }).cpu))
  const results = await Promise.all(pair.map(async (entry) => await load(entry, DURATION)))
  const after = await Promise.all(pair.map(async ([{ child }]) => (await ask(child, 'cpu') as { cpu: NodeJS.CpuUsage }).cpu))
  return results.map((r, i) => ({
    rps: r.requests.mean,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuUs: (after[i].user + after[i].system - before[i].user - before[i].system) / Math.max(r.requests.total, 1),
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts
  }))
}

function table (rows: Array<Array<string | number>>): string {
  const cells = rows.map((row) => row.map(String))
  const widths = cells[0].map((_, i) => Math.max(...cells.map((row) => row[i].length)))
  return cells.map((row, r) => `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |` +
    (r === 0 ? `\n|${widths.map((w, i) => '-'.repeat(w + 1) + (i === 0 ? '-' : ':')).join('|')}|` : '')).join('\n')
}

async function harness (): Promise<void> {
  console.log(`Seeding ${DOCS} articles in schema ${SCHEMA} (${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)})`)
  const { credentials, statements, checkNs } = await seed()
  for (const [name, list] of Object.entries(statements)) console.log(`  ${name}: ${list.length} statement(s) per request${list.length > 1 ? ` (${list.slice(0, -1).map((s) => s.slice(0, 70)).join('; ')} ...)` : ''}`)

  const servers = await Promise.all([startServer(), startServer()])
  // Per way and round: its measurement and that of allow-all on the other server at the same time.
  const results = new Map<string, Array<{ way: Measured, allowAll: Measured }>>()
  try {
    const all = ways(credentials)
    const bodies: string[] = []
    for (const [name, url, headers, mode] of [...all, ALLOW_ALL]) {
      await ask(servers[0].child, mode)
      const res = await fetch(servers[0].base + url, { headers })
      await ask(servers[0].child, 'checked')
      if (res.status !== 200) throw new Error(`${name}: ${res.status}`)
      bodies.push(await res.text())
    }
    if (new Set(bodies).size !== 1) throw new Error('the ways do not answer the same body')
    console.log(`  the ${bodies.length} ways answer the same ${bodies[0].length}-byte body; servers pinned to ${SERVER_CPU === 'none' ? 'no core' : `core ${SERVER_CPU}`}`)

    for (let round = 0; round < ROUNDS; round++) {
      for (const way of all) {
        // The two servers swap roles every round, so neither process is always the checked one.
        const [checked, allowing] = round % 2 === 0 ? servers : [servers[1], servers[0]]
        const [m, a] = await measurePair([[checked, way], [allowing, ALLOW_ALL]])
        results.set(way[0], [...(results.get(way[0]) ?? []), { way: m, allowAll: a }])
        const problems = m.non2xx + m.errors + a.non2xx + a.errors
        console.log(`  round ${round + 1} ${way[0].padEnd(12)} ${m.rps.toFixed(0)} req/s (${m.cpuUs.toFixed(0)} µs CPU/req) vs allow-all ${a.rps.toFixed(0)} req/s (${a.cpuUs.toFixed(0)} µs): ${(m.rps / a.rps).toFixed(3)}${problems > 0 ? `, ${problems} non-2xx or errors` : ''}`)
      }
    }
  } finally {
    await Promise.all(servers.map(stopServer))
  }

  const rows: Array<Array<string | number>> = [['way', 'req/s', 'allow-all req/s', 'p50 ms', 'p99 ms', 'µs CPU/req', 'req/s vs allow-all (median)', 'CPU/req vs allow-all (median)']]
  const verdicts: string[] = []
  for (const [name, list] of results) {
    const mean = (pick: (m: { way: Measured, allowAll: Measured }) => number): number => list.reduce((sum, m) => sum + pick(m), 0) / list.length
    const ratio = median(list.map((m) => m.way.rps / m.allowAll.rps))
    rows.push([name, mean((m) => m.way.rps).toFixed(0), mean((m) => m.allowAll.rps).toFixed(0), mean((m) => m.way.p50).toFixed(1), mean((m) => m.way.p99).toFixed(1),
      mean((m) => m.way.cpuUs).toFixed(0), ratio.toFixed(3), median(list.map((m) => m.way.cpuUs / m.allowAll.cpuUs)).toFixed(3)])
    if (name !== 'hand-written') verdicts.push(`${name}: ${((1 - ratio) * 100).toFixed(1)}% below allow-all: ${1 - ratio <= 0.05 ? 'within' : 'OVER'} the 5% budget`)
  }
  console.log(`\nGET ${LIST} (${DOCS} documents, page of 25), autocannon -c ${CONNECTIONS} -d ${DURATION} on each server at once after ${WARMUP} s, ${ROUNDS} round(s):\n\n${table(rows)}\n`)
  for (const verdict of verdicts) console.log(verdict)
  const allowAllCpuNs = median([...results.values()].flat().map((m) => m.allowAll.cpuUs)) * 1000
  console.log(`\nThe check alone (in-process, credentials cached), against allow-all's ${(allowAllCpuNs / 1000).toFixed(0)} µs of CPU per request:`)
  for (const [name, ns] of Object.entries(checkNs)) console.log(`  ${name.padEnd(10)} ${ns.toFixed(0).padStart(5)} ns per check: ${(ns / allowAllCpuNs * 100).toFixed(2)}% of a request`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  (process.argv[2] === 'serve' ? serve() : harness()).catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
