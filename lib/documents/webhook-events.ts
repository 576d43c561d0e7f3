import { randomUUID } from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import { FILE_UID } from '../model/associations.js'
import { WEBHOOKS_TABLE } from '../model/naming.js'
import type { ContentType } from '../model/registry.js'
import type { WebhookEvent } from '../model/webhook-events.js'
import { writeShape } from './prepare-write.js'
import type { Document, ServiceContext, Shape } from './types.js'
import { reread } from './write-document.js'

/**
 * The webhook events of the document service's writes (docs/extending.md#webhooks), queued in
 * the write's own transaction (lib/webhooks/outbox.ts): a write that rolls back queues nothing,
 * a committed one cannot lose its events. Strapi v5's names and bodies:
 *
 * - content types: `entry.create`, `entry.update`, `entry.delete`, `entry.publish`,
 *   `entry.unpublish`, `entry.draft-discard`, body `{ event, createdAt, model, uid, entry }`,
 *   `model` the singular name, `entry` the document as a read without `fields` renders it
 *   (private attributes left out) with its first level populated (`populate: '*'`); a create or
 *   update that also publishes (REST's default under draft & publish) is an `entry.create` or
 *   `entry.update` of the draft, then an `entry.publish` of the published version, as Strapi
 *   sends them. A delete or an unpublish sends the version it removes, read before removing it;
 *   one event per locale.
 * - files (`plugin::upload.file`): `media.create`, `media.update`, `media.delete`, body
 *   `{ event, createdAt, media }`.
 * - users, roles and API tokens: none (Strapi sends none for users either).
 *
 * An event no endpoint listens to costs nothing: no read, no statement.
 */

/** The endpoints listening to each event (enabled ones only); absent: no webhooks. */
export type WebhookRoutes = ReadonlyMap<WebhookEvent, readonly string[]>

export type WriteAction = 'create' | 'update' | 'delete' | 'publish' | 'unpublish' | 'discardDraft'

/** The event of `action` on `model`, or null when the type sends none. */
export function eventOf (model: ContentType, action: WriteAction): WebhookEvent | null {
  if (model.uid === FILE_UID) return action === 'create' || action === 'update' || action === 'delete' ? `media.${action}` : null
  if (model.uid.startsWith('plugin::users-permissions.') || model.uid.startsWith('admin::')) return null
  return action === 'discardDraft' ? 'entry.draft-discard' : `entry.${action}`
}

/** Whether anything listens to `action` on `model` (or to the publish a create or update may make). */
export function wants (ctx: Pick<ServiceContext, 'webhooks'>, model: ContentType, action: WriteAction): boolean {
  const routes = ctx.webhooks
  if (routes === undefined || routes === null) return false
  const event = eventOf(model, action)
  if (event !== null && routes.has(event)) return true
  return (action === 'create' || action === 'update') && model.draftAndPublish && routes.has('entry.publish')
}

/** After a create or update: its event for the written draft (or row), and `entry.publish` when it published. */
export async function queueWritten (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, action: 'create' | 'update', written: Document | null): Promise<void> {
  if (written === null || !wants(ctx, model, action)) return
  const documentId = written.documentId as string
  const locale = (written.locale as string | undefined) ?? null
  const draft = await read(trx, model, ctx, documentId, 'draft', locale)
  const rows = deliveries(model, ctx, eventOf(model, action), draft === null ? [] : [draft])
  if (model.draftAndPublish && written.publishedAt != null) {
    const published = await read(trx, model, ctx, documentId, 'published', locale)
    rows.push(...deliveries(model, ctx, 'entry.publish', published === null ? [] : [published]))
  }
  // One statement for both events.
  await enqueue(trx, rows)
}

/** After a publish or a discarded draft: one event per version it wrote. */
export async function queueVersions (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, action: 'publish' | 'discardDraft', entries: readonly Document[]): Promise<void> {
  if (entries.length === 0 || !wants(ctx, model, action)) return
  const status = action === 'publish' ? 'published' : 'draft'
  const docs: Document[] = []
  for (const entry of entries) {
    const doc = await read(trx, model, ctx, entry.documentId as string, status, (entry.locale as string | undefined) ?? null)
    if (doc !== null) docs.push(doc)
  }
  await enqueue(trx, deliveries(model, ctx, eventOf(model, action), docs))
}

