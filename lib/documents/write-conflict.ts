import { isLostRace } from '../db/faults.js'
import { VERSION_INDEX_SUFFIX } from '../model/naming.js'
import { ServiceUnavailableError } from '../errors.js'

/**
 * A write that lost a race the database settled, and was rolled back whole: a deadlock
 * (`40P01`), a serialization failure (`40001`), or a second draft or published row refused by a
 * version index (`23505` on `<table>_..._version_unique`: a backstop, since the document service
 * locks the document first and its writers wait instead). Nothing was written, and the same
 * request again succeeds, so the client is told to retry (503 with `Retry-After`) rather than
 * given a 500, or a 400 "This attribute must be unique" about an attribute it never sent.
 */
export function isWriteConflict (err: unknown): boolean {
  const e = err as { code?: unknown, constraint?: unknown } | null
  if (typeof e?.code !== 'string') return false
  return isLostRace(e.code) ||
    (e.code === '23505' && typeof e.constraint === 'string' && e.constraint.endsWith(VERSION_INDEX_SUFFIX))
}

/** The 503 a write conflict answers; the database's error is kept as `cause` for the log. */
export function writeConflictError (cause: unknown): ServiceUnavailableError {
  const error = new ServiceUnavailableError('The write met a concurrent write and was rolled back; try again')
  error.cause = cause
  return error
}
