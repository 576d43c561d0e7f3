import { sql, type RawBuilder } from 'kysely'
import type { Component, ContentType, Field } from '../model/registry.js'
import type { PublicationFilter, Status } from '../query/index.js'
import type { PopulateNode, PopulateSelection, PopulateTree } from '../query/populate.js'
import { compileFilter, createFilterContext, type FilterCompileOptions, type FilterContext } from './filters.js'
import { outputExpression } from './projection.js'
import { sortExpression } from './sort.js'
import { orderSql, ref, relatedRows, type OrderTerm, type RelatedRows } from './related-rows.js'
import { rowLimit } from './row-limit.js'

/**
 * Populate as correlated sub-selects: every populated attribute is one expression in the parent's
 * select list that renders its related rows as JSON, so a request with `populate` three levels
 * deep is still ONE SQL statement, with no N+1 round trips. For `populate[authors][sort]=name`:
 *
 * ```sql
 * (select coalesce(json_agg(q.doc order by q.o0 asc, q.o1 asc), '[]'::json) from (
 *   select row_to_json(v1) as doc, r1.name as o0, r1.id as o1
 *   from "articles_authors_lnk" as l1
 *   cross join lateral (select * from "authors" as r1 where r1.id = l1.author_id offset 0) as r1
 *   cross join lateral (select r1.id as "id", r1.document_id as "documentId", r1.name as "name", ...) as v1
 *   where l1.article_id = t.id
 *   order by r1.name asc, r1.id asc
 * ) as q) as "authors"
 * ```
 *
 * Relations keep their stored order (the link table's order column) unless a sort is given; a
 * draft & publish target follows the request's status; `start`/`limit` apply per parent.
 */
/**
 * The request's status, the compile options and a source of unique aliases for one statement;
 * and the request's publication cohort, which populated draft & publish targets follow too, as
 * Strapi 5 applies it to every sub-query of the read.
 */
export interface PopulateContext extends FilterContext {
  publicationFilter: PublicationFilter | null
}

export function createPopulateContext (status: Status, compile: FilterCompileOptions, publicationFilter: PublicationFilter | null = null): PopulateContext {
  return { ...createFilterContext(compile, status), publicationFilter }
}

/** `expr as "name", ...` for a row's fields and its populated attributes. */
export function selectList (
  model: ContentType | Component, alias: string, fields: readonly Field[] | null, populate: PopulateTree, ctx: PopulateContext, extra: RawBuilder<unknown>[] = []
): RawBuilder<unknown> {
  const columns = (fields ?? model.defaultFields).map((f) => sql`${outputExpression(f, alias)} as ${sql.id(f.name)}`)
  const nested = [...populate].map(([name, node]) => sql`${populateExpression(node, alias, model, ctx)} as ${sql.id(name)}`)
  return sql.join([...extra, ...columns, ...nested])
}

/**
 * The rows of `source` a selection keeps, in the order it renders them: the source's conditions
 * (the link, the request's status) and the selection's filters (the caller's visible rows ANDed
 * in by the parser), its sort (then `id`) or the stored order, and its per-parent window. Both the
 * rendering below and the row budget (row-budget.ts) read related rows through this one place,
 * so they always count the rows that are rendered.
 */
export interface SelectedRows {
  from: RawBuilder<unknown>
  /** The same rows, read per parent row (`RelatedRows.perParent`): how the rendering reads them. */
  perParent: RawBuilder<unknown>
  where: Array<RawBuilder<unknown>>
  order: OrderTerm[]
  /** ` limit 5 offset $1` (the limit a literal: row-limit.ts), or nothing; to-one sources render their first row only. */
  window: RawBuilder<unknown>
  toMany: boolean
}

export function selectedRows (source: RelatedRows, selection: PopulateSelection, r: string, ctx: PopulateContext): SelectedRows {
  const where = [...source.where]
  if (selection.filters !== null) where.push(compileFilter(selection.filters, r, ctx))
  const sortTerms: OrderTerm[] = selection.sort.map((term) => ({ expr: sortExpression(term, r, ctx), direction: term.direction }))
  const order = sortTerms.length > 0
    ? [...sortTerms, { expr: ref(r, 'id'), direction: 'asc' as const }]
    : source.order
  const window = sql`${selection.limit === null ? sql`` : sql` limit ${rowLimit(selection.limit)}`}${selection.start === null || selection.start === 0 ? sql`` : sql` offset ${selection.start}`}`
  return { from: source.from, perParent: source.perParent, where, order, window, toMany: source.toMany }
}

