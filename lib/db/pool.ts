import pg from 'pg'
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type { PreparedStatements } from './prepared-statements.js'

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
}

/** Where the pool reports connections it loses (the Fastify logger). */
export interface PoolLogger {
  warn (obj: object, msg: string): void
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
 * parameters, so every session has them from its first statement (PgBouncer needs them in
 * `ignore_startup_parameters`, see docs/operations.md).
 */
export function poolConfig (base: pg.PoolConfig, settings: PoolSettings): pg.PoolConfig {
  const config: pg.PoolConfig = {
    ...base,
    max: settings.size,
    // Bounds both opening a connection and waiting for a free one (pg-pool uses it for both).
    connectionTimeoutMillis: settings.connectionTimeoutMs,
    idleTimeoutMillis: settings.idleTimeoutMs,
    ...(settings.statementTimeoutMs > 0
      ? { statement_timeout: settings.statementTimeoutMs, query_timeout: settings.statementTimeoutMs + READ_GRACE_MS }
      : {}),
    ...(settings.idleInTransactionTimeoutMs > 0 ? { idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs } : {})
  }
  return settings.jit ? config : withStartupOption(config, '-c jit=off')
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
 */
export class ContentApiPool implements PostgresPool {
  readonly #pool: pg.Pool
  readonly #checkedOut = new Set<pg.PoolClient>()
  readonly #wrappers = new WeakMap<pg.PoolClient, PoolClient>()

  readonly #log: PoolLogger
  readonly #prepared: PreparedStatements | null

  constructor (config: pg.PoolConfig, log: PoolLogger, prepared: PreparedStatements | null = null) {
    this.#log = log
    this.#prepared = prepared
    this.#pool = new pg.Pool(config)
    this.#pool.on('connect', (client) => {
      client.on('error', (err) => { log.warn({ err }, 'fastify-content-api: a database connection failed; it is discarded') })
    })
    // Already logged by the client's own listener above.
    this.#pool.on('error', () => {})
  }

  async connect (): Promise<PostgresPoolClient> {
    const client = await this.#pool.connect()
    this.#checkedOut.add(client)
    let wrapper = this.#wrappers.get(client)
    if (wrapper === undefined) {
      wrapper = new PoolClient(client, this.#checkedOut, this.#prepared)
      this.#wrappers.set(client, wrapper)
    }
    return wrapper
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
  readonly #client: pg.PoolClient
  readonly #checkedOut: Set<pg.PoolClient>
  readonly #prepared: PreparedStatements | null
  #lost: Error | undefined

  constructor (client: pg.PoolClient, checkedOut: Set<pg.PoolClient>, prepared: PreparedStatements | null) {
    this.#client = client
    this.#checkedOut = checkedOut
    this.#prepared = prepared
  }

  query<R> (sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>
  query<R> (cursor: PostgresCursor<R>): PostgresCursor<R>
  query<R> (query: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof query !== 'string') return this.#client.query(query as any) as unknown as PostgresCursor<R>
    // pg parses a named statement once per connection (its cache goes with the connection) and
    // only binds and executes it afterwards.
    const name = this.#prepared?.nameOf(query)
    const values = parameters as unknown[]
    const running = name === undefined ? this.#client.query(query, values) : this.#client.query({ name, text: query, values })
    return (running as unknown as Promise<PostgresQueryResult<R>>).catch((err: Error) => {
      if (err.message === READ_TIMEOUT && this.#lost === undefined) {
        this.#lost = err
        this.#client.connection.stream.destroy()
      }
      throw err
    })
  }

  release (): void {
    this.#checkedOut.delete(this.#client)
    const lost = this.#lost
    this.#lost = undefined
    // With an error, pg-pool ends the client rather than keeping it (pg-pool checks `_queryable`
    // too, but a destroyed socket is only noticed on a later tick).
    this.#client.release(lost)
  }
}
