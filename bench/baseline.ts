import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'

/**
 * The hand-written baseline: Fastify and node-postgres, no plugin, no query builder, no access
 * check. It sends PostgreSQL the very statements the plugin's compiler produces for the
 * benchmark's requests (run.ts checks the text and parameters against what the plugin sends,
 * before measuring) and wraps the JSON PostgreSQL renders in the response envelope by string
 * concatenation: the best a careful developer would write by hand for these two endpoints, with
 * no generality to pay for.
 */

/** How the API renders timestamps: ISO 8601 in UTC with milliseconds. */
const iso = (column: string): string => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** `id`, `documentId`, the attributes, then the three timestamps, of the row aliased `a`. */
function columns (a: string, attributes: string[]): string {
  return [
    `"${a}"."id" as "id"`,
    `"${a}"."document_id" as "documentId"`,
    ...attributes,
    `${iso(`"${a}"."created_at"`)} as "createdAt"`,
    `${iso(`"${a}"."updated_at"`)} as "updatedAt"`,
    `${iso(`"${a}"."published_at"`)} as "publishedAt"`
  ].join(', ')
}

const ARTICLE = columns('t', [
  '"t"."title" as "title"',
  '"t"."slug" as "slug"',
  '"t"."summary" as "summary"',
  '"t"."views" as "views"',
  '"t"."rating" as "rating"',
  '"t"."featured" as "featured"',
  '"t"."publish_date"::text as "publishDate"',
  '"t"."kind" as "kind"'
])

/**
 * `populate[category]=true`: the article's category as one JSON object (or null), read through
 * the link table. `n` numbers the statement's aliases (r, l, v), which the compiler counts
 * across the whole statement: the first populated relation uses 1-3, the second 4-6.
 */
function category (n: number): string {
  const [r, l, v] = [`r${n}`, `l${n + 1}`, `v${n + 2}`]
  return `(select row_to_json("${v}") from "categories" as "${r}" join "articles_category_lnk" as "${l}" on "${l}"."category_id" = "${r}"."id" ` +
    `cross join lateral (select ${columns(r, [`"${r}"."name" as "name"`, `"${r}"."description" as "description"`])}) as "${v}" ` +
    `where "${l}"."article_id" = "t"."id" order by "${l}"."id" asc limit 1) as "category"`
}

/** `populate[authors]=true`: the article's authors as a JSON array, in their stored order. */
function authors (n: number): string {
  const [r, l, v] = [`r${n}`, `l${n + 1}`, `v${n + 2}`]
  return '(select coalesce(json_agg(q.doc order by "q"."o0" asc nulls last, "q"."o1" asc), \'[]\'::json) from (' +
    `select row_to_json("${v}") as doc, "${l}"."author_ord" as "o0", "${l}"."id" as "o1" ` +
    `from "authors" as "${r}" join "articles_authors_lnk" as "${l}" on "${l}"."author_id" = "${r}"."id" ` +
    `cross join lateral (select ${columns(r, [`"${r}"."name" as "name"`, `"${r}"."email" as "email"`])}) as "${v}" ` +
    `where "${l}"."article_id" = "t"."id" order by "${l}"."author_ord" asc nulls last, "${l}"."id" asc) as q) as "authors"`
}

const RELATIONS: Record<string, (n: number) => string> = { category, authors }

/** The plugin's default `limits.maxRows`. */
const MAX_ROWS = 10000

/**
 * One branch of the row budget's probe per populated relation (lib/compiler/row-budget.ts), the
 * probe numbering its aliases on its own: a to-one category counts the articles that have one,
 * the authors their links.
 */
const PROBES: Record<string, (n: number) => string> = {
  category: (n) => `select 1 from (select "__id" as "id" from "page") as "t" where exists (select 1 from "categories" as "r${n}" join "articles_category_lnk" as "l${n + 1}" on "l${n + 1}"."category_id" = "r${n}"."id" where "l${n + 1}"."article_id" = "t"."id")`,
  authors: (n) => `select 1 from (select "__id" as "id" from "page") as "t", "articles_authors_lnk" as "l${n + 1}" where "l${n + 1}"."article_id" = "t"."id"`
}

/** Sortable columns of the list endpoint: API name to column. */
const SORTABLE: Record<string, string> = { title: 'title', views: 'views', publishDate: 'publish_date', id: 'id' }

export interface Statement { text: string, values: unknown[] }

export interface ListRequest {
  viewsGt: number | null
  sort: { column: string, direction: 'asc' | 'desc' } | null
  /** Relations to populate, in the order the query string names them. */
  populate: string[]
  page: number
  pageSize: number
}

const listTexts = new Map<string, string>()

