import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import { COUNT_FUNCTION_MARK, ROW_COUNTS_TABLE } from '../model/naming.js'
import type { ContentType } from '../model/registry.js'
import type { FilterNode } from '../query/filters.js'
import type { DocumentScope } from './scope.js'

/**
 * A count of rows in scope read from the row counts that triggers keep (lib/schema/row-counts.ts),
 * when they answer it exactly: the table's counts are kept (`counted`), and the scope is a key of
 * theirs or a union of keys, that is no filters (a row-level permission is one), no publication
 * cohort and no locale
 * fallbacks (which pick one row per document). Null otherwise: count the rows.
 *
 * The sum reads a few rows per key (one per key, plus the deltas of writes since the last
 * compaction), whatever the table's size; being part of the read's statement, it sees the same
 * snapshot as the page, so the total agrees with the data as `count(*)` would.
 *
 * ```sql
 * -- draft & publish, one locale
 * select coalesce(sum(c.n), 0)::int as "count" from "content_api_row_counts" as c
 * where c.table_name = $1 and c.published = $2 and c.locale = $3
 * -- a list of locales: c.locale in ($3, $4)
 * -- neither: every row of the table
 * select coalesce(sum(c.n), 0)::int as "count" from "content_api_row_counts" as c where c.table_name = $1
 * ```
 */
export function countRows (
  db: Kysely<any>, model: ContentType, scope: DocumentScope & { filters?: FilterNode | null }, counted: ReadonlySet<string> | undefined
): SelectQueryBuilder<any, any, { count: number }> | null {
  if (!summed(model, scope, counted)) return null
  const locale = model.localized ? scope.locale : null
  let query = db.selectFrom(`${ROW_COUNTS_TABLE} as c`).select(sql<number>`coalesce(sum(c.n), 0)::int`.as('count'))
    .where('c.table_name', '=', model.tableName)
  if (model.draftAndPublish) query = query.where('c.published', '=', scope.status === 'published')
  if (locale !== null) query = query.where('c.locale', typeof locale === 'string' ? '=' : 'in', locale)
  return query
}

/** Whether the row counts' keys answer the count (`countRows`). */
function summed (model: ContentType, scope: DocumentScope & { filters?: FilterNode | null }, counted: ReadonlySet<string> | undefined): boolean {
  // A publication cohort depends on the other version's rows, which no count key holds.
  if (counted?.has(model.tableName) !== true || scope.filters != null || (scope.publicationFilter != null && model.draftAndPublish)) return false
  // Fallbacks pick one row per document.
  return !(model.localized && typeof scope.locale === 'string' && (scope.fallbacks?.length ?? 0) > 0)
}

/**
 * Whether a count of the rows in scope can be remembered between reads (`rememberedCount`): the
 * table's counts, and so its change count, are kept by this release's trigger function
 * (`countFunction`, its object id, read at start by lib/schema/row-counts.ts `rowCountsInUse`),
 * the count is a scan (`countRows` has no sum for it), and it reads no row of another table (no filter through a relation, component or
 * media field, and no relation count). What it reads of its own table (the filters, row-level
 * conditions, a publication cohort, locale fallbacks) changes only through write statements
 * that the change count counts.
 */
export function countIsRememberable (
  model: ContentType, scope: DocumentScope & { filters?: FilterNode | null }, counted: ReadonlySet<string> | undefined, countFunction: number | null | undefined
): boolean {
  return countFunction != null && counted?.has(model.tableName) === true && !summed(model, scope, counted) && ownRowsOnly(scope.filters ?? null)
}

function ownRowsOnly (node: FilterNode | null): boolean {
  if (node === null) return true
  switch (node.kind) {
    case 'and':
    case 'or': return node.children.every(ownRowsOnly)
    case 'not': return ownRowsOnly(node.child)
    case 'compare': return true
    default: return false
  }
}

/**
 * The table's change count as text, `<version of the trigger function>:<write statements on the
 * table the statement's snapshot sees>` (lib/schema/row-counts.ts), or null when the function is
 * no longer this release's. The version is the `xmin` of the function's catalog row, which every
 * `create or replace` changes: an earlier release's instance that starts later puts back its own
 * function, which counts no changes and whose folds lose them, and sync puts this one back again;
 * a change count read before either must not match after. A catalog lookup by object id and a
 * sum of a few rows.
 *
 * ```sql
 * (select p.xmin::text || ':' || coalesce((select sum(c.changes) from "content_api_row_counts" as c where c.table_name = $1), 0)
 *  from pg_catalog.pg_proc as p where p.oid = $2 and starts_with(p.prosrc, $3))
 * ```
 */
export function changeCount (model: ContentType, countFunction: number): RawBuilder<string | null> {
  const changes = sql`coalesce((select sum(c.changes) from ${sql.table(ROW_COUNTS_TABLE)} as c where c.table_name = ${model.tableName}), 0)`
  return sql<string | null>`(select p.xmin::text || ':' || ${changes} from pg_catalog.pg_proc as p where p.oid = ${countFunction} and starts_with(p.prosrc, ${`\n${COUNT_FUNCTION_MARK}`}))`
}

/**
 * Stand-ins for a remembered total and the change count it was taken at, which the reader
 * replaces with its values at each execution (lib/documents/known-total.ts): objects no request
 * can pass, so no other parameter is taken for them.
 */
export const KNOWN_CHANGES = Object.freeze({ knownChanges: 'bound at execution' })
export const KNOWN_TOTAL = Object.freeze({ knownTotal: 'bound at execution' })

/**
 * The statement's own change count, computed once in a CTE of this name (`changeCount`), which
 * both the remembered count and the `changes` column read (`readChanges`): written twice as a
 * sub-select, it would be computed twice.
 */
export const CHANGES_CTE = '__changes'

/** `(select "__changes"."v" from "__changes")`: the statement's change count. */
export const readChanges: RawBuilder<string | null> = sql<string | null>`(select ${sql.ref(`${CHANGES_CTE}.v`)} from ${sql.table(CHANGES_CTE)})`

/**
 * A count that uses the remembered total when the table's change count is the one it was
 * taken at, and counts otherwise. Both are read in the statement's own snapshot, so the answer
 * is the count's, exactly:
 *
 * ```sql
 * case when (select "__changes"."v" from "__changes") = $4 then $5::int
 *   else (select count(*)::int from "articles" as t where <scope and filters>) end
 * ```
 */
export function rememberedCount (count: SelectQueryBuilder<any, any, { count: number }>): RawBuilder<number> {
  return sql<number>`case when ${readChanges} = ${KNOWN_CHANGES} then ${KNOWN_TOTAL}::int else (${count}) end`
}
