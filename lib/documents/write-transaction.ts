import type { Kysely, Transaction } from 'kysely'
import { isWriteConflict, writeConflictError } from './write-conflict.js'

/**
 * The transaction every write of the document service runs in, and the events it emits once
 * committed. One content type's service holds one set of listeners (`onChange`); caches of
 * derived data (the authenticator's cache of users) register there to stay current.
 */

/** Listeners of one content type's committed writes. */
export type ChangeListeners = Set<() => void>

/**
 * Runs a write in one transaction, then tells `listeners` (after the commit, so they never see
 * a write that rolled back). A write that lost a race the database settled (a deadlock, a
 * version index) is a 503 to retry (see write-conflict.ts); any other error is thrown as is.
 *
 * ```sql
 * begin; <the write's statements>; commit  -- or rollback, when `fn` throws
 * ```
 */
export async function runWrite<T> (db: Kysely<any>, listeners: ChangeListeners, fn: (trx: Transaction<any>) => Promise<T>): Promise<T> {
  let result: T
  try {
    result = await db.transaction().execute(fn)
  } catch (err) {
    throw isWriteConflict(err) ? writeConflictError(err) : err
  }
  for (const listener of listeners) listener()
  return result
}
