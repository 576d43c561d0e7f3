import type { Kysely, Transaction } from 'kysely'
import { ForbiddenError } from '../errors.js'
import { MEDIA_LINK_TABLE, type MediaAssociation } from '../model/associations.js'
import type { ContentType, Registry } from '../model/registry.js'
import type { ChangeEvents } from './change-events.js'
import { writeMedia } from './write-media.js'
import { runWrite } from './write-transaction.js'

/*
 * Links from uploaded files to an entry's media attribute, written apart from the entry's own
 * update: Strapi's upload `ref`/`refId`/`field` names the entry by row id. The entry's other
 * versions in the same locale (a draft & publish document's draft and published rows) get the
 * link too, so that the next publish, which copies the draft's links, keeps it. A single-file
 * attribute's previous file is replaced; a multiple one's files are kept and the new ones
 * appended.
 */

/** The entry and attribute files are linked to. */
interface MediaTarget {
  model: ContentType
  association: MediaAssociation
  rowId: number
}

/** The entry's row, by the id the client gave. */
type EntryRow = Pick<MediaTarget, 'model' | 'rowId'>

/** The entry a link writes: its document, and its locale (null when the type is not localized). */
export interface LinkedEntry {
  documentId: string
  locale: string | null
}

/** Whether the caller may link to the entry, checked through the link's transaction. */
export type EntryGuard = (trx: Transaction<any>, entry: LinkedEntry) => Promise<boolean>

/**
 * The entry with the target's row id, or null.
 *
 * ```sql
 * select "document_id", "locale" from "articles" where "id" = $1
 * ```
 */
async function findEntry (db: Kysely<any>, target: EntryRow): Promise<LinkedEntry | null> {
  const { model, rowId } = target
  const columns = model.localized ? ['document_id', 'locale'] : ['document_id']
  const entry = await db.selectFrom(model.tableName).select(columns).where('id', '=', rowId).executeTakeFirst()
  if (entry === undefined) return null
  return { documentId: entry.document_id as string, locale: model.localized ? entry.locale as string | null : null }
}

/**
 * The rows of the entry's document that share its locale (its draft and published versions),
 * locked until the transaction ends, so that a concurrent write of the document (one that would
 * take it out of the caller's conditions) either commits before the check or waits for the link.
 *
 * ```sql
 * select "id" from "articles" where "document_id" = $1 and "locale" = $2 order by "id" for update
 * ```
 */
async function lockVersions (trx: Transaction<any>, target: EntryRow, entry: LinkedEntry): Promise<number[]> {
  let query = trx.selectFrom(target.model.tableName).select('id').where('document_id', '=', entry.documentId)
  if (target.model.localized) query = query.where('locale', entry.locale === null ? 'is' : '=', entry.locale)
  return (await query.orderBy('id').forUpdate().execute()).map((r) => r.id as number)
}

/**
 * Whether the target's entry exists and the guard lets the caller link to it: the check made
 * before anything is stored, in a transaction of its own (the guard's reads).
 *
 * ```sql
 * select "document_id", "locale" from "articles" where "id" = $1
 * ```
 */
export async function canLinkMedia (db: Kysely<any>, target: EntryRow, guard: EntryGuard): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    const entry = await findEntry(trx, target)
    return entry !== null && await guard(trx, entry)
  })
}

/**
 * Links files to the target's attribute in one transaction, which also locks the entry's rows
 * and runs the guard before the write (false, nothing written, when the entry is gone or the
 * guard refuses) and after it (a link may not take the entry out of the caller's conditions:
 * `ForbiddenError`, rolled back). A multiple attribute keeps its other files, in their order.
 *
 * ```sql
 * select "document_id", "locale" from "articles" where "id" = $1;
 * select "id" from "articles" where "document_id" = $2 and "locale" = $3 order by "id" for update;
 * -- then for each of these rows (a multiple attribute reads its current files first):
 * select "file_id" from "files_related_mph" where "related_id" = $4 and "related_type" = $5 and "field" = $6 order by "order", "id";
 * select "id", "mime" from "files" where "id" in ($7, ...); -- the files exist, of an allowed type
 * delete from "files_related_mph" where "related_id" = $4 and "related_type" = $5 and "field" = $6;
 * insert into "files_related_mph" ("file_id", "related_id", "related_type", "field", "order") values ($7, $4, $5, $6, 1), ...
 * ```
 */
export async function linkMedia (
  db: Kysely<any>, changes: ChangeEvents, registry: Registry, target: MediaTarget, fileIds: readonly number[], guard: EntryGuard
): Promise<boolean> {
  // An `update` of the entry's document for onChange listeners, here and in other instances.
  const linked = await runWrite(db, changes, (documentId: string | null) => documentId === null ? null : { uid: target.model.uid, action: 'update', documentId }, async (trx) => {
    const entry = await findEntry(trx, target)
    const rows = entry === null ? [] : await lockVersions(trx, target, entry)
    if (entry === null || !rows.includes(target.rowId) || !(await guard(trx, entry))) return null
    for (const rowId of rows) {
      let ids = [...fileIds]
      if (target.association.multiple) {
        const current = await trx.selectFrom(MEDIA_LINK_TABLE).select('file_id')
          .where('related_id', '=', rowId).where('related_type', '=', target.model.uid).where('field', '=', target.association.name)
          .orderBy('order').orderBy('id').execute()
        ids = [...current.map((r) => r.file_id as number).filter((id) => !fileIds.includes(id)), ...fileIds]
      }
      await writeMedia(trx, registry, { uid: target.model.uid, rowId }, target.association, ids)
    }
    if (!(await guard(trx, entry))) throw new ForbiddenError()
    return entry.documentId
  })
  return linked !== null
}
