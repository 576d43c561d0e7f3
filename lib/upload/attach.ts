import type { Kysely } from 'kysely'
import { MEDIA_LINK_TABLE, type MediaAssociation } from '../model/associations.js'
import type { ContentType, Registry } from '../model/registry.js'
import { writeMedia } from '../documents/write-media.js'
import { UploadError } from './errors.js'

/**
 * Strapi's legacy linking fields: an upload with `ref` (a content-type uid), `refId` (a row id)
 * and `field` (a media attribute) is attached to that entry's attribute as it is created. The
 * entry's other versions in the same locale (a draft & publish document's draft and published
 * rows) get the link too, so that the next publish, which copies the draft's links, keeps it.
 * A single-file attribute's previous file is replaced; a multiple one's files are kept and the
 * uploads appended.
 */

export interface MediaTarget {
  model: ContentType
  association: MediaAssociation
  rowId: number
}

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

/** The rows of the entry's document that share its locale: the entry itself first. Empty when it does not exist. */
async function entryRows (db: Kysely<any>, target: MediaTarget): Promise<number[]> {
  const { model, rowId } = target
  const columns = model.localized ? ['id', 'document_id', 'locale'] : ['id', 'document_id']
  const entry = await db.selectFrom(model.tableName).select(columns).where('id', '=', rowId).executeTakeFirst()
  if (entry === undefined) return []
  let siblings = db.selectFrom(model.tableName).select('id').where('document_id', '=', entry.document_id).where('id', '<>', rowId)
  if (model.localized) siblings = siblings.where('locale', entry.locale === null ? 'is' : '=', entry.locale)
  return [rowId, ...(await siblings.execute()).map((r) => r.id as number)]
}

/** Fails early when the entry does not exist. */
export async function checkEntryExists (db: Kysely<any>, target: MediaTarget): Promise<void> {
  if ((await entryRows(db, target)).length === 0) {
    throw invalid(`No ${target.model.uid} entry has id ${target.rowId}`, { ref: target.model.uid, refId: target.rowId })
  }
}

/**
 * Links files to the entry's attribute in one transaction.
 *
 * ```sql
 * delete from "files_related_mph" where related_id = $1 and related_type = $2 and field = $3;
 * insert into "files_related_mph" (file_id, related_id, related_type, field, "order") values ($4, $1, $2, $3, 1), ...
 * ```
 */
export async function attachFiles (db: Kysely<any>, registry: Registry, target: MediaTarget, fileIds: readonly number[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const rows = await entryRows(trx, target)
    if (rows.length === 0) throw invalid(`No ${target.model.uid} entry has id ${target.rowId}`, { ref: target.model.uid, refId: target.rowId })
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
  })
}
