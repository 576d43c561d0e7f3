import { Kysely, PostgresDialect, type CompiledQuery, type QueryResult } from 'kysely'
import type { PGlite } from '@electric-sql/pglite'
import type pg from 'pg'
import { connectionError } from './connection-error.js'
import { PGliteDialect } from './pglite-dialect.js'
import { ContentApiPool, poolConfig, transactionSettings, type PoolLogger, type PoolSettings } from './pool.js'
import { PreparedStatements } from './prepared-statements.js'
import { createEmbedded, type EmbeddedDatabase, type EmbeddedOptions } from './embedded.js'
import { PROBE_INTERVAL_MS, ReplicaReads, replicaName, type ReplicaSettings } from './replicas.js'

/** One PostgreSQL server of `db: { primary, replicas }`: a connection string, or one with its pool's size. */
export type ServerOption = string | { connectionString: string, max?: number }

/**
 * A primary and its read replicas (docs/operations.md#read-replicas): writes, transactions, schema
 * sync and the reads that must see the latest writes run on `primary`; the other reads on the
 * replicas in turn, falling back to the primary. Each server gets a pool of its own with the
 * `pool` settings; `max` sets that one pool's size.
 */
export interface ReplicatedDatabase extends Partial<ReplicaSettings> {
  primary: ServerOption
  replicas: ServerOption[]
}

/**
 * Where documents are stored:
 * - a `Kysely` instance you own (the plugin never destroys it);
 * - a PostgreSQL connection string, or `{ connectionString, max }` for the pool size;
 * - `{ pglite }`, an embedded PGlite instance you own;
 * - `{ dataDir, settings, bootSnapshot, optimizeWasm }` or nothing: an embedded PGlite the plugin creates
 *   (without `dataDir`, in a scratch directory removed at close) and closes with the app
 *   (lib/db/embedded.ts).
 */
export type DatabaseOption =
  | Kysely<any>
  | string
  | { connectionString: string, max?: number }
  | ReplicatedDatabase
  | { pglite: PGlite }
  | EmbeddedOptions
  | undefined

/** What runs a compiled statement outside any transaction: a Kysely instance, or the plugin's pool itself. */
export interface QueryRunner {
  executeQuery<R> (query: CompiledQuery<R>): Promise<QueryResult<R>>
}

export interface DatabaseHandle {
  readonly db: Kysely<any>
  /**
   * Where the reads the document service caches run (lib/documents/reader.ts): on the plugin's
   * own pool, that pool directly (`ContentApiPool.executeQuery`: no Kysely, pg's callback form);
   * otherwise `db`.
   */
  readonly reads: QueryRunner
  /**
   * Where a cached read runs that must see the latest writes (a request that wrote, or asked for
   * it: docs/operations.md#read-replicas): `reads` itself, except with replicas, where it is the
   * primary's pool.
   */
  readonly primaryReads: QueryRunner
  readonly dialect: 'postgres' | 'pglite' | 'external'
  /**
   * The texts the plugin's pool sends as named statements, to which the reader adds the reads it
   * caches; null where statements all run unnamed (`pool.preparedStatements: false`, PGlite, a
   * Kysely given).
   */
  readonly prepared: PreparedStatements | null
  /**
   * Runs administrative work (schema sync) where the request timeouts do not cut it: on the
   * plugin's own pool, a connection of its own, opened for `fn` and closed after; otherwise `db`.
   */
  admin<T> (fn: (db: Kysely<any>) => Promise<T>): Promise<T>
  /**
   * Where the change listener (lib/db/notifications.ts) connects: the plugin's own pool's
   * connection settings (never one of its connections); null for PGlite (one process) and a
   * Kysely given (unless `notifications.connectionString` says where).
   */
  readonly listener: pg.ClientConfig | null
  /**
   * Closes what the plugin opened. Work in progress (a transaction holding a connection, or the
   * embedded session) may finish for `graceMs`; then it is cut, and rolled back.
   */
  close (graceMs?: number): Promise<void>
}

export function isKysely (value: unknown): value is Kysely<any> {
  return value instanceof Kysely ||
    (typeof value === 'object' && value !== null && typeof (value as Kysely<any>).selectFrom === 'function' &&
      typeof (value as Kysely<any>).transaction === 'function')
}

/** Runs `close`; if it has not finished after `graceMs`, runs `cut` so that it can. */
async function closeWithin (graceMs: number | undefined, close: () => Promise<void>, cut: () => void): Promise<void> {
  const timer = graceMs === undefined ? undefined : setTimeout(cut, graceMs)
  try {
    await close()
  } finally {
    clearTimeout(timer)
  }
}

