import { ValidationError } from '../errors.js'
import { FILE_UID, type ComponentAssociation, type MediaAssociation, type RelationAssociation } from '../model/associations.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import { resolveField, splitList } from './fields.js'
import { QS_DEPTH } from './querystring.js'
import type { FilterNode, ReadLimits } from './filters.js'

/** One step from a model to a related one: a to-one (or first-of-many) relation, media or component. */
export interface SortHop {
  association: RelationAssociation | MediaAssociation | ComponentAssociation
  target: ContentType | Component
  /** The uid of the model declaring the association. */
  owner: string
  /** The related rows the caller may see (their type's row-level conditions), or null for all. */
  visible: FilterNode | null
}

export interface SortTerm {
  /** Relations walked before the field (`sort=category.name`); empty for the model's own fields. */
  path: SortHop[]
  field: Field
  direction: 'asc' | 'desc'
  /**
   * Our extension, `sort=articles:count:desc`: order by the number of rows the last hop of `path`
   * reaches (those the caller may see, in the request's status); `field` is then the target's id.
   */
  count?: true
}

type Model = ContentType | Component

const INVALID_SORT = 'Invalid sort parameter. Expected a string, an array of strings, a sort object or an array of sort objects'
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

function direction (value: unknown): 'asc' | 'desc' {
  if (typeof value !== 'string') throw new ValidationError(INVALID_SORT)
  const lower = value.toLowerCase()
  if (lower !== 'asc' && lower !== 'desc') throw new ValidationError('Invalid order. order can only be one of asc|desc|ASC|DESC')
  return lower
}

function invalidKey (key: string, path: string, param = 'sort'): ValidationError {
  return ValidationError.invalidKey(key, { key, path, source: 'query', param })
}

/** What a sort may name: the registry, the caller's reach through relations, the root's attributes. */
interface Reach {
  registry: Registry | null
  visibility: ReadLimits | null
  /** A field-level permission on the root model (all when null). */
  allowed: ReadonlySet<string> | null
  /** The parameter named in errors' details (`sort` unless said). */
  param?: string
}

/**
 * Resolves `category.name` (or `['category', 'name']`) to the hops and the final field. Every
 * name must be visible to the caller where it is used: sorting by an attribute reveals its order.
 */
function resolvePath (model: Model, names: string[], reach: Reach, counted = false): { path: SortHop[], field: Field } {
  const { registry, visibility } = reach
  if (names.length > QS_DEPTH + 1) throw new ValidationError(`Invalid sort: deeper than ${QS_DEPTH} levels`)
  const path: SortHop[] = []
  let current = model
  let allowed = reach.allowed
  for (const [i, name] of names.entries()) {
    if (FORBIDDEN_KEYS.has(name)) throw new ValidationError('Invalid sort query')
    const where = names.slice(0, i + 1).join('.')
    if (allowed !== null && Object.hasOwn(current.attributes, name) && !allowed.has(name)) throw invalidKey(name, where, reach.param)
    const last = i === names.length - 1
    if (last && !counted) return { path, field: resolveField(current, name, reach.param ?? 'sort') }
    const association = current.associations.get(name)
    // Only relations and media are counted: a component's rows are the document's own content.
    if (last && association?.kind === 'component') throw invalidKey(name, where, reach.param)
    if (association === undefined || association.kind === 'dynamiczone' || registry === null ||
      (current.attributes[name] as { private?: boolean }).private === true) {
      throw invalidKey(name, where, reach.param)
    }
    const target = association.kind === 'component'
      ? registry.components.get(association.component)
      : registry.get(association.kind === 'media' ? FILE_UID : association.target)
    if (target === undefined) throw invalidKey(name, where, reach.param)
    const related = target.modelType === 'contentType' ? target : null
    if (related !== null && visibility !== null && !visibility.canRead(related.uid)) throw invalidKey(name, where, reach.param)
    path.push({ association, target, owner: current.uid, visible: related === null || visibility === null ? null : visibility.rows(related) })
    if (last) return { path, field: target.fields.get('id')! }
    current = target
    allowed = related === null || visibility === null ? null : visibility.fields(related.uid)
  }
  throw new ValidationError('Field cannot be empty')
}

/**
 * A dotted path (`category.name`) to a field, checked as a sort path is: every hop readable by the
 * caller, private attributes and dynamic zones refused. `groupBy` (aggregate.ts) reads through it.
 */
export function resolveReadPath (
  model: Model, names: string[], registry: Registry | null, visibility: ReadLimits | null, allowed: ReadonlySet<string> | null
): { path: SortHop[], field: Field } {
  return resolvePath(model, names, { registry, visibility, allowed, param: 'groupBy' })
}

function termFromString (model: Model, item: string, reach: Reach): SortTerm {
  const [name, order = 'asc', ...rest] = item.split(':')
  if (name.trim() === '') throw new ValidationError('Field cannot be empty')
  // `articles:count` and `articles:count:desc`: by the number of related documents.
  if (order.trim() === 'count' && rest.length <= 1) {
    return { ...resolvePath(model, name.trim().split('.'), reach, true), direction: direction((rest[0] ?? 'asc').trim()), count: true }
  }
  if (rest.length > 0) throw new ValidationError('Invalid order. order can only be one of asc|desc|ASC|DESC')
  return { ...resolvePath(model, name.trim().split('.'), reach), direction: direction(order.trim()) }
}

/** `{ title: 'desc' }` and nested `{ category: { name: 'asc' } }`. */
function termsFromObject (model: Model, item: Record<string, unknown>, reach: Reach, prefix: string[] = []): SortTerm[] {
  return Object.entries(item).flatMap(([name, order]) => {
    if (FORBIDDEN_KEYS.has(name)) throw new ValidationError('Invalid sort query')
    // `sort[articles][$count]=desc`: by the number of related documents.
    if (name === '$count' && prefix.length > 0) return [{ ...resolvePath(model, prefix, reach, true), direction: direction(order), count: true as const }]
    const names = [...prefix, name]
    if (typeof order === 'object' && order !== null && !Array.isArray(order)) {
      return termsFromObject(model, order as Record<string, unknown>, reach, names)
    }
    return [{ ...resolvePath(model, names, reach), direction: direction(order) }]
  })
}

/**
 * `sort` in all of Strapi's forms: `title`, `title:desc`, `kind,title:desc`, `sort[0]=a&sort[1]=b:desc`,
 * `sort[title]=desc`, `sort[0][title]=desc`, and through relations `category.name:asc` or
 * `sort[category][name]=asc`, and our extension by a relation's count, `articles:count:desc` or
 * `sort[articles][$count]=desc`. The direction is case-insensitive; unknown, private and password
 * fields, and dynamic zones, are a 400.
 */
export function parseSort (
  model: Model, raw: unknown, registry: Registry | null = null, visibility: ReadLimits | null = null, allowed: ReadonlySet<string> | null = null
): SortTerm[] {
  if (raw === undefined || raw === null || raw === '') return []
  const reach: Reach = { registry, visibility, allowed }
  const items = Array.isArray(raw) ? raw : [raw]
  const terms: SortTerm[] = []
  for (const item of items) {
    if (typeof item === 'string') for (const part of splitList(item)) terms.push(termFromString(model, part, reach))
    else if (typeof item === 'object' && item !== null && !Array.isArray(item)) terms.push(...termsFromObject(model, item as Record<string, unknown>, reach))
    else throw new ValidationError(INVALID_SORT)
  }
  return terms
}
