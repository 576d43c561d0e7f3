import { randomBytes } from 'node:crypto'
import { extname } from 'node:path'
import { UploadError } from '../errors.js'

/**
 * File names as clients send them, and the storage names derived from them. The name a record
 * shows is the client's (checked, never used as a path); the stored object is always named
 * `<hash><ext>`, where the hash is the slugged base name plus 10 random hex digits
 * (`Green Tea.png` -> `Green_Tea_3f9a1c0b2e.png`), as Strapi names them.
 */

/** Separators, `..` segments' dots alone, NUL and other control characters. */
const INVALID_NAME = /[/\\\p{Cc}]/u
const MAX_NAME_LENGTH = 255

/**
 * Refuses names that are paths (`../../etc/passwd`, `C:\photo.png`), contain control characters,
 * are `.`/`..`, empty, or longer than 255 characters.
 */
export function checkFileName (name: string): string {
  const normalized = name.normalize()
  if (normalized.trim() === '' || normalized === '.' || normalized === '..' || INVALID_NAME.test(normalized) || normalized.length > MAX_NAME_LENGTH) {
    throw new UploadError('FCA_ERR_UPLOAD_INVALID_NAME', 'File name contains invalid characters', { name })
  }
  return normalized
}

/** The extension of a name (`.png`), kept only when it is a plain one: letters and digits, at most 16. */
export function extensionOf (name: string): string {
  const ext = extname(name)
  return /^\.[A-Za-z0-9]{1,16}$/.test(ext) ? ext : ''
}

/** Letters and digits of the base name, other runs as `_`, accents folded; `file` when none are left. */
export function slugBaseName (name: string, ext: string): string {
  const base = ext !== '' && name.endsWith(ext) ? name.slice(0, -ext.length) : name
  const slug = base.normalize('NFKD').replace(/\p{M}/gu, '').replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 100)
  return slug === '' ? 'file' : slug
}

/** A new storage hash for a name: `<slug>_<10 hex digits>`. */
export function fileHash (name: string, ext: string): string {
  return `${slugBaseName(name, ext)}_${randomBytes(5).toString('hex')}`
}

/** Bytes as the record's `size`: kilobytes with two decimals, as Strapi stores it. */
export const bytesToKilobytes = (bytes: number): number => Math.round((bytes / 1000) * 100) / 100
