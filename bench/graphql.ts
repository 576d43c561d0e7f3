import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import autocannon from 'autocannon'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import contentApi from '../lib/index.js'
import { ARTICLE_UID, CATEGORIES, CATEGORY_UID, PUBLIC_READ, articleData, categoryData, models } from './article.js'
import { AUTH } from './serve.js'

/**
 * `npx tsx bench/graphql.ts`: a GraphQL list of 10 articles with their category, against the REST
 * request that returns the same documents and a hand-written Fastify + pg server, in the same
 * run, on PostgreSQL, each server in a process of its own (NODE_ENV=production):
 *
 * | name     | request |
 * |----------|---------|
 * | graphql  | `POST /graphql` `{ articles(sort: "title", pagination: { pageSize: 10 }) { data { id attributes { title category { data { attributes { name } } } } } } }` |
 * | rest     | `GET /api/articles?sort=title&pagination[pageSize]=10&fields[0]=title&populate[category][fields][0]=name` |
 * | baseline | `GET /articles`: one hand-written statement (articles, link table, categories) and the same JSON |
 *
 * Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; uses the schema
 * `bench_graphql`, recreated), BENCH_DOCS (1000), BENCH_CONNECTIONS (10), BENCH_DURATION (10 s).
 */

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const SCHEMA = 'bench_graphql'
const DOCS = Number(process.env.BENCH_DOCS ?? 1000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)

const QUERY = '{ articles(sort: "title", pagination: { pageSize: 10 }) { data { id attributes { title category { data { attributes { name } } } } } } }'
const REST = '/api/articles?sort=title&pagination[pageSize]=10&fields[0]=title&populate[category][fields][0]=name'

const pool = (): pg.Pool => new pg.Pool({ connectionString: DATABASE_URL, max: 10, options: `-c search_path=${SCHEMA}` })

async function buildOurs (): Promise<FastifyInstance> {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: pool() }) })
  const app = Fastify({ logger: false })
  app.addHook('onClose', async () => { await db.destroy() })
  await app.register(contentApi, { models, db, auth: AUTH })
  return app
}

/**
 * The hand-written server: the ten first articles by title with their category's name, rendered
 * as the GraphQL answer by PostgreSQL, in one statement.
 */
function buildBaseline (): FastifyInstance {
  const db = pool()
  const app = Fastify({ logger: false })
  app.addHook('onClose', async () => { await db.end() })
  const text = `select coalesce(json_agg(json_build_object('id', a.document_id, 'attributes', json_build_object('title', a.title,
      'category', json_build_object('data', case when c.id is null then null else json_build_object('attributes', json_build_object('name', c.name)) end)))
      order by a.title, a.id), '[]') as data
    from (select id, document_id, title from articles order by title, id limit $1) as a
    left join articles_category_lnk as l on l.article_id = a.id
    left join categories as c on c.id = l.category_id`
  app.get('/articles', async (_request, reply) => {
    const { rows } = await db.query(text, [10])
    return await reply.type('application/json; charset=utf-8').send(`{"data":{"articles":{"data":${JSON.stringify(rows[0].data)}}}}`)
  })
  return app
}

async function serve (which: string): Promise<void> {
  const app = which === 'ours' ? await buildOurs() : buildBaseline()
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
}

async function seed (): Promise<void> {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
  await admin.query(`drop schema if exists ${SCHEMA} cascade`)
  await admin.query(`create schema ${SCHEMA}`)
  await admin.end()
  const app = await buildOurs()
  await app.ready()
  await app.contentApi.permissions.grant('public', PUBLIC_READ)
  const categories: string[] = []
  for (let i = 0; i < CATEGORIES; i++) categories.push((await app.contentApi.documents(CATEGORY_UID).create({ data: categoryData(i) })).documentId)
  for (let i = 0; i < DOCS; i++) {
    await app.contentApi.documents(ARTICLE_UID).create({ data: { ...articleData(i), category: categories[i % CATEGORIES] } })
  }
  await app.close()
}

function start (which: string): Promise<{ child: ChildProcess, port: number }> {
  const child = fork(fileURLToPath(import.meta.url), ['serve', which], { env: { ...process.env, NODE_ENV: 'production' }, execArgv: ['--import', 'tsx'] })
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }))
    child.once('exit', (code) => reject(new Error(`${which} exited with ${String(code)}`)))
  })
}

/** autocannon's options as the harness's typings give them, plus the method and body a POST needs. */
type LoadOptions = Parameters<typeof autocannon>[0] & { method?: string, body?: string }

async function measure (name: string, options: LoadOptions): Promise<Record<string, unknown>> {
  // Warm-up first (JIT, statement caches), then the measured round.
  await autocannon({ ...options, connections: CONNECTIONS, duration: 2 })
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: DURATION })
  return { name, 'req/s': Math.round(result.requests.mean), 'p50 ms': result.latency.p50, 'p99 ms': result.latency.p99, errors: result.errors + result.non2xx }
}

async function main (): Promise<void> {
  console.log(`seeding ${DOCS} articles in ${CATEGORIES} categories (schema ${SCHEMA})...`)
  await seed()
  const ours = await start('ours')
  const baseline = await start('baseline')
  try {
    const graphqlAnswer = await (await fetch(`http://127.0.0.1:${ours.port}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY }) })).json()
    const baselineAnswer = await (await fetch(`http://127.0.0.1:${baseline.port}/articles`)).json()
    if (JSON.stringify(graphqlAnswer) !== JSON.stringify(baselineAnswer)) throw new Error(`the answers differ:\n${JSON.stringify(graphqlAnswer).slice(0, 300)}\n${JSON.stringify(baselineAnswer).slice(0, 300)}`)
    const rows = [
      await measure('graphql', { url: `http://127.0.0.1:${ours.port}/graphql`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY }) }),
      await measure('rest', { url: `http://127.0.0.1:${ours.port}${REST}` }),
      await measure('baseline', { url: `http://127.0.0.1:${baseline.port}/articles` })
    ]
    console.table(rows)
    const base = rows[2]['req/s'] as number
    for (const row of rows.slice(0, 2)) console.log(`${String(row.name)}: ${((row['req/s'] as number) / base * 100).toFixed(0)}% of the hand-written server's throughput`)
  } finally {
    ours.child.kill('SIGTERM')
    baseline.child.kill('SIGTERM')
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const run = process.argv[2] === 'serve' ? serve(process.argv[3]) : main()
  run.catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
