import type { Transaction } from 'kysely'
import type { ChangeMessage } from '../db/notifications.js'
import type { ChangeAction, ChangeEvents } from './change-events.js'
import type { ChangeOf } from './write-transaction.js'

/**
 * The one transaction a batch's writes join (batch.ts). A write of the document service made
 * with a batch in its context (types.ts, `ServiceContext.batch`) runs its statements here instead
 * of opening a transaction of its own, so every write of the batch commits, or rolls back,
 * together. What a single write does around its transaction waits for the batch's end:
 *
 * - its change is announced to other instances in the transaction (`pg_notify` is delivered on
 *   commit only) and told to this instance's listeners after the outer commit (`emit`);
 * - its lifecycle after hooks run once every operation has written, still inside the
 *   transaction (`runAfterHooks`): a batch whose third operation fails fires none, and an after
 *   hook that throws rolls the whole batch back, as it rolls a single write back.
 *
 * Webhook deliveries are rows of the outbox written in the transaction: a batch that rolls back
 * queues none.
 */
export class BatchTransaction {
  /** The index of the operation running: what its deferred after hooks are filed under. */
  operation = 0
  readonly #trx: Transaction<any>
  readonly #changes: ChangeEvents
  readonly #messages: Array<ChangeMessage & { action: ChangeAction }> = []
  readonly #after: Array<{ operation: number, run: () => Promise<unknown> }> = []

  constructor (trx: Transaction<any>, changes: ChangeEvents) {
    this.#trx = trx
    this.#changes = changes
  }

  /**
   * A write joining the batch: `write-transaction.ts`'s `runWrite` without its `begin` and
   * `commit`. Returns the written result before its after hooks (they run at the batch's end).
   */
  async write<T> (change: ChangeOf<T>, fn: (trx: Transaction<any>) => Promise<T>, after?: (result: T) => Promise<T>): Promise<T> {
    const written = await fn(this.#trx)
    const message = change(written)
    if (message !== null) {
      await this.#changes.announce(this.#trx, message)
      this.#messages.push(message)
    }
    if (after !== undefined) this.#after.push({ operation: this.operation, run: async () => await after(written) })
    return written
  }

  /**
   * Every operation's after hooks, in the order the operations wrote, in the transaction. Each
   * answer replaces its operation's result (a hook may change `event.result`); `onError` is told
   * which operation's hook threw.
   */
  async runAfterHooks (results: unknown[], onError: (err: unknown, operation: number) => unknown): Promise<void> {
    for (const { operation, run } of this.#after) {
      try {
        results[operation] = await run()
      } catch (err) {
        throw onError(err, operation)
      }
    }
  }

  /** After the outer commit: this instance's `onChange` listeners, once per write, in order. */
  emit (): void {
    for (const message of this.#messages) this.#changes.emit({ ...message, origin: 'local' })
  }
}
