import { fork, type ChildProcess } from 'node:child_process'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import contentApi from '../lib/index.js'
import { oracleOptions } from '../test/fixtures/oracle/models.js'
import { seedOracle } from '../test/fixtures/oracle/seed.js'

/**
 * `npx tsx bench/graphql-bombs.ts`: the worst event-loop block an anonymous client can cause
 * through GraphQL. The oracle fixture (flat shape, as `npm run serve:oracle`) runs in a process of
 * its own on PostgreSQL, seeded with the oracle's data and grown to BENCH_DOCS articles (2,000),
 * each with a category and three authors; the server measures its own event loop
 * (`perf_hooks.monitorEventLoopDelay`, 1 ms resolution) around each request, which the client
 * sends over HTTP, one at a time, with its body built beforehand.
 *
 * For each request: the status, the wall time, the longest event-loop delay, the server's CPU time
 * (user + system: on a loaded machine the delay also counts time the process waited for a core)
 * and the growth of its RSS. The requests are the bombs of docs/operations.md ("GraphQL bounds") and the
 * heaviest queries the bounds still accept.
 *
 * A request still running after BENCH_TIMEOUT seconds (60) is reported as such and the server is
 * restarted (killed: its event loop may be blocked).
 *
 * Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; uses the schema
 * `bench_graphql_bombs`, seeded when it does not hold BENCH_DOCS articles yet, or always with
 * BENCH_RESEED=1), BENCH_DOCS (2000), BENCH_ONLY (comma-separated parts of names), BENCH_TIMEOUT.
 */

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const SCHEMA = 'bench_graphql_bombs'
const DOCS = Number(process.env.BENCH_DOCS ?? 2000)
const ONLY = process.env.BENCH_ONLY?.split(',')
const TIMEOUT = Number(process.env.BENCH_TIMEOUT ?? 60)

const ARTICLE = 'api::article.article'
const FIELDS = 'documentId title slug summary body views rating featured publishDate tags kind locale createdAt updatedAt publishedAt'

/** A request: a POST body (an object, or JSON text), or the query string of a GET. */
interface Attack { name: string, method?: 'GET' | 'POST', body?: unknown, query?: Record<string, string> }

