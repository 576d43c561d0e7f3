import type { Transaction } from 'kysely'
import { ValidationError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import { lockWrite } from './association-writes.js'
import { writeShape } from './prepare-write.js'
import { assertPublishable, publishVersion, revertDraft, versionLocales, versionPair, versionRows } from './publication.js'
import type { Document, ServiceContext } from './types.js'
import { deleteRows } from './versions.js'
import { reread } from './write-document.js'

/**
 * The draft & publish actions on a whole document (Strapi v5's `publish`, `unpublish`,
 * `discardDraft`), in one locale or every locale (`'*'`), each inside the transaction the
 * service opens for it. Like every write, each locks the document first (association-writes.ts);
 * the row-level SQL is publication.ts's.
 */

/** Refuses a draft & publish action on a type without draft & publish (a 400). No SQL. */
export function requireDraftAndPublish (model: ContentType, action: string): void {
  if (!model.draftAndPublish) throw new ValidationError(`${action}: ${model.uid} does not have draft & publish enabled`)
}

/**
 * Publishes a document's drafts in one locale (every locale with `'*'`), each first checked
 * against the publication rules (required values, `min`, `max`), then reads the published
 * versions back. None when the document has no draft there.
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update;
 * select distinct "locale" from "articles" where "document_id" = $1 and "published_at" is null;
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where t.published_at is null ...) as r; -- the rules
 * update "articles" as p set "title" = d."title", ..., "published_at" = $2 from "articles" as d
 *   where p.document_id = $1 and p.published_at is not null and d.document_id = $1 and d.published_at is null;
 * -- no published row yet: insert into "articles" (...) select ... from "articles" as d where ...
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where t.published_at is not null ...) as r
 * ```
 */
export async function publishDocument (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, locale: string | undefined
): Promise<{ documentId: string, entries: Document[] }> {
  await lockWrite(trx, model, ctx, documentId)
  const now = new Date().toISOString()
  const locales = await versionLocales(trx, model, ctx, documentId, locale, true)
  for (const inLocale of locales) {
    await assertPublishable(trx, model, ctx, documentId, inLocale)
    await publishVersion(trx, model, ctx, documentId, inLocale, now)
  }
  const entries: Document[] = []
  for (const inLocale of locales) {
    entries.push(await reread(trx, model, ctx, documentId, { status: 'published', locale: inLocale, shape: writeShape(model, ctx, {}) }))
  }
  return { documentId, entries }
}

/**
 * Deletes a document's published versions in one locale (every locale with `'*'`); the drafts
 * stay. Returns the number of rows removed.
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update;
 * select "id" from "articles" where "document_id" = $1 and "published_at" is not null and "locale" = $2;
 * delete from "articles" where "id" in ($3)
 * ```
 */
export async function unpublishDocument (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, locale: string | undefined
): Promise<{ documentId: string, entries: number }> {
  await lockWrite(trx, model, ctx, documentId)
  const rows = await versionRows(trx, model, ctx, documentId, locale, true)
  return { documentId, entries: await deleteRows(trx, ctx.registry, model, rows) }
}

/**
 * Replaces a document's drafts with copies of its published versions in one locale (every
 * locale with `'*'`), dropping unpublished edits, and reads the drafts back. A locale without
 * both versions is left alone.
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update;
 * select distinct "locale" from "articles" where "document_id" = $1 and "published_at" is not null;
 * select "id", "published_at" from "articles" where "document_id" = $1 and "locale" = $2;
 * update "articles" as d set "title" = p."title", ... from "articles" as p where d.id = $3 and p.id = $4;
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where t.published_at is null ...) as r
 * ```
 */
export async function discardDraft (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, locale: string | undefined
): Promise<{ documentId: string, entries: Document[] }> {
  await lockWrite(trx, model, ctx, documentId)
  const entries: Document[] = []
  for (const inLocale of await versionLocales(trx, model, ctx, documentId, locale, false)) {
    const pair = await versionPair(trx, model, documentId, inLocale)
    if (pair.published === null || pair.draft === null) continue
    await revertDraft(trx, model, ctx, { draft: pair.draft, published: pair.published })
    entries.push(await reread(trx, model, ctx, documentId, { status: 'draft', locale: inLocale, shape: writeShape(model, ctx, {}) }))
  }
  return { documentId, entries }
}
