import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import type { ContentType } from '../model/registry.js'
import type { AggregateSpec, Measure } from '../query/aggregate.js'
import type { QueryTree } from '../query/index.js'
import { createFilterContext } from './filters.js'
import { ROOT, scopedRows, type CompileOptions } from './find.js'
import { renderExpression } from './projection.js'
import { sortExpression } from './sort.js'
import { rowLimit } from './row-limit.js'

/** What an aggregate statement answers: the groups as one JSON array text, and how many (up to `maxGroups + 1`). */
export interface AggregateRow { data: string, groups: number }

/** The aggregate's own SQL over the column: `sum(t.views)`. */
function aggregate (measure: Measure): RawBuilder<unknown> {
  const ref = sql.ref(`${ROOT}.${measure.field.column}`)
  return sql`${sql.raw(measure.fn)}(${ref})`
}

/**
 * How the answer shows an aggregate: a biginteger's sum and average as text (beyond 2^53, as its
 * values are), other averages as float8, min and max as the field's values are shown.
 */
function rendered (measure: Measure, value: RawBuilder<unknown>): RawBuilder<unknown> {
  const { fn, field } = measure
  if (fn === 'min' || fn === 'max') return renderExpression(field, value)
  if (field.type === 'biginteger') return sql`${value}::text`
  return fn === 'avg' ? sql`${value}::float8` : value
}

const object = (entries: Array<[string, RawBuilder<unknown>]>): RawBuilder<unknown> => entries.length === 0
  ? sql`json_build_object()`
  : sql`json_build_object(${sql.join(entries.map(([key, value]) => sql`${key}::text, ${value}`))})`

/**
 * An aggregate over the documents a query tree selects (its scope, filters and the caller's row
 * conditions, exactly the rows a list would count), grouped, in ONE statement. Groups are ordered
 * by their keys (nulls last) and at most `maxGroups + 1` are read, so an answer over the bound is
 * known without reading every group.
 *
 * ```sql
 * -- count=true&sum=views&avg=views&groupBy[0]=kind&groupBy[1]=category.name
 * select coalesce(json_agg(json_build_object('group', json_build_object($1::text, g.g0, $2::text, g.g1),
 *          'count', g.n, 'sum', json_build_object($3::text, g.m0), 'avg', json_build_object($4::text, g.m1::float8))
 *          order by g.g0, g.g1), '[]')::text as "data", count(*)::int as "groups"
 * from (select t.kind as g0,
 *              (select r1.name from "categories" as r1 join "articles_category_lnk" as l2 on l2.category_id = r1.id
 *               where l2.article_id = t.id order by l2.id asc limit 1) as g1,
 *              count(*)::int as n, sum(t.views) as m0, avg(t.views) as m1
 *       from "articles" as t where t.published_at is not null and <filters>
 *       group by 1, 2 order by 1, 2 limit 101) as g
 * ```
 */
export function compileAggregate (
  db: Kysely<any>, model: ContentType, tree: QueryTree, spec: AggregateSpec, options: CompileOptions
): SelectQueryBuilder<any, any, AggregateRow> {
  const ctx = createFilterContext(options, tree.status)
  const keys = spec.groupBy.map((key, i) => sortExpression({ path: key.path, field: key.field, direction: 'asc' }, ROOT, ctx).as(`g${i}`))
  const values = [
    ...(spec.count ? [sql<number>`count(*)::int`.as('n')] : []),
    ...spec.measures.map((m, i) => aggregate(m).as(`m${i}`))
  ]
  let inner = scopedRows(db, model, tree, options).select([...keys, ...values])
  if (keys.length > 0) {
    const positions = sql.join(keys.map((_, i) => sql.lit(i + 1)))
    inner = inner.groupBy(sql`${positions}` as any).orderBy(sql`${positions}` as any).limit(rowLimit(spec.maxGroups + 1))
  }
  const g = (column: string): RawBuilder<unknown> => sql.ref(`g.${column}`)
  const entries: Array<[string, RawBuilder<unknown>]> = [
    ['group', object(spec.groupBy.map((key, i): [string, RawBuilder<unknown>] => [key.name, renderExpression(key.field, g(`g${i}`))]))]
  ]
  if (spec.count) entries.push(['count', g('n')])
  for (const fn of ['sum', 'avg', 'min', 'max'] as const) {
    const asked = spec.measures.flatMap((m, i): Array<[string, RawBuilder<unknown>]> => m.fn === fn ? [[m.field.name, rendered(m, g(`m${i}`))]] : [])
    if (asked.length > 0) entries.push([fn, object(asked)])
  }
  const order = keys.length === 0 ? sql`` : sql` order by ${sql.join(keys.map((_, i) => g(`g${i}`)))}`
  return db.selectFrom(inner.as('g')).select([
    sql<string>`coalesce(json_agg(${object(entries)}${order}), '[]')::text`.as('data'),
    sql<number>`count(*)::int`.as('groups')
  ]) as SelectQueryBuilder<any, any, AggregateRow>
}
