import pg from 'pg'
import type { CompiledQuery, PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult, QueryResult } from 'kysely'
import type { PreparedStatements } from './prepared-statements.js'
import { isConnectionLost } from './faults.js'

/** The `pool` options, resolved (docs/options.md#pool). */
export interface PoolSettings {
  size: number
  connectionTimeoutMs: number
  idleTimeoutMs: number
  statementTimeoutMs: number
  idleInTransactionTimeoutMs: number
  jit: boolean
  /** Send the reads the plugin repeats as named statements (prepared-statements.ts). */
  preparedStatements: boolean
  /** Most texts named (prepared-statements.ts). */
  maxPreparedStatements: number
  /**
   * The connection string is a pooler in transaction mode (PgBouncer `pool_mode = transaction`):
   * the session settings travel with each transaction instead of at connection (transactionSettings).
   */
  transactionPooling: boolean
}

/** Where the pool reports connections it loses (the Fastify logger). */
export interface PoolLogger {
  warn (obj: object, msg: string): void
  /** Good news (a read replica back in use); the Fastify logger has it. */
  info? (obj: object, msg: string): void
}

/** pg's error when `query_timeout` passes without an answer. */
const READ_TIMEOUT = 'Query read timeout'

/**
 * How long past the server's statement timeout the client still waits for an answer. The server's
 * timeout speaks first (57014, the connection stays usable); the client's own bound only ends a
 * wait for a server that can no longer answer (a silent network, a frozen host), which nothing
 * else would end before TCP gives up, minutes later.
 */
const READ_GRACE_MS = 1000

/**
 * The `pg.Pool` settings for the plugin's own pool: the timeouts (and `jit`) travel as startup
 * parameters, so every session has them from its first statement. Behind a pooler in transaction
 * mode (`transactionPooling`) a session is no server connection of its own, and PgBouncer refuses
 * startup parameters it does not know: none is sent, and `transactionSettings` carries them instead.
 * The client's read deadline (`query_timeout`) is the pool's own, so it stays either way.
 */
export function poolConfig (base: pg.PoolConfig, settings: PoolSettings): pg.PoolConfig {
  const config: pg.PoolConfig = {
    ...base,
    max: settings.size,
    // Bounds both opening a connection and waiting for a free one (pg-pool uses it for both).
    connectionTimeoutMillis: settings.connectionTimeoutMs,
    idleTimeoutMillis: settings.idleTimeoutMs,
    ...(settings.statementTimeoutMs > 0 ? { query_timeout: settings.statementTimeoutMs + READ_GRACE_MS } : {})
  }
  if (settings.transactionPooling) return config
  const session: pg.PoolConfig = {
    ...config,
    ...(settings.statementTimeoutMs > 0 ? { statement_timeout: settings.statementTimeoutMs } : {}),
    ...(settings.idleInTransactionTimeoutMs > 0 ? { idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs } : {})
  }
  return settings.jit ? session : withStartupOption(session, '-c jit=off')
}

/**
 * What follows each transaction's `begin` behind a pooler in transaction mode, in the same round
 * trip (one simple-protocol query), so that the transaction runs under the pool's settings on
 * whichever server connection the pooler lends it; `set local` ends with the transaction and
 * leaves nothing on that connection for the next client. Null on a direct connection (the settings
 * are the session's) or when there is nothing to set. The values are integers the options
 * validated, so the text is built once per pool and no parameter is needed (`set` takes none).
 *
 * ```sql
 * begin; set local statement_timeout = 5000; set local idle_in_transaction_session_timeout = 30000; set local jit = off
 * ```
 *
 * A statement outside any transaction (the cached reads, a direct create) gets none of them: the
 * server's own settings apply (docs/operations.md#pgbouncer), and the client's read deadline.
 */
export function transactionSettings (settings: PoolSettings): string | null {
  if (!settings.transactionPooling) return null
  const set: string[] = []
  if (settings.statementTimeoutMs > 0) set.push(`set local statement_timeout = ${Math.trunc(settings.statementTimeoutMs)}`)
  if (settings.idleInTransactionTimeoutMs > 0) set.push(`set local idle_in_transaction_session_timeout = ${Math.trunc(settings.idleInTransactionTimeoutMs)}`)
  if (!settings.jit) set.push('set local jit = off')
  return set.length === 0 ? null : set.join('; ')
}

/**
 * Adds a `-c name=value` to the session's startup `options`, after those already given. pg lets
 * an `options` parameter of the connection string override the config's, so one found there is
 * moved into the config first, where both are kept.
 */
