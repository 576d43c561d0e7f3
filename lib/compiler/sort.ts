import { sql, type RawBuilder } from 'kysely'
import type { SortHop, SortTerm } from '../query/sort.js'
import { compileFilter, type FilterContext } from './filters.js'
import { orderSql, ref, relatedRows } from './related-rows.js'

function through (path: readonly SortHop[], parent: string, column: string, ctx: FilterContext): RawBuilder<unknown> {
  const [hop, ...rest] = path
  const r = ctx.next('r')
  const l = ctx.next('l')
  const { from, where, order } = relatedRows(hop.association, hop.target, hop.owner, parent, r, l, ctx.status)
  if (hop.visible !== null) where.push(compileFilter(hop.visible, r, ctx))
  const value = rest.length === 0 ? ref(r, column) : through(rest, r, column, ctx)
  return sql`(select ${value} from ${from} where ${sql.join(where, sql` and `)} order by ${orderSql(order)} limit 1)`
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
 */
export function sortExpression (term: SortTerm, alias: string, ctx: FilterContext): RawBuilder<unknown> {
  return term.path.length === 0 ? ref(alias, term.field.column) : through(term.path, alias, term.field.column, ctx)
}
