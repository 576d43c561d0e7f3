import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { sql, type Kysely } from 'kysely'
import { quoteIdent } from '../model/naming.js'
import type { PoolLogger } from './pool.js'

/**
 * Cross-instance change notifications through PostgreSQL's LISTEN/NOTIFY: no infrastructure
 * besides the database the instances already share.
 *
 * - Sending: a write adds `select pg_notify(<channel>, <payload>)` to its own transaction
 *   (`send`), so the notification is delivered when, and only if, the write commits.
 * - Receiving: one dedicated connection per app (a `pg.Client` of its own, never one of the
 *   pool's: a pooled connection would be handed to requests) runs `LISTEN <channel>` and hands
 *   each payload from another instance to `onMessage`. Payloads from this instance are dropped:
 *   the writer already told its own listeners after the commit.
 * - A lost listening connection (a restart, a failover, `pg_terminate_backend`, a silent network
 *   caught by the heartbeat) is opened again with backoff; once it listens again `onResync` runs,
 *   because notifications sent meanwhile are lost for good: caches must be dropped whole.
 *
 * The channel: `notifications.channel` when given, otherwise `content_api_` followed by the md5 of
 * the session's `current_schema()`, computed by the server on both sides, so that apps on one
 * database hear each other exactly when they share tables (the same schema), and apps in other
 * schemas of that database (other models, parallel test schemas) hear nothing of them.
 *
 * ```sql
 * -- the listening session, once per (re)connection
 * select 'content_api_' || md5(current_schema()) as channel;
 * listen "content_api_1c5c...";
 * -- in each write's transaction
 * select pg_notify('content_api_' || md5(current_schema()), $1)  -- or pg_notify($1, $2) with a channel given
 * ```
 */

/** What one write tells the other instances: the content type, the action, the document when known. */
export interface ChangeMessage {
  uid: string
  action: string
  documentId?: string | null
}

/** The payload on the wire: short keys, as NOTIFY payloads are limited to 8000 bytes. */
interface Wire { i: string, u: string, a: string, d?: string | null }

/** Where the listening connection connects and which channel it listens on. */
export interface ListenerSettings {
  /** pg's client config (connection string, search_path in `options`...): the pool's own, or `notifications.connectionString`. */
  client: pg.ClientConfig
  /** A fixed channel, or null for the one derived from the schema (see above). */
  channel: string | null
  /** How often the connection is checked (`HEARTBEAT_MS` by default; tests shorten it). */
  heartbeatMs?: number
}

const FIRST_RETRY_MS = 50
const LAST_RETRY_MS = 5000
/**
 * How often the listening connection is checked: a connection whose network went silent reports
 * nothing until TCP gives up (minutes); a failed check reconnects and resyncs. The check sends the
 * `listen` again (a no-op when listening), so that the session's query in `pg_stat_activity`
 * always reads `listen "<channel>"`: how an operator (or a test) tells it from the pool's.
 */
const HEARTBEAT_MS = 15_000
const HEARTBEAT_TIMEOUT_MS = 5000

/** The channel without `notifications.channel`, computed by the server (see above). */
const DERIVED_CHANNEL = "'content_api_' || md5(current_schema())"

export class Notifications {
  /** Sent with every payload, so that an instance can tell its own notifications from others'. */
  readonly instanceId = randomBytes(8).toString('hex')
  readonly #settings: ListenerSettings
  readonly #log: PoolLogger
  #onMessage: (message: ChangeMessage) => void = () => {}
  #onResync: () => void = () => {}
  #client: pg.Client | null = null
  #closed = false
  /** A notification may have been missed since the last time the connection listened (or before the first). */
  #missed = false
  #delay = FIRST_RETRY_MS
  #retry: NodeJS.Timeout | null = null
  #heartbeat: NodeJS.Timeout | null = null
  /** The channel listened on, once known (logged, and shown in docs/operations.md's checks). */
  channel: string | null

  constructor (settings: ListenerSettings, log: PoolLogger) {
    this.#settings = settings
    this.#log = log
    this.channel = settings.channel
  }