/**
 * One page and its total in one statement, exactly as the compiler writes it, parameter
 * numbering and line breaks included: the page's ids (and sort key) first, then only those rows
 * rendered as JSON, with their populated relations as correlated sub-selects; the total is
 * counted only when the page is full (a short page tells it).
 *
 * With `authors`, whose rows per article no query bounds, the statement checks `limits.maxRows`
 * as the plugin does: it counts the page's rows and their populated rows first (the probe is its
 * `from`) and renders the data and the total only within the budget.
 */
export function listStatement (request: ListRequest): Statement {
  const { viewsGt, sort, populate, page, pageSize } = request
  const start = (page - 1) * pageSize
  const key = `${viewsGt !== null}|${sort?.column ?? ''}|${sort?.direction ?? ''}|${populate.join(',')}`
  let text = listTexts.get(key)
  if (text === undefined) {
    const filtered = viewsGt !== null
    const n = filtered ? 1 : 0
    const where = filtered ? '"t"."views" > $1' : 'true'
    const keys = sort === null ? '' : `, "t"."${sort.column}" as "s0"`
    const order = sort === null ? '"t"."id" asc' : `"s0" ${sort.direction}, "t"."id" asc`
    const pageOrder = sort === null ? '"page"."__id" asc' : `"page"."s0" ${sort.direction}, "page"."__id" asc`
    const related = populate.map((name, i) => `, ${RELATIONS[name](1 + 3 * i)}`).join('')
    const budget = populate.includes('authors')
    // Within a budget, the data's and the total's gates take the parameters after the page's, and
    // the probe's limit the last one.
    const g = budget ? 2 : 0
    const countWhere = filtered ? `"t"."views" > $${n + g + 6}` : 'true'
    const data = `(select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by ${pageOrder}), '') || ']'\n` +
      '    from "page" join "articles" as "t" on "t"."id" = "page"."__id"\n' +
      `    cross join lateral (select ${ARTICLE}${related}) as d)`
    const total = `(select case when n.c < $${n + g + 3}::int and (n.c > 0 or $${n + g + 4}::int = 0) then $${n + g + 5}::int + n.c ` +
      `else ((select count(*)::int as "count" from "articles" as "t" where ${countWhere})) end ` +
      'from (select count(*)::int as c from "page") as n)'
    const page = `with "page" as (select "t"."id" as "__id"${keys} from "articles" as "t" where ${where} order by ${order} limit $${n + 1} offset $${n + 2}) `
    if (budget) {
      const probe = ['select 1 from "page"', ...populate.map((name, i) => PROBES[name](1 + 2 * i))].join(' union all ')
      text = page + `select case when "budget"."n" > $${n + 3}::int then null else ${data} end as "data", ` +
        `case when "budget"."n" > $${n + 4}::int then null else ${total} end as "total", "budget"."n" as "rows" ` +
        `from (select count(*)::int as n from (${probe} limit $${n + g + 6 + n}) as b) as "budget"`
    } else {
      text = page + `select ${data} as "data", ${total} as "total"`
    }
    listTexts.set(key, text)
  }
  const budget = populate.includes('authors') ? [MAX_ROWS, MAX_ROWS] : []
  const filter = viewsGt === null ? [] : [viewsGt]
  const values = [...filter, pageSize, start, ...budget, pageSize, start, start, ...filter]
  return { text, values: budget.length === 0 ? values : [...values, MAX_ROWS + 1] }
}

const ONE_TEXT = `select row_to_json(r)::text as "data" from (select ${ARTICLE} from "articles" as "t" where true and "t"."document_id" = $1 order by "t"."id" asc limit $2) as "r"`

export function oneStatement (documentId: string): Statement {
  return { text: ONE_TEXT, values: [documentId, 1] }
}

function positiveInt (value: string | undefined, fallback: number): number {
  const n = value === undefined ? Number.NaN : Number(value)
  return Number.isInteger(n) && n >= 1 ? n : fallback
}

/**
 * Reads the list request from Fastify's flat query object (`filters[views][$gt]`, `sort`,
 * `pagination[...]`, `populate[category]=true`, `populate[authors]=true`).
 */
export function parseListQuery (query: Record<string, string | undefined>): ListRequest {
  const gt = query['filters[views][$gt]']
  const viewsGt = gt === undefined || gt === '' || !Number.isFinite(Number(gt)) ? null : Number(gt)
  let sort: ListRequest['sort'] = null
  if (query.sort !== undefined) {
    const [name, direction = 'asc'] = query.sort.split(':')
    const column = SORTABLE[name]
    if (column !== undefined) sort = { column, direction: direction.toLowerCase() === 'desc' ? 'desc' : 'asc' }
  }
  const populate: string[] = []
  for (const [key, value] of Object.entries(query)) {
    const name = /^populate\[(\w+)\]$/.exec(key)?.[1]
    if (name !== undefined && value === 'true' && Object.hasOwn(RELATIONS, name) && !populate.includes(name)) populate.push(name)
  }
  return {
    viewsGt,
    sort,
    populate,
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
