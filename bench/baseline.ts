import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'

/**
 * The hand-written baseline: Fastify and node-postgres, no plugin, no query builder. It sends
 * PostgreSQL the very statements the plugin's compiler produces for the benchmark's requests
 * (run.ts checks the text and parameters against what the plugin sends, before measuring) and
 * wraps the JSON PostgreSQL renders in the response envelope by string concatenation: the best a
 * careful developer would write by hand for these two endpoints, with no generality to pay for.
 */

const ISO = '\'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\''
const COLUMNS = [
  '"t"."id" as "id"',
  '"t"."document_id" as "documentId"',
  '"t"."title" as "title"',
  '"t"."slug" as "slug"',
  '"t"."summary" as "summary"',
  '"t"."views" as "views"',
  '"t"."rating" as "rating"',
  '"t"."featured" as "featured"',
  '"t"."publish_date"::text as "publishDate"',
  '"t"."kind" as "kind"',
  `to_char("t"."created_at" at time zone 'UTC', ${ISO}) as "createdAt"`,
  `to_char("t"."updated_at" at time zone 'UTC', ${ISO}) as "updatedAt"`,
  `to_char("t"."published_at" at time zone 'UTC', ${ISO}) as "publishedAt"`
].join(', ')

/** Sortable columns of the list endpoint: API name to column. */
const SORTABLE: Record<string, string> = { title: 'title', views: 'views', publishDate: 'publish_date', id: 'id' }

export interface Statement { text: string, values: unknown[] }

export interface ListRequest {
  viewsGt: number | null
  sort: { column: string, direction: 'asc' | 'desc' } | null
  page: number
  pageSize: number
}

const listTexts = new Map<string, string>()

/**
 * One page and its total in one statement (the count runs only when the page is full), exactly
 * as the compiler writes it, parameter numbering included.
 */
export function listStatement (request: ListRequest): Statement {
  const { viewsGt, sort, page, pageSize } = request
  const start = (page - 1) * pageSize
  const key = `${viewsGt !== null}|${sort?.column ?? ''}|${sort?.direction ?? ''}`
  let text = listTexts.get(key)
  if (text === undefined) {
    const filtered = viewsGt !== null
    const n = filtered ? 1 : 0
    const where = filtered ? '"t"."views" > $1' : 'true'
    const order = sort === null ? '"t"."id" asc' : `"t"."${sort.column}" ${sort.direction}, "t"."id" asc`
    const countWhere = filtered ? `"t"."views" > $${n + 6}` : 'true'
    text = `with "page" as (select ${COLUMNS} from "articles" as "t" where ${where} order by ${order} limit $${n + 1} offset $${n + 2}) ` +
      'select (select \'[\' || coalesce(string_agg(row_to_json("page")::text, \',\'), \'\') || \']\' from "page") as "data", ' +
      `(select case when n.c < $${n + 3}::int and (n.c > 0 or $${n + 4}::int = 0) then $${n + 5}::int + n.c ` +
      `else ((select count(*)::int as "count" from "articles" as "t" where ${countWhere})) end ` +
      'from (select count(*)::int as c from "page") as n) as "total"'
    listTexts.set(key, text)
  }
  const window = [pageSize, start, pageSize, start, start]
  return { text, values: viewsGt === null ? window : [viewsGt, ...window, viewsGt] }
}

const ONE_TEXT = `select row_to_json(r)::text as "data" from (select ${COLUMNS} from "articles" as "t" where true and "t"."document_id" = $1 order by "t"."id" asc limit $2) as "r"`

export function oneStatement (documentId: string): Statement {
  return { text: ONE_TEXT, values: [documentId, 1] }
}

function positiveInt (value: string | undefined, fallback: number): number {
  const n = value === undefined ? Number.NaN : Number(value)
  return Number.isInteger(n) && n >= 1 ? n : fallback
}

/** Reads the list request from Fastify's flat query object (`filters[views][$gt]`, `sort`, `pagination[...]`). */
export function parseListQuery (query: Record<string, string | undefined>): ListRequest {
  const gt = query['filters[views][$gt]']
  const viewsGt = gt === undefined || gt === '' || !Number.isFinite(Number(gt)) ? null : Number(gt)
  let sort: ListRequest['sort'] = null
  if (query.sort !== undefined) {
    const [name, direction = 'asc'] = query.sort.split(':')
    const column = SORTABLE[name]
    if (column !== undefined) sort = { column, direction: direction.toLowerCase() === 'desc' ? 'desc' : 'asc' }
  }
  return {
    viewsGt,
    sort,
    page: positiveInt(query['pagination[page]'], 1),
    pageSize: Math.min(positiveInt(query['pagination[pageSize]'], 25), 100)
  }
}

const JSON_TYPE = 'application/json; charset=utf-8'
const NOT_FOUND = '{"data":null,"error":{"status":404,"name":"NotFoundError","message":"Not Found","details":{}}}'

export function buildBaseline (pool: pg.Pool): FastifyInstance {
  const app = Fastify({ logger: false })

  app.get('/api/articles', async (request, reply) => {
    const list = parseListQuery(request.query as Record<string, string | undefined>)
    const { rows } = await pool.query<{ data: string, total: number }>(listStatement(list))
    const { data, total } = rows[0]
    const body = `{"data":${data},"meta":{"pagination":{"page":${list.page},"pageSize":${list.pageSize},` +
      `"pageCount":${Math.ceil(total / list.pageSize)},"total":${total}}}}`
    return reply.type(JSON_TYPE).send(body)
  })

  app.get('/api/articles/:documentId', async (request, reply) => {
    const { documentId } = request.params as { documentId: string }
    const { rows } = await pool.query<{ data: string }>(oneStatement(documentId))
    if (rows.length === 0) return reply.code(404).type(JSON_TYPE).send(NOT_FOUND)
    return reply.type(JSON_TYPE).send(`{"data":${rows[0].data},"meta":{}}`)
  })

  app.addHook('onClose', async () => { await pool.end() })
  return app
}
