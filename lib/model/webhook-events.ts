/**
 * Strapi v5's webhook events (its `ALLOWED_WEBHOOK_EVENTS` and the upload plugin's), the names a
 * webhook endpoint's `events` may list (docs/extending.md#webhooks).
 */
export const WEBHOOK_EVENTS = [
  'entry.create', 'entry.update', 'entry.delete', 'entry.publish', 'entry.unpublish', 'entry.draft-discard',
  'media.create', 'media.update', 'media.delete'
] as const

export type WebhookEvent = typeof WEBHOOK_EVENTS[number]
