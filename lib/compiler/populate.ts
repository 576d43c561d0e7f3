import { sql, type RawBuilder } from 'kysely'
import { MEDIA_LINK_TABLE } from '../model/associations.js'
import type { Component, ContentType, Field } from '../model/registry.js'
import type { Status } from '../query/index.js'
import type { PopulateNode, PopulateSelection, PopulateTree } from '../query/populate.js'
import { compileFilter, createFilterContext, type FilterCompileOptions, type FilterContext } from './filters.js'
import { outputExpression } from './projection.js'

/**
 * Populate as correlated sub-selects: every populated attribute is one expression in the parent's
 * select list that renders its related rows as JSON, so a request with `populate` three levels
 * deep is still ONE SQL statement, with no N+1 round trips. For `populate[authors][sort]=name`:
 *
 * ```sql
 * (select coalesce(json_agg(q.doc order by q.o0 asc, q.o1 asc), '[]'::json) from (
 *   select row_to_json(v1) as doc, r1.name as o0, r1.id as o1
 *   from "authors" as r1 join "articles_authors_lnk" as l1 on l1.author_id = r1.id
 *   cross join lateral (select r1.id as "id", r1.document_id as "documentId", r1.name as "name", ...) as v1
 *   where l1.article_id = t.id
 *   order by r1.name asc, r1.id asc
 * ) as q) as "authors"
 * ```
 *
 * Relations keep their stored order (the link table's order column) unless a sort is given; a
 * draft & publish target follows the request's status; `start`/`limit` apply per parent.
 */
/** The request's status, the compile options and a source of unique aliases for one statement. */
export type PopulateContext = FilterContext

export function createPopulateContext (status: Status, compile: FilterCompileOptions): PopulateContext {
  return createFilterContext(compile, status)
}

const ref = (alias: string, column: string): RawBuilder<unknown> => sql.ref(`${alias}.${column}`)

/** `expr as "name", ...` for a row's fields and its populated attributes. */
export function selectList (
  model: ContentType | Component, alias: string, fields: readonly Field[] | null, populate: PopulateTree, ctx: PopulateContext, extra: RawBuilder<unknown>[] = []
): RawBuilder<unknown> {
  const columns = (fields ?? model.defaultFields).map((f) => sql`${outputExpression(f, alias)} as ${sql.id(f.name)}`)
  const nested = [...populate].map(([name, node]) => sql`${populateExpression(node, alias, model, ctx)} as ${sql.id(name)}`)
  return sql.join([...extra, ...columns, ...nested])
}

interface OrderTerm {
  expr: RawBuilder<unknown>
  direction: 'asc' | 'desc'
  /** Rows linked before order columns existed (or by hand) sort after the ordered ones. */
  nullsLast?: boolean
}

const asc = (expr: RawBuilder<unknown>, nullsLast = false): OrderTerm => ({ expr, direction: 'asc', nullsLast })

interface Source {
  /** `from ... join ...` of the related rows. */
  from: RawBuilder<unknown>
  /** Conditions tying the related rows to the parent row. */
  where: Array<RawBuilder<unknown>>
  /** Stored order of the related rows (link or join table), ending with a unique tie-breaker. */
  order: OrderTerm[]
  toMany: boolean
}

function statusCondition (target: ContentType, alias: string, ctx: PopulateContext): RawBuilder<unknown>[] {
  if (!target.draftAndPublish) return []
  return [ctx.status === 'draft' ? sql`${ref(alias, 'published_at')} is null` : sql`${ref(alias, 'published_at')} is not null`]
}

function relationSource (node: Extract<PopulateNode, { kind: 'relation' }>, parent: string, r: string, l: string, ctx: PopulateContext): Source {
  const { link } = node.association
  return {
    from: sql`${sql.table(node.target.tableName)} as ${sql.id(r)} join ${sql.table(link.table)} as ${sql.id(l)} on ${ref(l, link.targetColumn)} = ${ref(r, 'id')}`,
    where: [sql`${ref(l, link.sourceColumn)} = ${ref(parent, 'id')}`, ...statusCondition(node.target, r, ctx)],
    order: link.orderColumn === null ? [asc(ref(l, 'id'))] : [asc(ref(l, link.orderColumn), true), asc(ref(l, 'id'))],
    toMany: node.association.toMany
  }
}

function mediaSource (node: Extract<PopulateNode, { kind: 'media' }>, parent: string, parentModel: ContentType | Component, r: string, l: string): Source {
  return {
    from: sql`${sql.table(node.target.tableName)} as ${sql.id(r)} join ${sql.table(MEDIA_LINK_TABLE)} as ${sql.id(l)} on ${ref(l, 'file_id')} = ${ref(r, 'id')}`,
    where: [
      sql`${ref(l, 'related_id')} = ${ref(parent, 'id')}`,
      sql`${ref(l, 'related_type')} = ${parentModel.uid}`,
      sql`${ref(l, 'field')} = ${node.association.name}`
    ],
    order: [asc(ref(l, 'order'), true), asc(ref(l, 'id'))],
    toMany: node.association.multiple
  }
}

