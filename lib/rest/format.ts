import { FILE_UID } from '../model/associations.js'
import type { Component, ContentType, Registry } from '../model/registry.js'
import type { PaginationMeta } from '../query/index.js'

/**
 * The response envelope, written as text: `data` arrives from PostgreSQL already rendered as JSON,
 * so wrapping it costs a string concatenation, not a parse and a stringify.
 */
export function listBody (dataJson: string, pagination: PaginationMeta): string {
  return `{"data":${dataJson},"meta":${JSON.stringify({ pagination })}}`
}

export function singleBody (dataJson: string): string {
  return `{"data":${dataJson},"meta":{}}`
}

/** The request header that asks for Strapi v4's response shape (spec, Versioning 3). */
export const V4_HEADER = 'strapi-response-format'

export function wantsV4 (headers: Record<string, string | string[] | undefined>): boolean {
  return headers[V4_HEADER] === 'v4'
}

const TOP_LEVEL = new Set(['id', 'documentId'])
type Model = ContentType | Component
type Json = Record<string, unknown>

/** Populated attributes in v4 shape: relations and media wrapped in `{ data }`, components flat. */
function v4Attributes (model: Model, registry: Registry, document: Json, into: Json): void {
  for (const [key, value] of Object.entries(document)) {
    if (key === 'localizations' && model.modelType === 'contentType' && Array.isArray(value)) {
      into[key] = { data: value.map((v) => toV4(model, registry, v as Json)) }
      continue
    }
    const association = model.associations.get(key)
    if (association === undefined || (value === null && association.kind !== 'relation' && association.kind !== 'media')) {
      into[key] = value
      continue
    }
    switch (association.kind) {
      case 'relation':
      case 'media': {
        const target = registry.get(association.kind === 'media' ? FILE_UID : association.target)!
        if (value !== null && !Array.isArray(value) && 'count' in (value as Json) && Object.keys(value as Json).length === 1) {
          into[key] = value
        } else {
          into[key] = { data: Array.isArray(value) ? value.map((v) => toV4(target, registry, v as Json)) : value === null ? null : toV4(target, registry, value as Json) }
        }
        break
      }
      case 'component': {
        const target = registry.components.get(association.component)!
        into[key] = Array.isArray(value) ? value.map((v) => flat(target, registry, v as Json)) : flat(target, registry, value as Json)
        break
      }
      case 'dynamiczone':
        into[key] = (value as Json[]).map((v) => {
          const target = registry.components.get(v.__component as string)
          return target === undefined ? v : flat(target, registry, v)
        })
        break
    }
  }
}

/** A component keeps its flat shape; only relations inside it change. */
function flat (component: Component, registry: Registry, value: Json): Json {
  const out: Json = {}
  v4Attributes(component, registry, value, out)
  return out
}

/** v4 shape of one document: `{ id, documentId, attributes: { ...everything else } }`. */
export function toV4 (model: Model, registry: Registry, document: Json): Json {
  const out: Json = {}
  const rest: Json = {}
  for (const [key, value] of Object.entries(document)) {
    if (TOP_LEVEL.has(key)) out[key] = value
    else rest[key] = value
  }
  const attributes: Json = {}
  v4Attributes(model, registry, rest, attributes)
  out.attributes = attributes
  return out
}

/** Rewrites an already rendered body (`{ data, meta }`) into Strapi v4's shape. */
export function v4Body (body: string, model: ContentType, registry: Registry): string {
  const parsed = JSON.parse(body) as { data: Json | Json[] | null, meta: unknown }
  const convert = (d: Json): Json => toV4(model, registry, d)
  const data = Array.isArray(parsed.data) ? parsed.data.map(convert) : parsed.data === null ? null : convert(parsed.data)
  return JSON.stringify({ data, meta: parsed.meta })
}
