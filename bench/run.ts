import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import autocannon, { type Result } from 'autocannon'
import type { FastifyInstance } from 'fastify'
import { sql as raw } from 'kysely'
import pg from 'pg'
import { ARTICLE_UID, AUTHOR_UID, AUTHORS, CATEGORY_UID, PUBLIC_READ, articleData, articleRelations, authorData, categoryData } from './article.js'
import type { Statement } from './baseline.js'
import type { FloorSql } from './floor.js'
import { CATEGORIES_OF, MODEL_SET, oracleCategoryData } from './oracle.js'
import { SCENARIOS, type Context, type Scenario } from './scenarios.js'
import { seedRows } from './seed-rows.js'
import { buildOurs, POOL_SIZE } from './serve.js'
import { sampleServer, startServerProcess, type ServerProcess } from './server-process.js'
import { median } from './stats.js'

/**
 * `npm run bench`: the plugin against a hand-written Fastify + pg server running the same SQL,
 * on PostgreSQL, with autocannon. See bench/README.md for what is measured and how to read it.
 *
 * Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_MODELS
 * (oracle or plain), BENCH_DOCS (10000), BENCH_CONNECTIONS (10), BENCH_DURATION (10 s),
 * BENCH_WARMUP (3 s), BENCH_ROUNDS (3), BENCH_ONLY (comma-separated scenario names),
 * BENCH_PROFILE=1|ours|baseline|both (run servers with --cpu-prof, profiles in bench/results/profiles),
 * BENCH_STRAPI_JSON (Strapi's recorded numbers), BENCH_REUSE=1 (keep the `bench` schema when it
 * holds BENCH_DOCS seeded articles of these models: for repeated runs at 100,000 and 1,000,000),
 * BENCH_INDEXES=1 (the filtered list's advised indexes, oracle models).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url))
/**
 * How the servers run: under tsx from the sources, or with `BENCH_DIST=1` as plain JavaScript from
 * `dist-bench/` (`npm run build:bench`), as a deployment runs, without tsx's loader and its memory,
 * the plugin then being the built package (`npm run build`: dist/lib/index.js, bundled).
 */
const BENCH_DIST = process.env.BENCH_DIST === '1'
const DIST_SERVE = fileURLToPath(new URL('../dist-bench/bench/serve.js', import.meta.url))
const DIST_PLUGIN = fileURLToPath(new URL('../dist/lib/index.js', import.meta.url))
const SERVE = BENCH_DIST ? [DIST_SERVE] : ['--import', 'tsx', fileURLToPath(new URL('./serve.ts', import.meta.url))]
const STRAPI_BENCH = process.env.BENCH_STRAPI_JSON ?? fileURLToPath(new URL('../../shared/bench/strapi-compare-10k.json', import.meta.url))
/** The plugin's recorded statements, which the oracle models' floor replays (floor.ts). */
const FLOOR_SQL = `${RESULTS}floor-sql.json`

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const DOCS = Number(process.env.BENCH_DOCS ?? 10_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CATEGORIES = CATEGORIES_OF[MODEL_SET]
const ORACLE = MODEL_SET === 'oracle'
/** `service` (the default): every article through the document service; `rows`: the same rows in batches (seed-rows.ts), for 100,000 and more. */
const SEED = process.env.BENCH_SEED === 'rows' ? 'rows' : 'service'
const REUSE = process.env.BENCH_REUSE === '1'
/**
 * `BENCH_INDEXES=1`: the indexes docs/rest.md#indexes-for-your-filters-and-sorts advises for the
 * filtered list (its sort, and its filter with the scope's columns, for an index-only count),
 * created after seeding; without it they are dropped, so that a reused schema is measured as
 * seeded. Neither Strapi's run nor the default one has them: the models declare no index.
 */
const INDEXES = process.env.BENCH_INDEXES === '1'
const FILTER_INDEXES = [
  'create index if not exists "bench_articles_title_id" on "articles" ("title", "id")',
  'create index if not exists "bench_articles_locale_views" on "articles" ("locale", "views") include ("published_at")'
]
/** Servers to run under --cpu-prof: BENCH_PROFILE=1 (ours), ours, baseline or both. */
const PROFILE = new Set(({ 1: ['ours'], ours: ['ours'], baseline: ['baseline'], both: ['ours', 'baseline'] } as Record<string, string[]>)[process.env.BENCH_PROFILE ?? ''] ?? [])

class BenchError extends Error {}

/** The commit measured, and whether lib/ had uncommitted changes (BENCH_COMMIT names it outside a git checkout). */
function revision (): { commit: string | null, libModified: boolean | null } {
  if (process.env.BENCH_COMMIT !== undefined) return { commit: process.env.BENCH_COMMIT, libModified: false }
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return { commit: git('rev-parse', 'HEAD'), libModified: git('status', '--porcelain', '--', 'lib') !== '' }
  } catch {
    return { commit: null, libModified: null }
  }
}

