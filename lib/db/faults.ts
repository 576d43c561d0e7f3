/**
 * One answer to "can the database serve this request now?": the errors that mean it cannot, for
 * a while, through no fault of the request. Every surface (REST, the auth and upload routes,
 * GraphQL) answers them 503 `ServiceUnavailableError` with `Retry-After`; anything else keeps its
 * own mapping (a 400 for a value the database refuses, a 500 for our own bugs).
 *
 * A request that meets one of these has written nothing: every write is one transaction, and a
 * transaction whose connection is lost, cancelled or refused is rolled back by the server.
 */

/**
 * SQLSTATEs of a server that cannot serve now:
 * - class 08, connection exception (the connection failed or was refused);
 * - 57P01 admin_shutdown (`pg_terminate_backend`, a fast shutdown, a failover), 57P02
 *   crash_shutdown, 57P03 cannot_connect_now (starting up, in recovery), 57P05 idle_session_timeout;
 * - 57014 query_canceled: the statement timeout (or a `pg_cancel_backend`);
 * - 53300 too_many_connections;
 * - 25P03 idle_in_transaction_session_timeout (the server ended a session idle in a transaction);
 * - 55P03 lock_not_available: a `lock_timeout` (set on a pool the application owns) expired;
 * - 40001 serialization_failure and 40P01 deadlock_detected: the transaction lost a race with
 *   another one and was rolled back whole. The client did nothing wrong and cannot fix anything
 *   (a 409 would say its request conflicts with the resource), nothing is broken (a 500), and the
 *   same request sent again will very likely succeed: 503 with `Retry-After` is the answer HTTP
 *   clients and proxies know to retry.
 */
const LOST_RACE_SQLSTATES = new Set(['40001', '40P01'])
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57P05', '57014', '53300', '25P03', '55P03', ...LOST_RACE_SQLSTATES])

/** Whether a SQLSTATE says the transaction lost a race and was rolled back whole (see above). */
export const isLostRace = (code: string): boolean => LOST_RACE_SQLSTATES.has(code)

/** Node's socket and DNS errors on the way to the server (refused, reset, unreachable, not resolved). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH',
  'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN'
])

/**
 * What pg, pg-pool, Kysely and PGlite throw, without a code, when there is no usable connection
 * (pg 8, pg-pool 3, Kysely 0.28, PGlite 0.5; test/reliability/ meets each of them, so a changed
 * message fails a test rather than turning 503s into 500s).
 */
const UNAVAILABLE_MESSAGES = new Set([
  // pg: the socket ended during a query, or the client was ended while one was queued.
  'Connection terminated unexpectedly',
  'Connection terminated',
  // pg: a query on a client whose connection failed between statements, or that was ended.
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  // pg: no answer within query_timeout (the client-side bound past the statement timeout).
  'Query read timeout',
  // pg-pool: no free client within connectionTimeoutMillis, or connecting took longer.
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  // pg-pool and Kysely: the pool or the Kysely instance was closed (the app is shutting down).
  'Cannot use a pool after calling end on the pool',
  'driver has already been destroyed',
  // PGlite: the embedded instance was closed.
  'PGlite is closed'
])

/** Causes are followed this deep: wrappers add one or two levels, never more. */
const MAX_CAUSES = 5

function isUnavailableItself (err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { code, message } = err as { code?: unknown, message?: unknown }
  if (typeof code === 'string') {
    if (code.length === 5 && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return true
    if (SOCKET_CODES.has(code)) return true
  }
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.has(message)
}

/**
 * Whether `err` says the statement's connection itself was lost (ended by the server: a
 * `pg_terminate_backend`, a failover, a proxy's restart; or its socket failed), not that the
 * statement was refused or timed out. A connection that died while idle in the pool is only
 * noticed when the next statement is sent on it; such a statement, when it can be sent again
 * without effect (a read, a `begin`), is sent again on a new connection (lib/db/pool.ts).
 */
export function isConnectionLost (err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { code, message } = err as { code?: unknown, message?: unknown }
  if (typeof code === 'string') {
    if (code === '57P01' || code === '57P02' || (code.length === 5 && code.startsWith('08'))) return true
    if (code === 'ECONNRESET' || code === 'EPIPE') return true
  }
  return message === 'Connection terminated unexpectedly' || message === 'Client has encountered a connection error and is not queryable'
}

/**
 * True when `err` (or what it wraps: its `cause`, an `AggregateError`'s errors, as Node reports
 * a refused connection to every address of a host) means the database cannot serve now.
 *
 * @example
 * isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })) // true
 * isDatabaseUnavailable(Object.assign(new Error('duplicate key value'), { code: '23505' }))                                // false
 */
export function isDatabaseUnavailable (err: unknown, depth = 0): boolean {
  if (isUnavailableItself(err)) return true
  if (depth >= MAX_CAUSES || typeof err !== 'object' || err === null) return false
  const { cause, errors } = err as { cause?: unknown, errors?: unknown }
  if (cause !== undefined && isDatabaseUnavailable(cause, depth + 1)) return true
  return err instanceof AggregateError && Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e, depth + 1))
}
