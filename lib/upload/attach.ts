import type { Kysely, Transaction } from 'kysely'
import { ForbiddenError, UploadError, ValidationError } from '../errors.js'
import { MEDIA_LINK_TABLE, type MediaAssociation } from '../model/associations.js'
import type { ContentType, Registry } from '../model/registry.js'
import { writeMedia } from '../documents/write-media.js'

/**
 * Strapi's legacy linking fields: an upload with `ref` (a content-type uid), `refId` (a row id)
 * and `field` (a media attribute) is attached to that entry's attribute as it is created. The
 * entry's other versions in the same locale (a draft & publish document's draft and published
 * rows) get the link too, so that the next publish, which copies the draft's links, keeps it.
 * A single-file attribute's previous file is replaced; a multiple one's files are kept and the
 * uploads appended.
 *
 * Linking writes the entry, so the caller's `update` grant on its type limits it as it limits a
 * `PUT`: the grant's fields must list the attribute, and the entry must satisfy its conditions.
 * An entry outside the conditions is refused exactly as one that does not exist.
 */

export interface MediaTarget {
  model: ContentType
  association: MediaAssociation
  rowId: number
}

/** The entry a link writes: its document, and its locale (null when the type is not localized). */
export interface LinkedEntry {
  documentId: string
  locale: string | null
}

/**
 * Whether the caller may link to the entry: its `update` grant's conditions, checked through the
 * given transaction (the document service's row-level check). Always true without conditions.
 */
export type EntryGuard = (trx: Transaction<any>, entry: LinkedEntry) => Promise<boolean>

const invalid = (message: string, details: Record<string, unknown>): UploadError =>
  new UploadError('FCA_ERR_UPLOAD_INVALID_REFERENCE', message, details)

const MIME_PREFIX: Record<string, string> = { images: 'image/', videos: 'video/', audios: 'audio/' }

/** Validates `ref`/`refId`/`field` (all three, or none) against the registry. */
export function parseMediaTarget (registry: Registry, fields: { ref?: string, refId?: string, field?: string }): MediaTarget | null {
  const { ref, refId, field } = fields
  if (ref === undefined && refId === undefined && field === undefined) return null
  if (ref === undefined || refId === undefined || field === undefined) {
    throw invalid('ref, refId and field go together: the content type, the entry id and the media attribute', { ref: ref ?? null, refId: refId ?? null, field: field ?? null })
  }
  const model = registry.contentTypes.get(ref)
  if (model === undefined) throw invalid(`Unknown content type "${ref}" in ref`, { ref })
  const association = model.associations.get(field)
  if (association?.kind !== 'media') throw invalid(`${ref} has no media attribute "${field}"`, { ref, field })
  if (!/^[1-9]\d{0,15}$/.test(refId) || !Number.isSafeInteger(Number(refId))) throw invalid('refId must be an entry id', { refId })
  return { model, association, rowId: Number(refId) }
}

/** Refuses, before anything is stored, files the attribute would refuse (count, `allowedTypes`). */
export function checkAttachable (target: MediaTarget, files: ReadonlyArray<{ name: string, mime: string }>): void {
  const { association } = target
  if (!association.multiple && files.length > 1) {
    throw invalid(`${association.name} accepts a single file`, { field: association.name })
  }
  const allowed = association.allowedTypes
  if (allowed === null || allowed.includes('files')) return
  for (const file of files) {
    if (!allowed.some((type) => file.mime.startsWith(MIME_PREFIX[type] ?? '\0'))) {
      throw invalid(`${association.name} only accepts ${allowed.join(', ')} (${file.name} is ${file.mime})`, { field: association.name, name: file.name, mime: file.mime })
    }
  }
}

/** A field-level permission: the `update` grant's fields must list the attribute, as for a body key of a `PUT`. */
export function checkLinkField (target: MediaTarget, fields: ReadonlySet<string> | null): void {
  const { name } = target.association
  if (fields !== null && !fields.has(name)) throw ValidationError.invalidKey(name, { key: name, source: 'body' })
}

const noEntry = (target: MediaTarget): UploadError =>
  invalid(`No ${target.model.uid} entry has id ${target.rowId}`, { ref: target.model.uid, refId: target.rowId })

/** The entry with the target's row id, or null. */
async function findEntry (db: Kysely<any>, target: MediaTarget): Promise<LinkedEntry | null> {
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
 * select id from "articles" where document_id = $1 and locale = $2 order by id for update
 * ```
 */
async function lockVersions (trx: Transaction<any>, target: MediaTarget, entry: LinkedEntry): Promise<number[]> {
  let query = trx.selectFrom(target.model.tableName).select('id').where('document_id', '=', entry.documentId)
  if (target.model.localized) query = query.where('locale', entry.locale === null ? 'is' : '=', entry.locale)
  return (await query.orderBy('id').forUpdate().execute()).map((r) => r.id as number)
}

/** Fails early, before anything is stored, when the entry does not exist or the caller may not link to it. */
export async function checkEntry (db: Kysely<any>, target: MediaTarget, guard: EntryGuard): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const entry = await findEntry(trx, target)
    if (entry === null || !(await guard(trx, entry))) throw noEntry(target)
  })
}

/**
 * Links files to the entry's attribute in one transaction, which also locks the entry's rows and
 * checks the caller's conditions before the write (a refusal reads as an unknown entry) and after
 * it (conditions may name the attribute: a link may not take the entry out of them, 403).
 *
 * ```sql
 * delete from "files_related_mph" where related_id = $1 and related_type = $2 and field = $3;
 * insert into "files_related_mph" (file_id, related_id, related_type, field, "order") values ($4, $1, $2, $3, 1), ...
 * ```
 */
export async function attachFiles (
  db: Kysely<any>, registry: Registry, target: MediaTarget, fileIds: readonly number[], guard: EntryGuard
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const entry = await findEntry(trx, target)
    const rows = entry === null ? [] : await lockVersions(trx, target, entry)
    if (entry === null || !rows.includes(target.rowId) || !(await guard(trx, entry))) throw noEntry(target)
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
  })
}
