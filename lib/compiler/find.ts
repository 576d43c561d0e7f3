import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely'
import type { ContentType, Field } from '../model/registry.js'
import type { CursorPagination, Pagination, SortTerm } from '../query/index.js'
import type { FilterNode } from '../query/filters.js'
import { compileFilter, createFilterContext, type FilterCompileOptions } from './filters.js'
import type { PopulateTree } from '../query/populate.js'
import { createPopulateContext, populateExpression, selectList } from './populate.js'
import { projection } from './projection.js'
import { rowBudget, withinBudget, type RowBudget } from './row-budget.js'
import { sortExpression } from './sort.js'
import { scopeConditions, type DocumentScope } from './scope.js'
import { CHANGES_CTE, changeCount, countIsRememberable, countRows, readChanges, rememberedCount } from './row-count.js'
import { keysetAfter, reversed } from './keyset.js'
import { rowLimit } from './row-limit.js'

export interface FindSpec extends DocumentScope {
  fields: readonly Field[] | null
  filters: FilterNode | null
  sort: readonly SortTerm[]
  populate: PopulateTree
  /**
   * `limits.maxRows`: the most rows the answer may have, its documents and their populated rows
   * together (row-budget.ts). Checked by the read itself, which then selects `rows` and renders
   * nothing past the budget, or by `compileRowProbe`'s statement, run first. Absent: no bound.
   */
  maxRows?: number
}

/**
 * What a compiled read selects. With a row budget checked inline, also `rows`, the rows counted
 * (at most `maxRows + 1`): past `maxRows`, `data` and `total` are null. Such a `compileFindOne`
 * answers one row whose `data` is null when there is no such document.
 */
export interface ReadRow { data: string, rows?: number }
export interface PageRow extends ReadRow {
  total: number | null
  /** With `rememberTotal`: the change count of the snapshot `total` was read in (null: not this release's trigger function). */
  changes?: string | null
}
/**
 * A cursor page also selects its edges: the sort keys and id of its first and last rows (in the
 * sort's order) as the JSON text of `[<key text or null>..., id]`, null for an empty page; `more`,
 * whether rows follow the page in the walk's direction; `near`, whether rows precede the cursor
 * (at or before it), null for a walk's first page.
 */
export interface CursorPageRow extends PageRow { first: string | null, last: string | null, more: boolean, near: boolean | null }
type Read<O> = SelectQueryBuilder<any, any, O>

/** Compiler settings that come from the plugin's options and the database, not from the request. */
export interface CompileOptions extends FilterCompileOptions {
  /**
   * The content-type tables whose row counts triggers keep (lib/schema/row-counts.ts), read at
   * start: an unfiltered total of theirs is a sum of counts, not a scan. Absent: none.
   */
  rowCounts?: ReadonlySet<string>
  /**
   * The object id of the row counts' trigger function when it is this release's, read at start
   * (lib/schema/row-counts.ts `rowCountsInUse`): filtered totals are remembered only with it.
   */
  countFunction?: number | null
}

export interface PageSpec extends FindSpec {
  pagination: Pagination
  /**
   * Compile the total to use a remembered one (row-count.ts `rememberedCount`, its values bound
   * at each execution) when `countIsRememberable`, and then also select `changes`, the table's
   * change count the total was read at.
   */
  rememberTotal?: boolean
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
 * for, before projection. `from`: where the rows are read, the model's table unless a statement's
 * own CTE holds them (`compileWrittenOne`).
 */
export function scopedRows (
  db: Kysely<any>, model: ContentType, scope: DocumentScope & { filters?: FilterNode | null }, options: CompileOptions, from = model.tableName
): SelectQueryBuilder<any, any, {}> {
  const query = db.selectFrom(`${from} as ${ROOT}`)
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
  const ctx = createPopulateContext(spec.status, options, spec.publicationFilter)
  return [
    ...projection(spec.fields ?? model.defaultFields, ROOT),
    ...[...spec.populate].map(([name, node]) => populateExpression(node, ROOT, model, ctx).as(name))
  ]
}

/** The documents a read takes: an offset window (`limit` null: every match), or a cursor page. */
type Window = { start: number, limit: number | null } | CursorPagination

const isCursor = (window: Window): window is CursorPagination => 'mode' in window && window.mode === 'cursor'

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
  // No offset on a first page: an `offset $1` of unknown value would make PostgreSQL plan it anew at
  // every execution, as an unknown limit would (row-limit.ts); later pages keep it a parameter.
  const limited = window.limit === null ? page : page.limit(rowLimit(window.limit))
  return window.start > 0 ? limited.offset(window.start) : limited
}

