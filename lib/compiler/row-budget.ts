import { sql, type RawBuilder } from 'kysely'
import type { Component, ContentType } from '../model/registry.js'
import type { PopulateNode, PopulateSelection, PopulateTree } from '../query/populate.js'
import { compileFilter } from './filters.js'
import { createPopulateContext, localizationRows, selectedRows, type PopulateContext, type SelectedRows } from './populate.js'
import { orderSql, ref, relatedRows, type RelatedRows } from './related-rows.js'
import type { FilterCompileOptions } from './filters.js'
import type { Status } from '../query/index.js'

/**
 * `limits.maxRows`: the most rows one response may return, its documents and every populated row
 * (a populated to-one relation is one row, a list of authors one per author, a component one,
 * a count none). Checked in two steps:
 *
 * 1. **Statically**, from the query alone: the page size times, along each populate path, the
 *    most rows each level can have per parent: 1 for a to-one relation, media or component, the
 *    populate's own `limit` for a to-many one. When that bound is within `maxRows`, nothing more
 *    runs. A to-many level without `limit` (Strapi's populate has no default one), a dynamic zone
 *    or `localizations` has no static bound.
 * 2. Otherwise **a probe**, a statement run before the read, counts the rows the populate tree
 *    returns along every path, reading related rows exactly as the rendering does (selectedRows
 *    in populate.ts: the same links, status, filters and visible rows, the same per-parent
 *    window), and stops counting at `maxRows + 1`. The read only runs when the count is within
 *    the budget, so a request over it renders nothing and costs about `maxRows` rows per
 *    populate level to refuse.
 */

/** The most rows one level of `node` has per parent row, when the query bounds it (else null). */
function perParent (node: Exclude<PopulateNode, { kind: 'dynamiczone' }>): number | null {
  switch (node.kind) {
    case 'relation': return node.association.toMany ? node.limit : 1
    case 'media': return node.association.multiple ? node.limit : 1
    case 'component': return node.association.repeatable ? node.limit : 1
    case 'localizations': return node.limit
  }
}

/**
 * An upper bound of the rows a response returns with `rootRows` documents (null: unknown), or
 * null when the query alone cannot bound it.
 *
 * @example
 * // pagination[pageSize]=10&populate[category]=true&populate[authors][limit]=3
 * staticRowBound(10, tree) // 10 + 10 * 1 + 10 * 3 = 50
 */
export function staticRowBound (rootRows: number | null, populate: PopulateTree): number | null {
  if (rootRows === null) return null
  let total = rootRows
  const walk = (tree: PopulateTree, parents: number): boolean => {
    for (const node of tree.values()) {
      if (node.kind === 'dynamiczone') {
        if (node.components.size > 0) return false
        continue
      }
      if (node.kind !== 'component' && node.kind !== 'localizations' && node.count) continue
      const cap = perParent(node)
      if (cap === null) return false
      const rows = parents * cap
      total += rows
      if (!walk(node.populate, rows)) return false
    }
    return true
  }
  return walk(populate, rootRows) ? total : null
}

/** One level of the probe: the related rows of one populated attribute (or one component type of a dynamic zone). */
interface ProbeLevel {
  /** `cross join lateral (select r.* from ... where ... [order by ... limit ...]) as p` */
  lateral: RawBuilder<unknown>
  alias: string
  model: ContentType | Component
  populate: PopulateTree
}

/**
 * `cross join lateral (select r.* from ... where ... [order by ... limit ...]) as p`: the rows one
 * level keeps per parent row. A to-one level renders its first row only, and a window keeps some
 * rows: the same ones here, in the same order, as what the next level counts depends on which.
 */
function lateralOf (rows: SelectedRows, windowed: boolean, r: string, ctx: PopulateContext, model: ContentType | Component, populate: PopulateTree): ProbeLevel {
  const p = ctx.next('p')
  const where = sql.join(rows.where, sql` and `)
  const tail = !rows.toMany
    ? sql` order by ${orderSql(rows.order)} limit 1`
    : windowed ? sql` order by ${orderSql(rows.order)}${rows.window}` : sql``
  return { lateral: sql`cross join lateral (select ${sql.id(r)}.* from ${rows.from} where ${where}${tail}) as ${sql.id(p)}`, alias: p, model, populate }
}

