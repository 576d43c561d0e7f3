import { fork, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import contentApi from '../lib/index.js'
import { oracleOptions, oraclePermissions } from '../test/fixtures/oracle/models.js'
import { png } from '../test/fixtures/oracle/seed.js'

/**
 * `npx tsx bench/event-loop.ts`: the worst requests an anonymous client can craft, each sent alone
 * to a server on the oracle fixture's models with 2,000 articles, and for each the status, the
 * size and time of the answer, and the server process's worst event-loop block while serving it.
 * See bench/README.md ("Event-loop bench").
 *
 * The server runs in a child process (this file with `serve`), on the schema `bench_el` of
 * DATABASE_URL (seeded once, then reused: `BENCH_EL_SEED=1` seeds again), or with
 * `DATABASE_URL=pglite` on an in-memory PGlite seeded at every start. A 5 ms timer samples its
 * event loop (how late it fires is how long the loop was blocked) and the largest delay is reported
 * over IPC; the bench resets it before each attack and reads it 200 ms after the answer. A request still unanswered
 * after BENCH_EL_TIMEOUT seconds (60) is recorded as a timeout, and the server is restarted, so
 * that its statement does not weigh on the next attack.
 */

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const PGLITE = DATABASE_URL === 'pglite'
const SCHEMA = 'bench_el'
const TIMEOUT = Number(process.env.BENCH_EL_TIMEOUT ?? 60) * 1000
/** Each attack is sent this many times; the table shows the median time and the worst block of all. */
const RUNS = Number(process.env.BENCH_EL_RUNS ?? 3)
const ARTICLES = 2000
/** 400 categories: five articles each, so a populate bomb grows five-fold per to-many hop. */
const CATEGORIES = 400
const AUTHORS = 200

// ---------------------------------------------------------------- server (child process)

function postgres (searchPath: string): Kysely<any> {
  return new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, max: 10, options: `-c search_path=${searchPath}` }) }) })
}

async function seeded (): Promise<boolean> {
  if (PGLITE || process.env.BENCH_EL_SEED === '1') return false
  const admin = postgres('public')
  try {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_schema = ${SCHEMA} and table_name = 'articles'`.execute(admin)
    if (rows[0].n === 0) return false
    const count = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(SCHEMA)}.articles`.execute(admin)
    return count.rows[0].n >= ARTICLES
  } finally {
    await admin.destroy()
  }
}

async function freshSchema (): Promise<void> {
  const admin = postgres('public')
  try {
    await sql`drop schema if exists ${sql.id(SCHEMA)} cascade`.execute(admin)
    await sql`create schema ${sql.id(SCHEMA)}`.execute(admin)
  } finally {
    await admin.destroy()
  }
}

/** A small deterministic random source, so every run seeds the same data. */
function random (seed: number): () => number {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
}

/** Concurrent creates, `batch` at a time. */
async function inBatches<T> (count: number, batch: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < count; i += batch) out.push(...await Promise.all(Array.from({ length: Math.min(batch, count - i) }, async (_, k) => await make(i + k))))
  return out
}

/**
 * 2,000 published articles through the document service, as the oracle's are: each with a
 * category, one to three authors, a cover, an SEO component, a two-block dynamic zone, a rich-text
 * body and JSON tags; every fourth also in French. 400 categories, 200 authors, two files.
 */
async function seed (app: FastifyInstance): Promise<void> {
  const docs = (uid: string) => app.contentApi.documents(uid)
  const next = random(42)
  const files: number[] = []
  const squares: Array<[string, number, number, number]> = [['red.png', 255, 0, 0], ['blue.png', 0, 0, 255]]
  for (const [name, r, g, b] of squares) {
    const [record] = await app.contentApi.upload!.upload({ name, type: 'image/png', buffer: png(r, g, b) }, { fileInfo: { alternativeText: name } })
    files.push(record.id)
  }
  const categories = await inBatches(CATEGORIES, 50, async (i) => (await docs('api::category.category').create({ data: { name: `Category ${i}` } })).documentId)
  const authors = await inBatches(AUTHORS, 50, async (i) => (await docs('api::author.author').create({ data: { name: `Author ${i}`, email: `author${i}@example.com` } })).documentId)
  const articles = docs('api::article.article')
  await inBatches(ARTICLES, 50, async (i) => {
    const picked = new Set<string>()
    const n = 1 + Math.floor(next() * 3)
    while (picked.size < n) picked.add(authors[Math.floor(next() * AUTHORS)])
    const data = {
      title: `Article ${String(i).padStart(4, '0')}`,
      summary: `The summary of article ${i}, long enough to look like one.`,
      body: [{ type: 'paragraph', children: [{ type: 'text', text: `Body of article ${i}.` }] }],
      views: Math.floor(next() * 1000),
      rating: Math.round(next() * 50) / 10,
      featured: i % 7 === 0,
      publishDate: '2026-01-15',
      tags: ['bench', `t${i % 10}`],
      kind: ['news', 'opinion', 'review'][i % 3],
      category: categories[i % CATEGORIES],
      authors: [...picked],
      cover: files[i % 2],
      seo: { metaTitle: `Article ${i}`, metaDescription: 'Meta description' },
      blocks: [{ __component: 'shared.quote', text: 'A quote', author: 'Someone' }, { __component: 'shared.rich-text', body: '# Heading' }]
    }
    const created = await articles.create({ data, locale: 'en' })
    if (i % 4 === 0) {
      const { authors: _, ...fr } = { ...data, title: `Article ${i} (fr)` }
      await articles.update({ documentId: created.documentId, data: fr, locale: 'fr' })
    }
  })
}

