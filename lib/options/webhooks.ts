import type { Static } from 'typebox'
import { ConfigurationError } from '../errors.js'
import { WEBHOOK_EVENTS, type WebhookEvent } from '../model/webhook-events.js'
import { resolveSchema } from './validate.js'

/**
 * Webhook options (docs/options.md#webhooks, docs/extending.md#webhooks), validated with the
 * plugin's own by `resolveOptions` before anything connects. Strapi's names where Strapi has
 * them (`defaultHeaders`, an endpoint's `name`, `url`, `headers`, `events`, `enabled`); the rest
 * (signing, retries, the delivery worker) is beyond Strapi, which sends once and forgets.
 */

export { WEBHOOK_EVENTS, type WebhookEvent }

const Headers = { type: 'object', additionalProperties: { type: 'string' }, default: {} } as const

const Endpoint = {
  type: 'object',
  required: ['name', 'url', 'events', 'headers', 'enabled'],
  properties: {
    /** Unique among the endpoints: the delivery log names it, and renaming one orphans its pending deliveries. */
    name: { type: 'string', minLength: 1, maxLength: 255 },
    url: { type: 'string', pattern: '^https?://' },
    /** Checked against `WEBHOOK_EVENTS` by `problems`, for one message rather than one per event name. */
    events: { type: 'array', items: { type: 'string' }, minItems: 1 },
    /** Sent with every request to it; over `defaultHeaders` (Strapi's rule). */
    headers: Headers,
    /** `false`: no event is queued for it (its pending deliveries stay, and go once it is enabled again). */
    enabled: { type: 'boolean', default: true }
  },
  additionalProperties: false
} as const

export const WebhookOptionsSchema = {
  type: 'object',
  required: ['endpoints', 'defaultHeaders', 'timeoutMs', 'maxAttempts', 'retryDelayMs', 'maxRetryDelayMs', 'pollIntervalMs', 'batchSize', 'deliver'],
  properties: {
    endpoints: { type: 'array', items: Endpoint, default: [] },
    /** Strapi's `server.webhooks.defaultHeaders`: sent to every endpoint. */
    defaultHeaders: Headers,
    /**
     * Key of the HMAC-SHA256 signature header `x-webhook-signature: t=<unix seconds>,v1=<hex>` over
     * `<t>.<body>`; no signature without it.
     */
    secret: { type: 'string', minLength: 16 },
    /** Longest a delivery may take (connection, request, answer); past it the attempt failed. */
    timeoutMs: { type: 'integer', minimum: 1, default: 10000 },
    /** Attempts before a delivery is marked `failed` (then only `redeliver(id)` sends it again). */
    maxAttempts: { type: 'integer', minimum: 1, default: 10 },
    /** First retry's delay; each next one doubles, up to `maxRetryDelayMs`, with up to 25% jitter. */
    retryDelayMs: { type: 'integer', minimum: 1, default: 1000 },
    maxRetryDelayMs: { type: 'integer', minimum: 1, default: 3600000 },
    /** How often an idle worker looks for due deliveries (its safety net: commits wake it at once). */
    pollIntervalMs: { type: 'integer', minimum: 10, default: 5000 },
    /** Most deliveries one worker claims and sends at once. */
    batchSize: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
    /** `false`: this instance queues events but does not deliver (another instance does). */
    deliver: { type: 'boolean', default: true }
  },
  additionalProperties: false
} as const

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

/** The event names against `WEBHOOK_EVENTS`: one message per unknown name, listing the known ones. */
function eventProblems (endpoints: unknown): string[] {
  const found: string[] = []
  if (!Array.isArray(endpoints)) return found
  endpoints.forEach((endpoint, i) => {
    const events = (endpoint as { events?: unknown } | null)?.events
    if (!Array.isArray(events)) return
    events.forEach((event, j) => {
      if (!(WEBHOOK_EVENTS as readonly unknown[]).includes(event)) found.push(`webhooks.endpoints.${i}.events.${j}: must be one of ${WEBHOOK_EVENTS.join(', ')}`)
    })
  })
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
  const { value: resolved, problems: found } = resolveSchema<ResolvedWebhookOptions>(WebhookOptionsSchema, raw, 'webhooks')
  found.push(...eventProblems(resolved.endpoints))
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
