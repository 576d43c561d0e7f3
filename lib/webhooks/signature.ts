import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * The signature of a webhook delivery, as Stripe signs its own: the header
 * `x-webhook-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The timestamp is
 * inside the signed text, so a receiver that refuses old timestamps refuses replays of a
 * captured request; the body is signed as the exact bytes sent.
 */

export const SIGNATURE_HEADER = 'x-webhook-signature'

/**
 * The header's value for `body` sent at `timestamp` (seconds).
 *
 * @example
 * signPayload('whsec_0123456789abcdef', '{"event":"entry.create"}', 1764100000)
 * // 't=1764100000,v1=5f0c...'
 */
export function signPayload (secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, body)}`
}

/**
 * What a receiver runs on the raw body it got: true when the header carries a signature of it
 * with `secret`, made less than `toleranceSeconds` ago (default 300).
 *
 * @example
 * verifyWebhookSignature(process.env.WEBHOOK_SECRET, rawBody, req.headers['x-webhook-signature'])
 */
export function verifyWebhookSignature (secret: string, body: string | Buffer, header: string | undefined, toleranceSeconds = 300, now = Date.now()): boolean {
  if (typeof header !== 'string') return false
  const parts = new Map<string, string[]>()
  for (const item of header.split(',')) {
    const at = item.indexOf('=')
    if (at <= 0) continue
    const key = item.slice(0, at).trim()
    parts.set(key, [...(parts.get(key) ?? []), item.slice(at + 1).trim()])
  }
  const t = Number(parts.get('t')?.[0])
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false
  const expected = Buffer.from(hmac(secret, t, typeof body === 'string' ? body : body.toString('utf8')), 'hex')
  return (parts.get('v1') ?? []).some((v1) => {
    const given = Buffer.from(v1, 'hex')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

function hmac (secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')
}
