import { PerformanceObserver } from 'node:perf_hooks'
import os from 'node:os'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { CompiledQuery } from 'kysely'
import { listBody, singleBody } from '../lib/rest/format.js'
import { paginationMeta, parseQueryString } from '../lib/query/index.js'
import { ARTICLE_UID } from './article.js'
import { buildBaseline } from './baseline.js'
import { MODEL_SET } from './oracle.js'
import { SCENARIOS } from './scenarios.js'
import { benchPool, buildOurs } from './serve.js'

/**
 * Where the plugin's CPU goes per request, stage by stage, next to the baseline's:
 * `npx tsx bench/breakdown.ts`, after `npm run bench` (it reads the schema `bench` that run seeded).
 *
 * Both apps run in this one process and are driven with `app.inject` (no sockets), by 10
 * concurrent loops like autocannon's `-c 10`. For each stage, CPU time (`process.cpuUsage`, user
 * + system) and GC pause time (wall clock, from `gc` performance entries) are divided by the calls
 * made. CPU time moves less than wall time or a sampling profile when other work loads the
 * machine; GC pauses, being wall time, stretch with it. Stages of ours:
 *
 * - `route`: the whole request through Fastify (access check, statement cache, execution, envelope);
 * - `access.check`: the permission check alone (public role, permissions cached);
 * - `find*Json`: the document service's read (compiled-statement cache lookup, Kysely execution);
 * - `execute`: the same statement text through Kysely's `db.executeQuery` (no cache lookup), and,
 *   in the baseline's column, through node-postgres's `pool.query` as the baseline's handler runs it;
 * - `envelope`: wrapping the JSON in `{ data, meta }`.
 *
 * Environment: DATABASE_URL, BENCH_ONLY, BENCH_CONNECTIONS (10), BENCH_STAGE_SECONDS (2),
 * BENCH_ROUNDS (5; the median is reported).
 */

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 10)
const SECONDS = Number(process.env.BENCH_STAGE_SECONDS ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

let gcMs = 0
new PerformanceObserver((list) => { for (const entry of list.getEntries()) gcMs += entry.duration }).observe({ entryTypes: ['gc'] })

interface Cost { cpuUs: number, gcUs: number, calls: number }

async function loops (fn: () => unknown, ms: number): Promise<number> {
  let calls = 0
  const end = performance.now() + ms
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) {
      await fn()
      calls++
    }
  }))
  return calls
}

async function round (fn: () => unknown): Promise<Cost> {
  const gcBefore = gcMs
  const before = process.cpuUsage()
  const calls = await loops(fn, SECONDS * 1000)
  const cpu = process.cpuUsage(before)
  return { cpuUs: (cpu.user + cpu.system) / calls, gcUs: (gcMs - gcBefore) * 1000 / calls, calls }
}

const median = (rounds: Cost[]): Cost => [...rounds].sort((a, b) => a.cpuUs - b.cpuUs)[Math.floor(rounds.length / 2)]

/**
 * CPU and GC time per call of `ours` (and of `baseline`, when given), after a warm-up: the median
 * of ROUNDS rounds by CPU, the two alternating round by round so that a change in the machine's
 * load affects both alike.
 */
async function cost (ours: () => unknown, baseline?: () => unknown): Promise<[Cost, Cost | null]> {
  await loops(ours, 500)
  if (baseline !== undefined) await loops(baseline, 500)
  const a: Cost[] = []
  const b: Cost[] = []
  for (let i = 0; i < ROUNDS; i++) {
    a.push(await round(ours))
    if (baseline !== undefined) b.push(await round(baseline))
  }
  return [median(a), baseline === undefined ? null : median(b)]
}

function ok (body: string, status: number, what: string): void {
  if (status !== 200) throw new Error(`${what} answered ${status}: ${body.slice(0, 200)}`)
}