function redact (url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')
}

/**
 * Drops and recreates the schema `bench`, unless BENCH_REUSE=1 and it holds the articles a seed of
 * BENCH_DOCS with these models wrote (`seeded` is then true: seeding is skipped).
 */
async function resetSchema (): Promise<{ version: string, seeded: boolean }> {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
  try {
    const { rows: [{ version }] } = await admin.query<{ version: string }>('show server_version')
    if (REUSE && await seededBefore(admin)) return { version, seeded: true }
    await admin.query('drop schema if exists bench cascade')
    await admin.query('create schema bench')
    return { version, seeded: false }
  } finally {
    await admin.end()
  }
}

/** Whether `bench.articles` holds BENCH_DOCS seeded articles (one row each, two with the oracle models) and nothing else. */
async function seededBefore (admin: pg.Pool): Promise<boolean> {
  const { rows: [{ exists }] } = await admin.query<{ exists: boolean }>("select to_regclass('bench.articles') is not null as exists")
  if (!exists) return false
  const { rows: [{ n, created }] } = await admin.query<{ n: number, created: number }>(
    "select count(*)::int as n, count(*) filter (where title like 'Bench article %')::int as created from bench.articles")
  return n === DOCS * (ORACLE ? 2 : 1) && created === 0
}

/** Creates `count` documents through the document service, `BATCH` concurrent creates at a time. */
async function createAll (app: FastifyInstance, uid: string, count: number, data: (i: number) => Record<string, unknown>, status?: 'published'): Promise<string[]> {
  const service = app.contentApi.documents(uid)
  const ids: string[] = []
  const BATCH = 100
  for (let i = 0; i < count; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - i) }, async (_, k) => (await service.create({ data: data(i + k), status })).documentId)
    ids.push(...await Promise.all(batch))
    if (count >= 2000 && (i + BATCH) % 2000 === 0) process.stdout.write(`  seeded ${i + BATCH}/${count}\r`)
  }
  return ids
}

/** The size of the page a list request asks for (`pagination[pageSize]`, else the default 25). */
function pageSizeOf (path: string): number {
  const size = /pagination\[pageSize\]=(\d+)/.exec(path)?.[1]
  return size === undefined ? 25 : Number(size)
}

interface Seeded {
  seedMs: number
  context: Context
  /** The statement the plugin sent for each read, by scenario. */
  sql: Record<string, Statement>
  /** What the oracle models' floor replays. */
  floor: FloorSql
}

/**
 * Creates the schema (through the plugin's schema sync) and the documents (through the document
 * service, the path applications write by; with the oracle models every article is created
 * published: a draft row and a published row), grants the public role read access, makes a
 * full-access API token for the create, then records the SQL the plugin sends for each read:
 * checked against baseline.ts's with the plain models, replayed by floor.ts with the oracle's.
 */
