import { FILE_UID } from '../model/associations.js'
import type { Component, ContentType, Registry } from '../model/registry.js'
import { typeName } from './names.js'

type Model = ContentType | Component
type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** `{ eq: 1, not: { in: [2] } }` → `{ $eq: 1, $not: { $in: [2] } }`: a scalar filter input. */
function operators (input: unknown): unknown {
  if (!isObject(input)) return input
  const out: Json = {}
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue
    out[`$${key}`] = key === 'not' ? operators(value) : value
  }
  return out
}

/**
 * A `<Zone>FiltersInput` value as REST's dynamic-zone filter: `{ on: { ComponentSharedQuote: {...} },
 * or: [...] }` → `{ on: { 'shared.quote': {...} }, $or: [...] }` (members keyed by GraphQL type name).
 */
function dynamicZoneFilters (uids: readonly string[], registry: Registry, input: unknown, entity: boolean): Json {
  const out: Json = {}
  if (!isObject(input)) return out
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue
    if (key === 'and' || key === 'or') {
      out[`$${key}`] = Array.isArray(value) ? value.map((item) => dynamicZoneFilters(uids, registry, item, entity)) : []
    } else if (key === 'not') {
      out.$not = dynamicZoneFilters(uids, registry, value, entity)
    } else if (key === 'on' && isObject(value)) {
      const on: Json = {}
      for (const uid of uids) {
        const component = registry.components.get(uid)!
        const filter = value[typeName(component)]
        if (filter !== undefined && filter !== null) on[uid] = toStrapiFilters(component, registry, filter, entity) ?? {}
      }
      out.on = on
    }
  }
  return out
}

/**
 * A GraphQL `<Type>FiltersInput` value as the document service's filter object:
 *
 * ```
 * { or: [{ kind: { eq: "news" } }, { not: { views: { lt: 400 } } }], category: { name: { eq: "Travel" } } }
 * → { $or: [{ kind: { $eq: "news" } }, { $not: { views: { $lt: 400 } } }], category: { name: { $eq: "Travel" } } }
 * ```
 *
 * GraphQL has already checked the shape against the schema, so every key is an attribute of the
 * model (translated through relations and components), `<relation>_count` or `and`/`or`/`not`.
 * In the entity shape `id` is the documentId.
 */
export function toStrapiFilters (model: Model, registry: Registry, input: unknown, entity: boolean): Json | undefined {
  if (!isObject(input)) return undefined
  const out: Json = {}
  const counts: Array<[string, unknown]> = []
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue
    if (key === 'and' || key === 'or') {
      out[`$${key}`] = Array.isArray(value) ? value.map((item) => toStrapiFilters(model, registry, item, entity) ?? {}) : []
    } else if (key === 'not') {
      out.$not = toStrapiFilters(model, registry, value, entity) ?? {}
    } else if (model.modelType === 'contentType' && key === 'id' && entity) {
      out.documentId = operators(value)
    } else {
      const association = model.associations.get(key)
      const counted = association === undefined && key.endsWith('_count') ? model.associations.get(key.slice(0, -'_count'.length)) : undefined
      if (counted?.kind === 'relation') {
        counts.push([counted.name, operators(value)])
        continue
      }
      if (association === undefined) {
        out[key] = operators(value)
        continue
      }
      if (association.kind === 'dynamiczone') {
        out[key] = dynamicZoneFilters(association.components, registry, value, entity)
        continue
      }
      const target = association.kind === 'component'
        ? registry.components.get(association.component)
        : association.kind === 'relation' ? registry.get(association.target) : association.kind === 'media' ? registry.get(FILE_UID) : undefined
      out[key] = target === undefined ? value : toStrapiFilters(target, registry, value, entity) ?? {}
    }
  }
  // `articles_count: { gt: 3 }` is REST's `articles: { $count: { $gt: 3 } }`, beside any filter on `articles`.
  for (const [name, condition] of counts) out[name] = { ...(isObject(out[name]) ? out[name] : {}), $count: condition }
  return out
}
