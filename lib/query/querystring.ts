import qs from 'qs'
import { ValidationError } from '../errors.js'

/**
 * Bounds for parsing a query string with `qs`, Strapi's own settings plus a cap on the number of
 * parameters, so a hostile query string costs bounded time and memory.
 * - `strictNullHandling`: `filters[title][$null]` (no `=`) parses to `null`, `x=` to `''`.
 * - `arrayLimit`: an index above it turns the array into an object (`a[150]=x` is `{ '150': 'x' }`).
 * - `depth`: bracket nesting deeper than this is kept as a literal key.
 */
export const QS_OPTIONS = {
  strictNullHandling: true,
  arrayLimit: 100,
  depth: 20,
  parameterLimit: 1000,
  allowPrototypes: false
} as const

/** The longest query string accepted; longer ones are a 400 before any parsing. */
export const MAX_QUERY_LENGTH = 64 * 1024

export type RawQuery = Record<string, unknown>

/** Parses the query part of a request URL (`/api/articles?...`) into Strapi's nested object form. */
export function parseQueryString (url: string): RawQuery {
  const at = url.indexOf('?')
  if (at === -1 || at === url.length - 1) return {}
  const search = url.slice(at + 1)
  if (search.length > MAX_QUERY_LENGTH) {
    throw new ValidationError(`Query string too long (more than ${MAX_QUERY_LENGTH} characters)`)
  }
  const parameters = search.split('&').length
  if (parameters > QS_OPTIONS.parameterLimit) {
    throw new ValidationError(`Too many query parameters (more than ${QS_OPTIONS.parameterLimit})`)
  }
  return qs.parse(search, QS_OPTIONS) as RawQuery
}
