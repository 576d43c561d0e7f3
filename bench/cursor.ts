import Fastify from 'fastify'
import { sql } from 'kysely'
import contentApi, { defineContentType } from '../lib/index.js'
import { CursorCodec, sortSignature } from '../lib/query/index.js'
import { parseSort } from '../lib/query/sort.js'
import { createTestDatabase } from '../test/helpers/database.js'

/**
 * Cursor pagination against offset pagination deep in a large list (docs/rest.md#cursor-pagination):
 * `BENCH_CURSOR_ROWS` posts (200,000) written as rows, a NULL title in ten, indexes matching the
 * sorts, then per sort the mean time of a 25-row page, through `app.inject`:
 * - `offsetMidMs`, `offsetDeepMs`: `pagination[start]` at 50% and 90% of the order, no count;
 * - `cursorMidAfterMs`, `cursorMidBeforeMs`: `after` and `before` a cursor at 50% of the order;
 * - `cursorFirstMs`, `cursorLastMs`: `after=` and `before=` (a walk's first and last pages).
 *
 *     DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/cursor.ts
 */

const post = defineContentType({
  kind: 'collectionType',
  collectionName: 'posts',
  info: { singularName: 'post', pluralName: 'posts', displayName: 'Post' },
  options: { draftAndPublish: false },
  attributes: { title: { type: 'string' }, score: { type: 'integer' } }
})
const N = Number(process.env.BENCH_CURSOR_ROWS ?? 200000)
const SECRET = 'bench-cursor-secret-0123456789'

const database = await createTestDatabase()
const app = Fastify({ logger: false, pluginTimeout: 120000 })
await app.register(contentApi, { models: [post], db: database.db, auth: { jwtSecret: SECRET, apiTokenSalt: SECRET, rateLimit: false } })
await app.ready()
await app.contentApi.permissions.grant('public', ['api::post.post.find'])
const db = app.contentApi.db
await sql`insert into posts (document_id, title, score, created_at, updated_at, published_at)
  select 'd' || g, case when g % 10 = 0 then null else 'title ' || lpad((g * 7919 % ${N})::text, 7, '0') end, g % 1000, now(), now(), now()
  from generate_series(1, ${N}) g`.execute(db)
await sql`create index posts_title_id on posts (title, id)`.execute(db)
await sql`create index posts_score_id on posts (score desc, id)`.execute(db)
await sql`analyze posts`.execute(db)

async function time (url: string, n = 20): Promise<number> {
  await app.inject(url)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const res = await app.inject(url)
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  return Number(((performance.now() - t0) / n).toFixed(2))
}

const model = app.contentApi.registry.get('api::post.post')!
const codec = new CursorCodec(SECRET)
for (const sort of ['', 'title:asc', 'title:desc', 'score:desc']) {
  const list = (query: string): string => `/api/posts?${sort === '' ? '' : `sort=${sort}&`}${query}&fields[0]=title`
  const mid = (await app.inject(list(`pagination[start]=${Math.floor(N / 2)}&pagination[limit]=1&fields[1]=score`))).json().data[0]
  const terms = parseSort(model, sort === '' ? undefined : sort)
  const cursor = codec.encode(sortSignature(model.uid, terms), { values: terms.map((term) => mid[term.field.name] === null ? null : String(mid[term.field.name])), id: mid.id })
  console.log(JSON.stringify({
    sort,
    rows: N,
    offsetMidMs: await time(list(`pagination[start]=${Math.floor(N / 2)}&pagination[limit]=25&pagination[withCount]=false`), 5),
    offsetDeepMs: await time(list(`pagination[start]=${Math.floor(N * 0.9)}&pagination[limit]=25&pagination[withCount]=false`), 5),
    cursorMidAfterMs: await time(list(`pagination[after]=${cursor}&pagination[pageSize]=25`)),
    cursorMidBeforeMs: await time(list(`pagination[before]=${cursor}&pagination[pageSize]=25`)),
    cursorFirstMs: await time(list('pagination[after]=&pagination[pageSize]=25')),
    cursorLastMs: await time(list('pagination[before]=&pagination[pageSize]=25'))
  }))
}
await app.close()
await database.drop()
