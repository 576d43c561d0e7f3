import { sql, type RawBuilder } from 'kysely'
import type { ComponentAssociation, DynamicZoneAssociation, MediaAssociation, RelationAssociation } from '../model/associations.js'
import type { Component, ContentType } from '../model/registry.js'
import type { PublicationFilter, Status } from '../query/index.js'
import type { PopulateNode, PopulateSelection, PopulateTree } from '../query/populate.js'
import { compileFilter, type FilterCompileOptions } from './filters.js'
import { createPopulateContext, localizationRows, selectedRows, type PopulateContext, type SelectedRows } from './populate.js'
import { linkTable, orderSql, ref, relatedRows, type RelatedRows } from './related-rows.js'
import { rowLimit } from './row-limit.js'

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
 * 2. Otherwise **a probe** counts the rows of the answer, the documents and every populated
 *    level, reading related rows exactly as the rendering does (selectedRows in populate.ts: the
 *    same links, status, filters and visible rows, the same per-parent window), and stops
 *    counting at `maxRows + 1`. The data is only rendered when the count is within the budget
 *    (see `rowBudget` for where the probe runs), so a request over it renders nothing and costs
 *    about `maxRows` rows per populate level to refuse.
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
 * type of a dynamic zone), as a `from` item and the conditions tying it to its parent, or, for a
 * to-one level with nothing below it, as one condition on its parent (`exists (...)`).
 */
interface ProbeLevel {
  from: RawBuilder<unknown> | null
  where: Array<RawBuilder<unknown>>
  /** The alias of the level's rows, the next level's parent. */
  alias: string
  model: ContentType | Component
  populate: PopulateTree
  /** The other locales of its parent's document: the parent's `document_id` and `locale` are read. */
  localizations?: true
}

/** Whether anything populated below a selection renders rows. */
const populatesRows = (selection: PopulateSelection): boolean => [...selection.populate.values()].some(rendersRows)

/**
 * A level of related rows, read as the rendering reads them. Every related row counts: a plain
 * join, so PostgreSQL may join the levels as it sees fit. A to-one level renders its first row
 * only: with nothing below it, that is one row per parent that has any (`exists`); otherwise a
 * lateral sub-select keeps that first row, as does one with a window its rows, in the same order
 * as the rendering, since what the next level counts depends on which rows they are.
 */
function levelOf (rows: SelectedRows, windowed: boolean, r: string, ctx: PopulateContext, model: ContentType | Component, populate: PopulateTree, leaf: boolean): ProbeLevel {
  if (rows.toMany && !windowed) return { from: rows.from, where: rows.where, alias: r, model, populate }
  const where = sql.join(rows.where, sql` and `)
  if (!rows.toMany && leaf) return { from: null, where: [sql`exists (select 1 from ${rows.from} where ${where})`], alias: r, model, populate }
  const p = ctx.next('p')
  const tail = rows.toMany ? sql`${rows.window}` : sql` limit 1`
  const from = sql`lateral (select ${sql.id(r)}.* from ${rows.from} where ${where} order by ${orderSql(rows.order)}${tail}) as ${sql.id(p)}`
  return { from, where: [], alias: p, model, populate }
}

function selected (source: RelatedRows, selection: PopulateSelection, r: string, ctx: PopulateContext, model: ContentType | Component): ProbeLevel {
  const windowed = selection.limit !== null || selection.start !== null
  return levelOf(selectedRows(source, selection, r, ctx), windowed, r, ctx, model, selection.populate, !populatesRows(selection))
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
  return toMany && !status && selection.filters === null && selection.limit === null && selection.start === null && !populatesRows(selection)
}