function withStartupOption (config: pg.PoolConfig, option: string): pg.PoolConfig {
  let { connectionString, options } = config
  if (connectionString !== undefined && /^postgres(ql)?:/.test(connectionString)) {
    const url = new URL(connectionString)
    const fromString = url.searchParams.get('options')
    if (fromString !== null) {
      url.searchParams.delete('options')
      connectionString = url.toString()
      options = fromString
    }
  }
  return { ...config, connectionString, options: options === undefined || options === '' ? option : `${options} ${option}` }
}

/**
 * A `pg.Pool` that never takes the process down and never hands out a broken connection, as
 * Kysely's `PostgresPool`:
 *
 * - Every client gets a permanent 'error' listener when it connects. pg-pool listens only while a
 *   client is idle; a connection that dies while a request holds it between two statements of a
 *   transaction (no query running) makes pg's client emit 'error' with nobody listening, which
 *   would crash the process. The pool's own 'error' event (an idle client died; pg-pool has
 *   already discarded it) gets a listener too.
 * - A client whose connection failed is not queryable; pg-pool ends it instead of keeping it when
 *   it is released (test/reliability/ checks that). A client whose query passed `query_timeout`
 *   still has that query in flight, so its connection is destroyed and the client released with
 *   an error, which makes pg-pool end it too.
 * - `abandon()` cuts the connections still checked out, so that a shutdown past its bound does
 *   not wait for them (the server rolls their transactions back).
 * - A text `prepared` names is sent as that named statement; every other text, unnamed.
 * - A connection that died while idle (the server restarted or failed over, a proxy closed it) is
 *   only noticed when a statement is sent on it. The first statement of a checkout that meets a
 *   lost connection is sent again, once, on a new connection when sending it again can change
 *   nothing: a read outside any transaction, or a transaction's `begin` (see `isRepeatable`).
 *   Without that, every connection the pool held idle would fail one request after a failover.
 */
export class ContentApiPool implements PostgresPool {
  readonly #pool: pg.Pool
  readonly #checkedOut = new Set<pg.PoolClient>()
  readonly #wrappers = new WeakMap<pg.PoolClient, PoolClient>()

  readonly #log: PoolLogger
  readonly #statements: Statements

  constructor (config: pg.PoolConfig, log: PoolLogger, prepared: PreparedStatements | null = null, inTransaction: string | null = null) {
    this.#log = log
    // The read timeout is kept here rather than given to pg (see ReadDeadlines).
    const { query_timeout: readTimeoutMs, ...pgConfig } = config
    this.#statements = { prepared, deadlines: readTimeoutMs === undefined || readTimeoutMs <= 0 ? null : new ReadDeadlines(readTimeoutMs), inTransaction }
    this.#pool = new pg.Pool(pgConfig)
    this.#pool.on('connect', (client) => {
      client.on('error', (err) => { this.#discarded(err) })
    })
    // Already logged by the client's own listener above.
    this.#pool.on('error', () => {})
  }

