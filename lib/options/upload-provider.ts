import type { Readable } from 'node:stream'

/**
 * Where file bytes live. The upload service hands a provider files that are complete and checked
 * (size, type, name); the provider stores them under `key` and says at which URL they are read.
 * A provider never sees a partial upload, and the service deletes what it stored when a later
 * step of the same request fails.
 *
 * @example
 * const memory = new Map<string, Buffer>()
 * const provider: UploadProvider = {
 *   name: 'memory',
 *   async upload (file) {
 *     const chunks = []
 *     for await (const chunk of file.stream()) chunks.push(chunk)
 *     memory.set(file.key, Buffer.concat(chunks))
 *     return { url: `/memory/${file.key}` }
 *   },
 *   async delete (file) { memory.delete(file.key) }
 * }
 */
export interface UploadProvider {
  /** Stored in each file record's `provider` (`local`, `aws-s3`, ...). */
  readonly name: string
  /** Stores one file (an original or one of its formats). */
  upload (file: ProviderUpload): Promise<ProviderResult>
  /** Removes a stored file; a file that is already gone is not an error. */
  delete (file: StoredObject): Promise<void>
  /** True when stored URLs cannot be read without signing: responses then carry signed URLs. */
  isPrivate? (): boolean
  /** A time-limited URL granting read access to a private file. */
  getSignedUrl? (file: StoredObject): Promise<string>
  /** Releases the provider's resources when the application closes. */
  close? (): Promise<void>
}

export interface ProviderUpload {
  /** `<hash><ext>`: a plain file name (letters, digits, `_`, `-`, `.`), never a path. */
  key: string
  hash: string
  ext: string
  mime: string
  /** Bytes. */
  size: number
  /**
   * `attachment; filename=...` for an active type (HTML, SVG, XML, JavaScript...) that
   * `inlineTypes` does not allow inline, else undefined. A provider whose files are read
   * straight from its own server stores it with the file (S3's `ContentDisposition`), so that a
   * browser downloads such a file rather than open it.
   */
  contentDisposition?: string
  /** A fresh stream of the file's bytes at each call (a provider may retry). */
  stream: () => Readable
}

export interface ProviderResult {
  url: string
  /** Whatever the provider needs later (a bucket and key); shown in the file record. */
  provider_metadata?: Record<string, unknown> | null
}

/** A stored file as its record keeps it (the original, or an entry of `formats`). */
export interface StoredObject {
  key: string
  hash: string
  ext: string
  url: string
  provider_metadata?: Record<string, unknown> | null
}
