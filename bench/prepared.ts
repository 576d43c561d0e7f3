import Fastify, { type FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import contentApi from '../lib/index.js'
import { ARTICLE_UID, AUTHOR_UID, AUTHORS, CATEGORIES, CATEGORY_UID, PUBLIC_READ, articleData, articleRelations, authorData, categoryData, models } from './article.js'
import { AUTH } from './serve.js'

/**
 * `tsx bench/prepared.ts`: named against unnamed statements. Two apps on the pool the plugin
 * creates, one with `pool.preparedStatements: false`, answer the same requests one at a time (no
 * concurrency: the time per request is the database's round trip, parse and plan included, plus
 * the plugin's own), in alternating rounds, on a schema of its own (`bench_prepared`, dropped and
 * seeded with BENCH_DOCS articles, 2000).
 *
 * Then what the named statements cost the server: the named app's one connection runs
 * BENCH_SHAPES distinct read shapes (a field and a populate per shape), each six times (PostgreSQL
 * caches a generic plan from the sixth execution), and the backend's memory
 * (`pg_backend_memory_contexts`, read on that same connection) is compared before and after, with
 * the unnamed app's connection beside it.
 *
 * Environment: DATABASE_URL, BENCH_DOCS (2000), BENCH_REQUESTS (per scenario and round, 500),
 * BENCH_ROUNDS (3), BENCH_SHAPES (200).
 */
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const DOCS = Number(process.env.BENCH_DOCS ?? 2000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SHAPES = Number(process.env.BENCH_SHAPES ?? 200)
const SCHEMA = 'bench_prepared'

async function start (preparedStatements: boolean, size = 1): Promise<FastifyInstance> {
  const url = new URL(DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${SCHEMA}`)
  const app = Fastify({ logger: false })
  await app.register(contentApi, { models, db: url.toString(), pool: { size, preparedStatements }, auth: AUTH })
  await app.ready()
  return app
}

async function createAll (app: FastifyInstance, uid: string, count: number, data: (i: number) => Record<string, unknown>): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, async (_, k) => (await app.contentApi.documents(uid).create({ data: data(i + k) })).documentId)
    ids.push(...await Promise.all(batch))
  }
  return ids
}

async function seed (): Promise<void> {
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  await admin.query(`drop schema if exists ${SCHEMA} cascade`)
  await admin.query(`create schema ${SCHEMA}`)
  const app = await start(false, 10)
  await app.contentApi.permissions.grant('public', PUBLIC_READ)
  const categories = await createAll(app, CATEGORY_UID, CATEGORIES, categoryData)
  const authors = await createAll(app, AUTHOR_UID, AUTHORS, authorData)
  await createAll(app, ARTICLE_UID, DOCS, (i) => {
    const related = articleRelations(i)
    return { ...articleData(i), category: categories[related.category], authors: related.authors.map((a) => authors[a]) }
  })
  await app.close()
  const { rows } = await admin.query<{ name: string }>('select tablename as name from pg_tables where schemaname = $1', [SCHEMA])
  for (const { name } of rows) await admin.query(`vacuum analyze ${SCHEMA}."${name}"`)
  await admin.end()
}

await seed()

/** The backend's memory, in KiB, and its named statements, read on the app's one connection. */
async function backend (app: FastifyInstance): Promise<{ kib: number, statements: number }> {
  const { rows } = await sql<{ bytes: string, statements: number }>`select (select sum(total_bytes) from pg_backend_memory_contexts) as bytes,
    (select count(*)::int from pg_prepared_statements) as statements`.execute(app.contentApi.db)
  return { kib: Number(rows[0].bytes) / 1024, statements: rows[0].statements }
}

/**
 * Distinct read shapes, each a statement of its own: one of the article's fields, with none, one
 * or both relations populated, with or without a filter, on one document or a page.
 */
function shapes (documentId: string): string[] {
  const fields = ['title', 'slug', 'summary', 'views', 'rating', 'featured', 'publishDate', 'kind']
  const populates = ['', '&populate[category]=true', '&populate[authors]=true', '&populate[category]=true&populate[authors]=true', '&populate=*']
  const urls: string[] = []
  for (const populate of populates) {
    for (const field of fields) {
      for (const filter of ['', '&filters[views][$gte]=0']) {
        urls.push(`/api/articles/${documentId}?fields[0]=${field}${populate}${filter}`, `/api/articles?fields[0]=${field}${populate}${filter}&pagination[pageSize]=5`)
      }
    }
  }
  return urls
}

async function backendMemory (documentId: string): Promise<void> {
  const urls = shapes(documentId).slice(0, SHAPES)
  console.log(`\n| connection | memory before, KiB | after ${urls.length} shapes x 6, KiB | named statements | KiB per statement |\n|---|--:|--:|--:|--:|`)
  for (const [name, app] of [['named', named], ['unnamed', unnamed]] as const) {
    const before = await backend(app)
    for (const url of urls) {
      for (let i = 0; i < 6; i++) {
        const res = await app.inject(url)
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
      }
    }
    const after = await backend(app)
    const added = after.statements - before.statements
    const per = added > 0 ? ((after.kib - before.kib) / added).toFixed(1) : '-'
    console.log(`| ${name} | ${before.kib.toFixed(0)} | ${after.kib.toFixed(0)} | ${after.statements} | ${per} |`)
  }
}

async function time (app: FastifyInstance, urls: string[]): Promise<number> {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < REQUESTS; i++) {
    const res = await app.inject(urls[i % urls.length])
    if (res.statusCode !== 200) throw new Error(`${urls[i % urls.length]}: ${res.statusCode} ${res.body}`)
  }
  return Number(process.hrtime.bigint() - t0) / 1e3 / REQUESTS
}

const named = await start(true)
const unnamed = await start(false)
try {
  const ids = JSON.parse((await named.inject('/api/articles?fields[0]=title&pagination[pageSize]=50')).body).data.map((d: { documentId: string }) => d.documentId) as string[]
  const scenarios: Array<[string, string[]]> = [
    ['get-one', ids.map((id) => `/api/articles/${id}`)],
    ['get-one populate=*', ids.map((id) => `/api/articles/${id}?populate=*`)],
    ['list-populate', ['/api/articles?populate[category]=true&populate[authors]=true']]
  ]
  console.log('| scenario | named µs/request | unnamed µs/request | named/unnamed |\n|---|--:|--:|--:|')
  for (const [name, urls] of scenarios) {
    for (const app of [named, unnamed]) await time(app, urls)
    const sums = { named: 0, unnamed: 0 }
    for (let r = 0; r < ROUNDS; r++) {
      sums.named += await time(named, urls)
      sums.unnamed += await time(unnamed, urls)
    }
    const [a, b] = [sums.named / ROUNDS, sums.unnamed / ROUNDS]
    console.log(`| ${name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(a / b).toFixed(2)} |`)
  }
  await backendMemory(ids[0])
} finally {
  await named.close()
  await unnamed.close()
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  await admin.query(`drop schema if exists ${SCHEMA} cascade`)
  await admin.end()
}
