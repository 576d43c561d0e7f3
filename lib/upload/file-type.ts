import { open } from 'node:fs/promises'
import mime from 'mime-types'
import { UploadError } from '../errors.js'

/**
 * What a file really is, from its first bytes (magic numbers, read by `file-type`, as Strapi's
 * own MIME check does), compared with what its name says. A file whose extension names a format
 * with a signature (`.png`, `.jpg`, `.pdf`, `.mp4`, `.zip`, ...) must carry that signature;
 * bytes of a recognisable format under another extension are refused too. Formats without a
 * signature (text, CSV, JSON, SVG) are taken at their extension's word.
 *
 * The recorded type is what the bytes are when they have a signature, and otherwise the type of
 * the extension the file is stored under: never the type the client declared, which is only
 * used to name a file that has no extension. The local files are served with the type of that
 * same extension (./serve.ts) and S3 objects with the recorded type, so what is recorded, what
 * is served and what the bytes are agree (see docs/upload.md).
 */

/** How many leading bytes are read to detect a type (file-type's own recommendation). */
const SAMPLE_SIZE = 4100

/** What a file that says nothing about itself is: bytes to download, never rendered. */
export const UNKNOWN_TYPE = 'application/octet-stream'

/** The type of a stored file's extension (`.svg` -> `image/svg+xml`), as recorded and as served. */
export function typeOfExtension (ext: string): string {
  return mime.lookup(ext.toLowerCase()) || UNKNOWN_TYPE
}

/** Containers detected as `zip` when their inner layout is unusual. */
const ZIP_BASED = new Set(['zip', 'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'odg', 'epub', 'jar', 'apk', 'xpi', 'kmz', '3mf', 'vsdx', 'ipa'])

export interface DetectedType {
  /** The record's `ext`: the name's, or derived from the content or the declared type when the name has none. */
  ext: string
  mime: string
}

async function sample (path: string): Promise<Buffer> {
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.alloc(SAMPLE_SIZE)
    const { bytesRead } = await handle.read(buffer, 0, SAMPLE_SIZE, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

function consistent (detected: { ext: string, mime: string }, ext: string, expected: string | false): boolean {
  if (detected.ext === ext || detected.mime === expected) return true
  if ((mime.extensions[detected.mime] ?? []).includes(ext)) return true
  if (detected.ext === 'zip' && ZIP_BASED.has(ext)) return true
  // Audio and video containers share signatures (ISO-BMFF `ftyp`: mp4, m4v, m4a, mov, 3gp).
  if (expected !== false && /^(audio|video)\//.test(expected) && /^(audio|video)\//.test(detected.mime)) return true
  return false
}

/**
 * The type of a staged file, or an `UploadError` when its content contradicts its extension.
 *
 * @example
 * await detectType('/tmp/x', 'photo.png', 'image/png') // { ext: '.png', mime: 'image/png' }
 * await detectType('/tmp/y', 'photo.png', 'image/png') // an HTML file: throws FCA_ERR_UPLOAD_CONTENT_MISMATCH
 */
export async function detectType (path: string, name: string, ext: string, declaredMime: string): Promise<DetectedType> {
  // Loaded by the first upload, not at start-up: file-type is an ES module graph of about 30 files.
  const { fileTypeFromBuffer, supportedExtensions, supportedMimeTypes } = await import('file-type')
  const detected = await fileTypeFromBuffer(await sample(path))
  const bare = ext.slice(1).toLowerCase()
  const declared = declaredMime === '' ? UNKNOWN_TYPE : declaredMime
  if (bare === '') {
    if (detected !== undefined) return { ext: `.${detected.ext}`, mime: detected.mime }
    const derived = mime.extension(declared)
    return derived === false || derived === 'bin' ? { ext: '', mime: UNKNOWN_TYPE } : { ext: `.${derived}`, mime: typeOfExtension(`.${derived}`) }
  }
  const expected = mime.lookup(bare)
  const checkable = supportedExtensions.has(bare as never) || (expected !== false && supportedMimeTypes.has(expected as never))
  const mismatch = (): UploadError => new UploadError('FCA_ERR_UPLOAD_CONTENT_MISMATCH', `The content of ${name} does not match its extension ${ext}`, {
    name, ext, detected: detected?.mime ?? null
  })
  if (checkable) {
    if (detected === undefined || !consistent(detected, bare, expected)) throw mismatch()
    return { ext, mime: detected.mime }
  }
  // XML is the signature of many text formats (SVG, GPX, RSS): it contradicts none of them.
  if (detected !== undefined && detected.ext !== 'xml' && !consistent(detected, bare, expected)) throw mismatch()
  return { ext, mime: expected === false ? UNKNOWN_TYPE : expected }
}

/**
 * A test of MIME types against the patterns of the options (`image/*`), compiled once: each `*`
 * stands for any run of characters (patterns come from the options, not clients).
 */
export function typeMatcher (patterns: readonly string[]): (type: string) => boolean {
  const escape = (text: string): string => text.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')
  const compiled = patterns.map((pattern) => new RegExp(`^${pattern.toLowerCase().split('*').map(escape).join('.*')}$`))
  return (type) => {
    const lower = type.toLowerCase()
    return compiled.some((pattern) => pattern.test(lower))
  }
}

/** Whether a MIME type matches one of the patterns of the options (`image/*`). */
export function matchesType (type: string, patterns: readonly string[]): boolean {
  return typeMatcher(patterns)(type)
}

/** Strapi's `security` rule: a denied pattern refuses, and with an allow-list only its patterns pass. */
export function checkTypeAllowed (name: string, type: string, security: { allowedTypes?: string[], deniedTypes?: string[] }): void {
  const { allowedTypes, deniedTypes } = security
  const denied = (deniedTypes?.length ?? 0) > 0 && matchesType(type, deniedTypes!)
  const notAllowed = (allowedTypes?.length ?? 0) > 0 && !matchesType(type, allowedTypes!)
  if (denied || notAllowed) {
    throw new UploadError('FCA_ERR_UPLOAD_TYPE_NOT_ALLOWED', `File type '${type}' is not allowed`, { name, type, allowedTypes: allowedTypes ?? null, deniedTypes: deniedTypes ?? null })
  }
}
