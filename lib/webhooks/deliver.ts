import type { WebhookEndpoint } from '../options/webhooks.js'
import type { ClaimedDelivery } from './outbox.js'
import { SIGNATURE_HEADER, signPayload } from './signature.js'

/** What one attempt gives: the answer's status (null: none), how long it took, and why it failed. */
export interface Attempt { ok: boolean, statusCode: number | null, durationMs: number, error: string | null }

export interface SendOptions {
  defaultHeaders: Readonly<Record<string, string>>
  secret: string | undefined
  timeoutMs: number
  /** Aborted when the app closes. */
  signal: AbortSignal
}

/** Longest error text kept in the log. */
const MAX_ERROR = 500

/**
 * POSTs a delivery's body to its endpoint with Strapi's headers (`Content-Type`, then
 * `defaultHeaders` under the endpoint's own `headers`) and ours, which neither may replace:
 * `x-webhook-id` (the delivery's id, the same on every attempt: the receiver's idempotency key),
 * `x-webhook-event`, `x-webhook-attempt` and, with a secret, `x-webhook-signature`. A 2xx answer
 * is a delivery; anything else, a redirect included, a failed attempt. The answer's body is
 * never read (its socket is released), so a receiver cannot make the worker hold much memory.
 * Never throws.
 *
 * @example
 * const attempt = await send(endpoint, claimed, { defaultHeaders: {}, secret, timeoutMs: 10000, signal })
 */
export async function send (endpoint: WebhookEndpoint, delivery: ClaimedDelivery, options: SendOptions): Promise<Attempt> {
  const started = performance.now()
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...lower(options.defaultHeaders),
    ...lower(endpoint.headers),
    'x-webhook-id': delivery.id,
    'x-webhook-event': delivery.event,
    'x-webhook-attempt': String(delivery.attempts)
  }
  if (options.secret !== undefined) headers[SIGNATURE_HEADER] = signPayload(options.secret, delivery.payload, Math.floor(Date.now() / 1000))
  try {
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers,
      body: delivery.payload,
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal])
    })
    await response.body?.cancel().catch(() => {})
    const ok = response.status >= 200 && response.status < 300
    return { ok, statusCode: response.status, durationMs: elapsed(started), error: ok ? null : `HTTP ${response.status}` }
  } catch (err) {
    return { ok: false, statusCode: null, durationMs: elapsed(started), error: describe(err, options) }
  }
}

function lower (headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}

function elapsed (started: number): number {
  return Math.round(performance.now() - started)
}

/** `fetch failed` says little: its cause (`ECONNREFUSED 127.0.0.1:4000`) says why. */
function describe (err: unknown, options: SendOptions): string {
  if (options.signal.aborted) return 'aborted: the app is closing'
  const e = err as { name?: string, message?: string, cause?: { code?: string, message?: string } }
  if (e?.name === 'TimeoutError') return `timed out after ${options.timeoutMs} ms`
  const text = e?.cause?.message !== undefined ? `${e.message ?? 'error'}: ${e.cause.message}` : String(e?.message ?? err)
  return text.slice(0, MAX_ERROR)
}
