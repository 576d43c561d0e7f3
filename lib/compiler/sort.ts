import { sql, type RawBuilder } from 'kysely'
import type { SortHop, SortTerm } from '../query/sort.js'
import { compileFilter, type FilterContext } from './filters.js'
import { orderSql, ref, relatedRows } from './related-rows.js'

/** `(select <leaf> from <hop's rows> where ... order by <stored order> limit 1)`, hop after hop. */
function through (path: readonly SortHop[], parent: string, ctx: FilterContext, leaf: (alias: string) => RawBuilder<unknown>): RawBuilder<unknown> {
  if (path.length === 0) return leaf(parent)
  const [hop, ...rest] = path
  const r = ctx.next('r')
  const l = ctx.next('l')
  const { from, where, order } = relatedRows(hop.association, hop.target, hop.owner, parent, r, l, ctx.status)
  if (hop.visible !== null) where.push(compileFilter(hop.visible, r, ctx))
  return sql`(select ${through(rest, r, ctx, leaf)} from ${from} where ${sql.join(where, sql` and `)} order by ${orderSql(order)} limit 1)`
}

/**
 * The number of rows one hop reaches from `parent`: those the caller may see, in the request's
 * status. `select count(*)::int from <related rows> where <link> [and <status>] [and <visible>]`.
 */
export function countOf (hop: SortHop, parent: string, ctx: FilterContext): RawBuilder<number> {
  const r = ctx.next('r')
  const l = ctx.next('l')
  const { from, where } = relatedRows(hop.association, hop.target, hop.owner, parent, r, l, ctx.status)
  if (hop.visible !== null) where.push(compileFilter(hop.visible, r, ctx))
  return sql<number>`(select count(*)::int from ${from} where ${sql.join(where, sql` and `)})`
}

/**
 * The value a sort term orders by: a column of the row, or for `sort=category.name` the related
 * row's column, read by a scalar sub-select (the first related row in stored order for to-many
 * relations), so sorting through relations never multiplies rows:
 *
 * ```sql
 * order by (select r1.name from "categories" as r1 join "articles_category_lnk" as l1 on l1.category_id = r1.id
 *           where l1.article_id = t.id order by l1.id asc limit 1) asc, t.id asc
 * ```
 *
 * `sort=articles:count:desc` orders by the number of related rows:
 *
 * ```sql
 * order by (select count(*)::int from "articles" as r1 join "articles_category_lnk" as l2 on l2.article_id = r1.id
 *           where l2.category_id = t.id and r1.published_at is not null) desc, t.id asc
 * ```
 */
export function sortExpression (term: SortTerm, alias: string, ctx: FilterContext): RawBuilder<unknown> {
  if (term.count === true) {
    const last = term.path[term.path.length - 1]
    return through(term.path.slice(0, -1), alias, ctx, (parent) => countOf(last, parent, ctx))
  }
  return through(term.path, alias, ctx, (parent) => ref(parent, term.field.column))
}
