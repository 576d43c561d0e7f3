import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { Field } from '../model/registry.js'
import type { Status } from '../query/index.js'
import { onNullRow, type ComparisonOperator, type CountFilter, type FilterNode, type RelatedFilter } from '../query/filters.js'
import { relatedRows } from './related-rows.js'

export interface FilterCompileOptions {
  /**
   * Treat `%` and `_` in pattern values literally. Off by default, as in Strapi, where a client's
   * `$contains: 'a%b'` is a wildcard pattern.
   */
  escapeLikeWildcards: boolean
}

/** What compiling one statement's filters needs: the options, the request's status, fresh aliases. */
export interface FilterContext extends FilterCompileOptions {
  /** Related draft & publish rows are matched in the request's status, as populate shows them. */
  status: Status
  next: (prefix: string) => string
}

export function createFilterContext (options: FilterCompileOptions, status: Status): FilterContext {
  let n = 0
  return { escapeLikeWildcards: options.escapeLikeWildcards, status, next: (prefix) => `${prefix}${++n}` }
}

const TRUE = sql<SqlBool>`true`
const FALSE = sql<SqlBool>`false`

function escapeLike (value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** JSON attributes compare as jsonb: a value that is not JSON text compares as a JSON string. */
function jsonParam (value: unknown): string {
  if (typeof value === 'string') {
    try { return JSON.stringify(JSON.parse(value)) } catch { return JSON.stringify(value) }
  }
  return JSON.stringify(value)
}

function isJson (field: Field): boolean {
  return field.type === 'json' || field.type === 'blocks'
}

function param (field: Field, value: unknown): RawBuilder<unknown> {
  return isJson(field) ? sql`${jsonParam(value)}::jsonb` : sql`${value}`
}

const PATTERNS: Partial<Record<ComparisonOperator, { before: string, after: string, insensitive: boolean, negated: boolean }>> = {
  $eqi: { before: '', after: '', insensitive: true, negated: false },
  $nei: { before: '', after: '', insensitive: true, negated: true },
  $contains: { before: '%', after: '%', insensitive: false, negated: false },
  $notContains: { before: '%', after: '%', insensitive: false, negated: true },
  $containsi: { before: '%', after: '%', insensitive: true, negated: false },
  $notContainsi: { before: '%', after: '%', insensitive: true, negated: true },
  $startsWith: { before: '', after: '%', insensitive: false, negated: false },
  $startsWithi: { before: '', after: '%', insensitive: true, negated: false },
  $endsWith: { before: '%', after: '', insensitive: false, negated: false },
  $endsWithi: { before: '%', after: '', insensitive: true, negated: false }
}

function compare (node: Extract<FilterNode, { kind: 'compare' }>, alias: string, options: FilterContext): RawBuilder<SqlBool> {
  const { field, operator, value } = node
  const ref = sql.ref(`${alias}.${field.column}`)
  const pattern = PATTERNS[operator]
  if (pattern !== undefined) {
    if (value === null) return operator === '$eqi' ? sql`${ref} is null` : sql`${ref} is not null`
    const text = options.escapeLikeWildcards ? escapeLike(value as string) : value as string
    const bound = `${pattern.before}${text}${pattern.after}`
    const test = pattern.insensitive ? sql<SqlBool>`lower(${ref}::text) like lower(${bound})` : sql<SqlBool>`${ref}::text like ${bound}`
    return pattern.negated ? sql`not (${test})` : test
  }
  switch (operator) {
    case '$null': return value === true ? sql`${ref} is null` : sql`${ref} is not null`
    case '$notNull': return value === true ? sql`${ref} is not null` : sql`${ref} is null`
    case '$eq': return value === null ? sql`${ref} is null` : sql`${ref} = ${param(field, value)}`
    case '$ne': return value === null ? sql`${ref} is not null` : sql`${ref} <> ${param(field, value)}`
    case '$in':
    case '$notIn': {
      const items = value as unknown[]
      if (items.length === 0) return operator === '$in' ? FALSE : TRUE
      const list = sql.join(items.map((item) => param(field, item)))
      return operator === '$in' ? sql`${ref} in (${list})` : sql`${ref} not in (${list})`
    }
    case '$between': {
      const [low, high] = value as [unknown, unknown]
      return sql`${ref} between ${param(field, low)} and ${param(field, high)}`
    }
    default: {
      // A comparison with NULL is unknown (no row, and none under NOT either), as in Strapi's SQL.
      const op = sql.raw({ $lt: '<', $lte: '<=', $gt: '>', $gte: '>=' }[operator as '$lt'])
      return isJson(field) ? sql`${ref}::text ${op} ${jsonParam(value)}` : sql`${ref} ${op} ${value}`
    }
  }
}

/**
 * `filters[category][name][$eq]=Tech` on `articles as t`:
 *
 * ```sql
 * exists (select 1 from "categories" as r1 join "articles_category_lnk" as l1 on l1.category_id = r1.id
 *         where l1.article_id = t.id and r1.name = $1)
 * ```
 *
 * When a row of NULLs satisfies the condition (`$null: true`), parents without any related row
 * match too: `(exists (...) or not exists (<any related row>))`, as Strapi's LEFT JOIN answers.
 *
 * `filters[blocks][on][shared.quote][text][$containsi]=x` reads one component type of a dynamic zone:
 *
 * ```sql
 * exists (select 1 from "components_shared_quotes" as r1 join "articles_cmps" as l1 on l1.cmp_id = r1.id
 *         where l1.entity_id = t.id and l1.component_type = $1 and l1.field = $2
 *         and lower(r1.text::text) like lower($3))          -- ['shared.quote', 'blocks', '%x%']
 * ```
 */
function related (node: RelatedFilter, parent: string, ctx: FilterContext, negated: boolean): RawBuilder<SqlBool> {
  const r = ctx.next('r')
  const l = ctx.next('l')
  const { from, where } = relatedRows(node.association, node.target, node.owner, parent, r, l, ctx.status)
  // Related rows the caller may not see are not there: neither matching nor counting as "some".
  if (node.visible !== null) where.push(compileFilter(node.visible, r, ctx))
  const any = sql.join(where, sql` and `)
  const matching = sql<SqlBool>`exists (select 1 from ${from} where ${any} and ${compileFilter(node.child, r, ctx)})`
  // A dynamic zone's `on` condition is our own, with no LEFT JOIN to mimic: it is two-valued,
  // so its NOT holds for a parent without items of the type.
  if (negated && node.association.kind !== 'dynamiczone') {
    // Under NOT, a parent without related rows must stay UNKNOWN when a row of NULLs would be:
    // NOT of it then excludes the parent, as Strapi's LEFT JOIN does (a plain NOT EXISTS would
    // include it).
    const none = onNullRow(node.child)
    return sql`(case when ${matching} then true when exists (select 1 from ${from} where ${any}) then false else ${sql.raw(none === null ? 'null::boolean' : String(none))} end)`
  }
  return node.matchesNone ? sql`(${matching} or not exists (select 1 from ${from} where ${any}))` : matching
}

/**
 * `filters[articles][$count][$gt]=3` on `categories as t`: the count of the visible related rows
 * in the request's status, as a one-row sub-select the child compares (`c.n`):
 *
 * ```sql
 * exists (select 1 from (select count(*)::int as n from "articles" as r1 join "articles_category_lnk" as l2
 *   on l2.article_id = r1.id where l2.category_id = t.id and r1.published_at is not null) as c3 where c3.n > $1)
 * ```
 */
function counted (node: CountFilter, parent: string, ctx: FilterContext): RawBuilder<SqlBool> {
  const r = ctx.next('r')
  const l = ctx.next('l')
  const { from, where } = relatedRows(node.association, node.target, node.owner, parent, r, l, ctx.status)
  if (node.visible !== null) where.push(compileFilter(node.visible, r, ctx))
  const c = ctx.next('c')
  return sql`exists (select 1 from (select count(*)::int as n from ${from} where ${sql.join(where, sql` and `)}) as ${sql.id(c)} where ${compileFilter(node.child, c, ctx)})`
}

/**
 * Compiles a validated filter tree to a boolean SQL expression over the table aliased `alias`.
 * Every value is a bound parameter; every identifier comes from the registry.
 *
 * @example
 * // filters[$or][0][views][$lt]=30&filters[$or][1][title][$startsWith]=Wild
 * // => ("t"."views" < $1 or "t"."title"::text like $2)    parameters: [30, 'Wild%']
 */
export function compileFilter (node: FilterNode, alias: string, options: FilterContext, negated = false): RawBuilder<SqlBool> {
  switch (node.kind) {
    case 'related': return related(node, alias, options, negated)
    case 'count': return counted(node, alias, options)
    case 'compare': return compare(node, alias, options)
    case 'not': return sql`not (${compileFilter(node.child, alias, options, !negated)})`
    case 'and': return sql`(${sql.join(node.children.map((c) => compileFilter(c, alias, options, negated)), sql` and `)})`
    case 'or': return sql`(${sql.join(node.children.map((c) => compileFilter(c, alias, options, negated)), sql` or `)})`
  }
}