/**
 * The sort's keys in a walk's order, each with the cursor's value: the sort's own order walking
 * `after`, every key reversed walking `before` (NULL placement reverses with it).
 */
function walkKeys (spec: FindSpec, p: CursorPagination, ctx: ReturnType<typeof createFilterContext>, reverse: boolean) {
  const flip = (d: 'asc' | 'desc') => reverse ? reversed(d) : d
  const keys = spec.sort.map((term, i) => ({ expression: sortExpression(term, ROOT, ctx), direction: flip(term.direction), value: p.cursor?.values[i] ?? null }))
  return { keys, id: { expression: sql.ref(`${ROOT}.id`) as RawBuilder<unknown>, direction: flip('asc'), value: p.cursor?.id ?? null } }
}

/**
 * A cursor page: `"keyset"` holds the rows past the cursor in the walk's order, one more than the
 * page (which tells whether more follow), `"page"` the page itself; walking `before`, both in
 * reverse. Every statement of a cursor read reads `"page"`, as it reads an offset read's. When
 * the rows past the cursor are two ranges of the sort's index (keyset.ts), each is read up to
 * the page's size, and the union ordered:
 *
 * ```sql
 * with "keyset" as (select t.id as "__id", t.title as "s0" from "articles" as t
 *                   where <scope and filters> and t.title <= $1 and (t.title < $2 or (t.title = $3 and t.id > $4))
 *                   order by "s0" desc, t.id asc limit 26),
 *      "page" as (select * from "keyset" order by "s0" desc, "__id" asc limit 25)
 * -- sort=title:asc, after ('b', 7): two ranges
 * with "keyset" as (select * from ((select ... where <scope and filters> and t.title >= $1 and (...) order by "s0" asc, t.id asc limit 26)
 *                   union all (select ... where <scope and filters> and t.title is null order by "s0" asc, t.id asc limit 26)) as "u"
 *                   order by "s0" asc, "__id" asc limit 26), "page" as (...)
 * ```
 */
function withPage (db: Kysely<any>, model: ContentType, spec: FindSpec, window: Window, options: CompileOptions) {
  if (!isCursor(window)) return db.with('page', () => pageRows(db, model, spec, window, options))
  const ctx = createFilterContext(options, spec.status)
  const walk = walkKeys(spec, window, ctx, window.direction === 'before')
  const walked = <Q extends SelectQueryBuilder<any, any, any>>(query: Q, id: string): Q => {
    let q = query
    walk.keys.forEach((key, i) => { q = q.orderBy(sql.ref(`s${i}`), key.direction) as Q })
    return q.orderBy(sql.ref(id), walk.id.direction).limit(rowLimit(window.limit + 1)) as Q
  }
  const rows = (condition: RawBuilder<SqlBool> | null) => {
    const query = scopedRows(db, model, spec, options).select([sql.ref(`${ROOT}.id`).as('__id'), ...spec.sort.map((term, i) => sortExpression(term, ROOT, ctx).as(`s${i}`))])
    return walked(condition === null ? query : query.where(condition), `${ROOT}.id`)
  }
  const ranges = window.cursor === null ? [null] : keysetAfter(walk.keys, walk.id, false)
  const keyset = ranges.length === 1
    ? rows(ranges[0])
    : walked(db.selectFrom(sql`((${rows(ranges[0])}) union all (${rows(ranges[1])}))`.as('u')).selectAll(), '__id')
  return db.with('keyset', () => keyset).with('page', (q) => {
    let page = q.selectFrom('keyset').selectAll()
    walk.keys.forEach((key, i) => { page = page.orderBy(sql.ref(`s${i}`), key.direction) })
    return page.orderBy(sql.ref('__id'), walk.id.direction).limit(rowLimit(window.limit))
  })
}

/**
 * The edges of a cursor page (`CursorPageRow`): its first and last rows' keys, whether the
 * `"keyset"` had a row past the page, and (with a cursor) whether rows lie at or before the cursor,
 * that is on the other side of the page:
 *
 * ```sql
 * (select json_build_array(p.s0::text, p.__id)::text from "page" as p order by p.s0 asc, p.__id asc limit 1) as "first",
 * (select json_build_array(p.s0::text, p.__id)::text from "page" as p order by p.s0 desc, p.__id desc limit 1) as "last",
 * (select count(*) from "keyset") > $1 as "more",
 * (exists (select 1 from "articles" as t where <scope and filters> and <at or before the cursor>) [or exists (<its second range>)]) as "near"
 * ```
 *
 * A key's text is PostgreSQL's text of its value, which the next request's cursor hands back as
 * a parameter of the key's own type: exact for timestamps, numerics and bigints.
 */
