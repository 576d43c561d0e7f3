import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import autocannon, { type Result } from 'autocannon'
import type { FastifyInstance } from 'fastify'
import { sql as raw } from 'kysely'
import pg from 'pg'
import { ARTICLE_UID, AUTHOR_UID, AUTHORS, CATEGORIES, CATEGORY_UID, PUBLIC_READ, articleData, articleRelations, authorData, categoryData } from './article.js'
import type { Statement } from './baseline.js'
import { SCENARIOS } from './scenarios.js'
import { buildOurs, POOL_SIZE } from './serve.js'

/**
 * `npm run bench`: the plugin against a hand-written Fastify + pg server running the same SQL,
 * on PostgreSQL, with autocannon. See bench/README.md for what is measured and how to read it.
 *
 * Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DOCS (10000),
 * BENCH_CONNECTIONS (10), BENCH_DURATION (10 s), BENCH_WARMUP (3 s), BENCH_ONLY (comma-separated
 * scenario names), BENCH_PROFILE=1|ours|baseline|both (run servers with --cpu-prof, profiles in bench/results/profiles).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url))
const STRAPI_BENCH = process.env.BENCH_STRAPI_JSON ?? fileURLToPath(new URL('../../shared/oracle/strapi-v5/bench.json', import.meta.url))

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const DOCS = Number(process.env.BENCH_DOCS ?? 10_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3)
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

async function resetSchema (): Promise<string> {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
  try {
    await admin.query('drop schema if exists bench cascade')
    await admin.query('create schema bench')
    const { rows } = await admin.query<{ server_version: string }>('show server_version')
    return rows[0].server_version
  } finally {
    await admin.end()
  }
}

/** Creates `count` documents through the document service, `BATCH` concurrent creates at a time. */
async function createAll (app: FastifyInstance, uid: string, count: number, data: (i: number) => Record<string, unknown>): Promise<string[]> {
  const service = app.contentApi.documents(uid)
  const ids: string[] = []
  const BATCH = 100
  for (let i = 0; i < count; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - i) }, async (_, k) => (await service.create({ data: data(i + k) })).documentId)
    ids.push(...await Promise.all(batch))
    if (count >= 2000 && (i + BATCH) % 2000 === 0) process.stdout.write(`  seeded ${i + BATCH}/${count}\r`)
  }
  return ids
}

/**
 * Creates the schema (through the plugin's schema sync) and the documents (through the document
 * service, the path applications write by), grants the public role read access, then records
 * the SQL the plugin sends for each scenario and checks it against the baseline's.
 */
async function seedAndCheckSql (): Promise<{ seedMs: number, documentId: string, sql: Record<string, Statement> }> {
  let captured: Statement[] | null = null
  const app = await buildOurs(DATABASE_URL, (text, values) => { captured?.push({ text, values: [...values] }) })
  try {
    await app.ready()
    // Content is private by default: anonymous requests read through the public role's grants.
    await app.contentApi.permissions.grant('public', PUBLIC_READ)
    const articles = app.contentApi.documents(ARTICLE_UID)
    const began = performance.now()
    const categories = await createAll(app, CATEGORY_UID, CATEGORIES, categoryData)
    const authors = await createAll(app, AUTHOR_UID, AUTHORS, authorData)
    await createAll(app, ARTICLE_UID, DOCS, (i) => {
      const related = articleRelations(i)
      return { ...articleData(i), category: categories[related.category], authors: related.authors.map((a) => authors[a]) }
    })
    const seedMs = Math.round(performance.now() - began)
    const { rows: tables } = await raw<{ name: string }>`select tablename as name from pg_tables where schemaname = 'bench'`.execute(app.contentApi.db)
    for (const { name } of tables) await raw`vacuum analyze ${raw.table(name)}`.execute(app.contentApi.db)
    const middle = await articles.findFirst({ filters: { id: Math.ceil(DOCS / 2) } })
    if (middle === null) throw new BenchError(`no article with id ${Math.ceil(DOCS / 2)} after seeding`)

    const sql: Record<string, Statement> = {}
    for (const scenario of SCENARIOS) {
      // Once uncaptured first: it loads the public role's permissions into their cache, a query
      // the measured requests pay only once per 5 s cache lifetime.
      await app.inject(scenario.path(middle.documentId))
      captured = []
      const response = await app.inject(scenario.path(middle.documentId))
      const statements = captured as Statement[]
      captured = null
      if (response.statusCode !== 200) throw new BenchError(`${scenario.name}: the plugin answered ${response.statusCode}: ${response.body.slice(0, 300)}`)
      if (statements.length !== 1) {
        throw new BenchError(`${scenario.name}: the plugin ran ${statements.length} statements, the baseline runs 1:\n${statements.map((s) => `  ${s.text}`).join('\n')}`)
      }
      const ours = statements[0]
      const baseline = scenario.statement(middle.documentId)
      if (ours.text !== baseline.text || JSON.stringify(ours.values) !== JSON.stringify(baseline.values)) {
        throw new BenchError(`${scenario.name}: the baseline's SQL is not the SQL the plugin sends; update bench/baseline.ts.\n` +
          `  plugin:   ${ours.text}\n            ${JSON.stringify(ours.values)}\n` +
          `  baseline: ${baseline.text}\n            ${JSON.stringify(baseline.values)}`)
      }
      sql[scenario.name] = ours
    }
    return { seedMs, documentId: middle.documentId, sql }
  } finally {
    await app.close()
  }
}

