import { sql, type Kysely, type SelectQueryBuilder } from 'kysely'
import { ROW_COUNTS_TABLE } from '../model/naming.js'
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
  // A publication cohort depends on the other version's rows, which no count key holds.
  if (counted?.has(model.tableName) !== true || scope.filters != null || (scope.publicationFilter != null && model.draftAndPublish)) return null
  const locale = model.localized ? scope.locale : null
  if (typeof locale === 'string' && (scope.fallbacks?.length ?? 0) > 0) return null
  let query = db.selectFrom(`${ROW_COUNTS_TABLE} as c`).select(sql<number>`coalesce(sum(c.n), 0)::int`.as('count'))
    .where('c.table_name', '=', model.tableName)
  if (model.draftAndPublish) query = query.where('c.published', '=', scope.status === 'published')
  if (locale !== null) query = query.where('c.locale', typeof locale === 'string' ? '=' : 'in', locale)
  return query
}