function cursorEdges (db: Kysely<any>, model: ContentType, spec: FindSpec, p: CursorPagination, options: CompileOptions) {
  const keys = sql.join([...spec.sort.map((_, i) => sql`${sql.ref(`p.s${i}`)}::text`), sql.ref('p.__id')])
  const edge = (reverse: boolean) => {
    const flip = (d: 'asc' | 'desc') => sql.raw(reverse ? reversed(d) : d)
    const order = sql.join([...spec.sort.map((term, i) => sql`${sql.ref(`p.s${i}`)} ${flip(term.direction)}`), sql`${sql.ref('p.__id')} ${flip('asc')}`])
    return sql<string | null>`(select json_build_array(${keys})::text from "page" as p order by ${order} limit 1)`
  }
  let near = sql<boolean | null>`null::boolean`
  if (p.cursor !== null) {
    // At or before the cursor in the walk: after it, inclusive, walking the other way.
    const back = walkKeys(spec, p, createFilterContext(options, spec.status), p.direction === 'after')
    // One probe per range of the sort's index (keyset.ts).
    const probes = keysetAfter(back.keys, back.id, true).map((range) => sql<boolean>`exists (${scopedRows(db, model, spec, options).select(sql.lit(1).as('one')).where(range)})`)
    near = sql<boolean>`(${sql.join(probes, sql` or `)})`
  }
  return [
    edge(false).as('first'),
    edge(true).as('last'),
    sql<boolean>`(select count(*) from "keyset") > ${p.limit}::int`.as('more'),
    near.as('near')
  ]
}

/**
 * One page of documents and its total, in ONE statement. The page is chosen first on ids and
 * sort keys only, then only its rows are rendered, as JSON, by PostgreSQL (rendering every
 * matching row before the sort and limit would cost as many conversions as there are matches):
 *
 * ```sql
 * with "page" as (select t.id as "__id", t.title as "s0" from "articles" as t where <scope and filters>
 *                 order by "s0" desc, t.id asc limit 25)                -- page 2: limit 25 offset $n
 * select (select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by "page"."s0" desc, "page"."__id" asc), '') || ']'
 *         from "page" join "articles" as t on t.id = "page"."__id"
 *         cross join lateral (select t.id as "id", t.document_id as "documentId", ...) as d) as "data",
 *        (select case when n.c < $1 and (n.c > 0 or $2 = 0) then $2 + n.c
 *                     else (select count(*)::int from "articles" as t where <scope and filters>) end
 *         from (select count(*)::int as c from "page") as n) as "total"
 * ```
 *
 * The count only runs when it cannot be derived from the page itself: a page that is not full
 * (and not past the end) already tells the total, and `withCount=false` skips it entirely. With
 * `rememberTotal`, a count of the table's own rows is skipped too when the table has not changed
 * since the reader last saw the total (row-count.ts `rememberedCount`), and the statement also
 * selects the change count it read the total at, computed once: `with ..., "__changes" as (select
 * <changeCount> as "v") select ..., (select "__changes"."v" from "__changes") as "changes"`.
 *
 * With a row budget checked inline (row-budget.ts), the probe is the statement's `from`, and the
 * data and the total are computed only within the budget: `select case when "budget"."n" > $5
 * then null else (<data>) end as "data", ..., "budget"."n" as "rows" from (<probe>) as "budget"`.
 *
 * A cursor page (`pagination.mode` `cursor`) chooses its rows with a keyset instead of an offset
 * (`withPage`), is counted only with `withCount` (a plain `count(*)`, or the row counts' sum), and
 * also selects its edges (`cursorEdges`, `CursorPageRow`), from which the next and previous
 * cursors are made.
 */
