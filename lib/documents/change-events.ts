import type { Kysely } from 'kysely'
import type { ChangeMessage, Notifications } from '../db/notifications.js'

/**
 * The change events of every content type, in this instance and (through PostgreSQL's
 * LISTEN/NOTIFY, lib/db/notifications.ts) in the others on the same database: what
 * `documents(uid).onChange` listeners receive, and what the auth caches are dropped by.
 */

/**
 * What changed. Writes of the document service name their action; writes of the auth stores
 * name theirs on the built-in types (a grant or revoke is an `update` of
 * `plugin::users-permissions.role`, a revoked API token a `delete` of `admin::api-token`).
 * `resync`: this instance's listening connection was lost and is back; changes made meanwhile by
 * other instances were missed, so anything derived from this type's data should be dropped.
 */
export type ChangeAction = 'create' | 'update' | 'delete' | 'publish' | 'unpublish' | 'discardDraft' | 'resync'

export interface ChangeEvent {
  uid: string
  action: ChangeAction
  /** The document written, when the write names one (not for a single type's first write, nor `resync`). */
  documentId?: string | null
  /** `local`: written through this instance; `remote`: through another one (or `resync`). */
  origin: 'local' | 'remote'
}

export type ChangeListener = (event: ChangeEvent) => void

/** Where listener errors go: a listener that throws must not fail a committed write, nor the listener connection. */
export interface ChangeLogger { error (obj: object, msg: string): void }

export class ChangeEvents {
  readonly #listeners = new Map<string, Set<ChangeListener>>()
  readonly #notifications: Notifications | null
  readonly #log: ChangeLogger
  /** The messages a transaction's own statements announce (`announcement`), which `announce` then skips. */
  readonly #claimed = new WeakMap<Kysely<any>, Set<string>>()

  /** `notifications`: null where there is no other instance to tell (PGlite, a Kysely given without `notifications.connectionString`). */
  constructor (notifications: Notifications | null, log: ChangeLogger) {
    this.#notifications = notifications
    this.#log = log
    notifications?.onMessage((message) => { this.#remote(message) })
    notifications?.onResync(() => { this.resync() })
  }

  on (uid: string, listener: ChangeListener): void {
    let set = this.#listeners.get(uid)
    if (set === undefined) this.#listeners.set(uid, set = new Set())
    set.add(listener)
  }

  /**
   * Inside a write's transaction: tells the other instances, on commit. Nothing (no statement)
   * where there are none.
   *
   * ```sql
   * select pg_notify('content_api_' || md5(current_schema()), $1)
   * ```
   */
  async announce (trx: Kysely<any>, message: ChangeMessage): Promise<void> {
    if (this.#notifications === null || this.#claimed.get(trx)?.has(messageKey(message)) === true) return
    await this.#notifications.send(trx, message)
  }

  /**
   * The announcement of `message` as a call for one of the write's own statements to make, in
   * transaction `trx` (create-direct.ts: one round trip fewer per create), with placeholders from
   * `$<first>`; `announce` then sends nothing more for the same message in that transaction.
   * Null where there are no other instances to tell. The call must run: a statement whose
   * result is thrown away still keeps its notification until the transaction ends.
   */
  announcement (trx: Kysely<any>, message: ChangeMessage, first: number): { text: string, parameters: string[] } | null {
    if (this.#notifications === null) return null
    let claimed = this.#claimed.get(trx)
    if (claimed === undefined) this.#claimed.set(trx, claimed = new Set())
    claimed.add(messageKey(message))
    return this.#notifications.call(message, first)
  }

  /** After the commit: this instance's listeners of the type. */
  emit (event: ChangeEvent): void {
    const listeners = this.#listeners.get(event.uid)
    if (listeners === undefined) return
    for (const listener of listeners) {
      try {
        listener(event)
      } catch (err) {
        this.#log.error({ err, uid: event.uid, action: event.action }, 'fastify-content-api: an onChange listener threw')
      }
    }
  }

  #remote (message: ChangeMessage): void {
    // Another app's types (same schema, other models) are not ours to report.
    if (!this.#listeners.has(message.uid)) return
    this.emit({ uid: message.uid, action: message.action as ChangeAction, documentId: message.documentId, origin: 'remote' })
  }

  /** Every listener of every type: changes may have been missed (see `ChangeAction`). */
  resync (): void {
    for (const uid of this.#listeners.keys()) this.emit({ uid, action: 'resync', origin: 'remote' })
  }
}

/** A message's identity within a transaction: its type, action and document. */
function messageKey (message: ChangeMessage): string {
  return `${message.uid}\0${message.action}\0${message.documentId ?? ''}`
}
