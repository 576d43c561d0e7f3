import { sql, type Kysely } from 'kysely'
import { quoteIdent } from '../model/naming.js'
import type { IndexSpec, TableSpec } from './desired-schema.js'
import type { CurrentSchema } from './introspect.js'

/**
 * A unique index cannot be created on a table whose rows already repeat its key: PostgreSQL
 * refuses the `create unique index` and sync rolls everything back. Sync looks for such rows
 * first, for every unique index it is about to add to an existing table, so that it can name
 * every table and say how to find the rows, instead of failing on the first index with the
 * server's message.
 *
 * Sync does not repair them: which of two drafts of one document to keep (they may hold
 * different edits, each with its own relations, components and media) is a decision for a person.
 */

export interface Duplicates {
  readonly table: string
  readonly index: string
  /** How many key values are held by more than one row. */
  readonly groups: number
  /** A query listing them, with the ids of the rows holding each. */
  readonly query: string
}

/**
 * Rows with a null in a key column are left out: a unique index treats nulls as distinct.
 *
 * ```sql
 * select "document_id", "locale", ("published_at" is null), array_agg("id" order by "id") as ids
 * from "articles" where "document_id" is not null and "locale" is not null
 * group by "document_id", "locale", ("published_at" is null) having count(*) > 1
 * ```
 */
export function duplicatesQuery (table: string, index: IndexSpec): string {
  const keys = [...index.columns.map(quoteIdent), ...index.expressions ?? []]
  const notNull = index.columns.map((c) => `${quoteIdent(c)} is not null`)
  return `select ${keys.join(', ')}, array_agg("id" order by "id") as ids from ${quoteIdent(table)}` +
    (notNull.length > 0 ? ` where ${notNull.join(' and ')}` : '') +
    ` group by ${keys.join(', ')} having count(*) > 1`
}

/** The unique indexes `desired` adds to existing tables that their rows would violate. */
export async function findDuplicates (db: Kysely<any>, desired: readonly TableSpec[], current: CurrentSchema): Promise<Duplicates[]> {
  const found: Duplicates[] = []
  for (const spec of desired) {
    const existing = current.get(spec.name)
    if (existing === undefined) continue
    for (const index of spec.indexes) {
      if (index.unique !== true || existing.indexes.has(index.name)) continue
      // A key column sync is about to add holds only nulls: no row can repeat the key.
      if (index.columns.some((c) => !existing.columns.has(c))) continue
      const query = duplicatesQuery(spec.name, index)
      const { rows } = await sql<{ groups: number }>`select count(*)::int as groups from (${sql.raw(query)}) as d`.execute(db)
      if (rows[0].groups > 0) found.push({ table: spec.name, index: index.name, groups: rows[0].groups, query })
    }
  }
  return found
}

/** The message of the error sync throws (and of the dry run's warning) when duplicates block an index. */
export function describeDuplicates (found: readonly Duplicates[]): string {
  return `Schema sync cannot add ${found.length} unique index(es): rows already repeat their key.\n` +
    found.map((d) => `  - "${d.table}": ${d.groups} key value(s) held by several rows, for "${d.index}". List them with:\n    ${d.query};`).join('\n') +
    '\nKeep one row of each group and delete the others (docs/schema-sync.md, "Unique indexes on existing data", says which), then start again.'
}
