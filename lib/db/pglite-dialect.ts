import type { PGlite, Results } from '@electric-sql/pglite'
import {
  CompiledQuery, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type DatabaseConnection, type DatabaseIntrospector, type Dialect, type DialectAdapter, type Driver,
  type Kysely, type QueryCompiler, type QueryResult, type TransactionSettings
} from 'kysely'

export interface PGliteDialectConfig {
  /** The PGlite instance, or a factory called once when Kysely first connects. */
  pglite: PGlite | (() => Promise<PGlite>)
  /** Close the instance when Kysely is destroyed (true when the dialect created it). */
  closeOnDestroy?: boolean
  /**
   * Schema to put on the session's search_path each time this Kysely takes the session, so that
   * several Kysely instances can share one PGlite with a schema each (the test suite does).
   */
  searchPath?: string
}

/**
 * A Kysely dialect for embedded PGlite. PGlite is one in-process PostgreSQL backend with a single
 * session, so the driver hands out that session to one holder at a time: a transaction keeps it
 * from BEGIN to COMMIT and other queries queue behind it, exactly as they would wait for a pooled
 * connection. The queue belongs to the PGlite instance, not to the Kysely instance, so several
 * Kysely instances over one PGlite never interleave inside each other's transactions.
 */
export class PGliteDialect implements Dialect {
  readonly #config: PGliteDialectConfig
  constructor (config: PGliteDialectConfig) { this.#config = config }
  createAdapter (): DialectAdapter { return new PostgresAdapter() }
  createDriver (): Driver { return new PGliteDriver(this.#config) }
  createQueryCompiler (): QueryCompiler { return new PostgresQueryCompiler() }
  createIntrospector (db: Kysely<any>): DatabaseIntrospector { return new PostgresIntrospector(db) }
}

const WRITE_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

class PGliteConnection implements DatabaseConnection {
  readonly #client: PGlite
  constructor (client: PGlite) { this.#client = client }

  async executeQuery<R> (query: CompiledQuery): Promise<QueryResult<R>> {
    // A text without parameters goes in the simple query protocol, as node-postgres sends it: it
    // may hold several statements (schema sync sends its plan as one script). As through Kysely's
    // PostgreSQL dialect, a script of several answers no rows. With parameters, the extended
    // protocol, which takes one statement.
    let result: Results<R>
    if (query.parameters.length === 0) {
      const results = await this.#client.exec(query.sql)
      if (results.length !== 1) return { rows: [] }
      result = results[0] as Results<R>
    } else {
      result = await this.#client.query<R>(query.sql, query.parameters as unknown[])
    }
    const { command } = result
    return {
      rows: result.rows,
      ...(command !== undefined && WRITE_COMMANDS.has(command) ? { numAffectedRows: BigInt(result.affectedRows ?? 0) } : {})
    }
  }

  async * streamQuery<R> (query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // PGlite has no cursors over its single session; one batch is the honest stream.
    yield await this.executeQuery<R>(query)
  }
}

/** A FIFO lock per PGlite instance: the holder of the session releases it for the next waiter. */
const sessionQueues = new WeakMap<PGlite, { tail: Promise<void> }>()

async function lockSession (client: PGlite): Promise<() => void> {
  let queue = sessionQueues.get(client)
  if (queue === undefined) { queue = { tail: Promise.resolve() }; sessionQueues.set(client, queue) }
  const previous = queue.tail
  let release!: () => void
  queue.tail = new Promise<void>((resolve) => { release = resolve })
  await previous
  return release
}

class PGliteDriver implements Driver {
  readonly #config: PGliteDialectConfig
  #client: PGlite | null = null
  #connection: PGliteConnection | null = null
  #release: (() => void) | null = null

  constructor (config: PGliteDialectConfig) { this.#config = config }

  async init (): Promise<void> {
    const { pglite } = this.#config
    this.#client = typeof pglite === 'function' ? await pglite() : pglite
    await this.#client.waitReady
    this.#connection = new PGliteConnection(this.#client)
  }

  async acquireConnection (): Promise<DatabaseConnection> {
    const release = await lockSession(this.#client!)
    this.#release = release
    if (this.#config.searchPath !== undefined) {
      try {
        await this.#client!.query(`set search_path to "${this.#config.searchPath.replaceAll('"', '""')}"`)
      } catch (err) {
        this.#release = null
        release()
        throw err
      }
    }
    return this.#connection!
  }

  async releaseConnection (): Promise<void> {
    const release = this.#release
    this.#release = null
    release?.()
  }

  /** `begin`, or with `setIsolationLevel`/`setAccessMode`, `start transaction isolation level ... read only`, as Kysely's PostgreSQL driver does. */
  async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const isolation = settings.isolationLevel === undefined ? '' : ` isolation level ${settings.isolationLevel}`
    const access = settings.accessMode === undefined ? '' : ` ${settings.accessMode}`
    await connection.executeQuery(CompiledQuery.raw(isolation === '' && access === '' ? 'begin' : `start transaction${isolation}${access}`))
  }

  async commitTransaction (connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction (connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async savepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint "${name}"`))
  }

  async rollbackToSavepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint "${name}"`))
  }

  async releaseSavepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint "${name}"`))
  }

  /**
   * Closes the instance when the dialect owns it, once the session is free: a transaction in
   * progress (and any queued before this call) finishes first, as pg-pool's `end()` waits for the
   * clients checked out.
   */
  async destroy (): Promise<void> {
    const client = this.#client
    if (this.#config.closeOnDestroy === true && client !== null && !client.closed) {
      const release = await lockSession(client)
      try {
        if (!client.closed) await client.close()
      } finally {
        release()
      }
    }
    this.#client = null
  }
}
