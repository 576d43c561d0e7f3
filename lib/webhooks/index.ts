import type { Kysely } from 'kysely'
import type { ResolvedWebhookOptions } from '../options/webhooks.js'
import type { WebhookEvent } from '../model/webhook-events.js'
import type { WebhookRoutes } from '../documents/webhook-events.js'
import { listDeliveries, redeliver, type DeliveryStatus, type WebhookDelivery } from './outbox.js'
import { WebhookWorker, type WorkerLogger } from './worker.js'

export type { WebhookDelivery, DeliveryStatus, AttemptLog } from './outbox.js'
export { verifyWebhookSignature, signPayload, SIGNATURE_HEADER } from './signature.js'

/** `app.contentApi.webhooks`: the delivery log and redelivery (docs/extending.md#webhooks). */
export interface WebhooksApi {
  /**
   * The delivery log, newest first: every event queued for an endpoint, its state (`pending`,
   * `delivered`, `failed`), its attempts and the last one's status code, duration and error.
   *
   * @example
   * await app.contentApi.webhooks.deliveries({ status: 'failed', limit: 20 })
   */
  deliveries (filter?: { status?: DeliveryStatus, endpoint?: string, limit?: number }): Promise<WebhookDelivery[]>
  /**
   * Sends a delivery again (same id, same body), delivered or failed: due now, with a fresh
   * count of attempts. False when there is no such delivery.
   *
   * @example
   * for (const d of await app.contentApi.webhooks.deliveries({ status: 'failed' })) await app.contentApi.webhooks.redeliver(d.id)
   */
  redeliver (id: string): Promise<boolean>
}

/** The endpoints listening to each event (enabled ones only). */
export function webhookRoutes (options: ResolvedWebhookOptions): WebhookRoutes {
  const routes = new Map<WebhookEvent, string[]>()
  for (const endpoint of options.endpoints) {
    if (!endpoint.enabled) continue
    for (const event of new Set(endpoint.events)) routes.set(event, [...(routes.get(event) ?? []), endpoint.name])
  }
  return routes
}

export interface Webhooks {
  api: WebhooksApi
  /** Null when this instance does not deliver (`deliver: false`, or no endpoint enabled). */
  worker: WebhookWorker | null
}

export function createWebhooks (db: Kysely<any>, options: ResolvedWebhookOptions, log: WorkerLogger): Webhooks {
  const worker = options.deliver && options.endpoints.some((e) => e.enabled) ? new WebhookWorker(db, options, log) : null
  const api: WebhooksApi = {
    async deliveries (filter = {}) {
      const limit = Number.isInteger(filter.limit) && filter.limit! > 0 ? Math.min(filter.limit!, 1000) : 100
      return await listDeliveries(db, { status: filter.status, endpoint: filter.endpoint, limit })
    },
    async redeliver (id) {
      if (typeof id !== 'string' || !/^[0-9a-f-]{36}$/i.test(id)) return false
      const found = await redeliver(db, id)
      if (found) worker?.wake()
      return found
    }
  }
  return { api, worker }
}
