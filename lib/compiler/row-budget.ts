import { sql, type RawBuilder } from 'kysely'
import type { ComponentAssociation, DynamicZoneAssociation, MediaAssociation, RelationAssociation } from '../model/associations.js'
import type { Component, ContentType } from '../model/registry.js'
import type { Status } from '../query/index.js'
import type { PopulateNode, PopulateSelection, PopulateTree } from '../query/populate.js'
import { compileFilter, type FilterCompileOptions } from './filters.js'
import { createPopulateContext, localizationRows, selectedRows, type PopulateContext, type SelectedRows } from './populate.js'
import { linkTable, orderSql, ref, relatedRows, type RelatedRows } from './related-rows.js'

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
 *    returns, reading related rows exactly as the rendering does (selectedRows in populate.ts:
 *    the same links, status, filters and visible rows, the same per-parent window), and stops
 *    counting at `maxRows + 1`. The read only runs when the count is within the budget, so a
 *    request over it renders nothing and costs about `maxRows` rows per populate level to refuse.
 *    The documents and their to-one chains count at their static bound (the page size each), so
 *    the probe only reads the levels the query does not bound.
 */

type LinkedAssociation = RelationAssociation | MediaAssociation | ComponentAssociation | DynamicZoneAssociation

/** The most rows one level of `node` has per parent row, when the query bounds it (else null). */
function perParent (node: Exclude<PopulateNode, { kind: 'dynamiczone' }>): number | null {
  switch (node.kind) {
    case 'relation': return node.association.toMany ? node.limit : 1
    case 'media': return node.association.multiple ? node.limit : 1
    case 'component': return node.association.repeatable ? node.limit : 1
    case 'localizations': return node.limit
  }
}

/** A count renders a number, not rows. */
const rendersRows = (node: PopulateNode): boolean => node.kind === 'dynamiczone' || node.kind === 'component' || node.kind === 'localizations' || !node.count

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
      if (!rendersRows(node)) continue
      if (node.kind === 'dynamiczone') {
        if (node.components.size > 0) return false
        continue
      }
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

/**
 * One level of a probe branch: the related rows of one populated attribute (or one component
 * type of a dynamic zone), as a `from` item and the conditions tying it to its parent.
 */
interface ProbeLevel {
  from: RawBuilder<unknown>
  where: Array<RawBuilder<unknown>>
  /** The alias of the level's rows, the next level's parent. */
  alias: string
  model: ContentType | Component
  populate: PopulateTree
  /** At most one row per parent (a to-one level): counted at its bound where its parent is. */
  toOne: boolean
  /** The other locales of its parent's document: the parent's `document_id` and `locale` are read. */
  localizations?: true
}

/**
 * A level of related rows. A plain join when every related row counts, so PostgreSQL may join
 * the levels as it sees fit; a lateral sub-select when a level keeps some rows per parent (a
 * to-one level renders its first row only, a window some rows): the same rows as the rendering,
 * in the same order, as what the next level counts depends on which they are.
 */
function levelOf (rows: SelectedRows, windowed: boolean, r: string, ctx: PopulateContext, model: ContentType | Component, populate: PopulateTree): ProbeLevel {
  if (rows.toMany && !windowed) return { from: rows.from, where: rows.where, alias: r, model, populate, toOne: false }
  const p = ctx.next('p')
  const tail = rows.toMany ? sql`${rows.window}` : sql` limit 1`
  const from = sql`lateral (select ${sql.id(r)}.* from ${rows.from} where ${sql.join(rows.where, sql` and `)} order by ${orderSql(rows.order)}${tail}) as ${sql.id(p)}`
  return { from, where: [], alias: p, model, populate, toOne: !rows.toMany }
}

function selected (source: RelatedRows, selection: PopulateSelection, r: string, ctx: PopulateContext, model: ContentType | Component): ProbeLevel {
  const windowed = selection.limit !== null || selection.start !== null
  return levelOf(selectedRows(source, selection, r, ctx), windowed, r, ctx, model, selection.populate)
}

