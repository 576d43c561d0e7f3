import { UploadError, ValidationError } from '../errors.js'
import type { MediaAssociation } from '../model/associations.js'
import type { ContentType, Registry } from '../model/registry.js'
import type { DocumentService } from '../documents/service.js'
import type { AccessScope } from '../query/access-scope.js'

/**
 * Strapi's legacy linking fields: an upload with `ref` (a content-type uid), `refId` (a row id)
 * and `field` (a media attribute) is attached to that entry's attribute as it is created, through
 * the document service of the entry's type (`linkMedia`, which also links the entry's other
 * versions in its locale). A single-file attribute's previous file is replaced; a multiple one's
 * files are kept and the uploads appended.
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

/** Fails early, before anything is stored, when the entry does not exist or the caller may not link to it. */
export async function checkEntry (documents: DocumentService, target: MediaTarget, access: AccessScope | undefined): Promise<void> {
  if (!(await documents.canLinkMedia({ rowId: target.rowId, access }))) throw noEntry(target)
}

/**
 * Links files to the entry's attribute, checking the caller's conditions again before the write
 * (a refusal reads as an unknown entry) and after it (a link may not take the entry out of them,
 * 403). `documents` is the document service of the entry's type.
 */
export async function attachFiles (
  documents: DocumentService, target: MediaTarget, fileIds: readonly number[], access: AccessScope | undefined
): Promise<void> {
  const linked = await documents.linkMedia({ rowId: target.rowId, association: target.association, fileIds, access })
  if (!linked) throw noEntry(target)
}
