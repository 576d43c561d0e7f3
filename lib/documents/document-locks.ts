import type { Transaction } from 'kysely'

/**
 * Concurrent writers of one document, or of one relation list, are serialised by row locks on
 * the documents' rows, taken first thing in the write's transaction and held until it ends:
 *
 * - the document written (every row: each locale, draft and published), `for no key update`, so
 *   a second writer creating the same new locale, or publishing the same draft, waits and then
 *   sees the first one's rows instead of inserting its own;
 * - every document a relation write names (`connect`, `disconnect`, `set`), `for share`: a
 *   writer of that document (its update, publish, delete: the lock above) waits for the links
 *   being made to it, and they for it, so a publish copies every committed link of the draft and
 *   none is made to a row being deleted. Two writers linking the same document do not wait for
 *   each other: a link appended to a list takes a position of its own (list-positions.ts),
 *   whatever other appenders do. A document of an exclusive relation (linking it unlinks it
 *   elsewhere) is locked `for no key update`: two writers claiming it take turns.
 *
 * A table whose rows are locked for both reasons (a relation to the model's own type) is locked
 * `for no key update` whole, so that each table is still one statement in id order.
 *
 * Row locks rather than advisory locks: their number is not bounded by the server's lock table
 * (a `set` of thousands of documents locks thousands of rows, not thousands of lock-table
 * entries), and they are the locks `UPDATE` and the upload routes' `for update` take on the
 * same rows. Neither mode blocks foreign-key checks (`for key share`) or reads.
 *
 * Deadlocks are avoided by one global order: every lock a write needs is taken in this one call,
 * table by table in name order, each table's rows in id order.
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update;
 * select id from "categories"
 * where document_id in ($2) or document_id in (select document_id from "categories" where id in ($3))
 * order by id for share
 * ```
 */

/** Documents of one table to lock, named by documentId or by the id of one of their rows. */
export interface LockedDocuments {
  table: string
  documentIds: readonly string[]
  rowIds: readonly number[]
  /** `write`: the document written, or claimed by an exclusive relation; `link`: a relation's target. */
  for: 'write' | 'link'
}

/** Locks every row of `documents`, table by table in name order, each in id order (one statement per table). */
export async function lockDocuments (trx: Transaction<any>, documents: readonly LockedDocuments[]): Promise<void> {
  const tables = new Map<string, { documentIds: Set<string>, rowIds: Set<number>, write: boolean }>()
  for (const { table, documentIds, rowIds, for: reason } of documents) {
    if (documentIds.length === 0 && rowIds.length === 0) continue
    const entry = tables.get(table) ?? { documentIds: new Set(), rowIds: new Set(), write: false }
    for (const id of documentIds) entry.documentIds.add(id)
    for (const id of rowIds) entry.rowIds.add(id)
    entry.write ||= reason === 'write'
    tables.set(table, entry)
  }
  for (const table of [...tables.keys()].sort()) {
    const { documentIds, rowIds, write } = tables.get(table)!
    const query = trx.selectFrom(table).select('id')
      .where((eb) => eb.or([
        ...(documentIds.size > 0 ? [eb('document_id', 'in', [...documentIds])] : []),
        ...(rowIds.size > 0 ? [eb('document_id', 'in', eb.selectFrom(table).select('document_id').where('id', 'in', [...rowIds]))] : [])
      ]))
      .orderBy('id')
    await (write ? query.forNoKeyUpdate() : query.forShare()).execute()
  }
}