  /** Where other instances' messages go. */
  onMessage (handler: (message: ChangeMessage) => void): void { this.#onMessage = handler }

  /** Called once listening again after a loss: what was missed is unknown, so every cache goes. */
  onResync (handler: () => void): void { this.#onResync = handler }

  /**
   * Adds the notification to the write's transaction (`trx`): other instances receive it when
   * the transaction commits, never when it rolls back.
   *
   * ```sql
   * select pg_notify('content_api_' || md5(current_schema()), '{"i":"<instance>","u":"api::article.article","a":"update","d":"<documentId>"}')
   * ```
   */
  async send (trx: Kysely<any>, message: ChangeMessage): Promise<void> {
    const channel = this.#settings.channel === null ? sql.raw(DERIVED_CHANNEL) : sql`${this.#settings.channel}`
    await sql`select pg_notify(${channel}, ${this.#payload(message)})`.execute(trx)
  }

  /**
   * The same notification as `send`'s, as a call for a write to put in a statement of its own
   * (one round trip fewer): its text, with placeholders from `$<first>`, and their values.
   *
   * ```sql
   * pg_notify('content_api_' || md5(current_schema()), $7)  -- or pg_notify($7, $8) with a channel given
   * ```
   */
  call (message: ChangeMessage, first: number): { text: string, parameters: string[] } {
    const payload = this.#payload(message)
    return this.#settings.channel === null
      ? { text: `pg_notify(${DERIVED_CHANNEL}, $${first})`, parameters: [payload] }
      : { text: `pg_notify($${first}, $${first + 1})`, parameters: [this.#settings.channel, payload] }
  }

  #payload (message: ChangeMessage): string {
    const wire: Wire = { i: this.instanceId, u: message.uid, a: message.action }
    if (message.documentId != null) wire.d = message.documentId
    return JSON.stringify(wire)
  }

  /**
   * Opens the listening connection. Waits for the first attempt only: a database that cannot be
   * reached now is tried again in the background (the app starts; caches rely on their TTL until
   * the listener is back, then are dropped).
   */
  async start (): Promise<void> {
    await this.#connect()
  }

  async #connect (): Promise<void> {
    this.#retry = null
    if (this.#closed) return
    const client = new pg.Client(this.#settings.client)
    // Never a crash: pg emits 'error' on a client whose connection fails while idle.
    client.on('error', (err) => { this.#lost(client, err) })
    client.on('end', () => { this.#lost(client) })
    client.on('notification', (notification) => { this.#receive(notification.payload) })
    let channel: string
    try {
      await client.connect()
      channel = this.#settings.channel ?? (await client.query<{ channel: string }>(`select ${DERIVED_CHANNEL} as channel`)).rows[0].channel
      await client.query(`listen ${quoteIdent(channel)}`)
      this.channel = channel
    } catch (err) {
      client.removeAllListeners('end')
      client.end().catch(() => {})
      this.#missed = true
      if (!this.#closed) {
        this.#log.warn({ err }, 'fastify-content-api: the change listener could not connect; retrying (other instances\' changes reach this one through cache expiry meanwhile)')
        this.#schedule()
      }
      return
    }
    if (this.#closed) { await client.end().catch(() => {}); return }
    this.#client = client
    this.#delay = FIRST_RETRY_MS
    this.#heartbeat = setInterval(() => { this.#check(client, channel) }, this.#settings.heartbeatMs ?? HEARTBEAT_MS).unref()
    if (this.#missed) {
      this.#missed = false
      this.#onResync()
    }
  }

  #check (client: pg.Client, channel: string): void {
    const timeout = setTimeout(() => { this.#lost(client, new Error('heartbeat timed out')) }, HEARTBEAT_TIMEOUT_MS)
    client.query(`listen ${quoteIdent(channel)}`).then(() => { clearTimeout(timeout) }, (err) => { clearTimeout(timeout); this.#lost(client, err) })
  }

  #lost (client: pg.Client, err?: Error): void {
    if (client !== this.#client) return
    this.#client = null
    clearInterval(this.#heartbeat!)
    this.#missed = true
    client.end().catch(() => {})
    if (this.#closed) return
    this.#log.warn({ err }, 'fastify-content-api: the change listener lost its connection; reconnecting')
    this.#schedule()
  }

  #schedule (): void {
    const delay = this.#delay
    this.#delay = Math.min(this.#delay * 2, LAST_RETRY_MS)
    this.#retry = setTimeout(() => { this.#connect().catch(() => {}) }, delay * (0.5 + Math.random() / 2))
  }

  #receive (payload: string | undefined): void {
    let wire: Partial<Wire>
    try {
      wire = JSON.parse(payload ?? '')
    } catch {
      return
    }
    // Own notifications: this instance told its listeners at commit already.
    if (wire.i === this.instanceId || typeof wire.u !== 'string' || typeof wire.a !== 'string') return
    this.#onMessage({ uid: wire.u, action: wire.a, documentId: typeof wire.d === 'string' ? wire.d : undefined })
  }

  /** Stops listening and closes the connection (the app closes). */
  async close (): Promise<void> {
    this.#closed = true
    if (this.#retry !== null) clearTimeout(this.#retry)
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat)
    const client = this.#client
    this.#client = null
    await client?.end().catch(() => {})
  }
}

/**
 * The app's listener for the `notifications` option, or null where no other instance can hear
 * (option `false`; PGlite, one process; a Kysely given without `notifications.connectionString`).
 */
export function notificationsFor (
  option: false | { channel?: string, connectionString?: string },
  listener: pg.ClientConfig | null,
  log: PoolLogger
): Notifications | null {
  if (option === false) return null
  const client = option.connectionString === undefined
    ? listener
    : { connectionString: option.connectionString, connectionTimeoutMillis: 5000, keepAlive: true }
  return client === null ? null : new Notifications({ client, channel: option.channel ?? null }, log)
}
