import Type, { type Static } from 'typebox'
import Value from 'typebox/value'
import { ConfigurationError } from '../errors.js'
import { WEBHOOK_EVENTS, type WebhookEvent } from '../model/webhook-events.js'

/**
 * Webhook options (docs/options.md#webhooks, docs/extending.md#webhooks), validated with the
 * plugin's own by `resolveOptions` before anything connects. Strapi's names where Strapi has
 * them (`defaultHeaders`, an endpoint's `name`, `url`, `headers`, `events`, `enabled`); the rest
 * (signing, retries, the delivery worker) is beyond Strapi, which sends once and forgets.
 */

export { WEBHOOK_EVENTS, type WebhookEvent }

const Endpoint = Type.Object({
  /** Unique among the endpoints: the delivery log names it, and renaming one orphans its pending deliveries. */
  name: Type.String({ minLength: 1, maxLength: 255 }),
  url: Type.String({ pattern: '^https?://' }),
  events: Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e))), { minItems: 1 }),
  /** Sent with every request to it; over `defaultHeaders` (Strapi's rule). */
  headers: Type.Record(Type.String({ minLength: 1 }), Type.String(), { default: {} }),
  /** `false`: no event is queued for it (its pending deliveries stay, and go once it is enabled again). */
  enabled: Type.Boolean({ default: true })
}, { additionalProperties: false })

const WebhookOptionsSchema = Type.Object({
  endpoints: Type.Array(Endpoint, { default: [] }),
  /** Strapi's `server.webhooks.defaultHeaders`: sent to every endpoint. */
  defaultHeaders: Type.Record(Type.String({ minLength: 1 }), Type.String(), { default: {} }),
  /**
   * Key of the HMAC-SHA256 signature header `x-webhook-signature: t=<unix seconds>,v1=<hex>` over
   * `<t>.<body>`; no signature without it.
   */
  secret: Type.Optional(Type.String({ minLength: 16 })),
  /** Longest a delivery may take (connection, request, answer); past it the attempt failed. */
  timeoutMs: Type.Integer({ minimum: 1, default: 10000 }),
  /** Attempts before a delivery is marked `failed` (then only `redeliver(id)` sends it again). */
  maxAttempts: Type.Integer({ minimum: 1, default: 10 }),
  /** First retry's delay; each next one doubles, up to `maxRetryDelayMs`, with up to 25% jitter. */
  retryDelayMs: Type.Integer({ minimum: 1, default: 1000 }),
  maxRetryDelayMs: Type.Integer({ minimum: 1, default: 3600000 }),
  /** How often an idle worker looks for due deliveries (its safety net: commits wake it at once). */
  pollIntervalMs: Type.Integer({ minimum: 10, default: 5000 }),
  /** Most deliveries one worker claims and sends at once. */
  batchSize: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  /** `false`: this instance queues events but does not deliver (another instance does). */
  deliver: Type.Boolean({ default: true })
}, { additionalProperties: false })

export type ResolvedWebhookOptions = Static<typeof WebhookOptionsSchema>
export type WebhookEndpoint = ResolvedWebhookOptions['endpoints'][number]

export interface WebhookOptions {
  endpoints?: Array<{ name: string, url: string, events: WebhookEvent[], headers?: Record<string, string>, enabled?: boolean }>
  defaultHeaders?: Record<string, string>
  secret?: string
  timeoutMs?: number
  maxAttempts?: number
  retryDelayMs?: number
  maxRetryDelayMs?: number
  pollIntervalMs?: number
  batchSize?: number
  deliver?: boolean
}

function problems (value: unknown): string[] {
  const found: string[] = []
  for (const e of Value.Errors(WebhookOptionsSchema, value)) {
    if (e.keyword === 'boolean' || e.keyword === 'const') continue
    const path = `webhooks${e.instancePath.replaceAll('/', '.')}`
    found.push(e.keyword === 'additionalProperties'
      ? `${path}: unknown option(s) ${(e.params as { additionalProperties: string[] }).additionalProperties.join(', ')}`
      : e.keyword === 'anyOf' ? `${path}: must be one of ${WEBHOOK_EVENTS.join(', ')}` : `${path}: ${e.message}`)
  }
  return found
}

/**
 * The webhook options with their defaults, or a `ConfigurationError` listing every problem.
 * Null when there are none (no outbox table, no worker, no cost on writes).
 *
 * @example
 * resolveWebhookOptions({ endpoints: [{ name: 'site', url: 'https://ci.example/hook', events: ['entry.publish'] }] })!.maxAttempts // 10
 */
export function resolveWebhookOptions (raw: WebhookOptions | undefined): ResolvedWebhookOptions | null {
  if (raw === undefined) return null
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigurationError(['webhooks: must be an object { endpoints, defaultHeaders?, secret?, ... }'])
  const input: Record<string, unknown> = { ...raw }
  if (Array.isArray(input.endpoints)) input.endpoints = input.endpoints.map((e: unknown) => typeof e === 'object' && e !== null ? { ...e } : e)
  const resolved = Value.Default(WebhookOptionsSchema, input) as ResolvedWebhookOptions
  const found = problems(resolved)
  if (found.length === 0) {
    const seen = new Set<string>()
    for (const endpoint of resolved.endpoints) {
      if (seen.has(endpoint.name)) found.push(`webhooks.endpoints: two endpoints are named "${endpoint.name}"`)
      seen.add(endpoint.name)
      if (!URL.canParse(endpoint.url)) found.push(`webhooks.endpoints: "${endpoint.name}" has an invalid url`)
    }
    if (resolved.retryDelayMs > resolved.maxRetryDelayMs) found.push('webhooks.retryDelayMs must not be greater than webhooks.maxRetryDelayMs')
  }
  if (found.length > 0) throw new ConfigurationError(found)
  return resolved
}
