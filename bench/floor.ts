import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Statement } from './baseline.js'
import { LOCALE } from './model-set.js'

/**
 * The hand-written floor for the oracle models (draft & publish, i18n): Fastify and node-postgres,
 * no plugin, no query builder, no access check, each statement prepared once per connection
 * (named), the envelope by string concatenation around the JSON PostgreSQL renders.
 *
 * - REST reads send **the statement the plugin sent** for the same request, text and parameters
 *   as run.ts recorded them after seeding (`BENCH_FLOOR_SQL`), the document id taken from the
 *   route: the same SQL by construction, so the difference is the plugin's per-request work
 *   (parsing and validating the query, the access check, the compiled-statement cache, Kysely,
 *   its driver path), not the database's.
 * - GraphQL `{articles(pagination:{pageSize:10}){title category{name}}}` is one statement written
 *   out here in the plugin's layout (the page's ids first, then each row rendered with its category
 *   as a correlated sub-select; the page size in the text and no offset, as the plugin writes a
 *   first page: lib/compiler/row-limit.ts) that renders Mercurius's answer, selecting only the
 *   asked fields.
 * - `POST /api/articles` is the minimal correct create in one transaction: both rows (draft and
 *   published) in one insert, the category links and the author links of both in one insert each:
 *   begin, three statements, commit.
 */

export interface FloorSql {
  /** The plugin's statement for each recorded request, keyed by its path with the document id as `:id`. */
  reads: Record<string, Statement & { kind: 'list' | 'one', page: number, pageSize: number }>
  /** The document id the recorded statements were captured with, replaced by the request's. */
  documentId: string
}

const JSON_TYPE = 'application/json; charset=utf-8'
const NOT_FOUND = '{"data":null,"error":{"status":404,"name":"NotFoundError","message":"Not Found","details":{}}}'

const iso = (column: string): string => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const GRAPHQL_TEXT = 'with "page" as (select "t"."id" as "__id" from "articles" as "t" where ("t"."published_at" is not null and "t"."locale" = $1) ' +
  'order by "t"."id" asc limit 10) ' +
  'select \'{"data":{"articles":[\' || coalesce(string_agg(row_to_json(d)::text, \',\' order by "page"."__id" asc), \'\') || \']}}\' as "body" ' +
  'from "page" join "articles" as "t" on "t"."id" = "page"."__id" ' +
  'cross join lateral (select "t"."title" as "title", (select row_to_json("v3") from "categories" as "r1" ' +
  'join "articles_category_lnk" as "l2" on "l2"."category_id" = "r1"."id" cross join lateral (select "r1"."name" as "name") as "v3" ' +
  'where "l2"."article_id" = "t"."id" order by "l2"."id" asc limit 1) as "category") as d'

/** The published row as the REST API renders it, from the row `insert ... returning` gives. */
const ARTICLE_JSON = '(select row_to_json(v)::text from (select "id" as "id", "document_id" as "documentId", "title" as "title", "slug" as "slug", ' +
  '"body" as "body", "summary" as "summary", "views" as "views", "rating" as "rating", "featured" as "featured", "publish_date"::text as "publishDate", ' +
  `"tags" as "tags", "kind" as "kind", ${iso('"created_at"')} as "createdAt", ${iso('"updated_at"')} as "updatedAt", ` +
  `${iso('"published_at"')} as "publishedAt", "locale" as "locale") as v)`

const INSERT_ROWS = 'insert into "articles" ("title", "slug", "views", "featured", "kind", "document_id", "created_at", "updated_at", "published_at", "locale") ' +
  'values ($1, $2, $3, false, $4, $5, $6, $6, null, $7), ($1, $2, $3, false, $4, $5, $6, $6, $6, $7) ' +
  `returning "id", "published_at" is not null as "published", ${ARTICLE_JSON} as "data"`

/** Both rows link to the category, at the end of the category's list of articles. */
const INSERT_CATEGORY_LINKS = 'insert into "articles_category_lnk" ("article_id", "category_id", "article_ord") ' +
  'select "a"."id", "c"."id", coalesce((select max("article_ord") from "articles_category_lnk" where "category_id" = "c"."id"), 0) + 1 ' +
  'from unnest($1::int[]) as "a"("id"), "categories" as "c" where "c"."document_id" = $2'