async function main (): Promise<void> {
  // Its stages compare with baseline.ts's hand-written statements, which are the plain models'.
  if (MODEL_SET !== 'plain') throw new Error('breakdown.ts reads the plain models: run `BENCH_MODELS=plain npm run bench` first, and this with BENCH_MODELS=plain')
  console.log(`1-minute load average ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} cores`)
  const ours: FastifyInstance = await buildOurs(DATABASE_URL)
  const baseline = buildBaseline(benchPool(DATABASE_URL))
  const pool = benchPool(DATABASE_URL)
  try {
    await Promise.all([ours.ready(), baseline.ready()])
    const articles = ours.contentApi.documents(ARTICLE_UID)
    const count = await articles.count()
    if (count === 0) throw new Error('no articles in schema "bench": run `npm run bench` first')
    const middle = await articles.findFirst({ filters: { id: Math.ceil(count / 2) } })
    if (middle === null) throw new Error(`no article with id ${Math.ceil(count / 2)}`)
    const documentId = middle.documentId

    const rows: string[][] = [['scenario', 'stage', 'ours CPU µs', 'ours GC pause µs', 'baseline CPU µs', 'baseline GC pause µs']]
    const fmt = (c: Cost | null): string[] => c === null ? ['', ''] : [c.cpuUs.toFixed(1), c.gcUs.toFixed(1)]
    for (const scenario of SCENARIOS) {
      if (scenario.statement === undefined) continue
      const path = scenario.path(documentId)
      const one = scenario.name === 'get-one'
      const search = path.includes('?') ? path.slice(path.indexOf('?') + 1) : ''
      const statement = scenario.statement(documentId)
      const compiled = CompiledQuery.raw(statement.text, statement.values)
      const request = (): FastifyRequest => ({ headers: {} }) as unknown as FastifyRequest
      const access = { uid: ARTICLE_UID, action: one ? 'findOne' : 'find', draft: false }
      const { scope } = await ours.contentApi.access.check(request(), access)
      const sample = await ours.inject(path)
      ok(sample.body, sample.statusCode, `ours ${path}`)
      // Parsed once, as the route's memo keeps it: the stage below is the statement cache's lookup and the execution.
      const tree = articles.queryTree(parseQueryString(`?${search}`, { queryLength: 16384, queryParameters: 1000 }), { list: !one, access: scope })
      const page = one ? null : await articles.findPageJson(tree, { limits: true })

      console.log(`${scenario.name}: GET ${path}`)
      const stages: Array<[string, Cost, Cost | null]> = [
        ['route (inject)', ...await cost(async () => await ours.inject(path), async () => await baseline.inject(path))],
        ['access.check', ...await cost(async () => await ours.contentApi.access.check(request(), access))],
        [one ? 'findOneJson' : 'findPageJson', ...await cost(async () => one ? await articles.findOneJson(documentId, tree, { limits: true }) : await articles.findPageJson(tree, { limits: true }))],
        ['execute', ...await cost(async () => await ours.contentApi.db.executeQuery(compiled), async () => await pool.query(statement))],
        ['envelope', ...await cost(() => one ? singleBody(sample.body) : listBody(page!.json, paginationMeta(tree.pagination, page!.total)))]
      ]
      for (const [stage, a, b] of stages) {
        rows.push([scenario.name, stage, ...fmt(a), ...fmt(b)])
        console.log(`  ${stage.padEnd(16)} ours ${a.cpuUs.toFixed(1)} µs CPU (${a.gcUs.toFixed(1)} µs GC)${b === null ? '' : `, baseline ${b.cpuUs.toFixed(1)} µs CPU (${b.gcUs.toFixed(1)} µs GC)`}`)
      }
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
    console.log(`\n${rows.map((r, k) => `| ${r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |${k === 0 ? `\n|${widths.map((w, i) => '-'.repeat(w + 1) + (i < 2 ? '-' : ':')).join('|')}|` : ''}`).join('\n')}`)
    console.log(`\n1-minute load average ${os.loadavg()[0].toFixed(2)} at the end`)
  } finally {
    await Promise.all([ours.close(), baseline.close(), pool.end()])
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
