import { ValidationError } from '../errors.js'
import type { Component, ContentType, Registry } from '../model/registry.js'

/**
 * Strapi's key checks of a write's `data` (@strapi/utils `validateInput`): `id`/`documentId` at
 * the root, then keys that exist but may not be written, then keys that do not exist. Each throws
 * at the first offending key, before any value is looked at.
 */

/** System keys a client may send and that are ignored: Strapi sets them from the query instead. */
const IGNORED_KEYS = new Set(['publishedAt', 'locale'])
/** System keys nobody may write. */
const READ_ONLY_KEYS = new Set(['createdAt', 'updatedAt'])
/** Keys a component object may carry besides its attributes. */
export const COMPONENT_KEYS = new Set(['id', '__component'])

type Model = ContentType | Component

const hasOwn = (object: object, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key)
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  Object.prototype.toString.call(value) === '[object Object]'
/** The attribute path of a body path: its list indices left out (`blocks.0` is `blocks`). */
const attributePath = (prefix: readonly string[]): string[] => prefix.filter((segment) => !/^\d+$/.test(segment))

function checkRoot (model: Model, data: Record<string, unknown>, prefix: readonly string[]): void {
  if (model.modelType !== 'contentType' || prefix.length > 0) return
  for (const key of ['id', 'documentId']) {
    if (hasOwn(data, key)) throw ValidationError.invalidKey(key, { source: 'body' })
  }
}

/** A key that exists but may not be written: its details carry its own attribute path. */
function checkWritable (model: Model, data: Record<string, unknown>, key: string, prefix: readonly string[]): void {
  const attribute = hasOwn(model.attributes, key) ? model.attributes[key] : undefined
  if ((model.modelType === 'contentType' && READ_ONLY_KEYS.has(key)) || attribute?.writable === false) {
    throw ValidationError.invalidKey(key, { path: [...attributePath(prefix), key].join('.'), source: 'body' })
  }
}

/** A key that does not exist: Strapi names the attribute path of the object holding it, null at the root. */
function checkKnown (model: Model, data: Record<string, unknown>, key: string, prefix: readonly string[]): void {
  if (hasOwn(model.attributes, key)) return
  if (model.modelType === 'contentType' ? IGNORED_KEYS.has(key) : COMPONENT_KEYS.has(key)) return
  const parent = attributePath(prefix)
  throw ValidationError.invalidKey(key, { path: parent.length === 0 ? null : parent.join('.'), source: 'body' })
}

/** The key checks of one object, at `prefix` in the body (`['seo']`, `['blocks', '0']`). */
export function checkKeys (model: Model, data: Record<string, unknown>, prefix: readonly string[]): void {
  checkRoot(model, data, prefix)
  for (const key of Object.keys(data)) checkWritable(model, data, key, prefix)
  for (const key of Object.keys(data)) checkKnown(model, data, key, prefix)
}

type Visit = (model: Model, data: Record<string, unknown>, key: string, prefix: readonly string[]) => void

/**
 * Visits every key of `data` and of the components and dynamic-zone items inside it, depth
 * first in key order, as Strapi's `traverseEntity` does. An item that is not an object, or names
 * no component, is left to the value checks.
 */
function walk (registry: Registry, model: Model, data: Record<string, unknown>, prefix: readonly string[], visit: Visit): void {
  for (const key of Object.keys(data)) {
    visit(model, data, key, prefix)
    const association = model.associations.get(key)
    const value = data[key]
    if (association?.kind === 'component') {
      const component = registry.components.get(association.component)!
      if (association.repeatable && Array.isArray(value)) {
        value.forEach((item, i) => { if (isPlainObject(item)) walk(registry, component, item, [...prefix, key, String(i)], visit) })
      } else if (isPlainObject(value)) {
        walk(registry, component, value, [...prefix, key], visit)
      }
    } else if (association?.kind === 'dynamiczone' && Array.isArray(value)) {
      value.forEach((item, i) => {
        const uid = isPlainObject(item) ? item.__component : undefined
        const component = typeof uid === 'string' ? registry.components.get(uid) : undefined
        if (component !== undefined) walk(registry, component, item as Record<string, unknown>, [...prefix, key, String(i)], visit)
      })
    }
  }
}

/**
 * The key checks of a whole write, before any value is validated, so that a bad key anywhere
 * (`seo.nope`) is answered before a bad value elsewhere (`views: 'abc'`), as in Strapi, which
 * runs each check over the whole body in turn: writable keys everywhere, then known keys.
 *
 * @example
 * checkBodyKeys(registry, article, { views: 'abc', seo: { nope: 1 } })
 * // throws ValidationError 'Invalid key nope at seo', details { key: 'nope', path: 'seo', source: 'body' }
 */
export function checkBodyKeys (registry: Registry, model: ContentType, data: unknown): void {
  if (!isPlainObject(data)) return
  checkRoot(model, data, [])
  walk(registry, model, data, [], checkWritable)
  walk(registry, model, data, [], checkKnown)
}
