import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { ALL_SCENARIOS } from './scenarios.js'
import { sampleServer, startServerProcess, type ServerProcess } from './server-process.js'
import { median } from './stats.js'

/**
 * `npx tsx bench/compare-builds.ts`: two or more builds of the plugin and the floor, measured in
 * turns on the schema `bench` the last `npm run bench` seeded (oracle models), for a before and
 * after that a shared machine's drift does not decide. Sequential runs of `npm run bench` moved
 * the same build's CPU per request by 10-20% from one to the next; here every build runs in each
 * round, in alternating order, and each round's ratios are paired.
 *
 *   COMPARE_BUILDS=after=.,before=../old   checkouts with `npm run build` and `npm run build:bench` done (dist/, dist-bench/)
 *   COMPARE_ONLY=graphql,list              read scenarios (not create); all of them by default
 *   COMPARE_ROUNDS=6 COMPARE_DURATION=4    rounds, and seconds per server and round (after 2 s of warm-up)
 *
 * For each scenario: each build's median CPU per request (the server's user + system time over
 * the requests of its windows) and req/s, the median of its rounds' ratios to the floor's CPU, and
 * its largest resident set over the scenario's windows. Each build's plugin is its built package
 * (`<dir>/dist/lib/index.js`), served by its own dist-bench. The floor is the current checkout's
 * dist-bench, replaying bench/results/floor-sql.json.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = join(ROOT, 'bench', 'results')
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 6)
const DURATION = Number(process.env.COMPARE_DURATION ?? 4)
const WARMUP = 2

interface Server extends ServerProcess { label: string }

/** The builds to compare, `label=directory` each, the directory relative to this checkout. */
function builds (): Array<[string, string]> {
  const spec = process.env.COMPARE_BUILDS
  if (spec === undefined || spec === '') throw new Error('COMPARE_BUILDS=label=dir,label=dir is required (each dir with dist-bench/ built)')
  return spec.split(',').map((item) => {
    const [label, dir] = item.split('=')
    if (label === undefined || dir === undefined || label === 'floor') throw new Error(`COMPARE_BUILDS: "${item}" is not label=dir (and "floor" is the floor's)`)
    return [label, resolve(ROOT, dir)]
  })
}

/** The get-one article of the last run of `npm run bench`, which seeded the schema read here. */
function lastDocumentId (): string {
  const runs = readdirSync(RESULTS).filter((f) => /^\d{4}-.*\.json$/.test(f)).sort()
  const last = runs.at(-1)
  if (last === undefined) throw new Error('no bench/results/<time>.json: run `npm run bench` first, it seeds the schema `bench`')
  const { getOneDocumentId, models } = JSON.parse(readFileSync(join(RESULTS, last), 'utf8')) as { getOneDocumentId: string, models: string }
  if (models !== 'oracle') throw new Error(`the last bench run used the ${models} models; the comparison reads the oracle models`)
  return getOneDocumentId
}

async function start (label: string, dir: string): Promise<Server> {
  const env = { ...process.env, NODE_ENV: 'production', DATABASE_URL, BENCH_FLOOR_SQL: join(RESULTS, 'floor-sql.json'), BENCH_PLUGIN: join(dir, 'dist', 'lib', 'index.js') }
  return { label, ...await startServerProcess(`${label} (${dir})`, [join(dir, 'dist-bench', 'bench', 'serve.js'), label === 'floor' ? 'baseline' : 'ours'], { cwd: dir, env }) }
}

const documentId = lastDocumentId()
const only = process.env.COMPARE_ONLY?.split(',')
const scenarios = ALL_SCENARIOS.filter((s) => s.kind !== 'create' && s.sets.includes('oracle') && (only === undefined || only.includes(s.name)))
const servers: Server[] = []
try {
  for (const [label, dir] of [...builds(), ['floor', ROOT] as [string, string]]) servers.push(await start(label, dir))
  console.log(`${servers.map((s) => s.label).join(', ')}: ${ROUNDS} rounds of ${DURATION} s each, -c 10, alternating order`)
  for (const scenario of scenarios) {
    const request = {
      method: scenario.method,
      body: scenario.body?.({ documentId, categoryId: '', authorId: '', token: '' }),
      headers: scenario.headers?.({ documentId, categoryId: '', authorId: '', token: '' }),
      connections: 10
    }
    const cpu = new Map<string, number[]>(servers.map((s) => [s.label, []]))
    const rates = new Map<string, number[]>(servers.map((s) => [s.label, []]))
    const peaks = new Map<string, number>(servers.map((s) => [s.label, 0]))
    for (const server of servers) await autocannon({ ...request, url: server.base + scenario.path(documentId), duration: WARMUP })
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        const before = await sampleServer(server.child)
        const result = await autocannon({ ...request, url: server.base + scenario.path(documentId), duration: DURATION })
        const after = await sampleServer(server.child)
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.label} answered ${result.non2xx} non-2xx and ${result.errors} errors on ${scenario.name}`)
        cpu.get(server.label)!.push((after.cpuUs - before.cpuUs) / result.requests.total)
        peaks.set(server.label, Math.max(peaks.get(server.label)!, after.maxRss))
        rates.get(server.label)!.push(result.requests.mean)
      }
    }
    const floor = cpu.get('floor')!
    const line = servers.map(({ label }) => {
      const own = cpu.get(label)!
      const ratio = label === 'floor' ? '' : `, ${median(own.map((us, i) => us / floor[i])).toFixed(2)}x the floor's CPU`
      return `${label} ${median(own).toFixed(0)} µs ${median(rates.get(label)!).toFixed(0)} req/s${ratio}, largest RSS ${(peaks.get(label)! / 2 ** 20).toFixed(0)} MiB`
    })
    console.log(`${scenario.name}: ${line.join(' | ')}`)
  }
} finally {
  for (const server of servers) server.child.kill()
}
