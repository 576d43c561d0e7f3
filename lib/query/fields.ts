import { ValidationError } from '../errors.js'
import type { Component, ContentType, Field } from '../model/registry.js'

/** Splits Strapi's comma lists (`fields=title,slug`), dropping empty segments. */
export function splitList (value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '')
}

/**
 * Attributes Strapi adds to every content type (the admin users who created and last updated a
 * document) and never exposes to the content API. This library has no admin users; naming them
 * answers exactly as Strapi does, as a known but inaccessible attribute.
 */
export const ADMIN_ATTRIBUTES = new Set(['createdBy', 'updatedBy'])

/** True for a name the model has, even if a request may not use it here. */
export function isKnownAttribute (model: ContentType | Component, key: string): boolean {
  return Object.hasOwn(model.attributes, key) || model.fields.has(key) || (model.modelType === 'contentType' && ADMIN_ATTRIBUTES.has(key))
}

function invalidKey (model: ContentType | Component, key: string, param: string): ValidationError {
  // Strapi reports `path: null` for a name the model does not have, and the name itself for an
  // attribute that exists but cannot be used here (a relation in `fields`, a private field).
  const known = isKnownAttribute(model, key)
  return ValidationError.invalidKey(key, { key, path: known ? key : null, source: 'query', param })
}

/** Resolves a field a client named in `fields`, `sort` or `filters`: a visible scalar or system field. */
export function resolveField (model: ContentType | Component, name: string, param: string): Field {
  const field = model.fields.get(name)
  if (field === undefined || field.hidden) throw invalidKey(model, name, param)
  return field
}

/**
 * `fields` in all of Strapi's forms: `title`, `title,slug`, `fields[0]=title`, `*`.
 * Returns null for "all default fields". `id` and `documentId` are always selected.
 */
export function parseFields (model: ContentType | Component, raw: unknown, allowed: ReadonlySet<string> | null = null): Field[] | null {
  // A field-level permission narrows the default fields and rejects any other field by name.
  const permitted = (field: Field): boolean => allowed === null || field.system || allowed.has(field.name)
  if (raw === undefined || raw === null || raw === '') return allowed === null ? null : model.defaultFields.filter(permitted)
  let names: string[]
  if (typeof raw === 'string') names = splitList(raw)
  else if (Array.isArray(raw) && raw.every((v) => typeof v === 'string')) names = raw.flatMap(splitList)
  else throw new ValidationError('Invalid fields parameter. Expected a string or an array of strings')
  if (names.length === 0 || names.includes('*')) return allowed === null ? null : model.defaultFields.filter(permitted)

  const selected = new Map<string, Field>()
  for (const always of ['id', 'documentId']) {
    const field = model.fields.get(always)
    if (field !== undefined) selected.set(always, field)
  }
  for (const name of names) {
    const field = resolveField(model, name, 'fields')
    if (!permitted(field)) throw invalidKey(model, name, 'fields')
    selected.set(name, field)
  }
  return [...selected.values()]
}
