import type { CompiledQuery, QueryResult } from 'kysely'
import { CompiledQuery as Compiled } from 'kysely'
import type { ContentApiPool, PoolLogger } from './pool.js'
import { isDatabaseUnavailable } from './faults.js'

/** `db.probeIntervalMs`'s default: a replica that stopped is read from again within a second of answering. */
export const PROBE_INTERVAL_MS = 1000

/** The `db.replicas` settings, resolved (docs/options.md#read-replicas). */
export interface ReplicaSettings {
  /** How often a replica marked down (and, with `maxLagMs`, every replica) is probed. */
  probeIntervalMs: number
  /** A replica further behind its primary than this is not read from; null: lag is not checked. */
  maxLagMs: number | null
}

/** One replica: its own pool, and whether reads may go to it. */
interface Replica {
  /** `host:port/database`, for the logs (no credentials). */
  readonly name: string
  readonly pool: ContentApiPool
  up: boolean
  probing: boolean
}

/**
 * How far the replica's replay is behind, in milliseconds: 0 when it has replayed everything it
 * received (or is not a standby: promoted), otherwise the age of the last transaction replayed.
 * The age overstates the lag right after a primary that was idle writes again (the last replayed
 * commit is old), which keeps the replica out for one probe at most.
 *
 * ```sql
 * select case when pg_last_wal_receive_lsn() is null or pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
 *   else coalesce(...now() - pg_last_xact_replay_timestamp()..., 0) end as "lagMs"
 * ```
 */
const PROBE = Compiled.raw(
  'select case when pg_last_wal_receive_lsn() is null or pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0 ' +
  'else coalesce(floor(extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000)::int, 0) end as "lagMs"'
)

/**
 * SQLSTATEs a replica answers that the primary would not, for a statement that is fine: a
 * read cancelled by a conflict with recovery (40001, `max_standby_streaming_delay`), or a table or
 * column the primary's schema sync created and the replica has not replayed yet (42P01, 42703).
 * The read runs again on the primary; the replica stays in use.
 */
const PRIMARY_ONLY = new Set(['40001', '42P01', '42703'])

/**
 * Whether `err` says the replica cannot serve at all: its connection was refused or lost, no
 * connection came within `pool.connectionTimeoutMs`, it is starting or shutting down, or it did
 * not answer within the read timeout (a frozen host). A statement timeout (57014) is the
 * statement's own: it would time out on the primary too.
 */
function isReplicaDown (err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return isDatabaseUnavailable(err) && code !== '57014' && code !== '55P03' && code !== '40001' && code !== '40P01'
}

/**
 * Where the reads that need no read-your-writes run when `db.replicas` is set: on the replicas in
 * turn (round-robin over those up), on the primary when none is. A read that meets a replica
 * down (see `isReplicaDown`) marks it down and runs again on the next replica up, or the
 * primary: reads are idempotent, so a replica that stops costs its clients no error, only the
 * wait for its failure (a refused connection: milliseconds; a silent host: up to
 * `pool.connectionTimeoutMs`). A probe every `probeIntervalMs` brings a replica back once it
 * answers (and, with `maxLagMs`, marks down one that lags more).
 *
 * Each replica has a pool of its own with the primary's settings (statement and read timeouts,
 * named statements, the retry of a lost connection's first read: lib/db/pool.ts).
 */
export class ReplicaReads {
  readonly #primary: ContentApiPool
  readonly #replicas: Replica[]
  readonly #settings: ReplicaSettings
  readonly #log: PoolLogger
  #next = 0
  #timer: NodeJS.Timeout | null = null

  constructor (primary: ContentApiPool, replicas: Array<{ name: string, pool: ContentApiPool }>, settings: ReplicaSettings, log: PoolLogger) {
    this.#primary = primary
    this.#replicas = replicas.map(({ name, pool }) => ({ name, pool, up: true, probing: false }))
    this.#settings = settings
    this.#log = log
    // With a lag bound, every replica is watched from the start; otherwise only one marked down.
    if (settings.maxLagMs !== null) this.#watch()
  }

  executeQuery<R> (query: CompiledQuery<R>): Promise<QueryResult<R>> {
    return this.#run(query, this.#pick(), 0)
  }

  /** The next replica up after the last one picked, or null: none is. */
  #pick (): Replica | null {
    const n = this.#replicas.length
    for (let i = 0; i < n; i++) {
      const replica = this.#replicas[(this.#next + i) % n]
      if (replica.up) {
        this.#next = (this.#next + i + 1) % n
        return replica
      }
    }
    return null
  }

  #run<R> (query: CompiledQuery<R>, replica: Replica | null, attempt: number): Promise<QueryResult<R>> {
    if (replica === null) return this.#primary.executeQuery(query)
    return replica.pool.executeQuery(query).then(undefined, (err: unknown) => {
      if (isReplicaDown(err)) {
        this.#down(replica, err)
        // Each replica is tried at most once per read; then the primary answers.
        return this.#run(query, attempt + 1 < this.#replicas.length ? this.#pick() : null, attempt + 1)
      }
      if (PRIMARY_ONLY.has((err as { code?: unknown }).code as string)) return this.#primary.executeQuery(query)
      throw err
    })
  }

  #down (replica: Replica, err: unknown): void {
    if (!replica.up) return
    replica.up = false
    this.#log.warn({ err, replica: replica.name }, 'fastify-content-api: a read replica is down; its reads go to the other replicas or the primary')
    this.#watch()
  }

  #watch (): void {
    if (this.#timer !== null) return
    this.#timer = setInterval(() => { this.#probeAll() }, this.#settings.probeIntervalMs)
    this.#timer.unref()
  }

  #probeAll (): void {
    const { maxLagMs } = this.#settings
    for (const replica of this.#replicas) {
      if (!replica.probing && (!replica.up || maxLagMs !== null)) this.#probe(replica, maxLagMs)
    }
    if (maxLagMs === null && this.#replicas.every((r) => r.up) && this.#timer !== null) {
      clearInterval(this.#timer)
      this.#timer = null
    }
  }

  #probe (replica: Replica, maxLagMs: number | null): void {
    replica.probing = true
    replica.pool.executeQuery(PROBE as CompiledQuery<{ lagMs: number }>).then((result) => {
      replica.probing = false
      const lagMs = result.rows[0]?.lagMs ?? 0
      const fresh = maxLagMs === null || lagMs <= maxLagMs
      if (fresh && !replica.up) {
        replica.up = true
        this.#log.info?.({ replica: replica.name, lagMs }, 'fastify-content-api: a read replica is back; reads go to it again')
      } else if (!fresh && replica.up) {
        replica.up = false
        this.#log.warn({ replica: replica.name, lagMs, maxLagMs }, 'fastify-content-api: a read replica lags more than db.maxLagMs; its reads go elsewhere until it catches up')
      }
    }, () => {
      // Still down (or, with a lag bound, down now): the next probe tries again.
      replica.probing = false
      if (replica.up) this.#down(replica, new Error('the replica did not answer its probe'))
    })
  }

  /** Stops probing and closes the replicas' pools (the primary's is closed by its owner). */
  async end (): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
    await Promise.all(this.#replicas.map(async (r) => { await r.pool.end() }))
  }

  abandon (): void {
    for (const r of this.#replicas) r.pool.abandon()
  }
}

/** `host:port/database` of a connection string, without its credentials. */
export function replicaName (connectionString: string): string {
  try {
    const url = new URL(connectionString)
    return `${url.hostname}:${url.port === '' ? '5432' : url.port}${url.pathname}`
  } catch {
    return 'replica'
  }
}