  async connect (): Promise<PostgresPoolClient> {
    const client = await this.#checkOut()
    let wrapper = this.#wrappers.get(client)
    if (wrapper === undefined) {
      wrapper = new PoolClient(client, this.#checkedOut, this.#statements, async (lost) => {
        this.#discarded(lost)
        return await this.#checkOut()
      })
      this.#wrappers.set(client, wrapper)
    }
    wrapper.checkedOut()
    return wrapper
  }

  #discarded (err: Error): void {
    this.#log.warn({ err }, 'fastify-content-api: a database connection failed; it is discarded')
  }

  async #checkOut (): Promise<pg.PoolClient> {
    const client = await this.#pool.connect()
    this.#checkedOut.add(client)
    return client
  }

  /**
   * One statement outside any transaction, on a connection taken for it and released as soon as
   * it answers, in callbacks as `pg.Pool.query` does (no promise of pg's, no Kysely): the path of
   * the reads the document service caches (lib/documents/reader.ts), which are most requests.
   * Every guarantee of `connect()` holds: the connection counts as checked out (`abandon()` cuts
   * it), a read timeout destroys it, the statement runs named when `prepared` names it.
   */
  executeQuery<R> (query: CompiledQuery<R>): Promise<QueryResult<R>> {
    return new Promise((resolve, reject) => {
      this.#read(query, false, (err, result) => {
        if (err === null) resolve({ rows: result!.rows as R[] })
        else reject(err)
      })
    })
  }

  /** Runs a read; one that met a lost connection runs again, once (`retried`), on a new one. */
  #read (query: CompiledQuery, retried: boolean, done: (err: Error | null, result: pg.QueryResult | undefined) => void): void {
    this.#pool.connect((err, client, release) => {
      if (err !== null && err !== undefined) {
        done(err, undefined)
        return
      }
      this.#checkedOut.add(client!)
      const answered = (err: Error | null, result: pg.QueryResult | undefined): void => {
        this.#checkedOut.delete(client!)
        const lost = err !== null && isConnectionLost(err)
        // With the read timeout's error, or a lost connection, pg-pool ends the client; any
        // other error leaves the connection usable, as through `connect()`.
        release(err !== null && (lost || err.message === READ_TIMEOUT) ? err : undefined)
        if (lost && !retried) {
          this.#discarded(err)
          this.#read(query, true, done)
        } else {
          done(err, result)
        }
      }
      try {
        run(client!, this.#statements, query.sql, query.parameters, answered)
      } catch (err) {
        answered(err as Error, undefined)
      }
    })
  }

  /** Resolves once every checked-out client is released; idle ones are closed at once. */
  async end (): Promise<void> {
    await this.#pool.end()
  }

  /** Destroys the connections still checked out: their queries fail, their transactions roll back. */
  abandon (): void {
    if (this.#checkedOut.size === 0) return
    this.#log.warn({ connections: this.#checkedOut.size }, `fastify-content-api: ${this.#checkedOut.size} database connection(s) still in use are closed; their transactions roll back`)
    for (const client of this.#checkedOut) client.connection.stream.destroy()
  }
}

class PoolClient implements PostgresPoolClient {
  #client: pg.PoolClient
  readonly #checkedOut: Set<pg.PoolClient>
  readonly #statements: Statements
  /** Reports the lost connection and checks out another. */
  readonly #replacement: (lost: Error) => Promise<pg.PoolClient>
  #lost: Error | undefined
  /** No statement has run on the connection since it was checked out. */
  #fresh = true
  /** The lost connection was given back and no new one could be had: nothing left to release. */
  #released = false

  constructor (client: pg.PoolClient, checkedOut: Set<pg.PoolClient>, statements: Statements, replacement: (lost: Error) => Promise<pg.PoolClient>) {
    this.#client = client
    this.#checkedOut = checkedOut
    this.#statements = statements
    this.#replacement = replacement
  }

  checkedOut (): void {
    this.#fresh = true
  }

  query<R> (sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>
  query<R> (cursor: PostgresCursor<R>): PostgresCursor<R>
  query<R> (query: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    const fresh = this.#fresh
    this.#fresh = false
    if (typeof query !== 'string') return this.#client.query(query as any) as unknown as PostgresCursor<R>
    // Kysely's `begin` / `start transaction ...` (postgres-driver.js), with the pooler's settings.
    const { inTransaction } = this.#statements
    const text = inTransaction !== null && (query === 'begin' || query.startsWith('start transaction')) ? `${query}; ${inTransaction}` : query
    return new Promise<PostgresQueryResult<R>>((resolve, reject) => {
      run(this.#client, this.#statements, text, parameters ?? [], (err, result) => {
        if (err === null) {
          resolve(result as unknown as PostgresQueryResult<R>)
          return
        }
        if (fresh && isConnectionLost(err) && isRepeatable(query)) {
          this.#replace(err).then(async () => await this.query<R>(query, parameters ?? [])).then(resolve, reject)
          return
        }
        if (err.message === READ_TIMEOUT && this.#lost === undefined) this.#lost = err
        reject(err)
      })
    })
  }

  /** Gives the lost connection back (pg-pool ends it) and carries on with a new one. */
  async #replace (lost: Error): Promise<void> {
    this.#checkedOut.delete(this.#client)
    this.#client.release(lost)
    this.#released = true
    this.#client = await this.#replacement(lost)
    this.#released = false
  }

  release (): void {
    if (this.#released) {
      this.#released = false
      return
    }
    this.#checkedOut.delete(this.#client)
    const lost = this.#lost
    this.#lost = undefined
    // With an error, pg-pool ends the client rather than keeping it (pg-pool checks `_queryable`
    // too, but a destroyed socket is only noticed on a later tick).
    this.#client.release(lost)
  }
}

/**
 * Whether a statement that is the first of its checkout can be sent again on another connection
 * without changing anything: a transaction's `begin`, or a `select` (Kysely's reads; the plugin
 * runs no `select` outside a transaction that writes).
 */
function isRepeatable (sql: string): boolean {
  return sql === 'begin' || sql.startsWith('select ')
}

/** What every statement of a pool runs with: the texts sent named, the read timeout, what follows a `begin`. */
interface Statements {
  prepared: PreparedStatements | null
  deadlines: ReadDeadlines | null
  /** `transactionSettings`: sent with each `begin` behind a pooler in transaction mode. */
  inTransaction: string | null
}

/**
 * The client-side read timeout (`query_timeout`: `statementTimeoutMs` + 1 s), kept by the pool
 * rather than by pg. pg arms a timer per query whose callback holds the query, and through it its
 * answer; measured with `--trace-gc-nvp`, with pg's timer every answer survived scavenges and was
 * promoted to the old generation, freed only by a mark-compact (2-3 MB per scavenge at `-c 10` on
 * a page of 25 documents; without it, a few KB). Why the timers keep answers that long was not
 * established (V8 allocating `Timeout` objects in the old generation is a guess). Here the statements in
 * flight are a map from client to deadline, swept by one timer while any runs: the answer is
 * referenced by nothing long-lived. A statement past its deadline has its connection destroyed;
 * pg then fails it, and `run` answers pg's `Query read timeout`, as pg did.
 */
class ReadDeadlines {
  readonly #ms: number
  readonly #tick: number
  /** Deadlines of the statements in flight, per client (several when statements are queued on one, which pg runs in order). */
  readonly #running = new Map<pg.PoolClient, number | number[]>()
  readonly #expired = new WeakSet<pg.PoolClient>()
  #timer: NodeJS.Timeout | null = null

  constructor (ms: number) {
    this.#ms = ms
    // A bound of 5 s is enforced within 250 ms; a shorter one within a tenth of itself.
    this.#tick = Math.max(10, Math.min(250, Math.floor(ms / 10)))
  }

  start (client: pg.PoolClient): void {
    const deadline = Date.now() + this.#ms
    const running = this.#running.get(client)
    if (running === undefined) this.#running.set(client, deadline)
    else if (typeof running === 'number') this.#running.set(client, [running, deadline])
    else running.push(deadline)
    if (this.#timer === null) {
      this.#timer = setInterval(() => { this.#sweep() }, this.#tick)
      this.#timer.unref()
    }
  }

  /** Whether the client's statement passed its deadline (its connection is then destroyed). */
  finish (client: pg.PoolClient): boolean {
    const running = this.#running.get(client)
    if (typeof running === 'object') {
      running.shift()
      if (running.length === 1) this.#running.set(client, running[0])
    } else {
      this.#running.delete(client)
    }
    if (!this.#expired.has(client)) return false
    this.#expired.delete(client)
    return true
  }

  #sweep (): void {
    const now = Date.now()
    for (const [client, running] of this.#running) {
      // pg answers a client's statements in order: the first one's deadline is the nearest.
      if ((typeof running === 'number' ? running : running[0]) > now) continue
      this.#running.delete(client)
      this.#expired.add(client)
      client.connection.stream.destroy()
    }
    if (this.#running.size === 0 && this.#timer !== null) {
      clearInterval(this.#timer)
      this.#timer = null
    }
  }
}

/**
 * Runs one statement on `client`: named when `prepared` names its text (pg parses a named
 * statement once per connection, its cache going with the connection, and only binds and
 * executes it afterwards), else unnamed; under the read timeout when the pool has one. A client
 * whose statement passed it has had its connection destroyed (the statement was still in flight
 * there), so that releasing it with the error ends it.
 *
 * pg's callback form, not the promise pg returns without one: through that promise each answer
 * outlives its request by a few scavenges and is promoted to the old generation (bench/pg-gc.ts),
 * as through pg's `query_timeout` (see ReadDeadlines); through a callback it dies young, as under
 * `pg.Pool.query`.
 */
function run (
  client: pg.PoolClient, statements: Statements, sql: string, parameters: ReadonlyArray<unknown>,
  done: (err: Error | null, result: pg.QueryResult | undefined) => void
): void {
  const name = statements.prepared?.nameOf(sql)
  const values = parameters as unknown[]
  const { deadlines } = statements
  deadlines?.start(client)
  // Built from its text and named afterwards: given a config object, pg copies it property by
  // property first (utils.normalizeQueryConfig, 2-6 µs in a loop); a text it only wraps.
  const query: pg.Query & { name?: string } = new pg.Query(sql, values, (err: Error | null | undefined, result: pg.QueryResult) => {
    if (deadlines?.finish(client) === true) err = new Error(READ_TIMEOUT)
    if (err === null || err === undefined) {
      done(null, result)
      return
    }
    if (err.message === READ_TIMEOUT) client.connection.stream.destroy()
    // The stack of the caller, not of pg's socket callback (as pg's promise form does).
    Error.captureStackTrace(err)
    done(err, undefined)
  })
  if (name !== undefined) query.name = name
  client.query(query)
}
