import { createReadStream } from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
import { NotFoundError, UploadError } from '../errors.js'
import type { AccessScope } from '../query/access-scope.js'
import type { Document, DocumentService, QueryParams } from '../documents/service.js'
import { dispositionFor } from './active-types.js'
import { attachFiles, checkAttachable, checkEntry, checkLinkField, type MediaTarget } from './attach.js'
import { contentDisposition as disposition } from './content-disposition.js'
import { bytesToKilobytes, checkFileName, extensionOf, fileHash } from './file-name.js'
import type { FileInfo } from './file-info.js'
import { checkTypeAllowed, detectType } from './file-type.js'
import { generateFormats, inspectImage, type GeneratedFormat, type ImageFile } from './images.js'
import type { ResolvedUploadOptions } from '../options/upload.js'
import type { StoredObject, UploadProvider } from '../options/upload-provider.js'
import type { StagedFile, Staging } from './staging.js'

/** The storage key of a record or a format: its hash and extension. */
export const storageKey = (file: { hash: string, ext?: string | null }): string => `${file.hash}${file.ext ?? ''}`

/** A file record as the upload API answers it: the document plus Strapi's `isUrlSigned`. */
export type FileRecord = Document & { isUrlSigned: boolean }

interface PreparedFile {
  name: string
  ext: string
  mime: string
  hash: string
  image: ImageFile
  formats: GeneratedFormat[]
  info: FileInfo
}

/** What a failed request had stored, undone in reverse so nothing is left behind. */
class Rollback {
  readonly objects: StoredObject[] = []
  readonly records: string[] = []

  async run (files: DocumentService, provider: UploadProvider, log: FastifyBaseLogger): Promise<void> {
    for (const documentId of this.records.reverse()) {
      await files.delete({ documentId }).catch((err: unknown) => { log.error({ err, documentId }, 'upload: could not remove a file record after a failed upload') })
    }
    for (const object of this.objects.reverse()) {
      await provider.delete(object).catch((err: unknown) => { log.error({ err, key: object.key }, 'upload: could not remove a stored file after a failed upload') })
    }
  }
}

const isNil = (v: unknown): v is null | undefined => v === null || v === undefined

/**
 * A grant's row-level conditions without its field limits: lookups and writes of file records
 * need every column of the record, whatever attributes the grant lists. Undefined without
 * conditions (nothing to enforce).
 */
function conditionsOf (access: AccessScope | undefined): AccessScope | undefined {
  if (access?.conditions == null) return undefined
  return access.fields === null ? access : { ...access, fields: null, key: `${access.key}|*` }
}

/** Objects a record holds in its provider: the file and each format. */
function storedObjects (record: Document): StoredObject[] {
  const own = (file: Record<string, unknown>): StoredObject => ({
    key: storageKey({ hash: String(file.hash), ext: file.ext as string | null }),
    hash: String(file.hash),
    ext: (file.ext as string | null) ?? '',
    url: String(file.url),
    provider_metadata: (file.provider_metadata as Record<string, unknown> | null | undefined) ?? null
  })
  const formats = (record.formats ?? {}) as Record<string, Record<string, unknown>>
  return [own(record), ...Object.values(formats).map(own)]
}

/** The caller's grants an upload is limited by (none for application code). */
export interface UploadAccess {
  /** `plugin::upload.content-api.upload`: its conditions hold for the new records. */
  upload?: AccessScope
  /** `update` on the linked entry's type: its fields and conditions limit the link. */
  update?: AccessScope
}

export interface UploadServiceDeps {
  files: DocumentService
  /** The document service of any content type: linking checks the entry's conditions through it. */
  documents: (uid: string) => DocumentService
  provider: UploadProvider
  options: ResolvedUploadOptions
  log: FastifyBaseLogger
}

/**
 * Files end to end: checks staged uploads, stores them (and their formats) with the provider,
 * writes their records through the file type's document service, links them to entries, and
 * undoes all of it when any step of a request fails.
 */
export class UploadService {
  readonly provider: UploadProvider
  readonly #deps: UploadServiceDeps
  /** How a stored file is to be served (`upload.inlineTypes`). */
  readonly #disposition: (type: string) => 'inline' | 'attachment'

  constructor (deps: UploadServiceDeps) {
    this.provider = deps.provider
    this.#deps = deps
    this.#disposition = dispositionFor(deps.options.inlineTypes)
  }

