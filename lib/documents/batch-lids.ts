import { ValidationError } from '../errors.js'
import type { Attribute } from '../model/types.js'

/**
 * A batch's local ids (JSON:API's `lid`): a create names the document it makes (`lid: 'a1'`), and
 * a later operation names it with `{ lid: 'a1' }` where a documentId goes: as its own
 * `documentId`, or in a relation's value (`category: { lid: 'a1' }`, `connect: [{ lid: 'a1' }]`). Replaced
 * by the documentId before the operation runs, so validation, permissions and SQL see an
 * ordinary documentId.
 */

/** A document named by its documentId, or by the `lid` of a create earlier in the batch. */
export type DocumentRef = string | { lid: string }

/** The documentId of a lid, or a 400 when no earlier create of the batch declared it. */
export type LidLookup = (lid: string) => string

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A lid as declared or referenced: a non-empty string. */
export function checkLid (value: unknown, path: string): string {
  if (typeof value !== 'string' || value === '') throw new ValidationError(`${path} must be a non-empty string`, { path })
  return value
}

/** An operation's `documentId`: a string as is, `{ lid }` through `lookup`. */
export function resolveDocumentRef (ref: unknown, lookup: LidLookup): unknown {
  if (isPlainObject(ref) && 'lid' in ref) {
    if (Object.keys(ref).length !== 1) throw new ValidationError('documentId: { lid } takes no other key', { path: 'documentId' })
    return lookup(checkLid(ref.lid, 'documentId.lid'))
  }
  return ref
}

/**
 * `data` with every `{ lid }` of its relation attributes replaced by `{ documentId }`. Only the
 * content type's own relations are walked (components hold no relations, model/validate-models.ts),
 * so a component's attribute that happens to be named `lid` is left alone. Values that do not
 * fit their attribute pass unchanged, for validation to refuse with its own message.
 */
export function resolveDataLids (attributes: Readonly<Record<string, Attribute>>, data: unknown, lookup: LidLookup): unknown {
  if (!isPlainObject(data)) return data
  let out: Record<string, unknown> | null = null
  for (const [name, value] of Object.entries(data)) {
    if (attributes[name]?.type !== 'relation') continue
    const resolved = resolveRelation(value, lookup, name)
    if (resolved !== value) (out ??= { ...data })[name] = resolved
  }
  return out ?? data
}

/**
 * A relation's value in any of Strapi's forms (relation-input.ts): its keys are all the
 * library's (`connect`, `set`, `position`, `before`, ...), so every object with a `lid` names a
 * document, wherever it sits.
 */
function resolveRelation (value: unknown, lookup: LidLookup, path: string): unknown {
  if (Array.isArray(value)) return value.map((item, i) => resolveRelation(item, lookup, `${path}.${i}`))
  if (!isPlainObject(value)) return value
  let out: Record<string, unknown> | null = null
  for (const [key, item] of Object.entries(value)) {
    if (key === 'lid') continue
    const resolved = resolveRelation(item, lookup, `${path}.${key}`)
    if (resolved !== item) (out ??= { ...value })[key] = resolved
  }
  if (!('lid' in value)) return out ?? value
  // `{ lid, locale?, position? }`: a document named by lid, its other keys kept (resolved above).
  const { lid, ...rest } = out ?? value
  if ('documentId' in rest || 'id' in rest) throw new ValidationError(`${path}: name a document by lid, documentId or id, not several`, { path })
  return { ...rest, documentId: lookup(checkLid(lid, `${path}.lid`)) }
}