/**
 * A level whose rows can be counted on their links alone: a list (no window) of rows without a
 * condition of their own (no filter, no visible-rows condition, no draft & publish status) and
 * with nothing populated below them. A link always names an existing row (relation and media
 * links by a foreign key that deletes them with the row, component links because components are
 * deleted with their links), so counting links counts the rows, and the planner has one table
 * less to join.
 */
function linksOnly (association: LinkedAssociation, target: ContentType | Component, selection: PopulateSelection): boolean {
  const toMany = association.kind === 'relation' ? association.toMany : association.kind === 'media' ? association.multiple : association.kind === 'dynamiczone' || association.repeatable
  const status = association.kind === 'relation' && (target as ContentType).draftAndPublish
  return toMany && !status && selection.filters === null && selection.limit === null && selection.start === null &&
    ![...selection.populate.values()].some(rendersRows)
}

/** The probe levels of the attributes populated on rows of `model` aliased `parent`. */
function levelsOf (tree: PopulateTree, parent: string, model: ContentType | Component, ctx: PopulateContext): ProbeLevel[] {
  const levels: ProbeLevel[] = []
  const links = (table: string, l: string, source: RelatedRows, target: ContentType | Component): ProbeLevel =>
    ({ from: sql`${sql.table(table)} as ${sql.id(l)}`, where: source.where, alias: l, model: target, populate: new Map(), toOne: false })
  for (const node of tree.values()) {
    if (!rendersRows(node)) continue
    if (node.kind === 'dynamiczone') {
      for (const [, selection] of node.components) {
        // A dynamic zone's rows are neither sorted nor windowed (see populate.ts): only filtered.
        const r = ctx.next('r')
        const l = ctx.next('l')
        const source = relatedRows(node.association, selection.target, model.uid, parent, r, l, ctx.status)
        if (linksOnly(node.association, selection.target, selection)) {
          levels.push(links(node.association.joinTable, l, source, selection.target))
          continue
        }
        const where = selection.filters === null ? source.where : [...source.where, compileFilter(selection.filters, r, ctx)]
        levels.push({ from: source.from, where, alias: r, model: selection.target, populate: selection.populate, toOne: false })
      }
      continue
    }
    const r = ctx.next('r')
    if (node.kind === 'localizations') {
      levels.push({ ...selected(localizationRows(node.target, parent, r, ctx.status), node, r, ctx, node.target), localizations: true })
      continue
    }
    const l = ctx.next('l')
    const source = relatedRows(node.association, node.target, model.uid, parent, r, l, ctx.status)
    if (linksOnly(node.association, node.target, node)) levels.push(links(linkTable(node.association), l, source, node.target))
    else levels.push(selected(source, node, r, ctx, node.target))
  }
  return levels
}

/**
 * The probe: the rows below the documents in `"page"` (`__id`) that the query does not bound by
 * itself, one `union all` branch per populate level, breadth first, counted up to `limit`.
 * PostgreSQL's `limit` stops the branches as soon as that many rows are found, and a level's
 * branch only walks rows its parent's branch counted, so refusing costs about `limit` rows per
 * level. The documents (when `rootRows` bounds them) and the to-one levels reached from them
 * through to-one levels only are not read: `known` counts them at their bound.
 *
 * ```sql
 * select count(*)::int as n from (
 *   select 1 from (select "__id" as "id" from "page") as t, "authors" as r1 join "articles_authors_lnk" as l2 on l2.author_id = r1.id
 *     where l2.article_id = t.id
 *   union all select 1 from ..., "articles" as r4 join "articles_authors_lnk" as l5 on ... where ... and l5.author_id = r1.id
 *   limit $1) as b
 * ```
 */