/** The probe levels of the attributes populated on rows of `model` aliased `parent`. */
function levelsOf (tree: PopulateTree, parent: string, model: ContentType | Component, ctx: PopulateContext): ProbeLevel[] {
  const levels: ProbeLevel[] = []
  const links = (table: string, l: string, source: RelatedRows, target: ContentType | Component): ProbeLevel =>
    ({ from: sql`${sql.table(table)} as ${sql.id(l)}`, where: source.where, alias: l, model: target, populate: new Map() })
  for (const node of tree.values()) {
    if (!rendersRows(node)) continue
    if (node.kind === 'dynamiczone') {
      for (const [, selection] of node.components) {
        // A dynamic zone's rows are neither sorted nor windowed (see populate.ts): only filtered.
        const r = ctx.next('r')
        const l = ctx.next('l')
        const source = relatedRows(node.association, selection.target, model.uid, parent, r, l, ctx.status, ctx.publicationFilter)
        if (linksOnly(node.association, selection.target, selection)) {
          levels.push(links(node.association.joinTable, l, source, selection.target))
          continue
        }
        const where = selection.filters === null ? source.where : [...source.where, compileFilter(selection.filters, r, ctx)]
        levels.push({ from: source.from, where, alias: r, model: selection.target, populate: selection.populate })
      }
      continue
    }
    const r = ctx.next('r')
    if (node.kind === 'localizations') {
      levels.push({ ...selected(localizationRows(node.target, parent, r, ctx.status), node, r, ctx, node.target), localizations: true })
      continue
    }
    const l = ctx.next('l')
    const source = relatedRows(node.association, node.target, model.uid, parent, r, l, ctx.status, ctx.publicationFilter)
    if (linksOnly(node.association, node.target, node)) levels.push(links(linkTable(node.association), l, source, node.target))
    else levels.push(selected(source, node, r, ctx, node.target))
  }
  return levels
}

/**
 * The probe: the documents in `"page"` (`__id`) and the rows of every populate level below them,
 * one `union all` branch per level, breadth first, counted up to `max + 1`. PostgreSQL's `limit`
 * stops the branches as soon as that many rows are found, and a level's branch only walks rows
 * its parent's branch counted, so refusing costs about `max` rows per level.
 *
 * ```sql
 * select count(*)::int as n from (
 *   select 1 from "page"
 *   union all select 1 from (select "__id" as "id" from "page") as t
 *     where exists (select 1 from "categories" as r1 join "articles_category_lnk" as l2 on l2.category_id = r1.id where l2.article_id = t.id)
 *   union all select 1 from (select "__id" as "id" from "page") as t, "articles_authors_lnk" as l4 where l4.article_id = t.id
 *   limit 10001) as b
 * ```
 */
function probe (
  model: ContentType, populate: PopulateTree, status: Status, cohort: PublicationFilter | null, options: FilterCompileOptions, max: number
): RawBuilder<{ n: number }> {
  const ctx = createPopulateContext(status, options, cohort)
  const t = 't'
  // Related rows hang on their parent's id; only `localizations` reads more of its parent (its
  // document and locale), so the documents' table is joined only for a path that starts there.
  const ids = sql`(select "__id" as "id" from "page") as ${sql.id(t)}`
  const documents = sql`"page" join ${sql.table(model.tableName)} as ${sql.id(t)} on ${ref(t, 'id')} = "page"."__id"`
  const branches: Array<RawBuilder<unknown>> = [sql`select 1 from "page"`]
  let frontier = levelsOf(populate, t, model, ctx).map((level) => [level])
  while (frontier.length > 0) {
    const next: ProbeLevel[][] = []
    for (const path of frontier) {
      const from = [path[0].localizations === true ? documents : ids, ...path.flatMap((level) => level.from === null ? [] : [level.from])]
      const where = path.flatMap((level) => level.where)
      branches.push(sql`select 1 from ${sql.join(from)}${where.length === 0 ? sql`` : sql` where ${sql.join(where, sql` and `)}`}`)
      const level = path[path.length - 1]
      for (const child of levelsOf(level.populate, level.alias, level.model, ctx)) next.push([...path, child])
    }
    frontier = next
  }
  return sql<{ n: number }>`select count(*)::int as n from (${sql.join(branches, sql` union all `)} limit ${rowLimit(max + 1)}) as b`
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
  model: ContentType, spec: { populate: PopulateTree, status: Status, publicationFilter?: PublicationFilter | null, maxRows?: number }, rootRows: number | null, options: FilterCompileOptions
): RowBudget | null {
  const max = spec.maxRows
  if (max === undefined) return null
  const bound = staticRowBound(rootRows, spec.populate)
  if (bound !== null && bound <= max) return null
  return { probe: probe(model, spec.populate, spec.status, spec.publicationFilter ?? null, options, max), inline: depthOf(spec.populate) <= 1 }
}

/** `case when "budget"."n" > max then null else <expression> end`, for a statement whose `from` is the inline probe. */
export function withinBudget<T> (expression: RawBuilder<T>, max: number): RawBuilder<T | null> {
  return sql<T | null>`case when "budget"."n" > ${max}::int then null else ${expression} end`
}
