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
  /** Checked against `WEBHOOK_EVENTS` by `problems` (TypeBox reports at most 8 errors, one per literal of a union). */
  events: Type.Array(Type.String(), { minItems: 1 }),
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

export type WebhookEndpoint = Omit<Static<typeof Endpoint>, 'events'> & { events: WebhookEvent[] }
export type ResolvedWebhookOptions = Omit<Static<typeof WebhookOptionsSchema>, 'endpoints'> & { endpoints: WebhookEndpoint[] }

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

/**
 * TypeBox's errors, one line per problem. Each endpoint is checked on its own, and the rest
 * without them: TypeBox stops at the first failing element of an array of objects.
 */
function problems (value: Record<string, unknown>): string[] {
  const endpoints = Array.isArray(value.endpoints) ? value.endpoints as unknown[] : null
  const found = describe(WebhookOptionsSchema, endpoints === null ? value : { ...value, endpoints: [] }, 'webhooks')
  endpoints?.forEach((endpoint, i) => {
    found.push(...describe(Endpoint, endpoint, `webhooks.endpoints.${i}`))
    const events = (endpoint as { events?: unknown } | null)?.events
    if (Array.isArray(events)) {
      events.forEach((event, j) => {
        if (!(WEBHOOK_EVENTS as readonly unknown[]).includes(event)) found.push(`webhooks.endpoints.${i}.events.${j}: must be one of ${WEBHOOK_EVENTS.join(', ')}`)
      })
    }
  })
  return found
}

function describe (schema: typeof WebhookOptionsSchema | typeof Endpoint, value: unknown, at: string): string[] {
  const found: string[] = []
  for (const e of Value.Errors(schema, value)) {
    if (e.keyword === 'boolean') continue
    const path = `${at}${e.instancePath.replaceAll('/', '.')}`
    found.push(e.keyword === 'additionalProperties'
      ? `${path}: unknown option(s) ${(e.params as { additionalProperties: string[] }).additionalProperties.join(', ')}`
      : `${path}: ${e.message}`)
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
  const found = problems(resolved as unknown as Record<string, unknown>)
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