async function serve (): Promise<void> {
  const reuse = await seeded()
  if (!PGLITE && !reuse) await freshSchema()
  const db = PGLITE ? undefined : postgres(SCHEMA)
  const uploads = await mkdtemp(path.join(os.tmpdir(), 'bench-el-'))
  const app = Fastify({ logger: process.env.BENCH_EL_LOG === '1' ? { level: 'error' } : false, pluginTimeout: 300_000 })
  app.addHook('onClose', async () => {
    await db?.destroy()
    await rm(uploads, { recursive: true, force: true })
  })
  await app.register(contentApi, {
    ...oracleOptions,
    graphql: { format: 'flat' },
    upload: { local: { directory: uploads } },
    // The attacks on the auth routes measure their bodies, not the rate limiter's 429.
    auth: { ...oracleOptions.auth, rateLimit: false },
    db
  } as any)
  await app.ready()
  if (!reuse) {
    await seed(app)
    for (const [role, granted] of Object.entries(oraclePermissions)) await app.contentApi.permissions.grant(role, granted)
    // Fresh statistics, as a database that has been running would have: plans depend on them.
    if (db !== undefined) await sql`vacuum analyze`.execute(db)
  }
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0

  // A timer-drift sampler: every 5 ms, how late the timer fired is how long the loop was blocked.
  // (perf_hooks' monitorEventLoopDelay drops the first delay after a reset, which is exactly when
  // a request that blocks at once, on an embedded PGlite say, does.)
  const TICK = 5
  let last = performance.now()
  let worst = 0
  setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last - TICK)
    last = now
  }, TICK)
  process.on('message', (message) => {
    if (message === 'reset') {
      worst = 0
      process.send?.({ reset: true })
    } else if (message === 'report') {
      process.send?.({ maxMs: worst, rss: process.memoryUsage().rss })
    }
  })
  process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  process.send?.({ ready: true, port })
}

// ---------------------------------------------------------------- the attacks

interface Attack {
  name: string
  method?: 'GET' | 'POST'
  path: string
  /** A JSON body (sent as application/json) or a string sent as it is. */
  body?: string
  contentType?: string
}

const repeat = (n: number, make: (i: number) => string): string => Array.from({ length: n }, (_, i) => make(i)).join('')

/** `populate[category][populate][articles][populate][category]...`, `levels` attributes deep. */
function populateObject (levels: number): string {
  const names = Array.from({ length: levels }, (_, i) => i % 2 === 0 ? 'category' : 'articles')
  return `populate${names.map((n, i) => `${i === 0 ? '' : '[populate]'}[${n}]`).join('')}=true`
}

function populateDotted (levels: number): string {
  return `populate=${Array.from({ length: levels }, (_, i) => i % 2 === 0 ? 'category' : 'articles').join('.')}`
}

const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n)
const deepObject = (n: number, leaf = '1'): string => '{"a":'.repeat(n) + leaf + '}'.repeat(n)

/** A GraphQL request body; `variables` is JSON text (too deep for JSON.stringify to write). */
function gql (query: string, variables?: string): string {
  return `{"query":${JSON.stringify(query)}${variables === undefined ? '' : `,"variables":${variables}`}}`
}

/** Nested `{ and: [ ... ] }` GraphQL filters, inline. */
function gqlDeepFilter (n: number): string {
  return '{ and: ['.repeat(n) + '{ title: { eq: "x" } }' + ']}'.repeat(n)
}

/** `{"f":{"and":[{"and":[...]}]}}`, `n` levels, as JSON text. */
function deepVariable (n: number): string {
  return `{"f":${'{"and":['.repeat(n)}{"title":{"eq":"x"}}${']}'.repeat(n)}}`
}