function selected (source: RelatedRows, selection: PopulateSelection, r: string, ctx: PopulateContext, model: ContentType | Component): ProbeLevel {
  const windowed = selection.limit !== null || selection.start !== null
  return lateralOf(selectedRows(source, selection, r, ctx), windowed, r, ctx, model, selection.populate)
}

/** The probe levels of the attributes populated on rows of `model` aliased `parent`. */
function levelsOf (tree: PopulateTree, parent: string, model: ContentType | Component, ctx: PopulateContext): ProbeLevel[] {
  const levels: ProbeLevel[] = []
  for (const node of tree.values()) {
    if (node.kind === 'dynamiczone') {
      for (const [, selection] of node.components) {
        // A dynamic zone's rows are neither sorted nor windowed (see populate.ts): only filtered.
        const r = ctx.next('r')
        const source = relatedRows(node.association, selection.target, model.uid, parent, r, ctx.next('l'), ctx.status)
        const where = selection.filters === null ? source.where : [...source.where, compileFilter(selection.filters, r, ctx)]
        levels.push(lateralOf({ ...source, where, window: sql`` }, false, r, ctx, selection.target, selection.populate))
      }
      continue
    }
    if (node.kind === 'localizations') {
      const r = ctx.next('r')
      levels.push(selected(localizationRows(node.target, parent, r, ctx.status), node, r, ctx, node.target))
      continue
    }
    // A count renders a number, not rows.
    if (node.kind !== 'component' && node.count) continue
    const r = ctx.next('r')
    const source = relatedRows(node.association, node.target, model.uid, parent, r, ctx.next('l'), ctx.status)
    levels.push(selected(source, node, r, ctx, node.target))
  }
  return levels
}

/**
 * The probe: the rows of the documents in `"page"` (`__id`) and of every populate path below
 * them, one `union all` branch per level, breadth first, counted up to `max + 1`. PostgreSQL's
 * `limit` stops the branches as soon as that many rows are found, and a level's branch only
 * walks rows its parent's branch counted, so refusing costs about `max` rows per level.
 *
 * ```sql
 * select count(*)::int as n from (
 *   select 1 from "page" join "articles" as t on t.id = "page"."__id"
 *   union all select 1 from "page" join "articles" as t on ...
 *     cross join lateral (select r1.* from "authors" as r1 join "articles_authors_lnk" as l2 on ... where l2.article_id = t.id) as p3
 *   union all ... cross join lateral (...) as p3 cross join lateral (select r4.* from ... where ... = p3.id) as p6
 *   limit $1) as b
 * ```
 */
function probe (model: ContentType, populate: PopulateTree, status: Status, options: FilterCompileOptions, max: number): RawBuilder<{ n: number }> {
  const ctx = createPopulateContext(status, options)
  const roots = sql`"page" join ${sql.table(model.tableName)} as ${sql.id('t')} on ${ref('t', 'id')} = "page"."__id"`
  const branches: Array<RawBuilder<unknown>> = [sql`select 1 from ${roots}`]
  let frontier = levelsOf(populate, 't', model, ctx).map((level) => ({ level, path: [level.lateral] }))
  while (frontier.length > 0) {
    const next: typeof frontier = []
    for (const { level, path } of frontier) {
      branches.push(sql`select 1 from ${roots} ${sql.join(path, sql` `)}`)
      for (const child of levelsOf(level.populate, level.alias, level.model, ctx)) next.push({ level: child, path: [...path, child.lateral] })
    }
    frontier = next
  }
  return sql<{ n: number }>`select count(*)::int as n from (${sql.join(branches, sql` union all `)} limit ${max + 1}) as b`
}

/**
 * The probe of a read whose documents are the rows of a `"page"` CTE (`__id`), or null when
 * there is no `maxRows` or the static bound is within it. A statement of its own, run before the
 * read: gating the read's data sub-select inside one statement would keep one round trip, but
 * PostgreSQL plans (and with its default `jit = on`, JIT-compiles) the whole statement before
 * running any of it, and for a populate bomb the data part alone costs seconds to compile even
 * when never run. The probe's plan stays small, so a refusal costs what the probe reads.
 */
export function rowProbe (
  model: ContentType, spec: { populate: PopulateTree, status: Status, maxRows?: number }, rootRows: number | null, options: FilterCompileOptions
): RawBuilder<{ n: number }> | null {
  const max = spec.maxRows
  if (max === undefined) return null
  const bound = staticRowBound(rootRows, spec.populate)
  if (bound !== null && bound <= max) return null
  return probe(model, spec.populate, spec.status, options, max)
}
