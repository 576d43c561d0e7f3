import type { Document } from '../documents/service.js'
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

/** v4 shape of one document: `{ id, documentId, attributes: { ...everything else } }`. */
export function toV4 (document: Document): Record<string, unknown> {
  const attributes: Record<string, unknown> = {}
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(document)) {
    if (TOP_LEVEL.has(key)) out[key] = value
    else attributes[key] = value
  }
  out.attributes = attributes
  return out
}

/** Rewrites an already rendered body (`{ data, meta }`) into the v4 shape. */
export function v4Body (body: string): string {
  const parsed = JSON.parse(body) as { data: Document | Document[] | null, meta: unknown }
  const data = Array.isArray(parsed.data) ? parsed.data.map(toV4) : parsed.data === null ? null : toV4(parsed.data)
  return JSON.stringify({ data, meta: parsed.meta })
}
