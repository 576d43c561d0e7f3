import type pg from 'pg'
import { DatabaseConnectionError } from '../errors.js'

/** Socket errors of a connection that could not be opened (not of one lost while in use). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])
/** Host names that do not resolve: unknown, or no DNS answer yet. */
const UNKNOWN_HOST = new Set(['ENOTFOUND', 'EAI_AGAIN'])
/** PostgreSQL's refusals at login (SQLSTATE): bad password, no pg_hba entry, no such database or role. */
const LOGIN_REFUSED: Record<string, string> = {
  '28P01': 'password authentication failed',
  28000: 'the server refused the login',
  '3D000': 'database does not exist',
  '3F000': 'schema does not exist'
}

interface DriverError {
  code?: string
  message?: string
  address?: string
  port?: number
  hostname?: string
  errors?: DriverError[]
}

/** `host:port` of a pg config: its own fields, else its connection string's, else pg's defaults. */
export function connectionTarget (config: pg.ClientConfig): string {
  let host = config.host
  let port = config.port === undefined ? undefined : String(config.port)
  if (config.connectionString !== undefined) {
    try {
      const url = new URL(config.connectionString)
      host ??= decodeURIComponent(url.hostname) || url.searchParams.get('host') || undefined
      port ??= url.port || undefined
    } catch {}
  }
  return `${host ?? 'localhost'}:${port ?? '5432'}`
}

/**
 * The driver's error when a connection to the database named by `option` fails at start, as a
 * `DatabaseConnectionError` naming the option and the target (never the password); null for any
 * other error, which is rethrown as it is.
 *
 * @example
 * connectionError(econnrefused, 'db', { connectionString: 'postgres://app:secret@127.0.0.1:5499/app' })?.message
 * // 'db: could not connect to 127.0.0.1:5499 (ECONNREFUSED)'
 * connectionError(enotfound, 'db', { connectionString: 'postgres://base/app' })?.message
 * // 'db: host "base" not found (ENOTFOUND)'
 */
export function connectionError (err: unknown, option: string, config: pg.ClientConfig): DatabaseConnectionError | null {
  const e = err as DriverError
  // Node reports a refused connection to a name with several addresses (localhost: ::1 and 127.0.0.1) as an AggregateError.
  const code = e?.code ?? e?.errors?.[0]?.code
  const target = connectionTarget(config)
  if (code !== undefined && UNREACHABLE.has(code)) {
    return new DatabaseConnectionError(`${option}: could not connect to ${target} (${code})`, { cause: err })
  }
  if (code !== undefined && UNKNOWN_HOST.has(code)) {
    const host = e.hostname ?? target.slice(0, target.lastIndexOf(':'))
    return new DatabaseConnectionError(`${option}: host "${host}" not found (${code})`, { cause: err })
  }
  if (code !== undefined && code in LOGIN_REFUSED) {
    return new DatabaseConnectionError(`${option}: ${target} refused the connection: ${LOGIN_REFUSED[code]} (${code}: ${e.message ?? ''})`, { cause: err })
  }
  // pg's own `connectionTimeoutMillis` expiring (pool.connectionTimeoutMs).
  if (typeof e?.message === 'string' && /timeout expired|connection timeout/i.test(e.message)) {
    return new DatabaseConnectionError(`${option}: could not connect to ${target} (timed out)`, { cause: err })
  }
  return null
}
