import { PaginationError, ValidationError } from '../errors.js'
import type { CursorCodec, CursorPosition } from './cursor.js'

export interface PaginationLimits {
  defaultLimit: number
  maxLimit: number
  withCount: boolean
}

/**
 * A resolved page request. Page and offset modes end up as an OFFSET/LIMIT window; `mode` only
 * decides the shape of `meta.pagination` in the response. Cursor mode is a keyset window: the
 * `limit` rows after (or before) `cursor` in the sort's order, or the first (last) ones when
 * `cursor` is null; its `start` is always 0.
 */
export type Pagination =
  | { mode: 'page', page: number, pageSize: number, start: number, limit: number, withCount: boolean }
  | { mode: 'offset', page: null, pageSize: null, start: number, limit: number, withCount: boolean }
  | CursorPagination

export interface CursorPagination {
  mode: 'cursor'
  page: null
  pageSize: number
  start: 0
  limit: number
  withCount: boolean
  /** `after`: the rows following the cursor, in the sort's order; `before`: those preceding it. */
  direction: 'after' | 'before'
  cursor: CursorPosition | null
  /** The sort the cursors of this walk are bound to (cursor.ts). */
  signature: string
}

/** What cursor pagination needs of the caller: the codec, and the signature of the request's sort (computed only for a cursor request). */
export interface CursorContext {
  codec: CursorCodec
  signature: () => string
}

const PAGE_KEYS = ['page', 'pageSize'] as const
const OFFSET_KEYS = ['start', 'limit'] as const
const CURSOR_KEYS = ['after', 'before'] as const

/** Strapi's `withCount` spellings; anything else is a 400. */
function parseWithCount (value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (value === true || value === 'true' || value === 't' || value === '1' || value === 1) return true
  if (value === false || value === 'false' || value === 'f' || value === '0' || value === 0) return false
  throw new ValidationError('Invalid withCount parameter. Expected "t","1","true","false","0","f"')
}

/**
 * JavaScript's ToNumber, which Strapi's `Math.max(value, ...)` and `page - 1` apply to the raw
 * strings: `' 3 '` is 3, `''` is 0, `'0x10'` is 16, `['3']` (a repeated key) is 3, anything
 * else NaN. Objects are NaN without being converted (a null-prototype object would throw).
 */
function toNumber (value: unknown): number {
  if (typeof value === 'number' || typeof value === 'string') return Number(value)
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return Number(value.join(','))
  return Number.NaN
}

/**
 * Strapi's `withMaxLimit`: a size below `maxLimit` stays, anything else (too large, infinite,
 * or not a number at all, since `NaN < max` is false) is `maxLimit`.
 */
const capped = (size: number, max: number): number => size < max ? size : max

function requireInteger (value: number, converter: 'Start' | 'Limit'): number {
  if (!Number.isInteger(value)) {
    throw new ValidationError(`convert${converter}QueryParams expected a positive integer got ${value}`)
  }
  return value
}

/**
 * Resolves `pagination[...]` with Strapi v5's REST semantics (@strapi/utils `withDefaultPagination`,
 * then the document service's `convertStartQueryParams`/`convertLimitQueryParams`):
 * - no parameters: page 1 of `defaultLimit`, reported in page form;
 * - page mode: `start = (page - 1) * size`; `page < 1` is page 1, `pageSize < 1` is 1;
 * - offset mode: `start < 0` is 0, `limit < 1` (including -1: query strings are text, and only
 *   the number -1 means "no limit") is 1;
 * - a size (`pageSize`, `limit`) over `maxLimit`, infinite or not a number (`abc`) is `maxLimit`;
 * - a start that is not an integer (`page=abc`, `page=1.5`, `start=abc`), or a size that is a
 *   fraction (`pageSize=2.5`): 400 `ValidationError` with Strapi's converter message, the start
 *   checked first;
 * - page keys mixed with offset keys: 400 `PaginationError`;
 * - `after` or `before` (ours, Strapi has none): cursor mode (`parseCursorPagination`).
 */