const aliases = (n: number, field: string): string => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`
const nestedFilter = (levels: number): string => `${'{ and: ['.repeat(levels)}{ title: { eq: "x" } }${' ] }'.repeat(levels)}`
/** As JSON text: JSON.stringify itself recurses, and overflows at a few thousand levels. */
const nestedJson = (levels: number): string => `${'{"and":['.repeat(levels)}{"title":{"eq":"x"}}${']}'.repeat(levels)}`
const DEEP_VARIABLES = 'query ($f: ArticleFiltersInput) { articles(filters: $f) { title } }'

/** Fragments spreading the next one twice: 2^levels selections once expanded, a few hundred bytes. */
function fragmentFanOut (levels: number): string {
  let text = '{ articles(pagination: { pageSize: 1 }) { ...F0 } } '
  for (let i = 0; i < levels; i++) text += `fragment F${i} on Article { ...F${i + 1} ...F${i + 1} title } `
  return `${text}fragment F${levels} on Article { title }`
}

const ATTACKS: Attack[] = [
  { name: 'one page of 10 (reference)', body: { query: `{ articles { ${FIELDS} } }` } },
  { name: 'alias bomb: 2,000 x articles(pageSize 100)', body: { query: aliases(2000, 'articles(pagination: { pageSize: 100 }) { documentId title }') } },
  { name: 'alias bomb: 200 x articles(pageSize 100), all fields', body: { query: aliases(200, `articles(pagination: { pageSize: 100 }) { ${FIELDS} }`) } },
  {
    name: 'nested lists: articles 100 > authors 100 > articles 100',
    body: { query: `{ articles(pagination: { pageSize: 100 }) { title authors(pagination: { limit: 100 }) { name articles(pagination: { limit: 100 }) { ${FIELDS} } } } }` }
  },
  {
    name: 'nested lists through variables',
    body: {
      query: `query ($n: Int, $p: PaginationArg) { articles(pagination: $p) { title authors(pagination: { limit: $n }) { name articles(pagination: { limit: $n }) { ${FIELDS} } } } }`,
      variables: { n: 100, p: { pageSize: 100 } }
    }
  },
  {
    name: 'within limits.maxRows (10,000): articles 100 > category > articles 98',
    body: { query: `{ articles(pagination: { pageSize: 100 }) { ${FIELDS} category { name articles(pagination: { limit: 98 }) { ${FIELDS} } } } }` }
  },
  {
    name: 'largest accepted (2,500 rows): articles 100 > category > articles 23',
    body: { query: `{ articles(pagination: { pageSize: 100 }) { ${FIELDS} category { name articles(pagination: { limit: 23 }) { ${FIELDS} } } } }` }
  },
  {
    name: 'largest accepted (2,400 rows): 12 aliases x articles 100 > category',
    body: { query: aliases(12, `articles(pagination: { pageSize: 100 }) { ${FIELDS} category { name } }`) }
  },
  {
    name: 'same-name fields filling maxTokens (graphql-js overlap validation)',
    body: { query: `{ articles(pagination: { pageSize: 1 }) { ${'category { name } '.repeat(240)} } }` }
  },
  {
    name: 'same-name nested fields filling maxTokens',
    body: { query: `{ articles(pagination: { pageSize: 1 }) { ${'category { articles { title } } '.repeat(140)} } }` }
  },
  {
    name: 'distinct fragments filling maxTokens',
    body: {
      query: `{ articles(pagination: { pageSize: 1 }) { ${Array.from({ length: 80 }, (_, i) => `...F${i}`).join(' ')} } } ` +
        Array.from({ length: 80 }, (_, i) => `fragment F${i} on Article { category { name } }`).join(' ')
    }
  },
  { name: 'fragment fan-out: 2^30 selections', body: { query: fragmentFanOut(30) } },
  { name: 'same field 100,000 times', body: { query: `{ articles(pagination: { pageSize: 1 }) { ${'title '.repeat(100_000)} } }` } },
  { name: 'deep filter: 1,000 levels', body: { query: `{ articles(filters: ${nestedFilter(1000)}) { title } }` } },
  { name: 'deep filter: 5,000 levels', body: { query: `{ articles(filters: ${nestedFilter(5000)}) { title } }` } },
  // `{not:` rather than `{ and: [`: 100,000 levels within the 1 MiB body limit.
  { name: 'deep filter: 100,000 levels', body: { query: `{ articles(filters: ${'{not:'.repeat(100_000)}{title:{eq:"x"}}${'}'.repeat(100_000)}) { title } }` } },
  { name: 'deep selection: 10,000 levels', body: { query: `{ ${'articles { '.repeat(10_000)}title${' }'.repeat(10_000)} }` } },
  {
    name: 'deep variables: 5,000 levels',
    body: `{"query":${JSON.stringify(DEEP_VARIABLES)},"variables":{"f":${nestedJson(5000)}}}`
  },
  {
    // The URL must fit Node's 16 KiB header limit: 500 levels, percent-encoded.
    name: 'deep variables over GET: 500 levels',
    method: 'GET',
    query: { query: DEEP_VARIABLES, variables: `{"f":${nestedJson(500)}}` }
  },
  { name: 'deep filter over GET: 300 levels', method: 'GET', query: { query: `{ articles(filters: ${nestedFilter(300)}) { title } }` } }
]

function buildApp (): { app: FastifyInstance, db: Kysely<any> } {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, options: `-c search_path=${SCHEMA}` })
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  const app = Fastify({ logger: { level: 'error' }, pluginTimeout: 120_000, bodyLimit: 8 * 1024 * 1024 })
  app.addHook('onClose', async () => { await db.destroy() })
  return { app, db }
}

/** Whether the schema already holds the seeded fixture. */
async function seeded (): Promise<boolean> {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
  try {
    const { rows } = await admin.query(`select count(distinct document_id)::int as n from ${SCHEMA}.articles`)
    return rows[0].n >= DOCS
  } catch {
    return false
  } finally {
    await admin.end()
  }
}

async function seed (): Promise<void> {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
  await admin.query(`drop schema if exists ${SCHEMA} cascade`)
  await admin.query(`create schema ${SCHEMA}`)
  await admin.end()
  const { app, db } = buildApp()
  await app.register(contentApi, { ...oracleOptions, graphql: { format: 'flat' }, db })
  await app.ready()
  const seeded = await seedOracle(app)
  const articles = app.contentApi.documents(ARTICLE)
  const existing = seeded.articles.length
  const create = async (i: number): Promise<void> => {
    const authors = [0, 1, 2].map((k) => seeded.authors[(i + k * 3) % seeded.authors.length])
    await articles.create({
      data: {
        title: `Bench article ${i}`,
        summary: `A summary of bench article ${i}, long enough to look like one.`,
        body: [{ type: 'paragraph', children: [{ type: 'text', text: `Body of article ${i}.` }] }],
        views: i % 1000,
        rating: (i % 50) / 10,
        kind: ['news', 'opinion', 'review'][i % 3],
        tags: ['bench', `t${i % 7}`],
        category: seeded.categories[i % seeded.categories.length],
        authors
      },
      status: 'published'
    })
  }
  for (let i = existing; i < DOCS; i += 20) await Promise.all(Array.from({ length: Math.min(20, DOCS - i) }, (_, k) => create(i + k)))
  await app.close()
}

/** The server: answers `reset` and `read` messages with its event-loop histogram and RSS. */
async function serve (): Promise<void> {
  const { app, db } = buildApp()
  await app.register(contentApi, { ...oracleOptions, graphql: { format: 'flat' }, db })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  let rss = 0
  let cpu = process.cpuUsage()
  process.on('message', (message: string) => {
    if (message === 'reset') {
      histogram.reset()
      rss = process.memoryUsage().rss
      cpu = process.cpuUsage()
      process.send?.({ reset: true })
    } else if (message === 'read') {
      const used = process.cpuUsage(cpu)
      process.send?.({ maxDelayMs: histogram.max / 1e6, rssGrowthMb: (process.memoryUsage().rss - rss) / 2 ** 20, cpuMs: (used.user + used.system) / 1000 })
    }
  })
  process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  const address = app.server.address()
  process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
}

function ask (child: ChildProcess, message: string): Promise<any> {
  return new Promise((resolve) => {
    child.once('message', resolve)
    child.send(message)
  })
}

/** The HTTP request of an attack, its document ending with `suffix` (a comment). */
function request (attack: Attack, port: number, suffix: string): { url: URL, init: RequestInit } {
  const url = new URL(`http://127.0.0.1:${port}/graphql`)
  if (attack.method === 'GET') {
    for (const [key, value] of Object.entries(attack.query ?? {})) url.searchParams.set(key, key === 'query' ? value + suffix : value)
    return { url, init: { headers: { 'apollo-require-preflight': '1' } } }
  }
  // A body given as JSON text is sent as it is: it is refused before any cache.
  const body = typeof attack.body === 'string' ? attack.body : JSON.stringify({ ...(attack.body as object), query: (attack.body as { query: string }).query + suffix })
  return { url, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body } }
}

function startServer (): Promise<{ child: ChildProcess, port: number }> {
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { env: { ...process.env, NODE_ENV: 'production' }, execArgv: ['--import', 'tsx'] })
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }))
    child.once('exit', (code) => reject(new Error(`the server exited with ${String(code)}`)))
  })
}

