import Fastify from 'fastify'
import pg from 'pg'

/**
 * The floor of `npm run bench:startup` (its `floor` case): what a hand-written Fastify +
 * node-postgres server needs before its first answer, on the blog example's tables that the
 * `postgres` case seeded. One route, `GET /api/articles`, answering the first page of published
 * articles with its total in Strapi's envelope, rendered by PostgreSQL: no models, no schema
 * sync, no access check, no GraphQL. Run as JavaScript (`npm run build:bench`, then
 * `node dist-bench/bench/startup-floor.js`), as the example runs from `dist/`.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test PORT=3000 node dist-bench/bench/startup-floor.js
 */
const PAGE = `select json_build_object(
  'data', coalesce((select json_agg(row_to_json(a) order by a.id) from (
    select id, document_id as "documentId", title, slug, views, published_at as "publishedAt"
    from articles where published_at is not null order by id limit 25) as a), '[]'::json),
  'meta', json_build_object('pagination', json_build_object('page', 1, 'pageSize', 25,
    'total', (select count(*) from articles where published_at is not null)))
)::text as body`

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const app = Fastify()
app.get('/api/articles', async (_request, reply) => {
  const { rows } = await pool.query<{ body: string }>(PAGE)
  return await reply.type('application/json; charset=utf-8').send(rows[0].body)
})
await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })

const close = async (): Promise<void> => {
  await app.close()
  await pool.end()
  process.exit(0)
}
process.once('SIGINT', close)
process.once('SIGTERM', close)
