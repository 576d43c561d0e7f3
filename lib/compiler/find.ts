import { sql, type Kysely, type SelectQueryBuilder } from 'kysely'
import type { ContentType, Field } from '../model/registry.js'
import type { Pagination, SortTerm } from '../query/index.js'
import type { FilterNode } from '../query/filters.js'
import { compileFilter, createFilterContext, type FilterCompileOptions } from './filters.js'
import type { PopulateTree } from '../query/populate.js'
import { createPopulateContext, populateExpression, selectList } from './populate.js'
import { projection } from './projection.js'
import { rowProbe } from './row-budget.js'
import { sortExpression } from './sort.js'
import { scopeConditions, type DocumentScope } from './scope.js'

export interface FindSpec extends DocumentScope {
  fields: readonly Field[] | null
  filters: FilterNode | null
  sort: readonly SortTerm[]
  populate: PopulateTree
  /**
   * `limits.maxRows`: the most rows the answer may have, its documents and their populated rows
   * together, checked by `compileRowProbe` before the read runs. Absent: no bound.
   */
  maxRows?: number
}

/** Compiler settings that come from the plugin's options, not from the request. */
export type CompileOptions = FilterCompileOptions

export interface PageSpec extends FindSpec {
  pagination: Pagination
}

/**
 * Rows of a (sub)query as one compact JSON array text, in the subquery's order. `json_agg` would
 * do the same but separates elements with a newline; this keeps the payload minimal.
 */
const JSON_ARRAY = (alias: string) => sql.raw(`'[' || coalesce(string_agg(row_to_json(${alias})::text, ','), '') || ']'`)

/** The documents table under the alias every compiled query uses for it. */
export const ROOT = 't'

/**
 * `select ... from <table> as t where <scope> and <filters>`: the rows a request may see and asked
 * for, before projection.
 */
export function scopedRows (
  db: Kysely<any>, model: ContentType, scope: DocumentScope & { filters?: FilterNode | null }, options: CompileOptions
): SelectQueryBuilder<any, any, {}> {
  const query = db.selectFrom(`${model.tableName} as ${ROOT}`)
  return query.where((eb) => {
    const conditions = scopeConditions(model, scope, ROOT, eb)
    if (scope.filters != null) conditions.push(compileFilter(scope.filters, ROOT, createFilterContext(options, scope.status)))
    return conditions.length === 0 ? sql<boolean>`true` : eb.and(conditions)
  })
}

function ordered<Q extends SelectQueryBuilder<any, any, any>> (query: Q, spec: FindSpec, options: CompileOptions): Q {
  let q = query
  const ctx = createFilterContext(options, spec.status)
  for (const term of spec.sort) q = q.orderBy(sortExpression(term, ROOT, ctx), term.direction) as Q
  // A unique tie-breaker, so that pages never repeat or skip a row whatever the sort. Ascending,
  // like the insertion order Strapi's database returns ties in.
  return q.orderBy(sql.ref(`${ROOT}.id`), 'asc') as Q
}

/** The select list of a document: its fields, then one JSON sub-select per populated attribute. */
function documentColumns (model: ContentType, spec: FindSpec, options: CompileOptions) {
  const ctx = createPopulateContext(spec.status, options)
  return [
    ...projection(spec.fields ?? model.defaultFields, ROOT),
    ...[...spec.populate].map(([name, node]) => populateExpression(node, ROOT, model, ctx).as(name))
  ]
}

/**
 * The documents a read renders, chosen on ids and sort keys only: `select t.id as "__id", <sort
 * keys as s0, s1...> from ... where <scope and filters> order by ... [limit] [offset]`.
 */
function pageRows (db: Kysely<any>, model: ContentType, spec: FindSpec, window: { start: number, limit: number | null }, options: CompileOptions) {
  const ctx = createFilterContext(options, spec.status)
  const keys = spec.sort.map((term, i) => sortExpression(term, ROOT, ctx).as(`s${i}`))
  let page = scopedRows(db, model, spec, options).select([sql.ref(`${ROOT}.id`).as('__id'), ...keys])
  spec.sort.forEach((term, i) => { page = page.orderBy(sql.ref(`s${i}`), term.direction) })
  page = page.orderBy(sql.ref(`${ROOT}.id`), 'asc')
  if (window.limit !== null) return page.limit(window.limit).offset(window.start)
  return window.start > 0 ? page.offset(window.start) : page
}

/**
 * One page of documents and its total, in ONE statement. The page is chosen first on ids and
 * sort keys only, then only its rows are rendered, as JSON, by PostgreSQL (rendering every
 * matching row before the sort and limit would cost as many conversions as there are matches):
 *
 * ```sql
 * with "page" as (select t.id as "__id", t.title as "s0" from "articles" as t where <scope and filters>
 *                 order by "s0" desc, t.id asc limit $1 offset $2)
 * select (select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by "page"."s0" desc, "page"."__id" asc), '') || ']'
 *         from "page" join "articles" as t on t.id = "page"."__id"
 *         cross join lateral (select t.id as "id", t.document_id as "documentId", ...) as d) as "data",
 *        (select case when n.c < $3 and (n.c > 0 or $4 = 0) then $4 + n.c
 *                     else (select count(*)::int from "articles" as t where <scope and filters>) end
 *         from (select count(*)::int as c from "page") as n) as "total"
 * ```
 *
 * The count only runs when it cannot be derived from the page itself: a page that is not full
 * (and not past the end) already tells the total, and `withCount=false` skips it entirely.
 */
