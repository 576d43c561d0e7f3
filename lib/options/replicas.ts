import type { ReplicatedDatabase } from '../db/connect.js'
import { PROBE_INTERVAL_MS } from '../db/replicas.js'
import { connectionStringProblem } from './connection-string.js'

const KEYS = new Set(['primary', 'replicas', 'probeIntervalMs', 'maxLagMs'])

/** Whether `db` is the `{ primary, replicas }` form (then `resolveReplicated` checks the rest). */
export function isReplicated (db: unknown): db is ReplicatedDatabase {
  return typeof db === 'object' && db !== null && !Array.isArray(db) && 'primary' in db
}

/**
 * Checks `db: { primary, replicas, probeIntervalMs, maxLagMs }` and fills in its defaults, on a copy:
 * the problems found (each named by its path), and the option resolved.
 *
 * @example
 * resolveReplicated({ primary: 'postgres://db-1/app', replicas: ['postgres://db-2/app'] })
 * // { problems: [], db: { primary: 'postgres://db-1/app', replicas: [...], probeIntervalMs: 1000, maxLagMs: null } }
 */
export function resolveReplicated (db: ReplicatedDatabase): { problems: string[], db: ReplicatedDatabase } {
  const problems: string[] = []
  for (const key of Object.keys(db)) {
    if (!KEYS.has(key)) problems.push(`db.${key}: not an option of { primary, replicas } (expected primary, replicas, probeIntervalMs, maxLagMs)`)
  }
  problems.push(...checkServer(db.primary, 'db.primary'))
  if (!Array.isArray(db.replicas)) {
    problems.push('db.replicas: must be an array of connection strings or { connectionString, max }')
  } else {
    db.replicas.forEach((server, i) => { problems.push(...checkServer(server, `db.replicas[${i}]`)) })
  }
  const { probeIntervalMs = PROBE_INTERVAL_MS, maxLagMs = null } = db
  if (!Number.isInteger(probeIntervalMs) || probeIntervalMs < 10) problems.push('db.probeIntervalMs: must be an integer >= 10 (milliseconds)')
  if (maxLagMs !== null && !(Number.isInteger(maxLagMs) && maxLagMs >= 0)) problems.push('db.maxLagMs: must be an integer >= 0 (milliseconds), or null')
  return { problems, db: { ...db, replicas: Array.isArray(db.replicas) ? [...db.replicas] : db.replicas, probeIntervalMs, maxLagMs } }
}

function checkServer (server: unknown, path: string): string[] {
  if (typeof server === 'string' && server !== '') {
    const problem = connectionStringProblem(server, path)
    return problem === null ? [] : [problem]
  }
  if (typeof server === 'object' && server !== null && !Array.isArray(server)) {
    // Other keys are handed to pg as they are, as with `db: { connectionString }`.
    const { connectionString, max } = server as Record<string, unknown>
    const problems: string[] = []
    if (typeof connectionString !== 'string' || connectionString === '') problems.push(`${path}.connectionString: must be a PostgreSQL connection string`)
    else problems.push(...[connectionStringProblem(connectionString, `${path}.connectionString`)].filter((p) => p !== null))
    if (max !== undefined && !(Number.isInteger(max) && (max as number) >= 1)) problems.push(`${path}.max: must be an integer >= 1`)
    return problems
  }
  return [`${path}: expected a PostgreSQL connection string or { connectionString, max }`]
}
