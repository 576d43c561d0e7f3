import { readFileSync } from 'node:fs'

/**
 * Comparison with the Strapi v5 oracle's recorded answers, under the same normalisation as
 * ../shared/oracle/replay.mjs (kept here so the suite does not depend on files outside the repo):
 * - volatile keys (ids, documentIds, timestamps, tokens, file hashes...) keep only their JSON type;
 * - inside strings, ISO datetimes, JWTs, 24-char documentIds, upload hash suffixes and CSP nonces
 *   are replaced by placeholders;
 * - object key order is ignored, array order is not;
 * - content types are compared on the media type only;
 * - a recorded 201 to a POST also accepts 200, and a recorded 500 requires a 400 ValidationError.
 */

export const VOLATILE_KEYS = new Set(['id', 'documentId', 'createdAt', 'updatedAt', 'publishedAt', 'jwt', 'hash', 'url',
  'previewUrl', 'provider', 'provider_metadata', 'folderPath', 'lastUsedAt', 'resetPasswordToken', 'confirmationToken'])
const DROP_KEYS = new Set(['stacktrace'])

const ISO_RE = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g
const JWT_RE = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g
const DOCID_RE = /\b[a-z0-9]{24}\b/g
const HASH_RE = /_[a-f0-9]{10}(?=\.\w+\b)/g
const NONCE_RE = /nonce-[a-f0-9]+/g

export function normaliseString (s: string): string {
  return s.replace(ISO_RE, '<datetime>').replace(JWT_RE, '<jwt>').replace(DOCID_RE, '<docid>')
    .replace(HASH_RE, '_<hash>').replace(NONCE_RE, 'nonce-<nonce>')
}

/** A JSON value with the replay's rules applied; objects come back with sorted keys. */
export function normalise (value: unknown, key?: string): unknown {
  if (key !== undefined && VOLATILE_KEYS.has(key)) return value === null ? null : Array.isArray(value) ? '<array>' : `<${typeof value}>`
  if (typeof value === 'string') return normaliseString(value)
  if (Array.isArray(value)) return value.map((v) => normalise(v))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) {
      if (!DROP_KEYS.has(k)) out[k] = normalise((value as Record<string, unknown>)[k], k)
    }
    return out
  }
  return value
}

/** A recorded answer: test/fixtures/oracle/answers/<case>.json (status and body of Strapi's response). */
export interface OracleAnswer {
  status: number
  body: any
}

export function oracleAnswer (name: string): OracleAnswer {
  return JSON.parse(readFileSync(new URL(`../fixtures/oracle/answers/${name}.json`, import.meta.url), 'utf8')) as OracleAnswer
}

/** What `app.inject()` returns, as far as the comparison needs it. */
export interface InjectedResponse {
  statusCode: number
  headers: Record<string, unknown>
  body: string
}

const mediaType = (contentType: unknown): string | null =>
  typeof contentType === 'string' && contentType !== '' ? contentType.split(';')[0].trim().toLowerCase() : null

/** The body as the replay reads it: parsed JSON for a JSON content type, null when empty, else text. */
export function responseBody (response: InjectedResponse): unknown {
  if (response.body === '') return null
  const type = mediaType(response.headers['content-type'])
  if (type !== null && type.includes('json')) {
    try { return JSON.parse(response.body) } catch { return response.body }
  }
  return response.body
}

/**
 * The recorded files keep no headers: Strapi answered JSON, text/plain for its bare 405
 * "Method Not Allowed", and no content type at all for a 204.
 */
function expectedMediaType (answer: OracleAnswer): string | null {
  if (answer.status === 204) return null
  return typeof answer.body === 'string' ? 'text/plain' : 'application/json'
}

/** tap's assertion options; `todo` marks a known difference that must not fail the suite. */
export interface AssertExtra { todo?: string | boolean }

interface Assert {
  equal (found: unknown, wanted: unknown, message: string, extra: AssertExtra): unknown
  strictSame (found: unknown, wanted: unknown, message: string, extra: AssertExtra): unknown
  ok (value: unknown, message: string, extra: AssertExtra): unknown
}

/**
 * Asserts that a response matches the recorded answer of the oracle case `name` the way the
 * replay compares them. `method` is the request's (a recorded 201 accepts 200 for a POST); `extra`
 * goes to every assertion (`{ todo: 'why' }` for a difference that is known and tracked).
 *
 * @example
 * matchesOracle(t, await app.inject({ method: 'GET', url: '/api/articles' }), 'list-default')
 */
export function matchesOracle (t: Assert, response: InjectedResponse, name: string, method = 'GET', extra: AssertExtra = {}): void {
  const answer = oracleAnswer(name)
  const body = responseBody(response)
  if (answer.status === 500) {
    const envelope = body as { data?: unknown, error?: { name?: unknown } } | null
    t.ok(response.statusCode === 400 && envelope?.data === null && envelope.error?.name === 'ValidationError',
      `${name}: Strapi answered 500; a 400 ValidationError is required`, extra)
    return
  }
  const createdAs200 = answer.status === 201 && method === 'POST' && response.statusCode === 200
  if (!createdAs200) t.equal(response.statusCode, answer.status, `${name}: status`, extra)
  t.equal(mediaType(response.headers['content-type']), expectedMediaType(answer), `${name}: content type`, extra)
  t.strictSame(normalise(body), normalise(answer.body), `${name}: body`, extra)
}
