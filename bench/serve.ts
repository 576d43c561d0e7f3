import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { readFileSync } from 'node:fs'
import { buildBaseline } from './baseline.js'
import { buildFloor, type FloorSql } from './floor.js'
import { MODEL_SET } from './model-set.js'

/**
 * One benchmarked server, run by run.ts in a child process of its own (`NODE_ENV=production`,
 * logger off): `ours` is the plugin, `baseline` the hand-written server (baseline.ts for the plain
 * models, floor.ts for the oracle's, given the plugin's recorded statements in the file
 * `BENCH_FLOOR_SQL`). Both read the `bench` schema through a pool of the same size and report
 * their port over IPC once listening.
 */

export const POOL_SIZE = 10

/**
 * Fixed secrets: production requires them, and generated ones would only add a warning. No request
 * of the benchmark carries credentials; every one is checked against the public role's grants.
 */
export const AUTH = { jwtSecret: 'bench-jwt-secret-0123456789abcdef', apiTokenSalt: 'bench-api-token-salt-0123456789abcdef' }

export function benchPool (connectionString: string): pg.Pool {
  return new pg.Pool({ connectionString, max: POOL_SIZE, options: '-c search_path=bench' })
}

/**
 * The plugin's server. Measured, it runs on the pool the plugin creates from a connection string
 * (its production path: its timeouts, its named statements); recording the SQL it sends (`log`)
 * needs a Kysely of the bench's own, with a logger.
 */
export async function buildOurs (connectionString: string, log?: (sql: string, parameters: readonly unknown[]) => void): Promise<FastifyInstance> {
  // Imported here, so that the floor's process never loads the plugin. `BENCH_PLUGIN`: the built
  // package's entry (run.ts sets it with BENCH_DIST=1), measured as an application installs it.
  const plugin = process.env.BENCH_PLUGIN === undefined ? import('../lib/index.js') : import(pathToFileURL(process.env.BENCH_PLUGIN).href) as Promise<typeof import('../lib/index.js')>
  const [{ default: contentApi }, { pluginOptions }] = await Promise.all([plugin, import('./oracle.js')])
  const app = Fastify({ logger: false })
  if (log === undefined) {
    const url = new URL(connectionString)
    url.searchParams.set('options', '-c search_path=bench')
    await app.register(contentApi, { ...pluginOptions(MODEL_SET), db: url.toString(), pool: { size: POOL_SIZE }, auth: AUTH, ...(process.env.BENCH_NO_NOTIFY === '1' ? { notifications: false as const } : {}) })
    return app
  }
  // Only here: neither the measured plugin nor the floor loads Kysely's ES build for the bench.
  const { Kysely, PostgresDialect } = await import('kysely')
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: benchPool(connectionString) }),
    log: (event) => { if (event.level === 'query') log(event.query.sql, event.query.parameters) }
  })
  // The plugin never destroys a Kysely instance it was given.
  app.addHook('onClose', async () => { await db.destroy() })
  await app.register(contentApi, { ...pluginOptions(MODEL_SET), db, auth: AUTH })
  return app
}

async function main (): Promise<void> {
  const which = process.argv[2]
  const connectionString = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  if (which !== 'ours' && which !== 'baseline') throw new Error('usage: serve.ts ours|baseline')
  const floorSql = process.env.BENCH_FLOOR_SQL
  const app = which === 'ours'
    ? await buildOurs(connectionString)
    : MODEL_SET === 'plain' || floorSql === undefined
      ? buildBaseline(benchPool(connectionString))
      : buildFloor(benchPool(connectionString), JSON.parse(readFileSync(floorSql, 'utf8')) as FloorSql)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  // A clean exit on SIGTERM, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  // run.ts asks for the process's CPU time around each measured round, to report CPU per request,
  // and for the largest resident set sampled since it last asked (every 50 ms: the window's peak).
  let maxRss = process.memoryUsage.rss()
  const sampler = setInterval(() => { maxRss = Math.max(maxRss, process.memoryUsage.rss()) }, 50)
  sampler.unref()
  process.on('message', (message) => {
    if (message !== 'cpu') return
    const rss = Math.max(maxRss, process.memoryUsage.rss())
    maxRss = process.memoryUsage.rss()
    process.send?.({ cpu: process.cpuUsage(), maxRss: rss })
  })
  process.send?.({ ready: true, port })
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
