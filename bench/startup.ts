import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './stats.js'

/**
 * `npm run bench:startup`: cold start and memory of the blog example (examples/blog) as deployed,
 * `node dist/examples/blog/server.js` (run `npm run build` first; nothing is built here), one child
 * process per run:
 *
 * - `postgres`: on PostgreSQL (`DATABASE_URL`), already seeded (a first, discarded run seeds it);
 * - `pglite-memory`: embedded PGlite without a data directory, the example's default (`npm start`):
 *   boots, syncs the schema and seeds at every start, its files in a scratch directory;
 * - `pglite-new-dir`: embedded PGlite in a new, empty data directory (boots, seeds);
 * - `pglite-dir`: embedded PGlite in a data directory that already holds the seeded blog;
 * - `floor`: a hand-written Fastify + node-postgres server answering the same first list on the
 *   tables the example seeded in PostgreSQL (bench/startup-floor.ts, from `npm run build:bench`'s
 *   dist-bench): what any Fastify service on PostgreSQL pays before its first answer. Its first,
 *   discarded run starts the example on PostgreSQL instead, which seeds; it serves no other request,
 *   so it gets no requests after the first answer.
 *
 * For each run: wall time from spawn to the first 200 answer to `GET /api/articles` (polled every
 * 10 ms; the example as `npm start` runs it, without NODE_ENV), the process's CPU time at that moment (user + system, from /proc: Linux only; on a
 * loaded machine the CPU time is the steadier figure), its resident set 1 s later (idle), and
 * after `STARTUP_REQUESTS` requests (lists, a populated get-one, a GraphQL query; 10 at a time) its
 * resident set 1 s later and its peak (VmHWM). Medians over `STARTUP_RUNS` runs per case.
 *
 *   STARTUP_RUNS=5 STARTUP_REQUESTS=300 STARTUP_CASES=postgres,floor,pglite-memory,pglite-new-dir,pglite-dir
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test   (the postgres case; the example writes its tables in `public`)
 *   STARTUP_NODE_FLAGS='--liftoff-only'                     (Node/V8 flags for the servers)
 *   STARTUP_SERVER=/elsewhere/dist/examples/blog/server.js (another build, e.g. an older revision's)
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SERVER = process.env.STARTUP_SERVER ?? join(ROOT, 'dist', 'examples', 'blog', 'server.js')
const FLOOR = join(ROOT, 'dist-bench', 'bench', 'startup-floor.js')
const CASES = ['postgres', 'floor', 'pglite-memory', 'pglite-new-dir', 'pglite-dir'] as const
type Case = typeof CASES[number]

const RUNS = Number(process.env.STARTUP_RUNS ?? 5)
const REQUESTS = Number(process.env.STARTUP_REQUESTS ?? 300)
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** Node flags for the servers (`STARTUP_NODE_FLAGS`, space-separated), to compare V8 settings. */
const NODE_FLAGS = (process.env.STARTUP_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '')
const CLOCK_TICK_MS = 10 // USER_HZ is 100 on Linux

interface Run {
  /** Spawn to the first 200 answer, ms. */
  wallMs: number
  /** The server's CPU time (user + system) at its first 200 answer, ms. */
  cpuMs: number
  /** Resident set 1 s after the first answer, MiB. */
  idleRssMiB: number
  /** The server's CPU time spent on the requests, ms per 100 requests (NaN for the floor, which gets none). */
  loadCpuMs: number
  /** Resident set 1 s after the requests, MiB (NaN for the floor). */
  afterLoadRssMiB: number
  /** The largest resident set the process had (VmHWM), MiB. */
  peakRssMiB: number
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => { resolve(port) })
    })
  })
}