const ATTACKS: Attack[] = [
  { name: 'baseline: list of 25, category and authors', path: '/api/articles?populate[category]=true&populate[authors]=true' },
  { name: 'populate bomb, object form, 8 levels, pageSize 100', path: `/api/articles?${populateObject(8)}&pagination[pageSize]=100` },
  { name: 'populate bomb, dotted form, 8 levels, pageSize 100', path: `/api/articles?${populateDotted(8)}&pagination[pageSize]=100` },
  { name: 'populate bomb, object form, 6 levels, pageSize 100', path: `/api/articles?${populateObject(6)}&pagination[pageSize]=100` },
  { name: 'populate bomb, 5 levels then *, pageSize 100', path: `/api/articles?${populateObject(5).replace('=true', '[populate]=*')}&pagination[pageSize]=100` },
  { name: 'populate bomb through authors, 4 levels', path: '/api/articles?populate=authors.articles.authors.articles&pagination[pageSize]=100' },
  { name: 'populate=* with pageSize 100', path: '/api/articles?populate=*&pagination[pageSize]=100' },
  { name: 'populate=* two levels, pageSize 100', path: '/api/articles?populate[category][populate]=*&populate[authors][populate]=*&populate[localizations][populate]=*&pagination[pageSize]=100' },
  { name: 'categories with all their articles, pageSize 100', path: '/api/categories?populate[articles][populate]=*&pagination[pageSize]=100' },
  { name: 'the largest answer within maxRows: 100 articles, authors, their articles and categories (8,300 rows)', path: '/api/articles?populate[authors][populate][articles][populate][category]=true&pagination[pageSize]=100' },
  { name: 'the same with the articles\' authors too (12,300 rows, over maxRows)', path: '/api/articles?populate[authors][populate][articles][populate][category]=true&populate[authors][populate][articles][populate][authors]=true&pagination[pageSize]=100' },
  { name: 'deep filter through relations (qs depth)', path: `/api/articles?filters${repeat(9, () => '[category][articles]')}[title][$containsi]=zz&pagination[pageSize]=100` },
  { name: 'deep $and filter (qs depth)', path: `/api/articles?filters${repeat(18, () => '[$not]')}[title][$containsi]=zz` },
  { name: 'sort through 19 relations, pageSize 100', path: `/api/articles?sort=${Array.from({ length: 19 }, (_, i) => i % 2 === 0 ? 'category' : 'articles').join('.')}.name&pagination[pageSize]=100` },
  { name: 'long query string (15,000 chars)', path: `/api/articles?filters[title][$containsi]=${'x'.repeat(15000)}` },
  { name: 'many parameters (1,500)', path: `/api/articles?${repeat(1500, (i) => `${i === 0 ? '' : '&'}p${i}=1`)}` },
  { name: '$in with 500 values', path: `/api/articles?${repeat(500, (i) => `${i === 0 ? '' : '&'}filters[id][$in][${i}]=${i}`)}` },
  { name: 'deep JSON body (10,000 levels) to POST /api/articles', method: 'POST', path: '/api/articles', body: `{"data":{"title":"x","tags":${deepArray(10000)}}}` },
  { name: 'deep JSON body (100,000 levels) to /api/auth/local', method: 'POST', path: '/api/auth/local', body: `{"identifier":${deepObject(100000)},"password":"x"}` },
  { name: 'deep urlencoded body to /api/auth/local', method: 'POST', path: '/api/auth/local', body: `identifier${repeat(30, () => '[a]')}=x&password=x`, contentType: 'application/x-www-form-urlencoded' },
  { name: 'wide JSON body (1 MiB) to /api/auth/local', method: 'POST', path: '/api/auth/local', body: `{"identifier":[${repeat(200_000, (i) => `${i === 0 ? '' : ','}1234`)}],"password":"x"}` },
  { name: 'large JSON body (8 MiB) to /api/auth/local', method: 'POST', path: '/api/auth/local', body: `{"identifier":"${'x'.repeat(8 * 1024 * 1024)}","password":"x"}` },
  { name: 'GraphQL: 2,000 aliases of articles(pageSize 100)', method: 'POST', path: '/graphql', body: gql(`{ ${repeat(2000, (i) => `a${i}: articles(pagination: { pageSize: 100 }) { documentId title } `)}}`) },
  { name: 'GraphQL: filters nested 1,000 levels', method: 'POST', path: '/graphql', body: gql(`{ articles(filters: ${gqlDeepFilter(1000)}) { documentId } }`) },
  { name: 'GraphQL: variables nested 5,000 levels', method: 'POST', path: '/graphql', body: gql('query ($f: ArticleFiltersInput) { articles(filters: $f) { documentId } }', deepVariable(5000)) }
]

// ---------------------------------------------------------------- the bench (parent process)

interface Server { child: ChildProcess, port: number }

async function start (): Promise<Server> {
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--import=tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => { reject(new Error(`the server exited with ${code ?? 'a signal'}`)) })
    child.on('message', (message: any) => { if (message?.ready === true) resolve(message.port as number) })
  })
  return { child, port }
}

