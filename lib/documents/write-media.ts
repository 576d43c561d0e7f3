import type { Transaction } from 'kysely'
import { ValidationError } from '../errors.js'
import { FILE_UID, MEDIA_LINK_TABLE, type MediaAssociation } from '../model/associations.js'
import type { Registry } from '../model/registry.js'

const MIME_PREFIX: Record<string, string> = { images: 'image/', videos: 'video/', audios: 'audio/' }

function fileIds (association: MediaAssociation, value: unknown): number[] {
  const { name } = association
  const one = (item: unknown, path: Array<string | number>): number => {
    const id = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : item
    const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
      throw ValidationError.fromFieldErrors([{ path, message: `${path.join('.')} must be a file id`, name: 'ValidationError', value: item }])
    }
    return n
  }
  if (value === null || value === undefined) return []
  if (Array.isArray(value)) {
    if (!association.multiple && value.length > 1) {
      throw ValidationError.fromFieldErrors([{ path: [name], message: `${name} accepts a single file`, name: 'ValidationError', value }])
    }
    return value.map((item, i) => one(item, [name, i]))
  }
  return [one(value, [name])]
}

/**
 * Replaces the files linked to a media attribute of a row. Files must exist and match the
 * attribute's `allowedTypes` (images, videos, audios; `files` allows anything).
 */
export async function writeMedia (
  trx: Transaction<any>, registry: Registry, owner: { uid: string, rowId: number }, association: MediaAssociation, value: unknown
): Promise<void> {
  const ids = fileIds(association, value)
  if (ids.length > 0) {
    const files = await trx.selectFrom(registry.get(FILE_UID)!.tableName).select(['id', 'mime']).where('id', 'in', ids).execute()
    const found = new Map(files.map((f) => [f.id as number, f.mime as string]))
    const missing = new Set(ids.filter((id) => !found.has(id)))
    if (missing.size > 0) {
      // Strapi's entity validator: the count of file ids that name nothing, at the payload's root.
      const message = `${missing.size} relation(s) of type ${FILE_UID} associated with this entity do not exist`
      throw ValidationError.fromFieldErrors([{ path: [], message, name: 'ValidationError' }])
    }
    for (const id of ids) {
      const mime = found.get(id)!
      const allowed = association.allowedTypes
      if (allowed !== null && !allowed.includes('files') && !allowed.some((t) => mime.startsWith(MIME_PREFIX[t] ?? '\0'))) {
        throw ValidationError.fromFieldErrors([{
          path: [association.name], message: `${association.name} only accepts ${allowed.join(', ')} (file ${id} is ${mime})`, name: 'ValidationError', value: id
        }])
      }
    }
  }
  await trx.deleteFrom(MEDIA_LINK_TABLE)
    .where('related_id', '=', owner.rowId).where('related_type', '=', owner.uid).where('field', '=', association.name).execute()
  if (ids.length > 0) {
    await trx.insertInto(MEDIA_LINK_TABLE).values(ids.map((id, i) => ({
      file_id: id, related_id: owner.rowId, related_type: owner.uid, field: association.name, order: i + 1
    }))).execute()
  }
}
