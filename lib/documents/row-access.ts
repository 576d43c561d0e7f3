import { sql, type Kysely, type Transaction } from 'kysely'
import type { AccessScope } from '../query/access-scope.js'
import { scopedRows, type CompileOptions } from '../compiler/find.js'
import { ForbiddenError, ValidationError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import { parseFilters, type FilterNode } from '../query/filters.js'
import type { PreparedWrite, ServiceContext } from './types.js'
import type { VisibleDocuments } from './write-relations.js'

/**
 * The caller's permission on a write: its field-level limits (what `data` may name) and its
 * row-level conditions (which documents it may write, before and after the write). Reads apply
 * the same conditions in their compiled filters (lib/query/visibility.ts); writes check them
 * here, inside the write's transaction, on the version a write addresses.
 */

/**
 * Rows of `model` matching `filters`, in the version writes address (the draft of a draft &
 * publish type).
 *
 * ```sql
 * select ... from "articles" as t where t.published_at is null [and t.locale = $1] and <filters>
 * ```
 */
export function writableRows (db: Kysely<any>, model: ContentType, filters: FilterNode | null, locale: string | null, compile: CompileOptions) {
  return scopedRows(db, model, { status: model.draftAndPublish ? 'draft' : 'published', locale, filters }, compile)
}

/** A row-level permission's conditions narrowed to one document. */
export function conditionsOn (model: ContentType, ctx: Pick<ServiceContext, 'registry'>, documentId: string, conditions: Record<string, unknown>): FilterNode | null {
  return parseFilters(model, { $and: [conditions, { documentId }] }, ctx.registry)
}

/**
 * A row-level permission: the document must match its conditions to be written, in the version
 * of the locale written (`locale` null: any). A locale the document does not have yet is
 * created by the write: then the document must be the caller's in another locale, and
 * `checkWritten` checks the new one. True without conditions, with no statement run.
 *
 * ```sql
 * select count(*)::int as "count" from "articles" as t
 * where t.published_at is null and t.locale = $1 and (<conditions>) and t.document_id = $2
 * -- none: whether the locale exists, then the same count in any locale
 * ```
 */
export async function permits (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, access: AccessScope | undefined, locale: string | null = null
): Promise<boolean> {
  if (access?.conditions == null) return true
  const conditions = conditionsOn(model, ctx, documentId, access.conditions)
  const count = async (filters: FilterNode | null, inLocale: string | null): Promise<number> =>
    (await writableRows(trx, model, filters, inLocale, ctx.compile).select(sql<number>`count(*)::int`.as('count')).executeTakeFirstOrThrow()).count
  if (await count(conditions, locale) > 0) return true
  if (locale === null) return false
  const localeExists = await count(parseFilters(model, { documentId }), locale) > 0
  return !localeExists && await count(conditions, null) > 0
}

/**
 * A row-level permission holds for what a write leaves too (as PostgreSQL's `WITH CHECK`): a
 * caller may not create a document outside its conditions, nor move one out of them (give a
 * note to another owner). Throwing rolls the whole write back. The statement is `permits`'s.
 */
export async function checkWritten (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, write: PreparedWrite): Promise<void> {
  if (!(await permits(trx, model, ctx, documentId, write.access, model.localized ? write.locale : null))) throw new ForbiddenError()
}

/**
 * A field-level permission: writing an attribute it does not list is a 400, like an unknown key.
 * A relation to a type the caller may not read is one too, as in Strapi (it would tell which
 * documents exist there, and link to them). No SQL: checked before the transaction opens.
 */
export function checkWritable (model: ContentType, data: unknown, access: AccessScope | undefined): void {
  if (access === undefined || typeof data !== 'object' || data === null) return
  for (const key of Object.keys(data)) {
    const association = model.associations.get(key)
    const unreadable = association?.kind === 'relation' && access.read(association.target) === null
    if (unreadable || (access.fields !== null && Object.hasOwn(model.attributes, key) && !access.fields.has(key))) {
      throw ValidationError.invalidKey(key, { key, source: 'body' })
    }
  }
}

/**
 * Which of some documents of `target` the caller sees, given its conditions on that type: the
 * check a relation write makes before linking or unlinking them.
 *
 * ```sql
 * select distinct t.document_id from "categories" as t
 * where t.published_at is null and (<conditions>) and t.document_id in ($1, $2)
 * ```
 */
export function visibleDocuments (target: ContentType, conditions: FilterNode, compile: CompileOptions): VisibleDocuments {
  return async (trx, documentIds) => {
    const rows = await writableRows(trx, target, conditions, null, compile)
      .select('t.document_id').distinct().where('t.document_id', 'in', documentIds).execute()
    return new Set(rows.map((r) => r.document_id as string))
  }
}