function procStatus (pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`))
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024
}

function cpuMs (pid: number): number {
  // Fields after the command name (which may hold spaces, so split after its closing paren).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

function environment (which: Case, dataDir: string | null, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), HOST: '127.0.0.1' }
  delete env.DATABASE_URL
  delete env.DATA_DIR
  if (which === 'postgres' || which === 'floor') env.DATABASE_URL = DATABASE_URL
  if (dataDir !== null) env.DATA_DIR = dataDir
  return env
}

/** The requests after start: lists, a populated get-one, GraphQL; 10 at a time. */
async function load (base: string, count: number): Promise<void> {
  const list = await (await fetch(`${base}/api/articles`)).json() as { data: Array<{ documentId: string }> }
  const id = list.data[0]?.documentId ?? 'none'
  const requests: Array<() => Promise<Response>> = [
    async () => await fetch(`${base}/api/articles`),
    async () => await fetch(`${base}/api/articles/${id}?populate=*`),
    async () => await fetch(`${base}/api/articles?filters[views][$gt]=100&sort=views:desc&pagination[pageSize]=5`),
    async () => await fetch(`${base}/api/categories?populate[articles][fields][0]=title`),
    async () => await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ articles { title category { name } } }' }) })
  ]
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const response = await requests[next++ % requests.length]()
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 10 }, worker))
}

async function once (which: Case, dataDir: string | null): Promise<Run> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const started = performance.now()
  const child = spawn(process.execPath, [...NODE_FLAGS, which === 'floor' ? FLOOR : SERVER], { env: environment(which, dataDir, port), stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the ${which} server exited with code ${child.exitCode}:\n${stderr}`)
      const status = await fetch(`${base}/api/articles`).then(async (r) => { await r.arrayBuffer(); return r.status }, () => 0)
      if (status === 200) break
      if (performance.now() - started > 120_000) throw new Error(`the ${which} server did not answer within 120 s:\n${stderr}`)
      await sleep(10)
    }
    const wallMs = performance.now() - started
    const cpu = cpuMs(child.pid!)
    await sleep(1000)
    const idleRssMiB = procStatus(child.pid!, 'VmRSS')
    if (which === 'floor') return { wallMs, cpuMs: cpu, idleRssMiB, loadCpuMs: NaN, afterLoadRssMiB: NaN, peakRssMiB: procStatus(child.pid!, 'VmHWM') }
    const beforeLoad = cpuMs(child.pid!)
    await load(base, REQUESTS)
    const loadCpuMs = (cpuMs(child.pid!) - beforeLoad) * 100 / Math.max(REQUESTS, 1)
    await sleep(1000)
    return { wallMs, cpuMs: cpu, idleRssMiB, loadCpuMs, afterLoadRssMiB: procStatus(child.pid!, 'VmRSS'), peakRssMiB: procStatus(child.pid!, 'VmHWM') }
  } finally {
    await stop(child)
  }
}

async function main (): Promise<void> {
  if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`npm run build\` first`)
  const only = (process.env.STARTUP_CASES ?? CASES.join(',')).split(',').map((s) => s.trim()) as Case[]
  for (const name of only) if (!CASES.includes(name)) throw new Error(`STARTUP_CASES: unknown case ${name} (${CASES.join(', ')})`)
  if (only.includes('floor') && !existsSync(FLOOR)) throw new Error(`${FLOOR} is missing: run \`npm run build:bench\` first (or leave out the floor case)`)
  const scratch = mkdtempSync(join(tmpdir(), 'fastify-content-api-startup-'))
  const seededDir = join(scratch, 'seeded')
  const results: Record<string, { runs: Run[], median: Run }> = {}
  try {
    for (const which of only) {
      // A first run, not counted: seeds PostgreSQL or the data directory, writes PGlite's boot
      // snapshot if missing, and brings the files into the operating system's cache. The floor's
      // is the example's on PostgreSQL, which seeds the tables the floor reads.
      const dirFor = (run: number): string | null => which === 'pglite-dir' ? seededDir : which === 'pglite-new-dir' ? join(scratch, `new-${run}`) : null
      await once(which === 'floor' ? 'postgres' : which, dirFor(-1))
      const runs: Run[] = []
      for (let run = 0; run < RUNS; run++) {
        const dir = dirFor(run)
        if (which === 'pglite-new-dir' && dir !== null) mkdirSync(dir)
        runs.push(await once(which, dir))
        if (which === 'pglite-new-dir' && dir !== null) rmSync(dir, { recursive: true, force: true })
        process.stderr.write('.')
      }
      const keys = Object.keys(runs[0]) as Array<keyof Run>
      results[which] = { runs, median: Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k]))])) as unknown as Run }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  process.stderr.write('\n')
  console.log(`cold start and memory of dist/examples/blog/server.js, median of ${RUNS} runs; ${REQUESTS} requests; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} CPUs`)
  console.log('| case | first 200, wall ms | CPU ms | idle RSS MiB | CPU ms per 100 requests | RSS after requests MiB | peak RSS MiB |')
  console.log('|---|--:|--:|--:|--:|--:|--:|')
  for (const [name, { median: m }] of Object.entries(results)) {
    const cell = (value: number): string => Number.isNaN(value) ? '–' : value.toFixed(0)
    console.log(`| ${name} | ${cell(m.wallMs)} | ${cell(m.cpuMs)} | ${cell(m.idleRssMiB)} | ${cell(m.loadCpuMs)} | ${cell(m.afterLoadRssMiB)} | ${cell(m.peakRssMiB)} |`)
  }
  const dir = join(ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `startup-${new Date().toISOString().replaceAll(':', '-')}.json`)
  writeFileSync(file, JSON.stringify({ node: process.version, nodeFlags: NODE_FLAGS, server: SERVER, loadavg: loadavg(), cpus: cpus().length, runs: RUNS, requests: REQUESTS, results }, null, 2))
  console.log(`written to ${file}`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
