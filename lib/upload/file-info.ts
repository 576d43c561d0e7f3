import { ValidationError, type FieldError } from '../errors.js'
import { checkInputDepth } from '../query/limits.js'

/** What a client may say about an uploaded file (Strapi's `fileInfo`, nothing else). */
export interface FileInfo {
  name?: string | null
  alternativeText?: string | null
  caption?: string | null
}

const KEYS = new Set(['name', 'alternativeText', 'caption'])

const fieldError = (path: Array<string | number>, message: string, value?: unknown): FieldError =>
  ({ path, message, name: 'ValidationError', ...(value === undefined ? {} : { value }) })

function parseJson (text: string, path: Array<string | number>, maxDepth: number | undefined): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw ValidationError.fromFieldErrors([fieldError(path, `${path.join('.')} must be a JSON object`, text)])
  }
  // Before the checks below, whose errors carry the value back to the client.
  if (maxDepth !== undefined) checkInputDepth(value, maxDepth, path.join('.'))
  return value
}

function checkInfo (value: unknown, path: Array<string | number>): FileInfo {
  const label = path.join('.')
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw ValidationError.fromFieldErrors([fieldError(path, `${label} must be an object`, value)])
  }
  const unknown = Object.keys(value).filter((key) => !KEYS.has(key))
  if (unknown.length > 0) throw ValidationError.fromFieldErrors([fieldError(path, `${label} field has unspecified keys: ${unknown.join(', ')}`, value)])
  const errors: FieldError[] = []
  for (const [key, v] of Object.entries(value)) {
    if (v !== null && v !== undefined && typeof v !== 'string') errors.push(fieldError([...path, key], `${label}.${key} must be a \`string\` type`, v))
  }
  if (errors.length > 0) throw ValidationError.fromFieldErrors(errors)
  return value as FileInfo
}

/**
 * `fileInfo` in any of the forms clients send it: a JSON string (multipart), repeated JSON
 * strings (one per file), a JSON array string, or an object or array (JSON bodies). Returns one
 * entry per file, in the files' order; with several files an array is required, as in Strapi.
 *
 * @example
 * parseFileInfo(['{"name":"a.png"}'], 1) // [{ name: 'a.png' }]
 * parseFileInfo(undefined, 2)           // [{}, {}]
 *
 * `maxDepth` (the routes pass `limits.inputDepth`) bounds the nesting of the JSON text fields of
 * a multipart body, which no body parser has seen.
 */
export function parseFileInfo (raw: unknown, files: number, maxDepth?: number): FileInfo[] {
  let value: unknown = raw
  if (Array.isArray(raw) && raw.every((v) => typeof v === 'string')) {
    value = raw.length === 1 ? parseJson(raw[0], ['fileInfo'], maxDepth) : raw.map((v, i) => parseJson(v, ['fileInfo', i], maxDepth))
  } else if (typeof raw === 'string') {
    value = parseJson(raw, ['fileInfo'], maxDepth)
  }
  if (value === undefined || value === null) return Array.from({ length: files }, () => ({}))
  if (Array.isArray(value)) {
    const infos = value.map((v, i) => checkInfo(v, ['fileInfo', i]))
    return Array.from({ length: Math.max(files, 1) }, (_, i) => infos[i] ?? {})
  }
  if (files > 1) {
    throw ValidationError.fromFieldErrors([fieldError(['fileInfo'], 'fileInfo must be an array (one entry per file) when several files are uploaded', value)])
  }
  return [checkInfo(value, ['fileInfo'])]
}
