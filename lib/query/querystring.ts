import qs from 'qs'
import { overLimit } from './limits.js'

/**
 * Bracket nesting `qs` parses (Strapi's setting): deeper brackets are kept as a literal key. It
 * also bounds the dotted paths of `sort` (`sort=a.b.c...`), which may go as deep as the bracket
 * form, and `populate` for callers without `limits` (see populate.ts).
 */
export const QS_DEPTH = 20

/** The bounds `parseQueryString` checks: `limits.queryLength` and `limits.queryParameters`. */
export interface QueryStringLimits {
  queryLength: number
  queryParameters: number
}

/**
 * The `qs` settings for a query string or an urlencoded body, Strapi's own plus the parameter
 * bound, so a hostile query string costs bounded time and memory.
 * - `strictNullHandling`: `filters[title][$null]` (no `=`) parses to `null`, `x=` to `''`.
 * - `arrayLimit`: an index above it turns the array into an object (`a[150]=x` is `{ '150': 'x' }`).
 * - `depth`: bracket nesting deeper than this is kept as a literal key.
 * - `parameterLimit`: never reached, as longer inputs are refused first (`checkParameters`).
 */
export function qsOptions (limits: QueryStringLimits): qs.IParseOptions {
  return { strictNullHandling: true, arrayLimit: 100, depth: QS_DEPTH, parameterLimit: limits.queryParameters, allowPrototypes: false }
}

/**
 * Refuses more than `limits.queryParameters` parameters, rather than letting `qs` drop the rest
 * silently. Counted as `qs` splits them, on `&`.
 */
export function checkParameters (text: string, limits: QueryStringLimits, what: string): void {
  let count = 1
  for (let at = text.indexOf('&'); at !== -1 && count <= limits.queryParameters; at = text.indexOf('&', at + 1)) count++
  if (count > limits.queryParameters) {
    throw overLimit('queryParameters', limits.queryParameters, `${what} has more than ${limits.queryParameters} parameters`)
  }
}

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

/**
 * Parses the query part of a request URL (`/api/articles?...`) into Strapi's nested object form.
 * A query string longer than `limits.queryLength` characters, or with more than
 * `limits.queryParameters` parameters, is a 400 `LimitError` before any parsing.
 */
export function parseQueryString (url: string, limits: QueryStringLimits): RawQuery {
  const search = searchOf(url)
  if (search === '') return {}
  if (search.length > limits.queryLength) {
    throw overLimit('queryLength', limits.queryLength, `The query string is longer than ${limits.queryLength} characters`)
  }
  checkParameters(search, limits, 'The query string')
  return qs.parse(search, qsOptions(limits)) as RawQuery
}