export function compileFindPage (db: Kysely<any>, model: ContentType, spec: PageSpec, options: CompileOptions): Read<PageRow> {
  const { pagination } = spec
  const { start, limit, withCount } = pagination
  const data = pageJson(model, spec, options)
  const { countFunction } = options
  const remember = withCount && spec.rememberTotal === true && countIsRememberable(model, spec, options.rowCounts, countFunction)
  const scan = compileCount(db, model, spec, options)
  const count = remember ? rememberedCount(scan) : scan
  // A cursor page cannot tell the total from its own rows: counted only when asked.
  const total = !withCount
    ? sql<number | null>`null::int`
    : pagination.mode === 'cursor'
      ? sql<number | null>`(${count})`
      : sql<number | null>`(select case when n.c < ${limit}::int and (n.c > 0 or ${start}::int = 0) then ${start}::int + n.c else (${count}) end from (select count(*)::int as c from "page") as n)`
  const more = [
    ...pagination.mode === 'cursor' ? cursorEdges(db, model, spec, pagination, options) : [],
    ...remember ? [readChanges.as('changes')] : []
  ]
  const budget = inline(rowBudget(model, spec, limit, options))
  const page = withPage(db, model, spec, pagination, options)
  const read = remember ? page.with(CHANGES_CTE, (q) => q.selectNoFrom(changeCount(model, countFunction!).as('v'))) : page
  if (budget === null) return read.selectNoFrom([data.as('data'), total.as('total'), ...more]) as Read<PageRow>
  const max = spec.maxRows!
  return read.selectFrom(budget)
    .select([withinBudget(data, max).as('data'), withinBudget(total, max).as('total'), sql<number>`"budget"."n"`.as('rows'), ...more]) as Read<PageRow>
}

/** The documents of `"page"` rendered as one JSON array text, in the page's order. */
function pageJson (model: ContentType, spec: FindSpec, options: CompileOptions): RawBuilder<string> {
  const order = sql.join([...spec.sort.map((term, i) => sql`${sql.ref(`page.s${i}`)} ${sql.raw(term.direction)}`), sql`"page"."__id" asc`])
  const columns = selectList(model, ROOT, spec.fields, spec.populate, createPopulateContext(spec.status, options, spec.publicationFilter))
  return sql<string>`(select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by ${order}), '') || ']'
    from "page" join ${sql.table(model.tableName)} as ${sql.id(ROOT)} on ${sql.ref(`${ROOT}.id`)} = "page"."__id"
    cross join lateral (select ${columns}) as d)`
}

/** An inline row budget as the read's `from`: `(<probe>) as "budget"`; null when none runs inline. */
function inline (budget: RowBudget | null) {
  return budget === null || !budget.inline ? null : sql<{ n: number }>`(${budget.probe})`.as('budget')
}

/**
 * Documents as JSON objects, for callers that want every match (the document service's findMany
 * without pagination) or a bounded window of them.
 *
 * ```sql
 * select '[' || coalesce(string_agg(row_to_json(r)::text, ','), '') || ']' as "data" from (select ... order by ...) as r
 * ```
 *
 * With a row budget checked inline, the documents are chosen first, as for a page.
 */
export function compileFindMany (db: Kysely<any>, model: ContentType, spec: FindSpec & { start?: number, limit?: number }, options: CompileOptions): Read<ReadRow> {
  const budget = inline(rowBudget(model, spec, spec.limit ?? null, options))
  if (budget !== null) {
    return withPage(db, model, spec, { start: spec.start ?? 0, limit: spec.limit ?? null }, options).selectFrom(budget)
      .select([withinBudget(pageJson(model, spec, options), spec.maxRows!).as('data'), sql<number>`"budget"."n"`.as('rows')]) as Read<ReadRow>
  }
  let rows = ordered(scopedRows(db, model, spec, options).select(documentColumns(model, spec, options)), spec, options)
  if (spec.limit !== undefined) rows = rows.limit(rowLimit(spec.limit))
  if (spec.start !== undefined && spec.start > 0) rows = rows.offset(spec.start)
  return db.selectFrom(rows.as('r')).select(sql<string>`${JSON_ARRAY('r')}`.as('data')) as Read<ReadRow>
}

/** The one document a read renders, as the `"page"` of a row budget: `select t.id as "__id" ... limit 1`. */
function onePage (db: Kysely<any>, model: ContentType, spec: FindSpec, documentId: string | null, options: CompileOptions) {
  const page = pageRows(db, model, spec, { start: 0, limit: 1 }, options)
  return documentId === null ? page : page.where(`${ROOT}.document_id`, '=', documentId)
}

/**
 * One document by documentId, rendered as a JSON object (or no row).
 *
 * ```sql
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where <scope> and t.document_id = $1 limit 1) as r
 * ```
 *
 * With a row budget checked inline, the document is chosen first (`with "page" as (select t.id
 * as "__id" ... limit 1)`), and the answer is one row, whose `data` is null when there is none.
 */