export function parsePagination (raw: unknown, limits: PaginationLimits, cursors: CursorContext | null = null): Pagination {
  const params = (typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>
  if (CURSOR_KEYS.some((k) => params[k] !== undefined)) return parseCursorPagination(params, limits, cursors)
  const withCount = parseWithCount(params.withCount, limits.withCount)
  const hasPage = PAGE_KEYS.some((k) => params[k] !== undefined)
  const hasOffset = OFFSET_KEYS.some((k) => params[k] !== undefined)
  if (hasPage && hasOffset) throw new PaginationError('Cannot use both page & offset pagination in the same query')

  if (hasOffset) {
    const start = requireInteger(Math.max(params.start === undefined ? 0 : toNumber(params.start), 0), 'Start')
    const limit = requireInteger(capped(Math.max(params.limit === undefined ? limits.defaultLimit : toNumber(params.limit), 1), limits.maxLimit), 'Limit')
    return { mode: 'offset', page: null, pageSize: null, start, limit, withCount }
  }

  const page = params.page === undefined ? 1 : toNumber(params.page)
  const size = capped(Math.max(params.pageSize === undefined ? limits.defaultLimit : toNumber(params.pageSize), 1), limits.maxLimit)
  const start = requireInteger(Math.max((page - 1) * size, 0), 'Start')
  requireInteger(size, 'Limit')
  return { mode: 'page', page: Math.floor(start / size) + 1, pageSize: size, start, limit: size, withCount }
}

const MIXED_ROOT = 'Invalid pagination attributes. The page parameters are incorrect and must be in the pagination object'

function positivePage (name: 'page' | 'pageSize', raw: unknown): void {
  const value = toNumber(raw)
  if (!Number.isInteger(value) || value <= 0) {
    throw new PaginationError(`Invalid '${name}' parameter. Expected an integer > 0, received: ${String(raw)}`)
  }
}

/**
 * `page`, `pageSize`, `start` and `limit` OUTSIDE `pagination[...]` on a REST read: Strapi's
 * controller passes them to its document service beside the window it computed from
 * `pagination`, which converts them (convert-query-params.ts) and then does not use them.
 * - a list always has that window (`start`, `limit`), so a root `page` or `pageSize` mixes the
 *   two modes: 400 `PaginationError` `Invalid pagination attributes...`; a root `start` or
 *   `limit` is replaced by the window, ignored;
 * - one document: page keys with offset keys are that `PaginationError` too; a `page` or
 *   `pageSize` that is not an integer > 0 is a `PaginationError`, a `start` or `limit` that is
 *   not an integer (limit: or -1) a `ValidationError`, with the converters' messages; valid ones
 *   are ignored.
 *
 * @example
 * checkRootPagination({ page: '2' }, true) // throws PaginationError: Invalid pagination attributes...
 * checkRootPagination({ start: '5' }, true) // ignored
 */
export function checkRootPagination (raw: Record<string, unknown>, list: boolean): void {
  const { page, pageSize, start, limit } = raw
  const hasPage = page !== undefined || pageSize !== undefined
  if (list || (hasPage && (start !== undefined || limit !== undefined))) {
    if (hasPage) throw new PaginationError(MIXED_ROOT)
    return
  }
  if (page !== undefined) positivePage('page', page)
  if (pageSize !== undefined) positivePage('pageSize', pageSize)
  if (start !== undefined) {
    const value = toNumber(start)
    if (!Number.isInteger(value) || value < 0) throw new ValidationError(`convertStartQueryParams expected a positive integer got ${value}`)
  }
  if (limit !== undefined) {
    const value = toNumber(limit)
    if (!Number.isInteger(value) || (value < 0 && value !== -1)) throw new ValidationError(`convertLimitQueryParams expected a positive integer got ${value}`)
  }
}

/**
 * Cursor mode: `after=<cursor>` (or `before=<cursor>`) with `pageSize` or `limit`, clamped as in
 * page mode; an empty `after` starts a walk at the first row, an empty `before` at the last. No
 * total unless `withCount=true`: counting is what a keyset walk avoids. A cursor is checked
 * against the codec's signature and the request's sort: malformed, forged or made for another
 * sort is a 400 `ValidationError`; mixing it with page or offset keys a 400 `PaginationError`.
 */
function parseCursorPagination (params: Record<string, unknown>, limits: PaginationLimits, cursors: CursorContext | null): CursorPagination {
  if (cursors === null) throw new ValidationError('Cursor pagination is not available for this read', { key: 'pagination', source: 'query', param: 'pagination' })
  if (params.after !== undefined && params.before !== undefined) throw new PaginationError('Cannot use both after & before in the same query')
  if (params.page !== undefined || params.start !== undefined) throw new PaginationError('Cannot use cursor & page or offset pagination in the same query')
  if (params.pageSize !== undefined && params.limit !== undefined) throw new PaginationError('Cannot use both pageSize & limit in the same query')
  const direction = params.after !== undefined ? 'after' : 'before'
  const text = params[direction]
  if (typeof text !== 'string') throw new ValidationError('Invalid pagination cursor', { key: 'pagination', source: 'query', param: 'pagination' })
  const size = params.pageSize ?? params.limit
  // Sized as in page mode: a size that is not a number is maxLimit, a fraction a 400.
  const pageSize = requireInteger(capped(Math.max(size === undefined ? limits.defaultLimit : toNumber(size), 1), limits.maxLimit), 'Limit')
  const signature = cursors.signature()
  const cursor = text === '' ? null : cursors.codec.decode(text, signature)
  return { mode: 'cursor', page: null, pageSize, start: 0, limit: pageSize, withCount: parseWithCount(params.withCount, false), direction, cursor, signature }
}

/**
 * What a cursor page's statement tells of its edges: the keys of its first and last rows in the
 * sort's order (`[<key text>..., id]`, null for an empty page), whether rows follow it in the
 * walk's direction (`more`), and whether rows lie at or before its cursor (`near`; null without one).
 */
export interface PageEdges {
  first: Array<string | number | null> | null
  last: Array<string | number | null> | null
  more: boolean
  near: boolean | null
}

/**
 * The cursors of the pages around a cursor page: walking `after`, `next` starts after its last
 * row when more follow and `previous` ends before its first row when rows precede it; walking
 * `before`, the other way round. An empty page has neither: it has no row to start from.
 */
export function cursorLinks (pagination: CursorPagination, edges: PageEdges, codec: CursorCodec): CursorLinks {
  const at = (keys: Array<string | number | null> | null): string | null => keys === null
    ? null
    : codec.encode(pagination.signature, { values: keys.slice(0, -1) as Array<string | null>, id: keys[keys.length - 1] as number })
  const forward = pagination.direction === 'after'
  const ahead = edges.more
  const behind = edges.near === true
  return {
    next: (forward ? ahead : behind) ? at(edges.last) : null,
    previous: (forward ? behind : ahead) ? at(edges.first) : null
  }
}

/** A cursor page's neighbours: the cursor of the page after it and of the page before it, null at an end. */
export interface CursorLinks {
  next: string | null
  previous: string | null
}

export type PaginationMeta =
  | { page: number, pageSize: number, pageCount?: number, total?: number }
  | { start: number, limit: number, total?: number }
  | { pageSize: number, next: string | null, previous: string | null, total?: number }

/** `meta.pagination` in the request's mode; `total` and `pageCount` only when counted. */
export function paginationMeta (pagination: Pagination, total: number | null, links: CursorLinks | null = null): PaginationMeta {
  if (pagination.mode === 'cursor') {
    const meta = { pageSize: pagination.pageSize, next: links?.next ?? null, previous: links?.previous ?? null }
    return total === null ? meta : { ...meta, total }
  }
  if (pagination.mode === 'offset') {
    return total === null
      ? { start: pagination.start, limit: pagination.limit }
      : { start: pagination.start, limit: pagination.limit, total }
  }
  return total === null
    ? { page: pagination.page, pageSize: pagination.pageSize }
    : { page: pagination.page, pageSize: pagination.pageSize, pageCount: Math.ceil(total / pagination.pageSize), total }
}