function componentSource (target: Component, joinTable: string, field: string, parent: string, r: string, l: string, toMany: boolean): Source {
  return {
    from: sql`${sql.table(target.tableName)} as ${sql.id(r)} join ${sql.table(joinTable)} as ${sql.id(l)} on ${ref(l, 'cmp_id')} = ${ref(r, 'id')}`,
    where: [
      sql`${ref(l, 'entity_id')} = ${ref(parent, 'id')}`,
      sql`${ref(l, 'component_type')} = ${target.uid}`,
      sql`${ref(l, 'field')} = ${field}`
    ],
    order: [asc(ref(l, 'order'), true), asc(ref(l, 'id'))],
    toMany
  }
}

/** Renders the rows of `source` (one object, or an ordered array) with the selection's fields. */
function rendered (
  source: Source, target: ContentType | Component, selection: PopulateSelection, r: string, ctx: PopulateContext, extra: RawBuilder<unknown>[] = []
): RawBuilder<unknown> {
  const v = ctx.next('v')
  const where = [...source.where]
  if (selection.filters !== null) where.push(compileFilter(selection.filters, r, ctx))
  const sortTerms: OrderTerm[] = selection.sort.map((term) => ({ expr: ref(r, term.field.column), direction: term.direction }))
  const orderTerms = sortTerms.length > 0
    ? [...sortTerms, { expr: ref(r, 'id'), direction: sortTerms[sortTerms.length - 1].direction }]
    : source.order
  const lateral = sql`cross join lateral (select ${selectList(target, r, selection.fields, selection.populate, ctx, extra)}) as ${sql.id(v)}`
  const direction = (t: OrderTerm): RawBuilder<unknown> => sql.raw(`${t.direction}${t.nullsLast === true ? ' nulls last' : ''}`)
  const orderBy = sql.join(orderTerms.map((t) => sql`${t.expr} ${direction(t)}`))
  const window = sql`${selection.limit === null ? sql`` : sql` limit ${selection.limit}`}${selection.start === null ? sql`` : sql` offset ${selection.start}`}`
  const whereSql = sql.join(where, sql` and `)

  if (!source.toMany) {
    return sql`(select row_to_json(${sql.id(v)}) from ${source.from} ${lateral} where ${whereSql} order by ${orderBy} limit 1)`
  }
  // The order travels with each row (o0, o1, ...) so json_agg can apply it explicitly.
  const keys = orderTerms.map((t, i) => sql`${t.expr} as ${sql.id(`o${i}`)}`)
  const aggregateOrder = sql.join(orderTerms.map((t, i) => sql`${sql.ref(`q.o${i}`)} ${direction(t)}`))
  return sql`(select coalesce(json_agg(q.doc order by ${aggregateOrder}), '[]'::json) from (select row_to_json(${sql.id(v)}) as doc, ${sql.join(keys)} from ${source.from} ${lateral} where ${whereSql} order by ${orderBy}${window}) as q)`
}

/** `populate[x][count]=true`: `{ "count": n }` instead of the rows. */
function countOf (source: Source, selection: PopulateSelection, r: string, ctx: PopulateContext): RawBuilder<unknown> {
  const where = [...source.where]
  if (selection.filters !== null) where.push(compileFilter(selection.filters, r, ctx))
  return sql`(select ('{"count":' || count(*) || '}')::json from ${source.from} where ${sql.join(where, sql` and `)})`
}

/** The SQL expression of one populated attribute of the row aliased `parent`. */
export function populateExpression (node: PopulateNode, parent: string, parentModel: ContentType | Component, ctx: PopulateContext): RawBuilder<unknown> {
  const r = ctx.next('r')
  const l = ctx.next('l')
  switch (node.kind) {
    case 'relation': {
      const source = relationSource(node, parent, r, l, ctx)
      return node.count ? countOf(source, node, r, ctx) : rendered(source, node.target, node, r, ctx)
    }
    case 'media': {
      const source = mediaSource(node, parent, parentModel, r, l)
      return node.count ? countOf(source, node, r, ctx) : rendered(source, node.target, node, r, ctx)
    }
    case 'component': {
      const source = componentSource(node.target, node.association.joinTable, node.association.name, parent, r, l, node.association.repeatable)
      return rendered(source, node.target, node, r, ctx)
    }
    case 'dynamiczone': {
      // One branch per component type, each rendering its own shape, merged in stored order.
      const branches = [...node.components].map(([uid, selection]) => {
        const rb = ctx.next('r')
        const lb = ctx.next('l')
        const v = ctx.next('v')
        const source = componentSource(selection.target, node.association.joinTable, node.association.name, parent, rb, lb, true)
        const where = [...source.where]
        if (selection.filters !== null) where.push(compileFilter(selection.filters, rb, ctx))
        const list = selectList(selection.target, rb, selection.fields, selection.populate, ctx, [sql`${uid}::text as "__component"`])
        return sql`select row_to_json(${sql.id(v)}) as doc, ${ref(lb, 'order')} as o0, ${ref(lb, 'id')} as o1 from ${source.from} cross join lateral (select ${list}) as ${sql.id(v)} where ${sql.join(where, sql` and `)}`
      })
      if (branches.length === 0) return sql`'[]'::json`
      return sql`(select coalesce(json_agg(q.doc order by q.o0 asc nulls last, q.o1 asc), '[]'::json) from (${sql.join(branches, sql` union all `)}) as q)`
    }
  }
}