  /** Everything that can refuse a file, before anything is stored. */
  async #prepare (staging: Staging, staged: StagedFile, info: FileInfo): Promise<PreparedFile> {
    const { options } = this.#deps
    if (staged.size === 0) throw new UploadError('FCA_ERR_UPLOAD_EMPTY_FILE', `${staged.filename} is empty`, { name: staged.filename })
    const name = checkFileName(isNil(info.name) || info.name === '' ? staged.filename : info.name)
    const { ext, mime } = await detectType(staged.path, staged.filename, extensionOf(staged.filename), staged.declaredMime)
    checkTypeAllowed(name, mime, options.security)
    const image = await inspectImage({ path: staged.path, mime, size: staged.size, width: null, height: null, format: null }, name, staging.dir, options)
    const formats = await generateFormats(image, staging.dir, options)
    return { name, ext, mime, hash: fileHash(name, ext), image, formats, info }
  }

  async #prepareAll (staging: Staging, infos: readonly FileInfo[]): Promise<PreparedFile[]> {
    const prepared: PreparedFile[] = []
    for (const [i, staged] of staging.files.entries()) prepared.push(await this.#prepare(staging, staged, infos[i] ?? {}))
    return prepared
  }

  /** Stores a prepared file and its formats; returns the record's storage fields. */
  async #store (file: PreparedFile, rollback: Rollback): Promise<Record<string, unknown>> {
    const { provider } = this
    const attachment = this.#disposition(file.mime) === 'attachment'
    const put = async (hash: string, name: string, path: string, size: number): Promise<{ url: string, provider_metadata: Record<string, unknown> | null }> => {
      const key = storageKey({ hash, ext: file.ext })
      const contentDisposition = attachment ? disposition('attachment', name) : undefined
      const result = await provider.upload({ key, hash, ext: file.ext, mime: file.mime, size, contentDisposition, stream: () => createReadStream(path) })
      const stored = { url: result.url, provider_metadata: result.provider_metadata ?? null }
      rollback.objects.push({ key, hash, ext: file.ext, ...stored })
      return stored
    }
    const original = await put(file.hash, file.name, file.image.path, file.image.size)
    const formats: Record<string, unknown> = {}
    for (const format of file.formats) {
      const hash = `${format.key}_${file.hash}`
      const name = `${format.key}_${file.name}`
      const stored = await put(hash, name, format.path, format.size)
      formats[format.key] = {
        name,
        hash,
        ext: file.ext,
        mime: file.mime,
        path: null,
        width: format.width,
        height: format.height,
        size: bytesToKilobytes(format.size),
        sizeInBytes: format.size,
        url: stored.url,
        ...(stored.provider_metadata === null ? {} : { provider_metadata: stored.provider_metadata })
      }
    }
    return {
      width: file.image.width,
      height: file.image.height,
      formats: file.formats.length === 0 ? null : formats,
      hash: file.hash,
      ext: file.ext,
      mime: file.mime,
      size: bytesToKilobytes(file.image.size),
      url: original.url,
      previewUrl: null,
      provider: provider.name,
      provider_metadata: original.provider_metadata
    }
  }

  /**
   * Stores staged files as new file records, optionally linked to an entry's media attribute.
   * All or nothing: a file refused, a provider failing or a link failing leaves no object and
   * no record behind. `access` holds the caller's grants: each new record must satisfy the
   * `upload` grant's conditions (403 otherwise, as for a content create); the `update` grant on
   * the entry's type must list the attribute in its fields, and the entry must satisfy its
   * conditions (see ./attach.ts).
   */
  async upload (staging: Staging, infos: readonly FileInfo[], target: MediaTarget | null, access: UploadAccess = {}): Promise<Document[]> {
    const { files, log } = this.#deps
    const created = conditionsOf(access.upload)
    // Linking goes through the document service of the entry's type, under the `update` grant.
    const link = target === null ? null : { target, entries: this.#deps.documents(target.model.uid) }
    if (link !== null) checkLinkField(link.target, access.update?.fields ?? null)
    const prepared = await this.#prepareAll(staging, infos)
    if (link !== null) {
      checkAttachable(link.target, prepared)
      await checkEntry(link.entries, link.target, access.update)
    }
    const rollback = new Rollback()
    try {
      const records: Document[] = []
      for (const file of prepared) {
        const stored = await this.#store(file, rollback)
        const data = { name: file.name, alternativeText: file.info.alternativeText ?? null, caption: file.info.caption ?? null, ...stored }
        const record = await files.create({ data, access: created })
        rollback.records.push(record.documentId)
        records.push(record)
      }
      if (link !== null) await attachFiles(link.entries, link.target, records.map((r) => r.id), access.update)
      return records
    } catch (err) {
      await rollback.run(files, this.provider, log)
      throw err
    }
  }

  /**
   * Replaces a file's content. The hash is kept, and the extension when the type is the same,
   * so the URL does not change (as in Strapi); the old formats are removed. Fields the new
   * `fileInfo` leaves out keep their values; the name becomes the new file's unless given.
   */
  async replace (id: unknown, staging: Staging, info: FileInfo, access?: AccessScope): Promise<Document> {
    const { files, log } = this.#deps
    const scope = conditionsOf(access)
    const existing = await this.#existing(id, scope)
    const [file] = await this.#prepareAll(staging, [info])
    file.hash = String(existing.hash)
    if (existing.mime === file.mime && typeof existing.ext === 'string') file.ext = existing.ext
    const rollback = new Rollback()
    const previous = storedObjects(existing)
    // Objects written under the old keys have replaced the old content: a rollback removes new keys only.
    const undo = async (): Promise<void> => {
      const kept = new Set(previous.map((o) => o.key))
      rollback.objects.splice(0, rollback.objects.length, ...rollback.objects.filter((o) => !kept.has(o.key)))
      await rollback.run(files, this.provider, log)
    }
    let updated: Document
    try {
      const stored = await this.#store(file, rollback)
      const data: Record<string, unknown> = { name: file.name, ...stored }
      if (!isNil(info.alternativeText)) data.alternativeText = info.alternativeText
      if (!isNil(info.caption)) data.caption = info.caption
      // The conditions are checked again in the update's transaction (gone or moved out since: 404).
      updated = await this.#update(existing.documentId, data, scope)
    } catch (err) {
      await undo()
      throw err
    }
    const current = new Set(storedObjects(updated).map((o) => o.key))
    if (existing.provider === this.provider.name) await this.#deleteObjects(previous.filter((o) => !current.has(o.key)))
    return updated
  }

  /** Updates `name`, `alternativeText` and `caption`; null or absent values keep the current ones. */
  async updateFileInfo (id: unknown, info: FileInfo, access?: AccessScope): Promise<Document> {
    const scope = conditionsOf(access)
    const existing = await this.#existing(id, scope)
    const data = {
      name: isNil(info.name) ? existing.name : checkFileName(info.name),
      alternativeText: isNil(info.alternativeText) ? existing.alternativeText : info.alternativeText,
      caption: isNil(info.caption) ? existing.caption : info.caption
    }
    return await this.#update(existing.documentId, data, scope)
  }

  /** Files matching a query (filters, sort, fields, pagination), all of them without pagination. */
  async findMany (query: QueryParams = {}, access?: AccessScope): Promise<Document[]> {
    return await this.#deps.files.findMany({ ...query, access })
  }

  /** A file by id (or documentId), or null. */
  async findOne (id: unknown, query: QueryParams = {}, access?: AccessScope): Promise<Document | null> {
    const key = fileKey(id)
    if (key === null) return null
    const filters = query.filters === undefined ? key : { $and: [query.filters, key] }
    return await this.#deps.files.findFirst({ ...query, filters, access })
  }

  /**
   * Deletes a file's record (its links go with it) and its stored objects; returns the record, or
   * null when there is no such file, or none within `access`'s conditions (checked again by the
   * delete's transaction, so a file that leaves them meanwhile stays, objects included).
   */
  async remove (id: unknown, access?: AccessScope): Promise<Document | null> {
    const scope = conditionsOf(access)
    const record = await this.findOne(id, {}, scope)
    if (record === null) return null
    const { entries } = await this.#deps.files.delete({ documentId: record.documentId, access: scope })
    if (entries === 0) return null
    if (record.provider === this.provider.name) await this.#deleteObjects(storedObjects(record))
    return record
  }

  /** The record as the API shows it: `isUrlSigned`, and signed URLs when the provider is private. */
  async present (record: Document): Promise<FileRecord> {
    const { provider } = this
    if (provider.isPrivate?.() !== true || provider.getSignedUrl === undefined || record.provider !== provider.name) {
      return { ...record, isUrlSigned: false }
    }
    const objects = storedObjects(record)
    const out: FileRecord = { ...record, isUrlSigned: true }
    if (typeof record.url === 'string') out.url = await provider.getSignedUrl(objects[0])
    if (record.formats !== null && typeof record.formats === 'object') {
      const formats: Record<string, unknown> = {}
      for (const [key, format] of Object.entries(record.formats as Record<string, Record<string, unknown>>)) {
        const object = objects.find((o) => o.hash === format.hash)
        formats[key] = object === undefined ? format : { ...format, url: await provider.getSignedUrl(object) }
      }
      out.formats = formats
    }
    return out
  }

  /** The file to write, within the conditions when given; else 404 `file.notFound`, as for an unknown file. */
  async #existing (id: unknown, access: AccessScope | undefined): Promise<Document> {
    const record = await this.findOne(id, {}, access)
    if (record === null) throw new NotFoundError('file.notFound')
    return record
  }

  /**
   * Writes a file record. With conditions, the update's transaction checks them before writing
   * (a file gone, or no longer within them: 404) and after (a write may not take the file out of
   * them: 403, rolled back), as for content.
   */
  async #update (documentId: string, data: Record<string, unknown>, access: AccessScope | undefined): Promise<Document> {
    const updated = await this.#deps.files.update({ documentId, data, access })
    if (updated === null) throw new NotFoundError('file.notFound')
    return updated
  }

  /** Provider deletions after the record is gone: a failure is logged, never surfaced. */
  async #deleteObjects (objects: readonly StoredObject[]): Promise<void> {
    for (const object of objects) {
      await this.provider.delete(object).catch((err: unknown) => {
        this.#deps.log.error({ err, key: object.key }, 'upload: could not remove a stored file')
      })
    }
  }
}

/** A file id from a route or an option: a row id (`12`), or a documentId. */
function fileKey (id: unknown): Record<string, unknown> | null {
  if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return { id: { $eq: id } }
  if (typeof id !== 'string') return null
  if (/^[1-9]\d{0,15}$/.test(id)) return { id: { $eq: Number(id) } }
  if (/^[a-z0-9]{24}$/.test(id)) return { documentId: { $eq: id } }
  return null
}
