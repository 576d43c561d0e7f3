import { ValidationError } from '../errors.js'
import type { Attribute } from '../model/types.js'
import type { Registry } from '../model/registry.js'

/**
 * A batch's local ids (JSON:API's `lid`): a create names the document it makes (`lid: 'a1'`), and
 * a later operation names it with `{ lid: 'a1' }` where a documentId goes: as its own
 * `documentId`, or in a relation's value, at any depth of components and dynamic zones. Replaced
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
 * `data` with every `{ lid }` of its relations replaced by `{ documentId }`: walked by the
 * model, so a component attribute that happens to be named `lid` is left alone. Values that do
 * not fit their attribute pass unchanged, for validation to refuse with its own message.
 */
export function resolveDataLids (registry: Registry, attributes: Readonly<Record<string, Attribute>>, data: unknown, lookup: LidLookup, path: string): unknown {
  if (!isPlainObject(data)) return data
  let out: Record<string, unknown> | null = null
  for (const [name, value] of Object.entries(data)) {
    const resolved = resolveAttribute(registry, attributes[name], value, lookup, path === '' ? name : `${path}.${name}`)
    if (resolved !== value) (out ??= { ...data })[name] = resolved
  }
  return out ?? data
}

function resolveAttribute (registry: Registry, attribute: Attribute | undefined, value: unknown, lookup: LidLookup, path: string): unknown {
  switch (attribute?.type) {
    case 'relation': return resolveRelation(value, lookup, path)
    case 'component': {
      const component = registry.components.get(attribute.component)
      if (component === undefined) return value
      return attribute.repeatable === true && Array.isArray(value)
        ? value.map((item, i) => resolveDataLids(registry, component.attributes, item, lookup, `${path}.${i}`))
        : resolveDataLids(registry, component.attributes, value, lookup, path)
    }
    case 'dynamiczone':
      if (!Array.isArray(value)) return value
      return value.map((item, i) => {
        const component = isPlainObject(item) && typeof item.__component === 'string' ? registry.components.get(item.__component) : undefined
        return component === undefined ? item : resolveDataLids(registry, component.attributes, item, lookup, `${path}.${i}`)
      })
    default: return value
  }
}

/**
 * A relation's value in any of Strapi's forms (relation-input.ts): its keys are all the
 * library's (`connect`, `set`, `position`, `before`, ...), so every object with a `lid` names a
 * document, wherever it sits.
 */
function resolveRelation (value: unknown, lookup: LidLookup, path: string): unknown {
  if (Array.isArray(value)) return value.map((item, i) => resolveRelation(item, lookup, `${path}.${i}`))
  if (!isPlainObject(value)) return value
  if ('lid' in value) {
    const { lid, ...rest } = value
    if ('documentId' in rest || 'id' in rest) throw new ValidationError(`${path}: name a document by lid, documentId or id, not several`, { path })
    return { ...rest, documentId: lookup(checkLid(lid, `${path}.lid`)) }
  }
  let out: Record<string, unknown> | null = null
  for (const [key, item] of Object.entries(value)) {
    const resolved = resolveRelation(item, lookup, `${path}.${key}`)
    if (resolved !== item) (out ??= { ...value })[key] = resolved
  }
  return out ?? value
}
