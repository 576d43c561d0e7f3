import Fastify from 'fastify'
import contentApi, { contentApiServerOptions, type DatabaseOption } from '../../lib/index.js'
import { models } from './models.js'
import { seed } from './seed.js'

/**
 * The blog example: the content API on embedded PGlite (thrown away at exit, or kept in `DATA_DIR`), or on
 * PostgreSQL when `DATABASE_URL` is set, seeded on first start.
 *
 *   npm start
 *   DATA_DIR=./data npm start
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/blog npm start
 */
function database (): DatabaseOption {
  if (process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '') return process.env.DATABASE_URL
  // This process runs no other WebAssembly: V8's baseline code for PGlite is enough, and saves
  // about 100 MiB (db.optimizeWasm, docs/operations.md#embedded-pglite-memory-and-start-up).
  const embedded = { optimizeWasm: false }
  if (process.env.DATA_DIR !== undefined && process.env.DATA_DIR !== '') return { ...embedded, dataDir: process.env.DATA_DIR }
  return embedded
}

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'

// Embedded PGlite starts in a few seconds on an idle machine and several times that on a busy one:
// past Fastify's default 10 s plugin timeout, which is meant for a plugin that never finishes.
// contentApiServerOptions(): Fastify's and Node's own refusals (a malformed URL, an over-large
// header) answer in the content API's error format too.
const app = Fastify(contentApiServerOptions({ logger: { level: process.env.LOG_LEVEL ?? 'info' }, pluginTimeout: 120_000 }))
await app.register(contentApi, { models, db: database() })
await app.ready()
// Content is private by default: the public may read the blog; writing needs an account.
const read = ['article', 'category', 'author'].flatMap((name) => ['find', 'findOne'].map((action) => `api::${name}.${name}.${action}`))
await app.contentApi.permissions.grant('public', [...read, 'api::homepage.homepage.find'])
await app.contentApi.permissions.grant('authenticated', ['create', 'update', 'delete'].map((action) => `api::article.article.${action}`))

const { created } = await seed(app)
const first = await app.contentApi.documents('api::article.article').findFirst({ sort: 'publishDate:desc' })

await app.listen({ port, host })

const close = async (): Promise<void> => {
  await app.close()
  process.exit(0)
}
process.once('SIGINT', close)
process.once('SIGTERM', close)

const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}/api`
const where = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ''
  ? 'PostgreSQL (DATABASE_URL)'
  : process.env.DATA_DIR !== undefined && process.env.DATA_DIR !== '' ? `PGlite in ${process.env.DATA_DIR}` : 'a throwaway PGlite'
console.log(`Blog content API on ${where}, ${created > 0 ? `seeded ${created} documents` : 'already seeded'}.
Try (curl -g keeps the brackets literal):

  curl ${base}/articles
  curl -g '${base}/articles?filters[views][$gt]=500&sort=views:desc&pagination[pageSize]=5&fields[0]=title&fields[1]=views'
  curl '${base}/articles/${first?.documentId ?? '<documentId>'}?populate=*'
  curl ${base}/homepage
  curl -g '${base}/categories?populate[articles][fields][0]=title'
  curl -g '${base}/articles?status=draft&fields[0]=title'

Sign up, then write with the JWT it returns:

  curl -X POST ${base}/auth/local/register -H 'content-type: application/json' -d '{"username":"ada","email":"ada@example.com","password":"Password123!"}'
  curl -X POST ${base}/articles -H 'content-type: application/json' -H 'authorization: Bearer <jwt>' -d '{"data":{"title":"My first post"}}'
`)