interface Server { name: 'ours' | 'baseline', child: ChildProcess, base: string }

async function startServer (name: 'ours' | 'baseline'): Promise<Server> {
  const profile = PROFILE.has(name) ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS}profiles/${name}`] : []
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', fileURLToPath(new URL('./serve.ts', import.meta.url)), name], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', DATABASE_URL },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new BenchError(`${name} server did not start within 30 s`)) }, 30_000)
    child.once('message', (message: { port: number }) => { clearTimeout(timer); resolve(message.port) })
    child.once('exit', (code) => { clearTimeout(timer); reject(new BenchError(`${name} server exited with code ${code} before listening`)) })
  })
  return { name, child, base: `http://127.0.0.1:${port}` }
}

/** The server process's CPU time so far (user + system), in microseconds. */
async function cpuTime (server: Server): Promise<number> {
  return await new Promise((resolve) => {
    const onMessage = (message: { cpu?: NodeJS.CpuUsage }): void => {
      if (message.cpu === undefined) return
      server.child.off('message', onMessage)
      resolve(message.cpu.user + message.cpu.system)
    }
    server.child.on('message', onMessage)
    server.child.send('cpu')
  })
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

/** Both servers must answer every benchmarked request with the same status, type and body. */
async function checkSameResponses (ours: Server, baseline: Server, documentId: string): Promise<void> {
  for (const scenario of SCENARIOS) {
    const path = scenario.path(documentId)
    const [a, b] = await Promise.all([fetch(ours.base + path), fetch(baseline.base + path)])
    const [bodyA, bodyB] = await Promise.all([a.text(), b.text()])
    const problems: string[] = []
    if (a.status !== 200) problems.push(`ours answered ${a.status}`)
    if (a.status !== b.status) problems.push(`status: ours ${a.status}, baseline ${b.status}`)
    if (a.headers.get('content-type') !== b.headers.get('content-type')) {
      problems.push(`content-type: ours ${a.headers.get('content-type')}, baseline ${b.headers.get('content-type')}`)
    }
    if (bodyA !== bodyB) problems.push(`body differs (${bodyA.length} vs ${bodyB.length} bytes) ${firstDifference(bodyA, bodyB)}`)
    if (problems.length > 0) {
      throw new BenchError(`ERROR: the two servers answer GET ${path} differently, so measuring them would compare different work:\n  ${problems.join('\n  ')}`)
    }
    console.log(`  same response for ${scenario.name}: ${bodyA.length} bytes`)
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
}

async function measure (server: Server, path: string): Promise<Measurement> {
  const url = server.base + path
  const warmup = await autocannon({ url, connections: CONNECTIONS, duration: WARMUP })
  const loadAverage = os.loadavg()[0]
  const cpuBefore = await cpuTime(server)
  const r: Result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION })
  const cpu = await cpuTime(server) - cpuBefore
  return {
    requestsPerSec: { mean: r.requests.mean, stddev: r.requests.stddev },
    latencyMs: { mean: r.latency.mean, p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    totalRequests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    warmupRequestsPerSec: warmup.requests.mean,
    loadAverage,
    serverCpuUsPerRequest: cpu / Math.max(r.requests.total, 1)
  }
}

interface StrapiScenario { name: string, requestsPerSec: { mean: number }, latencyMs: { p50: number, p99: number } }

async function readStrapi (): Promise<{ scenarios: StrapiScenario[], strapiVersion?: string, machine?: string } | null> {
  try {
    return JSON.parse(await readFile(STRAPI_BENCH, 'utf8'))
  } catch {
    return null
  }
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

async function main (): Promise<void> {
  const [load] = os.loadavg()
  if (load > os.cpus().length) console.log(`WARNING: the 1-minute load average is ${fixed(load, 2)} on ${os.cpus().length} cores; other work will skew the numbers.`)
  console.log(`Resetting schema "bench" on ${redact(DATABASE_URL)}`)
  const postgresVersion = await resetSchema()
  console.log(`Seeding ${CATEGORIES} categories, ${AUTHORS} authors and ${DOCS} articles (each with a category and 1-3 authors) through the document service`)
  const { seedMs, documentId, sql } = await seedAndCheckSql()
  console.log(`  seeded in ${(seedMs / 1000).toFixed(1)} s; the baseline's SQL matches the plugin's for ${SCENARIOS.length} scenarios`)

  const servers: Server[] = []
  const results: Array<{ name: string, path: string, ours: Measurement, baseline: Measurement }> = []
  try {
    const ours = await startServer('ours')
    servers.push(ours)
    const baseline = await startServer('baseline')
    servers.push(baseline)
    await checkSameResponses(ours, baseline, documentId)

    for (const scenario of SCENARIOS) {
      const path = scenario.path(documentId)
      console.log(`Measuring ${scenario.name}: GET ${path} (-c ${CONNECTIONS} -d ${DURATION} after a ${WARMUP} s warm-up)`)
      // Alternate which server goes first, so a drift in machine load does not favour one side.
      const order = results.length % 2 === 0 ? [ours, baseline] : [baseline, ours]
      const measured = new Map<string, Measurement>()
      for (const server of order) {
        const m = await measure(server, path)
        measured.set(server.name, m)
        console.log(`  ${server.name.padEnd(8)} ${fixed(m.requestsPerSec.mean)} req/s, ${fixed(m.serverCpuUsPerRequest, 0)} µs server CPU per request (load average before: ${fixed(m.loadAverage, 2)})`)
      }
      results.push({ name: scenario.name, path, ours: measured.get('ours')!, baseline: measured.get('baseline')! })
    }
  } finally {
    for (const server of servers) await stopServer(server)
  }

  const strapi = await readStrapi()
  const rows: Array<Array<string | number>> = [['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'server CPU µs/req']]
  for (const r of results) {
    for (const [server, m] of [['ours', r.ours], ['baseline', r.baseline]] as const) {
      rows.push([r.name, server, fixed(m.requestsPerSec.mean), m.latencyMs.p50, m.latencyMs.p99, m.non2xx, m.errors + m.timeouts, fixed(m.serverCpuUsPerRequest, 0)])
    }
    const recorded = strapi?.scenarios.find((s) => s.name === SCENARIOS.find((x) => x.name === r.name)?.strapi)
    if (recorded !== undefined) rows.push([r.name, `strapi (recorded${recorded.name === r.name ? '' : `, ${recorded.name}`})`, fixed(recorded.requestsPerSec.mean), recorded.latencyMs.p50, recorded.latencyMs.p99, '', '', ''])
  }
  console.log(`\n${table(rows)}\n`)

  const ratios: Array<Array<string | number>> = [['scenario', 'ours/baseline req/s', 'ours/baseline mean latency', 'ours/baseline server CPU', ...(strapi === null ? [] : ['ours/strapi req/s'])]]
  const summary = results.map((r) => {
    const recorded = strapi?.scenarios.find((s) => s.name === SCENARIOS.find((x) => x.name === r.name)?.strapi)
    const ratio = r.ours.requestsPerSec.mean / r.baseline.requestsPerSec.mean
    const vsStrapi = recorded === undefined ? null : r.ours.requestsPerSec.mean / recorded.requestsPerSec.mean
    ratios.push([r.name, fixed(ratio, 2), fixed(r.ours.latencyMs.mean / r.baseline.latencyMs.mean, 2), fixed(r.ours.serverCpuUsPerRequest / r.baseline.serverCpuUsPerRequest, 2), ...(strapi === null ? [] : [vsStrapi === null ? '' : `${fixed(vsStrapi)}x`])])
    return { ...r, ratio, vsStrapi, strapi: recorded ?? null }
  })
  console.log(`${table(ratios)}\n`)
  if (strapi === null) console.log(`(no Strapi numbers at ${STRAPI_BENCH}; skipped that comparison)`)
  else console.log(`Strapi ${strapi.strapiVersion ?? ''} numbers are recorded, not re-measured (${strapi.machine ?? 'unknown machine'}), on its own oracle data set; see bench/README.md.`)
  for (const r of summary) if (r.ratio < 0.8) console.log(`NOTE: ${r.name} is below 0.8 of the baseline (${fixed(r.ratio, 3)}); profile with BENCH_PROFILE=1.`)

  await mkdir(RESULTS, { recursive: true })
  const file = `${RESULTS}${new Date().toISOString().replaceAll(':', '-')}.json`
  await writeFile(file, JSON.stringify({
    when: new Date().toISOString(),
    ...revision(),
    node: process.version,
    machine: `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}`,
    database: { url: redact(DATABASE_URL), postgresVersion, schema: 'bench', poolSize: POOL_SIZE },
    documents: { articles: DOCS, categories: CATEGORIES, authors: AUTHORS },
    seedMs,
    autocannon: { connections: CONNECTIONS, durationS: DURATION, warmupS: WARMUP },
    getOneDocumentId: documentId,
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
