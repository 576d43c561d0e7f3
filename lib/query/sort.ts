import { ValidationError } from '../errors.js'
import { FILE_UID, type ComponentAssociation, type MediaAssociation, type RelationAssociation } from '../model/associations.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import { resolveField, splitList } from './fields.js'

/** One step from a model to a related one: a to-one (or first-of-many) relation, media or component. */
export interface SortHop {
  association: RelationAssociation | MediaAssociation | ComponentAssociation
  target: ContentType | Component
  /** The uid of the model declaring the association. */
  owner: string
}

export interface SortTerm {
  /** Relations walked before the field (`sort=category.name`); empty for the model's own fields. */
  path: SortHop[]
  field: Field
  direction: 'asc' | 'desc'
}

type Model = ContentType | Component
type CanRead = ((uid: string) => boolean) | null

const INVALID_SORT = 'Invalid sort parameter. Expected a string, an array of strings, a sort object or an array of sort objects'
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

function direction (value: unknown): 'asc' | 'desc' {
  if (typeof value !== 'string') throw new ValidationError(INVALID_SORT)
  const lower = value.toLowerCase()
  if (lower !== 'asc' && lower !== 'desc') throw new ValidationError('Invalid order. order can only be one of asc|desc|ASC|DESC')
  return lower
}

function invalidKey (key: string, path: string): ValidationError {
  return ValidationError.invalidKey(key, { key, path, source: 'query', param: 'sort' })
}

/** Resolves `category.name` (or `['category', 'name']`) to the hops and the final field. */
function resolvePath (model: Model, names: string[], registry: Registry | null, canRead: CanRead): { path: SortHop[], field: Field } {
  const path: SortHop[] = []
  let current = model
  for (const [i, name] of names.entries()) {
    if (FORBIDDEN_KEYS.has(name)) throw new ValidationError('Invalid sort query')
    if (i === names.length - 1) return { path, field: resolveField(current, name, 'sort') }
    const association = current.associations.get(name)
    const where = names.slice(0, i + 1).join('.')
    if (association === undefined || association.kind === 'dynamiczone' || registry === null ||
      (current.attributes[name] as { private?: boolean }).private === true) {
      throw invalidKey(name, where)
    }
    const target = association.kind === 'component'
      ? registry.components.get(association.component)
      : registry.get(association.kind === 'media' ? FILE_UID : association.target)
    if (target === undefined || (association.kind !== 'component' && canRead !== null && !canRead(target.uid))) throw invalidKey(name, where)
    path.push({ association, target, owner: current.uid })
    current = target
  }
  throw new ValidationError('Field cannot be empty')
}

function termFromString (model: Model, item: string, registry: Registry | null, canRead: CanRead): SortTerm {
  const [name, order = 'asc', ...rest] = item.split(':')
  if (rest.length > 0) throw new ValidationError('Invalid order. order can only be one of asc|desc|ASC|DESC')
  if (name.trim() === '') throw new ValidationError('Field cannot be empty')
  return { ...resolvePath(model, name.trim().split('.'), registry, canRead), direction: direction(order.trim()) }
}

/** `{ title: 'desc' }` and nested `{ category: { name: 'asc' } }`. */
function termsFromObject (model: Model, item: Record<string, unknown>, registry: Registry | null, canRead: CanRead, prefix: string[] = []): SortTerm[] {
  return Object.entries(item).flatMap(([name, order]) => {
    if (FORBIDDEN_KEYS.has(name)) throw new ValidationError('Invalid sort query')
    const names = [...prefix, name]
    if (typeof order === 'object' && order !== null && !Array.isArray(order)) {
      return termsFromObject(model, order as Record<string, unknown>, registry, canRead, names)
    }
    return [{ ...resolvePath(model, names, registry, canRead), direction: direction(order) }]
  })
}

/**
 * `sort` in all of Strapi's forms: `title`, `title:desc`, `kind,title:desc`, `sort[0]=a&sort[1]=b:desc`,
 * `sort[title]=desc`, `sort[0][title]=desc`, and through relations `category.name:asc` or
 * `sort[category][name]=asc`. The direction is case-insensitive; unknown, private and password
 * fields, and dynamic zones, are a 400.
 */
export function parseSort (
  model: Model, raw: unknown, registry: Registry | null = null, canRead: CanRead = null, allowed: ReadonlySet<string> | null = null
): SortTerm[] {
  if (raw === undefined || raw === null || raw === '') return []
  const items = Array.isArray(raw) ? raw : [raw]
  const terms: SortTerm[] = []
  for (const item of items) {
    if (typeof item === 'string') for (const part of splitList(item)) terms.push(termFromString(model, part, registry, canRead))
    else if (typeof item === 'object' && item !== null && !Array.isArray(item)) terms.push(...termsFromObject(model, item as Record<string, unknown>, registry, canRead))
    else throw new ValidationError(INVALID_SORT)
  }
  // A field-level permission: sorting by an attribute would reveal its order, so it must be listed.
  for (const term of terms) {
    const first = term.path[0]?.association.name ?? term.field.name
    if (allowed !== null && Object.hasOwn(model.attributes, first) && !allowed.has(first)) throw invalidKey(first, first)
  }
  return terms
}