function probe (
  model: ContentType, populate: PopulateTree, rootRows: number | null, status: Status, options: FilterCompileOptions, max: number
): { sql: RawBuilder<{ n: number }>, known: number } | null {
  const ctx = createPopulateContext(status, options)
  const t = 't'
  // Related rows hang on their parent's id; only `localizations` reads more of its parent (its
  // document and locale), so the documents' table is joined only for a path that starts there.
  const ids = sql`(select "__id" as "id" from "page") as ${sql.id(t)}`
  const documents = sql`"page" join ${sql.table(model.tableName)} as ${sql.id(t)} on ${ref(t, 'id')} = "page"."__id"`
  const branches: Array<RawBuilder<unknown>> = []
  const branch = (path: ProbeLevel[]): void => {
    const from = [path[0]?.localizations === true ? documents : ids, ...path.map((level) => level.from)]
    const where = path.flatMap((level) => level.where)
    branches.push(sql`select 1 from ${sql.join(from)}${where.length === 0 ? sql`` : sql` where ${sql.join(where, sql` and `)}`}`)
  }
  let known = 0
  if (rootRows === null) branch([])
  else known = rootRows
  // Breadth first: `known` is a level's static row count while every level above it is to-one.
  let frontier = levelsOf(populate, t, model, ctx).map((level) => ({ path: [level], known: rootRows !== null && level.toOne }))
  while (frontier.length > 0) {
    const next: typeof frontier = []
    for (const { path, known: bounded } of frontier) {
      const level = path[path.length - 1]
      if (bounded) known += rootRows!
      else branch(path)
      for (const child of levelsOf(level.populate, level.alias, level.model, ctx)) next.push({ path: [...path, child], known: bounded && child.toOne })
    }
    frontier = next
  }
  // Never without branches: a query bounded in full within the budget needs no probe (rowProbe).
  if (known > max) return null
  return { sql: sql<{ n: number }>`select count(*)::int as n from (${sql.join(branches, sql` union all `)} limit ${max - known + 1}) as b`, known }
}

/** How many levels `populate` nests: 0 without populate, 1 when nothing populated populates more. */
function depthOf (tree: PopulateTree): number {
  let depth = 0
  for (const node of tree.values()) {
    const below = node.kind === 'dynamiczone'
      ? Math.max(0, ...[...node.components.values()].map((c) => depthOf(c.populate)))
      : depthOf(node.populate)
    depth = Math.max(depth, 1 + below)
  }
  return depth
}

/**
 * The row budget of a read whose documents are the rows of a `"page"` CTE (`__id`): the probe,
 * a statement body selecting `n`, the rows of the answer counted up to `maxRows + 1`, and where
 * it runs. Null when there is no `maxRows` or the static bound is within it.
 *
 * - `inline`: in the read's own statement, which renders its data only within the budget
 *   (`case when n > max then null else (<data>) end`: PostgreSQL runs an uncorrelated scalar
 *   sub-select only when its value is needed). One round trip. Chosen when populate is one level
 *   deep, where the data part is the size of an ordinary list's.
 * - otherwise in a statement of its own, run first. PostgreSQL plans a whole statement before
 *   running any of it, and with its default `jit = on` JIT-compiles it when the estimated cost is
 *   high: for a populate bomb refused inside its own statement, compiling the data part it never
 *   ran took 7 s (bench/README.md). Alone, the probe's plan stays small and a refusal costs what
 *   the probe reads (about 0.1 s for the same bomb).
 */
export interface RowBudget {
  probe: RawBuilder<{ n: number }>
  inline: boolean
}

export function rowBudget (
  model: ContentType, spec: { populate: PopulateTree, status: Status, maxRows?: number }, rootRows: number | null, options: FilterCompileOptions
): RowBudget | null {
  const max = spec.maxRows
  if (max === undefined) return null
  const bound = staticRowBound(rootRows, spec.populate)
  if (bound !== null && bound <= max) return null
  // Counting the documents and their to-one levels at their bound leaves the probe less to read;
  // when that bound alone is over the budget, every row is counted instead.
  const counted = probe(model, spec.populate, rootRows, spec.status, options, max) ?? probe(model, spec.populate, null, spec.status, options, max)!
  return { probe: sql<{ n: number }>`select ${counted.known}::int + b.n as n from (${counted.sql}) as b`, inline: depthOf(spec.populate) <= 1 }
}

/** `case when "budget"."n" > max then null else <expression> end`, for a statement whose `from` is the inline probe. */
export function withinBudget<T> (expression: RawBuilder<T>, max: number): RawBuilder<T | null> {
  return sql<T | null>`case when "budget"."n" > ${max}::int then null else ${expression} end`
}