/** Both rows link to each author, in the given order, at the end of each author's list. */
const INSERT_AUTHOR_LINKS = 'insert into "articles_authors_lnk" ("article_id", "author_id", "author_ord", "article_ord") ' +
  'select "a"."id", "r"."id", "x"."ord", coalesce((select max("article_ord") from "articles_authors_lnk" where "author_id" = "r"."id"), 0) + 1 ' +
  'from unnest($1::int[]) as "a"("id"), unnest($2::text[]) with ordinality as "x"("doc", "ord") join "authors" as "r" on "r"."document_id" = "x"."doc"'

const slugify = (title: string): string => title.normalize('NFD').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')

/** A document id in the plugin's shape: 24 characters of [a-z0-9], the first a letter (modulo bias does not matter here). */
function documentId (): string {
  const bytes = randomBytes(24)
  let id = 'abcdefghijklmnopqrstuvwxyz'[bytes[0] % 26]
  for (let i = 1; i < 24; i++) id += 'abcdefghijklmnopqrstuvwxyz0123456789'[bytes[i] % 36]
  return id
}

interface CreateBody { data?: { title?: unknown, views?: unknown, kind?: unknown, category?: unknown, authors?: unknown } }

export function buildFloor (pool: pg.Pool, sql: FloorSql): FastifyInstance {
  const app = Fastify({ logger: false })
  let names = 0
  const named = new Map<string, string>()
  const name = (text: string): string => {
    let n = named.get(text)
    if (n === undefined) named.set(text, n = `floor_${names++}`)
    return n
  }

  const read = async (key: string, id: string | null): Promise<{ status: number, body: string }> => {
    const recorded = sql.reads[key]
    if (recorded === undefined) return { status: 404, body: NOT_FOUND }
    const values = id === null ? recorded.values : recorded.values.map((v) => (v === sql.documentId ? id : v))
    const { rows } = await pool.query<{ data: string | null, total?: number }>({ name: name(recorded.text), text: recorded.text, values })
    const row = rows[0]
    if (recorded.kind === 'one') {
      return row?.data == null ? { status: 404, body: NOT_FOUND } : { status: 200, body: `{"data":${row.data},"meta":{}}` }
    }
    const total = row.total ?? 0
    return {
      status: 200,
      body: `{"data":${row.data},"meta":{"pagination":{"page":${recorded.page},"pageSize":${recorded.pageSize},` +
        `"pageCount":${Math.ceil(total / recorded.pageSize)},"total":${total}}}}`
    }
  }

  app.get('/api/articles', async (request, reply) => {
    const { status, body } = await read(request.url, null)
    return reply.code(status).type(JSON_TYPE).send(body)
  })

  app.get('/api/articles/:documentId', async (request, reply) => {
    const { documentId: id } = request.params as { documentId: string }
    const { status, body } = await read(request.url.replace(id, ':id'), id)
    return reply.code(status).type(JSON_TYPE).send(body)
  })

  app.post('/graphql', async (_request, reply) => {
    const { rows } = await pool.query<{ body: string }>({ name: 'floor_graphql', text: GRAPHQL_TEXT, values: [LOCALE] })
    return reply.type(JSON_TYPE).send(rows[0].body)
  })

  app.post('/api/articles', async (request, reply) => {
    const data = (request.body as CreateBody | null)?.data
    if (typeof data?.title !== 'string' || typeof data.category !== 'string' || !Array.isArray(data.authors)) {
      return await reply.code(400).type(JSON_TYPE).send('{"data":null,"error":{"status":400,"name":"ValidationError","message":"Invalid body","details":{}}}')
    }
    const now = new Date().toISOString()
    const client = await pool.connect()
    try {
      await client.query('begin')
      const { rows } = await client.query<{ id: number, published: boolean, data: string }>({
        name: 'floor_create_rows',
        text: INSERT_ROWS,
        values: [data.title, slugify(data.title), data.views ?? null, data.kind ?? null, documentId(), now, LOCALE]
      })
      const ids = rows.map((row) => row.id)
      await client.query({ name: 'floor_create_category', text: INSERT_CATEGORY_LINKS, values: [ids, data.category] })
      await client.query({ name: 'floor_create_authors', text: INSERT_AUTHOR_LINKS, values: [ids, data.authors] })
      await client.query('commit')
      const published = rows.find((row) => row.published)!
      return await reply.type(JSON_TYPE).send(`{"data":${published.data},"meta":{}}`)
    } catch (err) {
      await client.query('rollback')
      throw err
    } finally {
      client.release()
    }
  })

  app.addHook('onClose', async () => { await pool.end() })
  return app
}