/**
 * Before a delete or an unpublish: the versions it will remove (the draft, or the published
 * version for an unpublish), per locale (`locale` null or `'*'`: every locale of the document).
 * Empty when nothing listens.
 */
export async function readRemoved (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, action: 'delete' | 'unpublish', documentId: string | null, locale: string | null | undefined
): Promise<Document[]> {
  if (!wants(ctx, model, action)) return []
  const id = documentId ?? (await trx.selectFrom(model.tableName).select('document_id').orderBy('id').limit(1).executeTakeFirst())?.document_id as string | undefined
  if (id === undefined) return []
  let locales: Array<string | null> = [null]
  if (model.localized) {
    if (locale === '*' || locale === null) {
      const rows = await trx.selectFrom(model.tableName).select('locale').distinct().where('document_id', '=', id).orderBy('locale').execute()
      locales = rows.map((r) => r.locale as string)
    } else {
      locales = [locale ?? ctx.i18n.defaultLocale]
    }
  }
  const status = action === 'unpublish' ? 'published' : 'draft'
  const found: Document[] = []
  for (const inLocale of locales) {
    const doc = await read(trx, model, ctx, id, status, inLocale)
    if (doc !== null) found.push(doc)
  }
  return found
}

/** After a delete or an unpublish that removed something: the versions `readRemoved` read. */
export async function queueRemoved (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, action: 'delete' | 'unpublish', removed: readonly Document[], entries: number): Promise<void> {
  if (entries > 0) await enqueue(trx, deliveries(model, ctx, eventOf(model, action), removed))
}

interface Delivery { endpoint: string, event: string, payload: string }

/** One delivery per endpoint listening to `event`, for each entry: the body Strapi sends. */
function deliveries (model: ContentType, ctx: ServiceContext, event: WebhookEvent | null, entries: readonly Document[]): Delivery[] {
  const endpoints = event === null ? undefined : ctx.webhooks?.get(event)
  const rows: Delivery[] = []
  if (event === null || endpoints === undefined || entries.length === 0) return rows
  const createdAt = new Date().toISOString()
  for (const entry of entries) {
    // Strapi's webhook runner: `{ event, createdAt, ...info }`, info `{ model, uid, entry }` or `{ media }`.
    const body = model.uid === FILE_UID
      ? { event, createdAt, media: entry }
      : { event, createdAt, model: model.singularName, uid: model.uid, entry }
    const payload = JSON.stringify(body)
    for (const endpoint of endpoints) rows.push({ endpoint, event, payload })
  }
  return rows
}

/**
 * Queues one delivery per endpoint of each event, in the write's transaction (the table:
 * lib/schema/webhook-outbox.ts; what delivers them: lib/webhooks/).
 *
 * ```sql
 * insert into "content_api_webhook_deliveries" ("id", "endpoint", "event", "payload") values ($1, $2, $3, $4), ...
 * ```
 */
async function enqueue (trx: Kysely<any>, rows: readonly Delivery[]): Promise<void> {
  if (rows.length === 0) return
  await trx.insertInto(WEBHOOKS_TABLE).values(rows.map((row) => ({ id: randomUUID(), ...row }))).execute()
}

/**
 * The shape an event's entry is read with, per model: every readable field, the first level
 * populated (files: none). Its statement is compiled once and kept (`cache: true`: the shape is
 * the plugin's own, never objects application code holds): compiling a populate costs more than
 * running it.
 */
const shapes = new WeakMap<ContentType, Shape>()

async function read (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, status: 'draft' | 'published', locale: string | null): Promise<Document | null> {
  let shape = shapes.get(model)
  if (shape === undefined) shapes.set(model, shape = writeShape(model, ctx, model.uid === FILE_UID ? {} : { populate: '*' }))
  const doc = await reread(trx, model, ctx, documentId, { status, locale, shape, cache: true }) as Document | null
  return doc ?? null
}