/** Renders the rows of `source` (one object, or an ordered array) with the selection's fields. */
function rendered (
  source: RelatedRows, target: ContentType | Component, selection: PopulateSelection, r: string, ctx: PopulateContext, extra: RawBuilder<unknown>[] = []
): RawBuilder<unknown> {
  const v = ctx.next('v')
  const rows = selectedRows(source, selection, r, ctx)
  const lateral = sql`cross join lateral (select ${selectList(target, r, selection.fields, selection.populate, ctx, extra)}) as ${sql.id(v)}`
  const orderBy = orderSql(rows.order)
  const whereSql = sql.join(rows.where, sql` and `)

  if (!rows.toMany) {
    return sql`(select row_to_json(${sql.id(v)}) from ${rows.perParent} ${lateral} where ${whereSql} order by ${orderBy} limit 1)`
  }
  // The order travels with each row (o0, o1, ...) so json_agg can apply it explicitly.
  const keys = rows.order.map((t, i) => sql`${t.expr} as ${sql.id(`o${i}`)}`)
  const aggregateOrder = orderSql(rows.order.map((t, i) => ({ ...t, expr: sql.ref(`q.o${i}`) })))
  return sql`(select coalesce(json_agg(q.doc order by ${aggregateOrder}), '[]'::json) from (select row_to_json(${sql.id(v)}) as doc, ${sql.join(keys)} from ${rows.perParent} ${lateral} where ${whereSql} order by ${orderBy}${rows.window}) as q)`
}

/** i18n's `localizations`: the other rows of the parent's document, in the same status, every other locale. */
export function localizationRows (target: ContentType, parent: string, r: string, status: Status): RelatedRows {
  const rows = sql`${sql.table(target.tableName)} as ${sql.id(r)}`
  return {
    from: rows,
    perParent: rows,
    where: [
      sql`${ref(r, 'document_id')} = ${ref(parent, 'document_id')}`,
      sql`${ref(r, 'locale')} <> ${ref(parent, 'locale')}`,
      target.draftAndPublish ? (status === 'draft' ? sql`${ref(r, 'published_at')} is null` : sql`${ref(r, 'published_at')} is not null`) : sql`true`
    ],
    order: [{ expr: ref(r, 'id'), direction: 'asc' }],
    toMany: true
  }
}

/** `populate[x][count]=true`: `{ "count": n }` instead of the rows. */
function countOf (source: RelatedRows, selection: PopulateSelection, r: string, ctx: PopulateContext): RawBuilder<unknown> {
  const where = [...source.where]
  if (selection.filters !== null) where.push(compileFilter(selection.filters, r, ctx))
  return sql`(select ('{"count":' || count(*) || '}')::json from ${source.perParent} where ${sql.join(where, sql` and `)})`
}

/** The SQL expression of one populated attribute of the row aliased `parent`. */
export function populateExpression (node: PopulateNode, parent: string, parentModel: ContentType | Component, ctx: PopulateContext): RawBuilder<unknown> {
  if (node.kind === 'localizations') {
    const r = ctx.next('r')
    return rendered(localizationRows(node.target, parent, r, ctx.status), node.target, node, r, ctx)
  }
  if (node.kind === 'dynamiczone') {
    // One branch per component type, each rendering its own shape, merged in stored order.
    const branches = [...node.components].map(([uid, selection]) => {
      const r = ctx.next('r')
      const l = ctx.next('l')
      const v = ctx.next('v')
      const source = relatedRows(node.association, selection.target, parentModel.uid, parent, r, l, ctx.status, ctx.publicationFilter)
      const where = [...source.where]
      if (selection.filters !== null) where.push(compileFilter(selection.filters, r, ctx))
      const list = selectList(selection.target, r, selection.fields, selection.populate, ctx, [sql`${uid}::text as "__component"`])
      return sql`select row_to_json(${sql.id(v)}) as doc, ${ref(l, 'order')} as o0, ${ref(l, 'id')} as o1 from ${source.perParent} cross join lateral (select ${list}) as ${sql.id(v)} where ${sql.join(where, sql` and `)}`
    })
    if (branches.length === 0) return sql`'[]'::json`
    return sql`(select coalesce(json_agg(q.doc order by q.o0 asc nulls last, q.o1 asc), '[]'::json) from (${sql.join(branches, sql` union all `)}) as q)`
  }
  const r = ctx.next('r')
  const l = ctx.next('l')
  const source = relatedRows(node.association, node.target, parentModel.uid, parent, r, l, ctx.status, ctx.publicationFilter)
  if (node.kind !== 'component' && node.count) return countOf(source, node, r, ctx)
  return rendered(source, node.target, node, r, ctx)
}
