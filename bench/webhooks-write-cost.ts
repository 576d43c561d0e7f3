/**
 * The cost of webhooks on writes: creates (each publishes, so `entry.create` + `entry.publish`)
 * without a `webhooks` option, with endpoints that do not listen to the type's events, and with
 * one and with three endpoints listening (the worker off: `deliver: false`, so that only the
 * write path is measured). `DATABASE_URL` for PostgreSQL; embedded PGlite otherwise.
 *
 *   npx tsx bench/webhooks-write-cost.ts [creates]
 */
import Fastify from 'fastify'
import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import contentApi, { defineContentType, type WebhookEvent, type WebhookOptions } from '../lib/index.js'

const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: true },
  attributes: { title: { type: 'string' }, body: { type: 'text' } }
})

const N = Number(process.argv[2] ?? 300)
const url = process.env.DATABASE_URL
const endpoint = (name: string, events: WebhookEvent[]): NonNullable<WebhookOptions['endpoints']>[number] => ({ name, url: 'http://127.0.0.1:9/hook', events })

const configs: Array<[string, WebhookOptions | undefined]> = [
  ['no webhooks', undefined],
  ['endpoints, none for entry.*', { endpoints: [endpoint('media', ['media.create'])], deliver: false }],
  ['1 endpoint on entry.create+publish', { endpoints: [endpoint('a', ['entry.create', 'entry.publish'])], deliver: false }],
  ['3 endpoints on entry.create+publish', { endpoints: ['a', 'b', 'c'].map((n) => endpoint(n, ['entry.create', 'entry.publish'])), deliver: false }]
]

// Two rounds; the first warms the process (JIT, statement caches), only the second is printed.
for (const [round, [label, webhooks]] of [...configs, ...configs].entries()) {
  const schema = `wh_bench_${randomBytes(4).toString('hex')}`
  let db: any
  let admin: Kysely<any> | null = null
  if (url !== undefined) {
    admin = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) })
    await sql`create schema ${sql.id(schema)}`.execute(admin)
    db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` }) }) })
  }
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  await app.register(contentApi, { models: [article], db, webhooks, auth: { jwtSecret: 'bench-jwt-secret-0123456789', apiTokenSalt: 'bench-salt-0123456789012345', rateLimit: false } })
  await app.ready()
  const articles = app.contentApi.documents('api::article.article')
  for (let i = 0; i < 30; i++) await articles.create({ data: { title: `warm ${i}`, body: 'x'.repeat(200) } })
  const started = performance.now()
  for (let i = 0; i < N; i++) await articles.create({ data: { title: `t ${i}`, body: 'x'.repeat(200) } })
  const ms = (performance.now() - started) / N
  if (round >= configs.length) console.log(`${url === undefined ? 'pglite' : 'postgres'}\t${label}\t${ms.toFixed(3)} ms/create`)
  await app.close()
  if (db !== undefined) await db.destroy()
  if (admin !== null) { await sql`drop schema ${sql.id(schema)} cascade`.execute(admin); await admin.destroy() }
}
