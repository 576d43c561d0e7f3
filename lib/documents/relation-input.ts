import { ValidationError } from '../errors.js'

/** A related document as a client names it: by documentId (optionally in a locale) or by row id. */
export interface RelationRef {
  documentId?: string
  id?: number
  locale?: string
  position?: Position
}

export type Position = { before: RelationRef } | { after: RelationRef } | { start: true } | { end: true }

/** A relation write: replace the whole list, or connect and disconnect some documents. */
export type RelationInput =
  | { mode: 'set', items: RelationRef[] }
  | { mode: 'patch', connect: RelationRef[], disconnect: RelationRef[] }

const LONGHAND_KEYS = new Set(['connect', 'disconnect', 'set', 'options'])
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function invalid (path: Array<string | number>, message: string, value?: unknown): ValidationError {
  return ValidationError.fromFieldErrors([{ path, message, name: 'ValidationError', value }])
}

function ref (value: unknown, path: Array<string | number>, allowPosition: boolean): RelationRef {
  if (typeof value === 'string' && value !== '') return { documentId: value }
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return { id: value }
  if (isPlainObject(value)) {
    const out: RelationRef = {}
    if (typeof value.documentId === 'string' && value.documentId !== '') out.documentId = value.documentId
    else if (typeof value.id === 'number' && Number.isSafeInteger(value.id) && value.id > 0) out.id = value.id
    else if (typeof value.id === 'string' && /^\d+$/.test(value.id)) out.id = Number(value.id)
    else throw invalid(path, `${path.join('.')} must name a document by documentId or id`, value)
    if (value.locale !== undefined) {
      if (typeof value.locale !== 'string') throw invalid(path, `${path.join('.')}.locale must be a string`, value)
      out.locale = value.locale
    }
    if (value.position !== undefined) {
      if (!allowPosition) throw invalid(path, `${path.join('.')}: position is only allowed in connect`, value)
      out.position = position(value.position, [...path, 'position'])
    }
    return out
  }
  throw invalid(path, `${path.join('.')} must be a documentId, an id, or { documentId }`, value)
}

function position (value: unknown, path: Array<string | number>): Position {
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
    if (keys.length === 1) {
      if (keys[0] === 'start' && value.start === true) return { start: true }
      if (keys[0] === 'end' && value.end === true) return { end: true }
      if (keys[0] === 'before') return { before: ref(value.before, [...path, 'before'], false) }
      if (keys[0] === 'after') return { after: ref(value.after, [...path, 'after'], false) }
    }
  }
  throw invalid(path, `${path.join('.')} must be one of { before }, { after }, { start: true }, { end: true }`, value)
}

function list (value: unknown, path: Array<string | number>, allowPosition: boolean): RelationRef[] {
  if (value === undefined || value === null) return []
  const items = Array.isArray(value) ? value : [value]
  return items.map((item, i) => ref(item, [...path, i], allowPosition))
}

/**
 * Parses a relation value in every form Strapi v5 accepts:
 * `'docId'`, `5`, `['a', 'b']`, `{ documentId }`, `null` (clear), `{ set: [...] }` and
 * `{ connect: [...], disconnect: [...] }` with positional `connect` items
 * (`{ documentId, position: { before | after: docId } | { start: true } | { end: true } }`).
 */
export function parseRelationInput (name: string, value: unknown): RelationInput {
  const path = [name]
  if (value === null) return { mode: 'set', items: [] }
  if (!isPlainObject(value) || !Object.keys(value).some((k) => LONGHAND_KEYS.has(k))) {
    return { mode: 'set', items: list(value, path, false) }
  }
  for (const key of Object.keys(value)) {
    if (!LONGHAND_KEYS.has(key)) throw ValidationError.invalidKey(key, { key, path: name, source: 'body' })
  }
  if (value.set !== undefined) {
    if (value.connect !== undefined || value.disconnect !== undefined) {
      throw invalid(path, `${name}: set cannot be combined with connect or disconnect`, value)
    }
    return { mode: 'set', items: list(value.set, [name, 'set'], false) }
  }
  return {
    mode: 'patch',
    connect: list(value.connect, [name, 'connect'], true),
    disconnect: list(value.disconnect, [name, 'disconnect'], false)
  }
}

/** The documents a relation write links or unlinks (position anchors are only read, not written). */
export function namedDocuments (input: RelationInput): RelationRef[] {
  return input.mode === 'set' ? input.items : [...input.connect, ...input.disconnect]
}