export function compileFindPage (db: Kysely<any>, model: ContentType, spec: PageSpec, options: CompileOptions) {
  const { start, limit, withCount } = spec.pagination
  const page = pageRows(db, model, spec, { start, limit }, options)

  const order = sql.join([...spec.sort.map((term, i) => sql`${sql.ref(`page.s${i}`)} ${sql.raw(term.direction)}`), sql`"page"."__id" asc`])
  const columns = selectList(model, ROOT, spec.fields, spec.populate, createPopulateContext(spec.status, options))
  const data = sql<string>`(select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by ${order}), '') || ']'
    from "page" join ${sql.table(model.tableName)} as ${sql.id(ROOT)} on ${sql.ref(`${ROOT}.id`)} = "page"."__id"
    cross join lateral (select ${columns}) as d)`.as('data')
  if (!withCount) return db.with('page', () => page).selectNoFrom([data, sql<null>`null::int`.as('total')])

  const count = scopedRows(db, model, spec, options).select(sql<number>`count(*)::int`.as('count'))
  const total = sql<number>`(select case when n.c < ${limit}::int and (n.c > 0 or ${start}::int = 0) then ${start}::int + n.c else (${count}) end from (select count(*)::int as c from "page") as n)`
  return db.with('page', () => page).selectNoFrom([data, total.as('total')])
}

/**
 * Documents as JSON objects, for callers that want every match (the document service's findMany
 * without pagination) or a bounded window of them.
 *
 * ```sql
 * select '[' || coalesce(string_agg(row_to_json(r)::text, ','), '') || ']' as "data" from (select ... order by ...) as r
 * ```
 */
export function compileFindMany (db: Kysely<any>, model: ContentType, spec: FindSpec & { start?: number, limit?: number }, options: CompileOptions) {
  let rows = ordered(scopedRows(db, model, spec, options).select(documentColumns(model, spec, options)), spec, options)
  if (spec.limit !== undefined) rows = rows.limit(spec.limit)
  if (spec.start !== undefined && spec.start > 0) rows = rows.offset(spec.start)
  return db.selectFrom(rows.as('r')).select(sql<string>`${JSON_ARRAY('r')}`.as('data'))
}

/**
 * One document by documentId, rendered as a JSON object (or no row).
 *
 * ```sql
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where <scope> and t.document_id = $1 limit 1) as r
 * ```
 */
export function compileFindOne (db: Kysely<any>, model: ContentType, spec: FindSpec, documentId: string | null, options: CompileOptions) {
  let rows = scopedRows(db, model, spec, options).select(documentColumns(model, spec, options))
  if (documentId !== null) rows = rows.where(`${ROOT}.document_id`, '=', documentId)
  rows = ordered(rows, spec, options).limit(1)
  return db.selectFrom(rows.as('r')).select(sql<string>`row_to_json(r)::text`.as('data'))
}

/** `select count(*)::int from <table> as t where <scope> and <filters>`. */
export function compileCount (db: Kysely<any>, model: ContentType, scope: DocumentScope & { filters?: FilterNode | null }, options: CompileOptions) {
  return scopedRows(db, model, scope, options).select(sql<number>`count(*)::int`.as('count'))
}

/**
 * The row budget's probe of a read (row-budget.ts), for a page or window of documents (`start`,
 * `limit`: null for every match) or one document (`documentId`, null for a single type's). Null
 * when `maxRows` is absent or the query alone bounds the answer within it; otherwise a statement
 * selecting `n`, the rows the read would return, counted up to `maxRows + 1`:
 *
 * ```sql
 * with "page" as (select t.id as "__id" from "articles" as t where <scope and filters> order by ... limit $1 offset $2)
 * select count(*)::int as n from (select 1 from "page" join "articles" as t on ... union all ... limit $3) as b
 * ```
 */
export function compileRowProbe (
  db: Kysely<any>, model: ContentType, spec: FindSpec, read: { start: number, limit: number | null } | { documentId: string | null }, options: CompileOptions
) {
  const one = 'documentId' in read
  const probe = rowProbe(model, spec, one ? 1 : read.limit, options)
  if (probe === null) return null
  let page = pageRows(db, model, spec, one ? { start: 0, limit: 1 } : read, options)
  if (one && read.documentId !== null) page = page.where(`${ROOT}.document_id`, '=', read.documentId)
  return db.with('page', () => page).selectFrom(sql<{ n: number }>`(${probe})`.as('budget')).select(sql<number>`"budget"."n"`.as('n'))
}
