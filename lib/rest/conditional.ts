import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import xxhash from 'xxhash-wasm'
import type { CacheControl } from '../options/rest-routes.js'

/**
 * Conditional requests on the content API's `GET` answers (RFC 9110 section 13): a weak `ETag`
 * on every 200, `If-None-Match` answered 304 without a body, and `Cache-Control`. `If-Match` on
 * `PUT` and `DELETE` is checked by the document service inside the write's transaction
 * (lib/documents/precondition.ts) against the same ETag, computed from the representation a
 * `GET` of the same URL would answer now.
 *
 * The ETag is a hash of the body as sent, not of rows' `updated_at`: a body shows populated
 * relations, components, media, the caller's field permissions, the v4 format and the page's
 * total, none of which the row's own version follows, and the body is already in memory as
 * one string (PostgreSQL rendered it). It is marked weak (`W/`) so that a proxy or
 * @fastify/compress re-encoding the body keeps it valid.
 *
 * The hash is XXH64 (xxhash-wasm), not a cryptographic one: a tag only tells one representation
 * of a URL from the next, for the client that fetched it, and a list page of 25 populated articles
 * (30-40 KB) hashed in 6 µs where SHA-1 took 35-45 µs (bench/README.md).
 */

/** The weak ETag of a body, as text or as the UTF-8 bytes sent: `W/"<XXH64, base64url>"` (11 characters inside the quotes). */
export type EtagOf = (body: string | Uint8Array) => string

let hasher: ReturnType<typeof xxhash> | undefined

/** `EtagOf`, once the hash's WebAssembly module is compiled (once per process). */
export async function createEtagOf (): Promise<EtagOf> {
  const { h64Raw } = await (hasher ??= xxhash())
  const digest = Buffer.alloc(8)
  return (body) => {
    digest.writeBigUInt64BE(h64Raw(typeof body === 'string' ? Buffer.from(body) : body))
    return `W/"${digest.toString('base64url')}"`
  }
}

/** The opaque tag of an entity tag, weak or strong (`W/"x"` and `"x"` are the same under weak comparison). */
function opaque (tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag
}

/**
 * Whether an `If-None-Match` or `If-Match` header names `etag` (or is `*`), under weak
 * comparison. For `If-Match` RFC 9110 asks for strong comparison, which no weak tag passes: our
 * tags are hashes of the exact representation, weak only so that re-encodings keep them, so they
 * are compared as they are meant (docs/extending.md#conditional-requests).
 */
export function namesTag (header: string, etag: string | null): boolean {
  const wanted = opaque(etag ?? '')
  for (const item of header.split(',')) {
    const tag = item.trim()
    if (tag === '*') return etag !== null
    if (etag !== null && opaque(tag) === wanted) return true
  }
  return false
}

/** A header's one value (Node joins repeated ones; a string array is from a caller's own headers). */
export function headerValue (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value
}

/** The default `Cache-Control` of an answer to a caller with credentials: only its own cache, revalidated each time (cheap with the ETag). */
export const DEFAULT_AUTHENTICATED = 'private, no-cache'
/** The default for the public role: any cache may keep it, revalidated each time. */
export const DEFAULT_PUBLIC = 'public, no-cache'

function resolveCacheControl (option: CacheControl | undefined): { public: string | false, authenticated: string | false } {
  if (option === undefined) return { public: DEFAULT_PUBLIC, authenticated: DEFAULT_AUTHENTICATED }
  if (typeof option === 'string' || option === false) return { public: option, authenticated: option }
  return { public: option.public ?? DEFAULT_PUBLIC, authenticated: option.authenticated ?? DEFAULT_AUTHENTICATED }
}

/**
 * The `onSend` hook of a `GET` route: on a 200 with a text body, `ETag`, `Cache-Control` and
 * `Vary`, and a 304 with no body when `If-None-Match` names the ETag. Errors, and bodies a
 * controller override sent as a stream or buffer, pass unchanged. The body is encoded to UTF-8
 * once, here: the tag is the hash of those bytes, and they are what is sent. A callback hook: no
 * promise per request.
 */
export function conditionalGet (option: CacheControl | undefined, etagOf: EtagOf): onSendHookHandler<unknown> {
  const cache = resolveCacheControl(option)
  return function (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void {
    if (reply.statusCode !== 200 || typeof payload !== 'string') { done(null, payload); return }
    const body = Buffer.from(payload)
    const etag = etagOf(body)
    reply.header('etag', etag)
    const authenticated = request.contentApiGrant !== null && request.contentApiGrant.principal.kind !== 'public'
    const cacheControl = authenticated ? cache.authenticated : cache.public
    if (cacheControl !== false) reply.header('cache-control', cacheControl)
    // The same URL answers differently per caller and per response format.
    reply.header('vary', 'Authorization, Strapi-Response-Format')
    const ifNoneMatch = headerValue(request.headers['if-none-match'])
    if (ifNoneMatch !== undefined && namesTag(ifNoneMatch, etag)) {
      reply.code(304)
      reply.removeHeader('content-type')
      // null, not '': no body and no Content-Length, as a 304 must be.
      done(null, null)
      return
    }
    done(null, body)
  }
}