async function main (): Promise<void> {
  if (process.env.BENCH_RESEED === '1' || !await seeded()) {
    console.log(`seeding the oracle fixture with ${DOCS} articles (schema ${SCHEMA})...`)
    await seed()
  }
  let server = await startServer()
  const rows: Array<Record<string, unknown>> = []
  try {
    for (const attack of ATTACKS.filter((a) => ONLY === undefined || ONLY.some((name) => a.name.includes(name)))) {
      // Twice, each time with a text of its own (a comment appended), as an attacker defeats the
      // caches of parsed documents and compiled statements: the worse round is reported.
      let row: Record<string, unknown> = {}
      for (let round = 0; round < 2; round++) {
        const { url, init } = request(attack, server.port, `\n# round ${round}`)
        await ask(server.child, 'reset')
        const started = performance.now()
        try {
          const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT * 1000) })
          const text = await res.text()
          const ms = performance.now() - started
          const measured = await ask(server.child, 'read') as { maxDelayMs: number, rssGrowthMb: number, cpuMs: number }
          if (round === 0 || measured.maxDelayMs > (row['max loop delay ms'] as number)) {
            row = {
              request: attack.name,
              status: res.status,
              'bytes out': text.length,
              'wall ms': Math.round(ms),
              'max loop delay ms': Math.round(measured.maxDelayMs),
              'server CPU ms': Math.round(measured.cpuMs),
              'RSS +MB': Math.round(measured.rssGrowthMb),
              message: /"message":"((?:[^"\\]|\\.){0,140})/.exec(text)?.[1] ?? ''
            }
          }
          if (ms > 5000) break
        } catch (err) {
          row = { request: attack.name, status: `no answer in ${TIMEOUT} s`, message: String(err) }
          server.child.kill('SIGKILL')
          server = await startServer()
          break
        }
      }
      rows.push(row)
      console.log(JSON.stringify(row))
    }
    console.table(rows.map(({ message: _, ...row }) => row))
  } finally {
    server.child.kill('SIGTERM')
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const run = process.argv[2] === 'serve' ? serve() : main()
  run.catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
