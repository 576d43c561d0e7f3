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

/**
 * The deepest nesting of relations a query may walk, in any form: as deep as qs lets the object
 * form go. The dotted forms (`populate=a.b.c...`, `sort=a.b.c...`) would otherwise nest without
 * bound, each level one more sub-select of the statement.
 */
export const MAX_NESTING = QS_OPTIONS.depth

/** The longest query string accepted; longer ones are a 400 before any parsing. */
export const MAX_QUERY_LENGTH = 64 * 1024

export type RawQuery = Record<string, unknown>

/**
 * The query string of a request URL, split where Fastify's router splits it (at the first `?`
 * or `#`), so that what a route's hooks read from `request.query` and what its handler parses
 * from the URL are the same parameters.
 */
export function searchOf (url: string): string {
  const question = url.indexOf('?')
  const hash = url.indexOf('#')
  const at = hash !== -1 && (question === -1 || hash < question) ? hash : question
  return at === -1 ? '' : url.slice(at + 1)
}

/** Parses the query part of a request URL (`/api/articles?...`) into Strapi's nested object form. */
export function parseQueryString (url: string): RawQuery {
  const search = searchOf(url)
  if (search === '') return {}
  if (search.length > MAX_QUERY_LENGTH) {
    throw new ValidationError(`Query string too long (more than ${MAX_QUERY_LENGTH} characters)`)
  }
  const parameters = search.split('&').length
  if (parameters > QS_OPTIONS.parameterLimit) {
    throw new ValidationError(`Too many query parameters (more than ${QS_OPTIONS.parameterLimit})`)
  }
  return qs.parse(search, QS_OPTIONS) as RawQuery
}
