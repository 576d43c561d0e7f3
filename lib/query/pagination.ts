import { PaginationError, ValidationError } from '../errors.js'

export interface PaginationLimits {
  defaultLimit: number
  maxLimit: number
  withCount: boolean
}

/**
 * A resolved page request. Both modes end up as an OFFSET/LIMIT window; `mode` only decides the
 * shape of `meta.pagination` in the response.
 */
export type Pagination =
  | { mode: 'page', page: number, pageSize: number, start: number, limit: number, withCount: boolean }
  | { mode: 'offset', page: null, pageSize: null, start: number, limit: number, withCount: boolean }

const PAGE_KEYS = ['page', 'pageSize'] as const
const OFFSET_KEYS = ['start', 'limit'] as const

/** Strapi's `withCount` spellings; anything else is a 400. */
function parseWithCount (value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (value === true || value === 'true' || value === 't' || value === '1' || value === 1) return true
  if (value === false || value === 'false' || value === 'f' || value === '0' || value === 0) return false
  throw new ValidationError('Invalid withCount parameter. Expected "t","1","true","false","0","f"')
}

/** lodash `toNumber` as Strapi uses it: '' is 0, whitespace-trimmed numerics parse, anything else is NaN. */
function toNumber (value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value !== 'string') return Number.NaN
  const trimmed = value.trim()
  return trimmed === '' ? 0 : Number(trimmed)
}

function requireInteger (value: number, converter: 'Start' | 'Limit'): number {
  if (!Number.isInteger(value)) {
    throw new ValidationError(`convert${converter}QueryParams expected a positive integer got ${value}`)
  }
  return value
}

/**
 * Resolves `pagination[...]` with Strapi v5's REST semantics (recorded in the oracle):
 * - no parameters: page 1 of `defaultLimit`, reported in page form;
 * - page mode: `page < 1` is page 1, `pageSize < 1` is 1, `pageSize > maxLimit` is `maxLimit`;
 * - offset mode: `start < 0` is 0, `limit < 1` (including -1) is 1, `limit > maxLimit` is `maxLimit`;
 * - page keys mixed with offset keys: 400 `PaginationError`;
 * - non-numeric values: 400 `ValidationError` with Strapi's converter messages.
 */
export function parsePagination (raw: unknown, limits: PaginationLimits): Pagination {
  const params = (typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>
  const withCount = parseWithCount(params.withCount, limits.withCount)
  const hasPage = PAGE_KEYS.some((k) => params[k] !== undefined)
  const hasOffset = OFFSET_KEYS.some((k) => params[k] !== undefined)
  if (hasPage && hasOffset) throw new PaginationError('Cannot use both page & offset pagination in the same query')

  if (hasOffset) {
    const start = params.start === undefined ? 0 : requireInteger(toNumber(params.start), 'Start')
    const limit = params.limit === undefined ? limits.defaultLimit : requireInteger(toNumber(params.limit), 'Limit')
    const clampedLimit = Math.min(Math.max(limit, 1), limits.maxLimit)
    return { mode: 'offset', page: null, pageSize: null, start: Math.max(start, 0), limit: clampedLimit, withCount }
  }

  const page = params.page === undefined ? 1 : toNumber(params.page)
  const pageSize = params.pageSize === undefined ? limits.defaultLimit : toNumber(params.pageSize)
  // Strapi converts the computed start before the limit, so a bad pageSize reports on start.
  const clampedSize = Math.min(Math.max(pageSize, 1), limits.maxLimit)
  const start = requireInteger((page - 1) * clampedSize, 'Start')
  const size = requireInteger(clampedSize, 'Limit')
  const clampedStart = Math.max(start, 0)
  return { mode: 'page', page: Math.floor(clampedStart / size) + 1, pageSize: size, start: clampedStart, limit: size, withCount }
}

export type PaginationMeta =
  | { page: number, pageSize: number, pageCount?: number, total?: number }
  | { start: number, limit: number, total?: number }

/** `meta.pagination` in the request's mode; `total` and `pageCount` only when counted. */
export function paginationMeta (pagination: Pagination, total: number | null): PaginationMeta {
  if (pagination.mode === 'offset') {
    return total === null
      ? { start: pagination.start, limit: pagination.limit }
      : { start: pagination.start, limit: pagination.limit, total }
  }
  return total === null
    ? { page: pagination.page, pageSize: pagination.pageSize }
    : { page: pagination.page, pageSize: pagination.pageSize, pageCount: Math.ceil(total / pagination.pageSize), total }
}
