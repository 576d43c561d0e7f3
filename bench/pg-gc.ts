import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { listStatement, parseListQuery } from './baseline.js'

/**
 * node-postgres alone, no Fastify, no Kysely, no plugin: the benchmark's `list` statement run by
 * 10 concurrent loops for 6 s through `client.query(text, values)` in its promise form (what
 * Kysely's PostgresDriver calls) and in its callback form (what `pool.query` uses inside), each in
 * a child process under `--trace-gc-nvp`. Prints the scavenges, the bytes each promotes to the old
 * generation, and their mean pause. `npx tsx bench/pg-gc.ts`, after `npm run bench` (it reads the
 * schema `bench`). See "Where the time goes" in bench/README.md.
 */

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const SECONDS = Number(process.env.BENCH_DURATION ?? 6)
const FORMS = ['promise', 'callback'] as const

async function child (form: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, options: '-c search_path=bench' })
  const { text, values } = listStatement(parseListQuery({}))
  const once = async (): Promise<unknown> => {
    const client = await pool.connect()
    try {
      if (form === 'promise') return (await client.query(text, values)).rows[0]
      return await new Promise((resolve, reject) => {
        client.query(text, values, (err: Error | null, result: pg.QueryResult) => { if (err !== null) reject(err); else resolve(result.rows[0]) })
      })
    } finally {
      client.release()
    }
  }
  let queries = 0
  const end = Date.now() + SECONDS * 1000
  await Promise.all(Array.from({ length: 10 }, async () => { while (Date.now() < end) { await once(); queries++ } }))
  console.log(`queries=${queries}`)
  await pool.end()
}

async function parent (): Promise<void> {
  for (const form of FORMS) {
    const out = await new Promise<string>((resolve, reject) => {
      const proc = spawn(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', fileURLToPath(import.meta.url), form], { stdio: ['ignore', 'pipe', 'inherit'] })
      let text = ''
      proc.stdout.on('data', (chunk: Buffer) => { text += chunk.toString() })
      proc.on('exit', (code) => { if (code === 0) resolve(text); else reject(new Error(`${form}: exit code ${code}`)) })
    })
    const scavenges = out.split('\n').filter((line) => line.includes('gc=s '))
    const field = (line: string, name: string): number => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0)
    const promoted = scavenges.reduce((sum, line) => sum + field(line, 'promoted'), 0)
    const pause = scavenges.reduce((sum, line) => sum + field(line, 'pause'), 0)
    const queries = Number(/queries=(\d+)/.exec(out)?.[1] ?? 0)
    console.log(`${form.padEnd(8)} ${queries} queries, ${scavenges.length} scavenges, ` +
      `${(promoted / Math.max(scavenges.length, 1) / 1024).toFixed(0)} KB promoted per scavenge, ` +
      `${(pause / Math.max(scavenges.length, 1)).toFixed(2)} ms mean pause, ${(pause * 1000 / Math.max(queries, 1)).toFixed(1)} µs of scavenging per query`)
  }
}

const form = process.argv[2]
;(form === undefined ? parent() : child(form)).catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