/** A server's connection config and its pool's size (its own `max`, else `pool.size`). */
function serverConfig (server: ServerOption, settings: PoolSettings): [pg.PoolConfig, PoolSettings] {
  if (typeof server === 'string') return [{ connectionString: server }, settings]
  const { max, ...config } = server as pg.PoolConfig
  return [config, max === undefined ? settings : { ...settings, size: max }]
}

function postgres (config: pg.PoolConfig, settings: PoolSettings, log: PoolLogger, replicated?: { option: ReplicatedDatabase, settings: PoolSettings }): DatabaseHandle {
  const prepared = settings.preparedStatements ? new PreparedStatements(settings.maxPreparedStatements) : null
  const pool = new ContentApiPool(poolConfig(config, settings), log, prepared, transactionSettings(settings))
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  // The replicas name the same texts: a name is a hash of its text, prepared per connection.
  const replicas = replicated === undefined
    ? null
    : new ReplicaReads(pool, replicated.option.replicas.map((server) => {
      const [replicaConfig, replicaSettings] = serverConfig(server, replicated.settings)
      return { name: replicaName(replicaConfig.connectionString ?? ''), pool: new ContentApiPool(poolConfig(replicaConfig, replicaSettings), log, prepared) }
    }), { probeIntervalMs: replicated.option.probeIntervalMs ?? PROBE_INTERVAL_MS, maxLagMs: replicated.option.maxLagMs ?? null }, log)
  return {
    db,
    reads: replicas ?? pool,
    primaryReads: pool,
    dialect: 'postgres',
    prepared,
    // No statement or read timeout: the session waits for notifications, idle, as long as the app runs.
    listener: { ...config, connectionTimeoutMillis: settings.connectionTimeoutMs, keepAlive: true },
    async admin (fn) {
      // No statement, read or idle-in-transaction timeout: DDL on a large table, or waiting for
      // the schema lock while another instance syncs, may take longer than any request may.
      const adminPool = new ContentApiPool({ ...config, max: 1, connectionTimeoutMillis: settings.connectionTimeoutMs }, log)
      const adminDb = new Kysely<any>({ dialect: new PostgresDialect({ pool: adminPool }) })
      try {
        return await fn(adminDb)
      } catch (err) {
        // The first connection of the start: a wrong DATABASE_URL is reported by its option, not as a raw socket error.
        throw connectionError(err, replicated === undefined ? 'db' : 'db.primary', config) ?? err
      } finally {
        await adminDb.destroy()
      }
    },
    close: async (graceMs) => {
      await closeWithin(graceMs, async () => { await Promise.all([db.destroy(), replicas?.end()]) }, () => { pool.abandon(); replicas?.abandon() })
    }
  }
}

/**
 * The database handle for the `db` option. `settings` applies to the pool the plugin creates from
 * a connection string; a Kysely or a PGlite given is used as it is.
 */
export function connect (option: DatabaseOption, settings: PoolSettings, log: PoolLogger): DatabaseHandle {
  if (isKysely(option)) return { db: option, reads: option, primaryReads: option, dialect: 'external', prepared: null, listener: null, admin: async (fn) => await fn(option), close: async () => {} }
  if (typeof option === 'string') return postgres({ connectionString: option }, settings, log)
  if (typeof option === 'object' && 'primary' in option) {
    const [config, primarySettings] = serverConfig(option.primary, settings)
    return postgres(config, primarySettings, log, { option, settings })
  }
  if (typeof option === 'object' && 'connectionString' in option) {
    // `max` is `pool.size` now (options.ts resolves it); anything else given is kept, as before.
    const { max: _max, ...config } = option as pg.PoolConfig
    return postgres(config, settings, log)
  }
  if (typeof option === 'object' && 'pglite' in option) {
    const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite: option.pglite }) })
    return { db, reads: db, primaryReads: db, dialect: 'pglite', prepared: null, listener: null, admin: async (fn) => await fn(db), close: async () => { await db.destroy() } }
  }
  const embedded: EmbeddedOptions = option ?? {}
  let created: EmbeddedDatabase | null = null
  const db = new Kysely<any>({
    dialect: new PGliteDialect({ pglite: async () => (created = await createEmbedded(embedded)).pglite, closeOnDestroy: true })
  })
  return {
    db,
    reads: db,
    primaryReads: db,
    dialect: 'pglite',
    prepared: null,
    listener: null,
    admin: async (fn) => await fn(db),
    // Closing waits for the session's holder; past the grace the instance is closed under it.
    close: async (graceMs) => {
      try {
        await closeWithin(graceMs, async () => { await db.destroy() }, () => { created?.pglite.close().catch(() => {}) })
      } finally {
        created?.remove()
      }
    }
  }
}
