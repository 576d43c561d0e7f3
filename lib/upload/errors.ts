import { ContentApiError, type ErrorDetails } from '../errors.js'

/**
 * The upload API's own refusals. Clients see Strapi's envelope with `name: 'ValidationError'`
 * (400) or `PayloadTooLargeError` (413); applications tell them apart by `code`. Strapi's own
 * messages ("Files are empty", "Cannot replace a file with multiple ones", "file.notFound") use
 * the generic errors of lib/errors.ts. Every code is listed in docs/upload.md.
 */
export type UploadErrorCode =
  /** A zero-byte file. */
  | 'FCA_ERR_UPLOAD_EMPTY_FILE'
  /** The bytes are not what the file's extension says (a `.png` that is not a PNG). */
  | 'FCA_ERR_UPLOAD_CONTENT_MISMATCH'
  /** An image format whose bytes cannot be decoded. */
  | 'FCA_ERR_UPLOAD_INVALID_IMAGE'
  /** A name with a path, control characters, or no characters at all. */
  | 'FCA_ERR_UPLOAD_INVALID_NAME'
  /** A type outside `security.allowedTypes`, or inside `security.deniedTypes`. */
  | 'FCA_ERR_UPLOAD_TYPE_NOT_ALLOWED'
  /** A file sent in a multipart field other than `files`. */
  | 'FCA_ERR_UPLOAD_UNEXPECTED_FIELD'
  /** More files than `maxFiles`. */
  | 'FCA_ERR_UPLOAD_TOO_MANY_FILES'
  /** A multipart body that cannot be read (truncated, too many fields, a field too long). */
  | 'FCA_ERR_UPLOAD_MALFORMED'
  /** `ref`, `refId` and `field` do not name a media attribute of an existing entry. */
  | 'FCA_ERR_UPLOAD_INVALID_REFERENCE'

/** 400 — an upload refused before anything was stored. */
export class UploadError extends ContentApiError {
  override readonly name = 'ValidationError'
  readonly status = 400
  readonly code: UploadErrorCode

  constructor (code: UploadErrorCode, message: string, details?: ErrorDetails) {
    super(message, details)
    this.code = code
  }
}

/** 413 — a file larger than `sizeLimit`. */
export class FileTooLargeError extends ContentApiError {
  override readonly name = 'PayloadTooLargeError'
  readonly status = 413
  readonly code = 'FCA_ERR_UPLOAD_FILE_TOO_LARGE'

  constructor (file: string, limit: number) {
    super(`${file} exceeds the size limit of ${limit} bytes`, { file, sizeLimit: limit })
  }
}