async function stop (server: Server): Promise<void> {
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => { resolve() }))
  server.child.kill('SIGTERM')
  await exited
}

async function ask<T> (server: Server, message: string, key: string): Promise<T> {
  return await new Promise<T>((resolve) => {
    const listener = (reply: any): void => {
      if (reply?.[key] === undefined) return
      server.child.off('message', listener)
      resolve(reply as T)
    }
    server.child.on('message', listener)
    server.child.send(message)
  })
}

interface Outcome { name: string, status: number | 'timeout' | 'reset', bytes: number, ms: number, blockMs: number, rssMb: number, answer: string }

/** The worst event-loop block over one idle second: the noise floor of the machine. */
async function idle (server: Server): Promise<Outcome> {
  await ask(server, 'reset', 'reset')
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const report = await ask<{ maxMs: number, rss: number }>(server, 'report', 'maxMs')
  return { name: 'no request (idle second)', status: 0, bytes: 0, ms: 0, blockMs: report.maxMs, rssMb: report.rss / 2 ** 20, answer: '' }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function send (server: Server, attack: Attack): Promise<Outcome> {
  await ask(server, 'reset', 'reset')
  const began = performance.now()
  let status: Outcome['status']
  let text = ''
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}${attack.path}`, {
      method: attack.method ?? 'GET',
      headers: attack.body === undefined ? {} : { 'content-type': attack.contentType ?? 'application/json' },
      body: attack.body,
      signal: AbortSignal.timeout(TIMEOUT)
    })
    text = await response.text()
    status = response.status
  } catch (err) {
    status = (err as Error).name === 'TimeoutError' ? 'timeout' : 'reset'
  }
  const ms = performance.now() - began
  await new Promise((resolve) => setTimeout(resolve, 200))
  const report = await ask<{ maxMs: number, rss: number }>(server, 'report', 'maxMs')
  return { name: attack.name, status, bytes: Buffer.byteLength(text), ms, blockMs: report.maxMs, rssMb: report.rss / 2 ** 20, answer: text.slice(0, 160) }
}

const size = (bytes: number): string => bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} B`

async function main (): Promise<void> {
  const only = process.env.BENCH_EL_ONLY?.split(',').map((s) => s.trim())
  const attacks = only === undefined ? ATTACKS : ATTACKS.filter((a, i) => only.includes(String(i)) || only.some((o) => a.name.includes(o)))
  console.log(`event-loop bench on ${PGLITE ? 'PGlite' : DATABASE_URL.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')} (schema ${SCHEMA}), ${ARTICLES} articles; starting the server...`)
  let server = await start()
  // One ordinary request first, so the permission cache and the first compilation are not measured.
  await send(server, ATTACKS[0])
  const outcomes: Array<Outcome & { medianBlockMs: number }> = []
  const floor = await idle(server)
  outcomes.push({ ...floor, medianBlockMs: floor.blockMs })
  for (const attack of attacks) {
    const runs: Outcome[] = []
    for (let run = 0; run < RUNS; run++) {
      const outcome = await send(server, attack)
      runs.push(outcome)
      console.log(`${outcome.name}: ${String(outcome.status)} ${size(outcome.bytes)} in ${outcome.ms.toFixed(0)} ms, worst block ${outcome.blockMs.toFixed(1)} ms, rss ${outcome.rssMb.toFixed(0)} MiB  ${outcome.answer.replace(/\s+/g, ' ').slice(0, 120)}`)
      if (outcome.status === 'timeout' || outcome.status === 'reset') {
        await stop(server)
        server = await start()
        break
      }
    }
    const last = runs[runs.length - 1]
    outcomes.push({
      ...last,
      ms: median(runs.map((r) => r.ms)),
      blockMs: Math.max(...runs.map((r) => r.blockMs)),
      medianBlockMs: median(runs.map((r) => r.blockMs))
    })
  }
  await stop(server)
  console.log(`\n| attack | status | answer | time (median of ${RUNS}) | worst event-loop block (median) |\n|---|--:|--:|--:|--:|`)
  for (const o of outcomes) console.log(`| ${o.name} | ${String(o.status)} | ${size(o.bytes)} | ${o.ms.toFixed(0)} ms | ${o.blockMs.toFixed(1)} ms (${o.medianBlockMs.toFixed(1)} ms) |`)
  const worst = outcomes.slice(1).reduce((a, b) => (b.blockMs > a.blockMs ? b : a))
  console.log(`\nworst block: ${worst.blockMs.toFixed(1)} ms (${worst.name}); idle floor ${floor.blockMs.toFixed(1)} ms`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  (process.argv[2] === 'serve' ? serve() : main()).catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