async function seedAndCheckSql (reuse: boolean): Promise<Seeded> {
  let captured: Statement[] | null = null
  const app = await buildOurs(DATABASE_URL, (text, values) => { captured?.push({ text, values: [...values] }) })
  try {
    await app.ready()
    // Content is private by default: anonymous requests read through the public role's grants.
    await app.contentApi.permissions.grant('public', PUBLIC_READ)
    const { accessKey: token } = await app.contentApi.apiTokens.create({ name: `bench ${Date.now()}`, type: 'full-access' })
    const articles = app.contentApi.documents(ARTICLE_UID)
    const began = performance.now()
    const seeded = async (table: string): Promise<string[]> =>
      (await raw<{ document_id: string }>`select distinct on (id) document_id from ${raw.table(table)} order by id`.execute(app.contentApi.db)).rows.map((r) => r.document_id)
    const categories = reuse ? await seeded('categories') : await createAll(app, CATEGORY_UID, CATEGORIES, ORACLE ? oracleCategoryData : categoryData)
    const authors = reuse ? await seeded('authors') : await createAll(app, AUTHOR_UID, AUTHORS, authorData)
    if (reuse) {
      // Seeded by an earlier run (BENCH_REUSE=1): only the grants and the token above are new.
    } else if (SEED === 'rows') {
      const ids = async (table: string, documentIds: string[]): Promise<number[]> => {
        const { rows } = await raw<{ id: number, document_id: string }>`select "id", "document_id" from ${raw.table(table)}`.execute(app.contentApi.db)
        const byDocument = new Map(rows.map((row) => [row.document_id, row.id]))
        return documentIds.map((d) => byDocument.get(d)!)
      }
      await seedRows(app.contentApi.db, MODEL_SET, DOCS, await ids('categories', categories), await ids('authors', authors))
    } else {
      await createAll(app, ARTICLE_UID, DOCS, (i) => {
        const related = articleRelations(i)
        return { ...articleData(i), category: categories[(i * 7) % CATEGORIES], authors: related.authors.map((a) => authors[a]) }
      }, ORACLE ? 'published' : undefined)
    }
    const seedMs = Math.round(performance.now() - began)
    const { rows: tables } = await raw<{ name: string }>`select tablename as name from pg_tables where schemaname = 'bench'`.execute(app.contentApi.db)
    if (!reuse) for (const { name } of tables) await raw`vacuum analyze ${raw.table(name)}`.execute(app.contentApi.db)
    if (ORACLE) {
      const statements = INDEXES ? FILTER_INDEXES : ['drop index if exists "bench_articles_title_id"', 'drop index if exists "bench_articles_locale_views"']
      for (const statement of statements) await raw.raw(statement).execute(app.contentApi.db)
      // With the counts table: autovacuum keeps its old row versions few in production, and may be off here.
      await raw`vacuum analyze "articles", "content_api_row_counts"`.execute(app.contentApi.db)
    }
    const title = articleData(Math.floor(DOCS / 2)).title
    const middle = await articles.findFirst({ filters: { title } })
    if (middle === null) throw new BenchError(`no article titled ${String(title)} after seeding`)
    const { documentId } = middle
    const context: Context = { documentId, categoryId: categories[0], authorId: authors[0], token }

    const sql: Record<string, Statement> = {}
    const floor: FloorSql = { reads: {}, documentId }
    // One request uncaptured first: it loads the public role's permissions into their cache, a
    // query the measured requests pay only once per 5 s cache lifetime.
    await app.inject({ method: 'GET', url: '/api/categories?pagination[pageSize]=1' })
    for (const scenario of SCENARIOS) {
      if (scenario.kind === 'create') continue
      const request = { method: scenario.method, url: scenario.path(documentId), headers: scenario.headers?.(context), payload: scenario.body?.(context) }
      // Each scenario's first request: the statement as a hand-written server would send it at
      // every request. Ours, repeated, may then bind a total it remembers (docs/rest.md#totals),
      // which the floor does not do.
      captured = []
      const response = await app.inject(request)
      const statements = captured as Statement[]
      captured = null
      if (response.statusCode !== 200) throw new BenchError(`${scenario.name}: the plugin answered ${response.statusCode}: ${response.body.slice(0, 300)}`)
      if (statements.length !== 1) {
        throw new BenchError(`${scenario.name}: the plugin ran ${statements.length} statements, the floor runs 1:\n${statements.map((s) => `  ${s.text}`).join('\n')}`)
      }
      const ours = statements[0]
      sql[scenario.name] = ours
      if (scenario.kind === 'graphql') continue
      if (ORACLE) {
        floor.reads[scenario.path(':id')] = { ...ours, kind: scenario.kind, page: 1, pageSize: pageSizeOf(request.url) }
        continue
      }
      const baseline = scenario.statement?.(documentId)
      if (baseline === undefined) throw new BenchError(`${scenario.name}: no hand-written statement for the plain models`)
      if (ours.text !== baseline.text || JSON.stringify(ours.values) !== JSON.stringify(baseline.values)) {
        throw new BenchError(`${scenario.name}: the baseline's SQL is not the SQL the plugin sends; update bench/baseline.ts.\n` +
          `  plugin:   ${ours.text}\n            ${JSON.stringify(ours.values)}\n` +
          `  baseline: ${baseline.text}\n            ${JSON.stringify(baseline.values)}`)
      }
    }
    return { seedMs, context, sql, floor }
  } finally {
    await app.close()
  }
}

