import type { Kysely, Transaction } from 'kysely'
import type { ChangeMessage } from '../db/notifications.js'
import type { ChangeAction, ChangeEvents } from './change-events.js'
import { isWriteConflict, writeConflictError } from './write-conflict.js'

/**
 * The transaction every write of the document service (and of the auth stores) runs in, and
 * the change event it emits: announced to other instances inside the transaction (delivered on
 * commit only), told to this instance's listeners once committed (change-events.ts).
 */

/** The event a write's result makes, or null when it changed nothing worth telling. */
export type ChangeOf<T> = (result: T) => (ChangeMessage & { action: ChangeAction }) | null

/**
 * Runs a write in one transaction (then `after`, the write's after hooks, still in it), then tells this instance's listeners (after the commit, so
 * they never see a write that rolled back). A write that lost a race the database settled (a
 * deadlock, a version index) is a 503 to retry (see write-conflict.ts); any other error is thrown
 * as is.
 *
 * ```sql
 * begin; <the write's statements>;
 * select pg_notify('content_api_' || md5(current_schema()), $1);  -- with other instances to tell
 * commit  -- or rollback, when `fn` throws
 * ```
 */
export async function runWrite<T> (
  db: Kysely<any>, changes: ChangeEvents, change: ChangeOf<T>, fn: (trx: Transaction<any>) => Promise<T>, after?: (result: T) => Promise<T>
): Promise<T> {
  let result: T
  let message: ReturnType<ChangeOf<T>> = null
  try {
    result = await db.transaction().execute(async (trx) => {
      const written = await fn(trx)
      message = change(written)
      if (message !== null) await changes.announce(trx, message)
      // The after-lifecycle hooks (lifecycles.ts): in the transaction, so one that throws rolls the write back.
      return after === undefined ? written : await after(written)
    })
  } catch (err) {
    throw isWriteConflict(err) ? writeConflictError(err) : err
  }
  if (message !== null) changes.emit({ ...(message as ChangeMessage & { action: ChangeAction }), origin: 'local' })
  return result
}
