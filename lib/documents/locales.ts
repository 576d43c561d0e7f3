import { sql, type Transaction } from 'kysely'
import type { FindSpec } from '../compiler/find.js'
import { ValidationError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import { parseLocale, parseStatus, type Status } from '../query/index.js'
import { toColumns } from './columns.js'
import { hashPasswords } from './password.js'
import { draftOnly } from './publication.js'
import { readInTransaction } from './reader.js'
import type { ServiceContext } from './types.js'
import { generateUids } from './unique.js'
import { validateInput } from './validate-input.js'

/**
 * The locales of a localized type's documents: which locale a write addresses, the values a new
 * locale of an existing document starts from, and the non-localized attributes, which hold one
 * value for every locale of a document and so are copied to the others on each write.
 */

/** Row values of a document's new locale, for the writing module to insert (`insertVersion`). */
export interface LocaleVersion {
  values: Record<string, unknown>
  generated: ReadonlySet<string>
  /** The columns of the document's non-localized attributes, copied from a sibling row. */
  shared: Record<string, unknown>
}

/** A write's status and locale; the locale must be one of the configured ones. No SQL. */
export function writeScope (model: ContentType, ctx: ServiceContext, params: { status?: unknown, locale?: unknown }): { status: Status, locale: string | null } {
  const scope = { status: parseStatus(params.status), locale: parseLocale(model, params.locale, ctx.i18n, false) }
  if (scope.locale !== null && !ctx.i18n.locales.includes(scope.locale)) {
    throw new ValidationError(`This locale doesn't exist: ${scope.locale}`, { key: 'locale', source: 'query', param: 'locale' })
  }
  return scope
}

/**
 * A new locale of an existing document (PUT `?locale=fr` on its documentId, as Strapi v5 does):
 * `data` validated as a creation, on top of the non-localized values the other locales hold, so
 * that neither a default nor a "required" check overrides them. Null when the type is not
 * localized or the document exists in no locale; nothing is written here.
 *
 * ```sql
 * select "id", "category_id", ... from "articles" where "document_id" = $1 order by published_at is not null, "id";
 * select row_to_json(r)::text as "data" from (select t.views as "views", ... from "articles" as t
 *   where t.published_at is null and t.document_id = $1 limit 1) as r
 * ```
 */
export async function newLocale (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, locale: string | null, status: Status, data: Record<string, unknown>
): Promise<LocaleVersion | null> {
  if (!model.localized || locale === null) return null
  const shared = [...model.writableFields.values()].filter((f) => !f.localized).map((f) => f.column)
  const sibling = await trx.selectFrom(model.tableName)
    .select(['id', ...shared])
    .where('document_id', '=', documentId)
    .orderBy(sql`published_at is not null`).orderBy('id')
    .executeTakeFirst()
  if (sibling === undefined) return null
  const copy = { ...await sharedValues(trx, model, ctx, documentId), ...data }
  const generated = generateUids(model, copy)
  const input = validateInput(model, copy, { partial: false, draft: draftOnly(model, status) })
  const values = await hashPasswords(model, input.values)
  const { id: _, ...sharedColumns } = sibling
  return { values, generated, shared: sharedColumns }
}

/** The visible non-localized attributes of a document, as the API renders them. */
async function sharedValues (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string): Promise<Record<string, unknown>> {
  const fields = [...model.writableFields.values()].filter((f) => !f.localized && !f.hidden)
  if (fields.length === 0) return {}
  const spec: FindSpec = {
    status: model.draftAndPublish ? 'draft' : 'published', locale: null, fields, filters: null, sort: [], populate: new Map()
  }
  const data = await readInTransaction(trx, model, spec, documentId, ctx.compile)
  return data === null ? {} : JSON.parse(data) as Record<string, unknown>
}

/**
 * Non-localized attributes hold one value for all locales of a document: a write in one
 * locale is copied to the draft rows (the only rows without draft & publish) of the others.
 * Nothing runs for a type that is not localized, or a write of localized attributes only.
 *
 * ```sql
 * update "articles" set "views" = $1 where "document_id" = $2 and "locale" <> $3 and "published_at" is null
 * ```
 */
export async function syncShared (
  trx: Transaction<any>, model: ContentType, documentId: string, locale: string | null, values: Record<string, unknown>
): Promise<void> {
  if (!model.localized || locale === null) return
  const shared = Object.fromEntries(Object.entries(values).filter(([name]) => model.writableFields.get(name)?.localized === false))
  if (Object.keys(shared).length === 0) return
  let query = trx.updateTable(model.tableName).set(toColumns(model, shared))
    .where('document_id', '=', documentId).where('locale', '<>', locale)
  if (model.draftAndPublish) query = query.where('published_at', 'is', null)
  await query.execute()
}