/** Deletes the articles the create scenario wrote (and, by cascade, their links), so that every round reads the seeded table. */
async function deleteCreated (): Promise<number> {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1, options: '-c search_path=bench' })
  try {
    const { rowCount } = await admin.query("delete from articles where title like 'Bench article %'")
    await admin.query('vacuum analyze articles, articles_category_lnk, articles_authors_lnk, content_api_row_counts')
    return rowCount ?? 0
  } finally {
    await admin.end()
  }
}

interface Server extends ServerProcess { name: 'ours' | 'baseline' }

async function startServer (name: 'ours' | 'baseline'): Promise<Server> {
  const profile = PROFILE.has(name) ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS}profiles/${name}`] : []
  const env = { ...process.env, NODE_ENV: 'production', DATABASE_URL, BENCH_FLOOR_SQL: FLOOR_SQL, ...(BENCH_DIST ? { BENCH_PLUGIN: DIST_PLUGIN } : {}) }
  try {
    return { name, ...await startServerProcess(name, [...profile, ...SERVE, name], { cwd: ROOT, env }) }
  } catch (err) {
    throw new BenchError((err as Error).message)
  }
}

async function stopServer (server: Server): Promise<void> {
  if (server.child.exitCode !== null) return
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

function firstDifference (a: string, b: string): string {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  const from = Math.max(0, i - 60)
  return `at character ${i}:\n    ours:     …${a.slice(from, i + 80)}…\n    baseline: …${b.slice(from, i + 80)}…`
}

async function send (server: Server, scenario: Scenario, context: Context, id: string): Promise<Response> {
  return await fetch(server.base + scenario.path(context.documentId), {
    method: scenario.method,
    headers: scenario.headers?.(context),
    body: scenario.body?.(context).replaceAll('[<id>]', id)
  })
}

/**
 * Both servers must answer every benchmarked read with the same status, type and body; a create
 * with the same status and the same document but for its ids and timestamps.
 */
async function checkSameResponses (ours: Server, baseline: Server, context: Context): Promise<void> {
  for (const scenario of SCENARIOS) {
    const [a, b] = await Promise.all([send(ours, scenario, context, 'check-ours'), send(baseline, scenario, context, 'check-floor')])
    let [bodyA, bodyB] = await Promise.all([a.text(), b.text()])
    if (scenario.kind === 'create') {
      const shape = (body: string): string => body.replace(/"(id|documentId|slug|title|createdAt|updatedAt|publishedAt)":("[^"]*"|\d+)/g, '"$1":_')
      ;[bodyA, bodyB] = [shape(bodyA), shape(bodyB)]
    }
    const problems: string[] = []
    if (a.status !== 200) problems.push(`ours answered ${a.status}`)
    if (a.status !== b.status) problems.push(`status: ours ${a.status}, baseline ${b.status}`)
    if (a.headers.get('content-type') !== b.headers.get('content-type')) {
      problems.push(`content-type: ours ${a.headers.get('content-type')}, baseline ${b.headers.get('content-type')}`)
    }
    if (bodyA !== bodyB) problems.push(`body differs (${bodyA.length} vs ${bodyB.length} bytes) ${firstDifference(bodyA, bodyB)}`)
    if (problems.length > 0) {
      throw new BenchError(`ERROR: the two servers answer ${scenario.method} ${scenario.path(context.documentId)} differently, so measuring them would compare different work:\n  ${problems.join('\n  ')}`)
    }
    console.log(`  same ${scenario.kind === 'create' ? 'answer but for ids, slug, title and timestamps' : 'response'} for ${scenario.name}: ${bodyA.length} bytes`)
  }
}

interface Measurement {
  requestsPerSec: { mean: number, stddev: number }
  latencyMs: { mean: number, p50: number, p90: number, p99: number, max: number }
  totalRequests: number
  non2xx: number
  errors: number
  timeouts: number
  warmupRequestsPerSec: number
  /** The 1-minute load average when the measured round began: other work on the machine skews results. */
  loadAverage: number
  /**
   * CPU time the server process spent per request in the measured round (µs). Less sensitive to
   * other load on the machine than req/s; PostgreSQL's share, the same SQL for both, is not in it.
   */
  serverCpuUsPerRequest: number
  /** The server's largest resident set during the measured round (sampled every 50 ms), MiB. */
  maxRssMiB: number
}

async function measure (server: Server, scenario: Scenario, context: Context): Promise<Measurement> {
  const request = {
    url: server.base + scenario.path(context.documentId),
    method: scenario.method,
    headers: scenario.headers?.(context),
    body: scenario.body?.(context),
    idReplacement: scenario.body !== undefined,
    connections: CONNECTIONS
  }
  const warmup = await autocannon({ ...request, duration: WARMUP })
  const loadAverage = os.loadavg()[0]
  const before = await sampleServer(server.child)
  const r: Result = await autocannon({ ...request, duration: DURATION })
  const after = await sampleServer(server.child)
  const cpu = after.cpuUs - before.cpuUs
  return {
    requestsPerSec: { mean: r.requests.mean, stddev: r.requests.stddev },
    latencyMs: { mean: r.latency.mean, p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    totalRequests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    warmupRequestsPerSec: warmup.requests.mean,
    loadAverage,
    serverCpuUsPerRequest: cpu / Math.max(r.requests.total, 1),
    maxRssMiB: after.maxRss / 2 ** 20
  }
}

/** Strapi's recorded numbers for one request (and, when the file has them, the plugin's and the floor's of the same run). */
interface Recorded { reqPerSec: number, cpuUsPerReq: number | null, maxRssMiB: number | null, p50: number | null, p99: number | null }

interface StrapiFile { what?: string, when?: string, machine?: string, byName: Map<string, Recorded> }

/**
 * Reads BENCH_STRAPI_JSON: `{ summary: { [request]: { strapi: { meanReqPerSec, meanCpuUsPerReq, maxRssMiB } } } }`
 * (../shared/bench/strapi-compare-10k.json), or the older `{ scenarios: [{ name, requestsPerSec, latencyMs }] }`.
 */
async function readStrapi (): Promise<StrapiFile | null> {
  let json: any
  try {
    json = JSON.parse(await readFile(STRAPI_BENCH, 'utf8'))
  } catch {
    return null
  }
  const byName = new Map<string, Recorded>()
  for (const [name, servers] of Object.entries<any>(json.summary ?? {})) {
    const strapi = servers?.strapi
    if (typeof strapi?.meanReqPerSec === 'number') byName.set(name, { reqPerSec: strapi.meanReqPerSec, cpuUsPerReq: strapi.meanCpuUsPerReq ?? null, maxRssMiB: strapi.maxRssMiB ?? null, p50: null, p99: null })
  }
  for (const s of json.scenarios ?? []) {
    if (!byName.has(s.name)) byName.set(s.name, { reqPerSec: s.requestsPerSec.mean, cpuUsPerReq: null, maxRssMiB: null, p50: s.latencyMs?.p50 ?? null, p99: s.latencyMs?.p99 ?? null })
  }
  return { what: json.what, when: json.when, machine: json.machine ?? json.strapiVersion, byName }
}

function table (rows: Array<Array<string | number>>): string {
  const cells = rows.map((row) => row.map(String))
  const widths = cells[0].map((_, i) => Math.max(...cells.map((row) => row[i].length)))
  // Text columns (the leading ones) align left, numbers right.
  const text = cells[1].map((cell) => cell !== '' && Number.isNaN(Number(cell.replace(/x$/, ''))))
  const line = (row: string[]): string => `| ${row.map((cell, i) => (text[i] ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`
  const rule = `|${widths.map((w, i) => '-'.repeat(w + 1) + (text[i] ? '-' : ':')).join('|')}|`
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join('\n')
}

const fixed = (n: number, digits = 1): string => n.toFixed(digits)

const mean = (values: number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length

/**
 * Each round's ratio of ours to the floor, the two measured one after the other: on a shared
 * machine whose speed drifts by tens of percent from one minute to the next, a round's pair
 * shares its minute, and the median of the rounds' ratios is not moved by one slow round.
 */
const pairedRatios = (ours: Measurement[], floor: Measurement[], of: (m: Measurement) => number): number[] =>
  ours.map((m, round) => of(m) / of(floor[round]))

/** A scenario's rounds on one server, summarised: means, the worst RSS. */
function summarise (rounds: Measurement[]): Measurement & { rounds: Measurement[] } {
  const last = rounds[rounds.length - 1]
  return {
    ...last,
    requestsPerSec: { mean: mean(rounds.map((m) => m.requestsPerSec.mean)), stddev: mean(rounds.map((m) => m.requestsPerSec.stddev)) },
    latencyMs: {
      mean: mean(rounds.map((m) => m.latencyMs.mean)),
      p50: mean(rounds.map((m) => m.latencyMs.p50)),
      p90: mean(rounds.map((m) => m.latencyMs.p90)),
      p99: mean(rounds.map((m) => m.latencyMs.p99)),
      max: Math.max(...rounds.map((m) => m.latencyMs.max))
    },
    totalRequests: rounds.reduce((sum, m) => sum + m.totalRequests, 0),
    non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
    errors: rounds.reduce((sum, m) => sum + m.errors, 0),
    timeouts: rounds.reduce((sum, m) => sum + m.timeouts, 0),
    loadAverage: mean(rounds.map((m) => m.loadAverage)),
    serverCpuUsPerRequest: mean(rounds.map((m) => m.serverCpuUsPerRequest)),
    maxRssMiB: Math.max(...rounds.map((m) => m.maxRssMiB)),
    rounds
  }
}

async function main (): Promise<void> {
  const [load] = os.loadavg()
  if (load > os.cpus().length) console.log(`WARNING: the 1-minute load average is ${fixed(load, 2)} on ${os.cpus().length} cores; other work will skew the numbers.`)
  if (BENCH_DIST && !existsSync(DIST_SERVE)) throw new BenchError(`BENCH_DIST=1: ${DIST_SERVE} is missing; run \`npm run build:bench\` first`)
  if (BENCH_DIST && !existsSync(DIST_PLUGIN)) throw new BenchError(`BENCH_DIST=1: ${DIST_PLUGIN} is missing; run \`npm run build\` first`)
  console.log(`Resetting schema "bench" on ${redact(DATABASE_URL)}; servers ${BENCH_DIST ? 'from dist-bench/ (BENCH_DIST=1)' : 'under tsx'}`)
  const { version: postgresVersion, seeded } = await resetSchema()
  console.log(seeded
    ? `Reusing the ${DOCS} articles seeded in schema "bench" (BENCH_REUSE=1)`
    : `Seeding ${CATEGORIES} categories, ${AUTHORS} authors and ${DOCS} articles (each with a category and 1-3 authors${ORACLE ? ', created published: a draft and a published row' : ''}) ` +
      `${SEED === 'rows' ? 'as rows (BENCH_SEED=rows)' : 'through the document service'}, models: ${MODEL_SET}`)
  const { seedMs, context, sql, floor } = await seedAndCheckSql(seeded)
  const { documentId } = context
  console.log(`  seeded in ${(seedMs / 1000).toFixed(1)} s; ${ORACLE ? 'the plugin sends one statement for every read, recorded for the floor' : 'the baseline\'s SQL matches the plugin\'s'} (${Object.keys(sql).length} scenarios)`)
  await mkdir(RESULTS, { recursive: true })
  await writeFile(FLOOR_SQL, JSON.stringify(floor, null, 2) + '\n')

  const servers: Server[] = []
  const measured = new Map<string, { ours: Measurement[], baseline: Measurement[] }>(SCENARIOS.map((s) => [s.name, { ours: [], baseline: [] }]))
  const idle: Record<string, number> = {}
  try {
    const ours = await startServer('ours')
    servers.push(ours)
    const baseline = await startServer('baseline')
    servers.push(baseline)
    for (const server of servers) idle[server.name] = (await sampleServer(server.child)).maxRss / 2 ** 20
    await checkSameResponses(ours, baseline, context)
    await deleteCreated()

    let turn = 0
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        console.log(`Measuring ${scenario.name}${ROUNDS > 1 ? ` (round ${round}/${ROUNDS})` : ''}: ${scenario.method} ${scenario.path(documentId)} (-c ${CONNECTIONS} -d ${DURATION} after a ${WARMUP} s warm-up)`)
        // Alternate which server goes first, so a drift in machine load does not favour one side.
        const order = turn++ % 2 === 0 ? [ours, baseline] : [baseline, ours]
        for (const server of order) {
          const m = await measure(server, scenario, context)
          measured.get(scenario.name)![server.name].push(m)
          console.log(`  ${server.name.padEnd(8)} ${fixed(m.requestsPerSec.mean)} req/s, ${fixed(m.serverCpuUsPerRequest, 0)} µs server CPU per request, ` +
            `max RSS ${fixed(m.maxRssMiB, 0)} MiB (load average before: ${fixed(m.loadAverage, 2)})`)
        }
        if (scenario.kind === 'create') console.log(`  deleted the ${await deleteCreated()} articles rows the creates wrote`)
      }
    }
  } finally {
    for (const server of servers) await stopServer(server)
  }
  const results = SCENARIOS.map((scenario) => {
    const m = measured.get(scenario.name)!
    return { name: scenario.name, method: scenario.method, path: scenario.path(documentId), strapiName: scenario.strapi, ours: summarise(m.ours), baseline: summarise(m.baseline) }
  })

  const strapi = await readStrapi()
  const rows: Array<Array<string | number>> = [['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'server CPU µs/req', 'max RSS MiB']]
  for (const r of results) {
    for (const [server, m] of [['ours', r.ours], ['floor', r.baseline]] as const) {
      rows.push([r.name, server, fixed(m.requestsPerSec.mean), fixed(m.latencyMs.p50, 0), fixed(m.latencyMs.p99, 0), m.non2xx, m.errors + m.timeouts, fixed(m.serverCpuUsPerRequest, 0), fixed(m.maxRssMiB, 0)])
    }
    const recorded = strapi?.byName.get(r.strapiName)
    if (recorded !== undefined) {
      rows.push([r.name, 'strapi (recorded)', fixed(recorded.reqPerSec), recorded.p50 ?? '', recorded.p99 ?? '', '', '', recorded.cpuUsPerReq === null ? '' : fixed(recorded.cpuUsPerReq, 0), recorded.maxRssMiB === null ? '' : fixed(recorded.maxRssMiB, 0)])
    }
  }
  console.log(`\n${table(rows)}\n`)

  // With several rounds, the ratios to the floor are the medians of the rounds' paired ratios
  // (pairedRatios), each round's given after them; with one round, that round's.
  const rounds = (values: number[], suffix: string): string => values.length < 2 ? '' : ` (${values.map((v) => fixed(v, 2) + suffix).join(', ')})`
  const ratios: Array<Array<string | number>> = [['scenario', ...(strapi === null ? [] : ['ours/Strapi req/s']), 'ours/floor req/s', 'ours/floor CPU per request', 'ours/floor max RSS']]
  const summary = results.map((r) => {
    const recorded = strapi?.byName.get(r.strapiName)
    const ratioRounds = pairedRatios(r.ours.rounds, r.baseline.rounds, (m) => m.requestsPerSec.mean)
    const cpuRatioRounds = pairedRatios(r.ours.rounds, r.baseline.rounds, (m) => m.serverCpuUsPerRequest)
    const ratio = median(ratioRounds)
    const cpuRatio = median(cpuRatioRounds)
    const vsStrapi = recorded === undefined ? null : r.ours.requestsPerSec.mean / recorded.reqPerSec
    ratios.push([r.name, ...(strapi === null ? [] : [vsStrapi === null ? '' : `${fixed(vsStrapi)}x`]), fixed(ratio, 2) + rounds(ratioRounds, ''),
      `${fixed(cpuRatio, 2)}x${rounds(cpuRatioRounds, 'x')}`, `${fixed(r.ours.maxRssMiB / r.baseline.maxRssMiB, 2)}x`])
    return { ...r, ratio, ratioRounds, cpuRatio, cpuRatioRounds, vsStrapi, strapi: recorded ?? null }
  })
  console.log(`${table(ratios)}\n`)
  if (ROUNDS > 1) console.log(`Ratios to the floor: the median of the ${ROUNDS} rounds' paired ratios, each round's in brackets.`)
  console.log(`Idle RSS after start: ours ${fixed(idle.ours ?? 0, 0)} MiB, floor ${fixed(idle.baseline ?? 0, 0)} MiB.`)
  if (strapi === null) console.log(`(no Strapi numbers at ${STRAPI_BENCH}; skipped that comparison)`)
  else console.log(`Strapi's numbers are recorded, not re-measured (${strapi.when ?? ''}, ${strapi.machine ?? 'unknown machine'}): ${STRAPI_BENCH}; see bench/README.md.`)
  for (const r of summary) if (r.ratio < 0.8) console.log(`NOTE: ${r.name} is below 0.8 of the floor (${fixed(r.ratio, 3)}); profile with BENCH_PROFILE=1.`)

  const file = `${RESULTS}${new Date().toISOString().replaceAll(':', '-')}.json`
  await writeFile(file, JSON.stringify({
    when: new Date().toISOString(),
    ...revision(),
    node: process.version,
    servers: BENCH_DIST ? 'node dist-bench/bench/serve.js (BENCH_DIST=1)' : 'tsx bench/serve.ts',
    machine: `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}`,
    database: { url: redact(DATABASE_URL), postgresVersion, schema: 'bench', poolSize: POOL_SIZE },
    models: MODEL_SET,
    documents: { articles: DOCS, categories: CATEGORIES, authors: AUTHORS, seed: SEED },
    filterIndexes: ORACLE && INDEXES,
    seedMs,
    autocannon: { connections: CONNECTIONS, durationS: DURATION, warmupS: WARMUP, rounds: ROUNDS },
    idleRssMiB: idle,
    getOneDocumentId: documentId,
    strapiFile: strapi === null ? null : STRAPI_BENCH,
    sql,
    scenarios: summary
  }, null, 2) + '\n')
  console.log(`Results written to ${file}`)
  for (const name of PROFILE) console.log(`CPU profile of the ${name} server in ${RESULTS}profiles/${name}/ (open it in Chrome DevTools)`)
}

main().catch((err: unknown) => {
  console.error(err instanceof BenchError ? err.message : err)
  process.exitCode = 1
})