export function compileFindOne (db: Kysely<any>, model: ContentType, spec: FindSpec, documentId: string | null, options: CompileOptions): Read<ReadRow> {
  const budget = inline(rowBudget(model, spec, 1, options))
  if (budget !== null) {
    const data = sql<string>`(select row_to_json(r)::text from (select ${sql.join(documentColumns(model, spec, options))}
      from "page" join ${sql.table(model.tableName)} as ${sql.id(ROOT)} on ${sql.ref(`${ROOT}.id`)} = "page"."__id") as r)`
    return db.with('page', () => onePage(db, model, spec, documentId, options)).selectFrom(budget)
      .select([withinBudget(data, spec.maxRows!).as('data'), sql<number>`"budget"."n"`.as('rows')]) as Read<ReadRow>
  }
  return renderOne(db, model, spec, documentId, options, model.tableName)
}

/** `compileFindOne` without a row budget, reading the model's rows from `from`. */
function renderOne (db: Kysely<any>, model: ContentType, spec: FindSpec, documentId: string | null, options: CompileOptions, from: string): Read<ReadRow> {
  let rows = scopedRows(db, model, spec, options, from).select(documentColumns(model, spec, options))
  if (documentId !== null) rows = rows.where(`${ROOT}.document_id`, '=', documentId)
  rows = ordered(rows, spec, options).limit(rowLimit(1))
  return db.selectFrom(rows.as('r')).select(sql<string>`row_to_json(r)::text`.as('data')) as Read<ReadRow>
}

/**
 * Whether `compileWrittenOne` can render a document from the rows its own statement wrote: the
 * read needs nothing of the document but those rows (no populated attribute, which would read
 * links the statement writes too; no publication cohort or locale fallback, which read the
 * document's other rows; no row budget to check). The table itself shows a statement none of its
 * own writes.
 */
export function readsWrittenRowsOnly (model: ContentType, spec: FindSpec, options: CompileOptions): boolean {
  return spec.populate.size === 0 && spec.publicationFilter == null && (spec.fallbacks ?? []).length === 0 &&
    rowBudget(model, spec, 1, options) === null
}

/**
 * One document rendered from the rows a data-modifying CTE (`from`) of the statement that wrote
 * it returns, for that statement to end with (lib/documents/create-direct.ts), where
 * `readsWrittenRowsOnly` holds: `compileFindOne`'s statement over the CTE instead of the table.
 *
 * ```sql
 * select row_to_json(r)::text as "data" from (select ... from "rows" as t where <scope> and t.document_id = $1 limit 1) as r
 * ```
 */
export function compileWrittenOne (db: Kysely<any>, model: ContentType, spec: FindSpec, documentId: string, options: CompileOptions, from: string): Read<ReadRow> {
  return renderOne(db, model, spec, documentId, options, from)
}

/**
 * The number of documents' rows in scope: `select count(*)::int from <table> as t where <scope>
 * and <filters>`, or, when the table's row counts are kept and the count needs no row (no
 * filters, which row-level permissions are part of, and no locale fallbacks), their sum
 * (row-count.ts):
 *
 * ```sql
 * select coalesce(sum(c.n), 0)::int as "count" from "content_api_row_counts" as c
 * where c.table_name = $1 and c.published = $2 and c.locale = $3
 * ```
 */
export function compileCount (db: Kysely<any>, model: ContentType, scope: DocumentScope & { filters?: FilterNode | null }, options: CompileOptions) {
  return countRows(db, model, scope, options.rowCounts) ??
    scopedRows(db, model, scope, options).select(sql<number>`count(*)::int`.as('count'))
}

/**
 * The row budget's probe of a read (row-budget.ts) as a statement of its own, run before the
 * read, for a page or window of documents (`start`, `limit`: null for every match) or one
 * document (`documentId`, null for a single type's). Null when the read needs none, or checks
 * its budget inline; otherwise a statement selecting `n`, the rows the read would return,
 * counted up to `maxRows + 1`:
 *
 * ```sql
 * with "page" as (select t.id as "__id" from "articles" as t where <scope and filters> order by ... limit 25)
 * select "budget"."n" as "n" from (select $1::int + b.n as n from (select count(*)::int as n from (
 *   select 1 from "page", "articles" as t, ... where t.id = "page"."__id" and ... union all ... limit 10001) as b) as b) as "budget"
 * ```
 */
export function compileRowProbe (
  db: Kysely<any>, model: ContentType, spec: FindSpec, read: Window | { documentId: string | null }, options: CompileOptions
): Read<{ n: number }> | null {
  const one = 'documentId' in read
  const budget = rowBudget(model, spec, one ? 1 : read.limit, options)
  if (budget === null || budget.inline) return null
  const page = one ? db.with('page', () => onePage(db, model, spec, read.documentId, options)) : withPage(db, model, spec, read, options)
  return page.selectFrom(sql<{ n: number }>`(${budget.probe})`.as('budget')).select(sql<number>`"budget"."n"`.as('n')) as Read<{ n: number }>
}
