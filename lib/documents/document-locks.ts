import type { Transaction } from 'kysely'

/**
 * Concurrent writers of one document, or of one relation list, are serialised by row locks on
 * the documents' rows, taken first thing in the write's transaction and held until it ends:
 *
 * - the document written (every row: each locale, draft and published), so a second writer
 *   creating the same new locale, or publishing the same draft, waits and then sees the first
 *   one's rows instead of inserting its own;
 * - every document a relation write names (`connect`, `disconnect`, `set`), because linking a
 *   row appends it to the related row's list (`max + 1` of that list's order column): two
 *   appenders to one list must not read the same max.
 *
 * Row locks rather than advisory locks: their number is not bounded by the server's lock table
 * (a `set` of thousands of documents locks thousands of rows, not thousands of lock-table
 * entries), and they are the locks `UPDATE` and the upload routes' `for update` take on the
 * same rows. `for no key update` leaves foreign-key checks (`for key share`) of other writers
 * free, so linking other rows to a locked document never waits.
 *
 * Deadlocks are avoided by one global order: every lock a write needs is taken in this one call,
 * table by table in name order, each table's rows in id order.
 *
 * ```sql
 * select id from "categories"
 * where document_id in ($1) or document_id in (select document_id from "categories" where id in ($2))
 * order by id for no key update
 * ```
 */

/** Documents of one table to lock, named by documentId or by the id of one of their rows. */
export interface LockedDocuments {
  table: string
  documentIds: readonly string[]
  rowIds: readonly number[]
}

/** Locks every row of `documents`, table by table in name order, each in id order (one statement per table). */
export async function lockDocuments (trx: Transaction<any>, documents: readonly LockedDocuments[]): Promise<void> {
  const tables = new Map<string, { documentIds: Set<string>, rowIds: Set<number> }>()
  for (const { table, documentIds, rowIds } of documents) {
    if (documentIds.length === 0 && rowIds.length === 0) continue
    const entry = tables.get(table) ?? { documentIds: new Set(), rowIds: new Set() }
    for (const id of documentIds) entry.documentIds.add(id)
    for (const id of rowIds) entry.rowIds.add(id)
    tables.set(table, entry)
  }
  for (const table of [...tables.keys()].sort()) {
    const { documentIds, rowIds } = tables.get(table)!
    await trx.selectFrom(table).select('id')
      .where((eb) => eb.or([
        ...(documentIds.size > 0 ? [eb('document_id', 'in', [...documentIds])] : []),
        ...(rowIds.size > 0 ? [eb('document_id', 'in', eb.selectFrom(table).select('document_id').where('id', 'in', [...rowIds]))] : [])
      ]))
      .orderBy('id')
      .forNoKeyUpdate()
      .execute()
  }
}
