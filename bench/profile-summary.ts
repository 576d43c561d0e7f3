import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Self time of a `--cpu-prof` profile (`BENCH_PROFILE=both npm run bench`), summed by function and
 * by file, in microseconds per request when the request count is given: where the plugin's
 * per-request work goes, next to the floor's.
 *
 * ```sh
 * npx tsx bench/profile-summary.ts bench/results/profiles/ours [requests] [top]
 * npx tsx bench/profile-summary.ts bench/results/profiles/baseline [requests] [top]
 * ```
 *
 * A directory stands for the newest process's main-thread profile (tsx's loader thread writes a
 * second, smaller one). Files are grouped by package (`node_modules/<name>`) or by path under
 * `lib/`; `(garbage collector)`, `(program)` and `(idle)` are kept apart. `ONLY=<text>` lists only
 * the functions of files whose name contains it (`ONLY=lib/`, `ONLY=fastify`).
 *
 * The samples are wall-clock: on a loaded machine a function's time includes the moments the
 * process was descheduled in it (socket `writev` most of all), and startup is included; compare
 * ours with the floor's in the same run, or profile one measured window with the inspector.
 */

interface Node { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }
interface Profile { nodes: Node[], samples: number[], timeDeltas: number[], startTime: number, endTime: number }

function newest (path: string): string {
  if (!statSync(path).isDirectory()) return path
  const files = readdirSync(path).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(path, f))
  if (files.length === 0) throw new Error(`no .cpuprofile in ${path}`)
  // CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile: the newest process, its largest profile.
  const process = (file: string): string => file.split('.').at(-4) ?? file
  const last = process(files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0])
  return files.filter((f) => process(f) === last).sort((a, b) => statSync(b).size - statSync(a).size)[0]
}

function fileOf (url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)'
  const modules = url.lastIndexOf('node_modules/')
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  const lib = url.indexOf('/lib/')
  if (url.startsWith('node:')) return url
  return lib === -1 ? url.replace(/^file:\/\//, '') : url.slice(lib + 1)
}

const [path, requestsArg, topArg] = process.argv.slice(2)
if (path === undefined) throw new Error('usage: profile-summary.ts <profile or directory> [requests] [top]')
const file = newest(path)
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const requests = requestsArg === undefined ? 0 : Number(requestsArg)
const top = topArg === undefined ? 40 : Number(topArg)
const only = process.env.ONLY

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const self = new Map<number, number>()
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + profile.timeDeltas[i])

const byFunction = new Map<string, number>()
const byFile = new Map<string, number>()
let total = 0
let idle = 0
for (const [id, us] of self) {
  const { callFrame } = byId.get(id)!
  if (callFrame.functionName === '(idle)') { idle += us; continue }
  total += us
  const where = fileOf(callFrame.url, callFrame.functionName)
  const fn = `${callFrame.functionName === '' ? '(anonymous)' : callFrame.functionName} ${where}:${callFrame.lineNumber + 1}`
  if (only === undefined || where.includes(only)) byFunction.set(fn, (byFunction.get(fn) ?? 0) + us)
  byFile.set(where, (byFile.get(where) ?? 0) + us)
}

const unit = requests > 0 ? 'us/request' : 'ms'
const show = (us: number): string => (requests > 0 ? (us / requests).toFixed(2) : (us / 1000).toFixed(1)).padStart(10)
console.log(`${file}\nbusy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms${requests > 0 ? `, ${requests} requests: ${(total / requests).toFixed(1)} us/request` : ''}`)
const table = (title: string, map: Map<string, number>): void => {
  console.log(`\n${title} (self, ${unit}, % of busy)`)
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${show(us)} ${(100 * us / total).toFixed(1).padStart(5)}%  ${name}`)
  }
}
table('by file', byFile)
table('by function', byFunction)
