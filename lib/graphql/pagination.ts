import { PaginationError } from '../errors.js'
import type { CursorLinks } from '../query/index.js'

export interface PaginationArg {
  page?: number | null
  pageSize?: number | null
  start?: number | null
  limit?: number | null
  /** Cursor mode (ours; Strapi has none): `pageInfo.next` of the page before, or `''` for the first page. */
  after?: string | null
  /** Cursor mode, backwards: `pageInfo.previous` of the page after, or `''` for the last page. */
  before?: string | null
}

/**
 * A list's window as GraphQL asks for it (Strapi's GraphQL semantics, not REST's): page mode by
 * default with `defaultLimit` items; `limit: -1` (any negative limit) means every item. The SQL
 * never reads more than `amountLimit + 1` rows, so a list over the limit is detected without
 * reading it whole.
 */
export interface Window {
  mode: 'page' | 'offset' | 'all' | 'cursor'
  page: number
  pageSize: number
  start: number
  /** The rows the statement reads. */
  sqlLimit: number
  /** Cursor mode: REST's `pagination[after]` or `[before]`, checked by the query layer. */
  cursor?: { after: string } | { before: string }
}

const given = (v: number | null | undefined): v is number => v !== undefined && v !== null

export function resolveWindow (arg: PaginationArg | null | undefined, defaultLimit: number, amountLimit: number): Window {
  const p = arg ?? {}
  const hasPage = given(p.page) || given(p.pageSize)
  const hasOffset = given(p.start) || given(p.limit)
  const cap = amountLimit + 1
  if (typeof p.after === 'string' || typeof p.before === 'string') {
    if (typeof p.after === 'string' && typeof p.before === 'string') throw new PaginationError('Cannot use both after & before in the same query')
    if (given(p.page) || given(p.start)) throw new PaginationError('Cannot use cursor & page or offset pagination in the same query')
    if (given(p.pageSize) && given(p.limit)) throw new PaginationError('Cannot use both pageSize & limit in the same query')
    const pageSize = Math.max(p.pageSize ?? p.limit ?? defaultLimit, 1)
    const cursor = typeof p.after === 'string' ? { after: p.after } : { before: p.before as string }
    return { mode: 'cursor', page: 0, pageSize, start: 0, sqlLimit: Math.min(pageSize, cap), cursor }
  }
  if (hasPage && hasOffset) throw new PaginationError('Cannot use both page & offset pagination in the same query')
  if (hasOffset) {
    const start = Math.max(p.start ?? 0, 0)
    const limit = p.limit ?? defaultLimit
    if (limit < 0) return { mode: 'all', page: 1, pageSize: 0, start, sqlLimit: cap }
    const size = Math.max(limit, 1)
    return { mode: 'offset', page: Math.floor(start / size) + 1, pageSize: size, start, sqlLimit: Math.min(size, cap) }
  }
  const page = Math.max(p.page ?? 1, 1)
  const pageSize = Math.max(p.pageSize ?? defaultLimit, 1)
  return { mode: 'page', page, pageSize, start: (page - 1) * pageSize, sqlLimit: Math.min(pageSize, cap) }
}

export interface PageInfo {
  page: number
  pageSize: number
  pageCount: number
  total: number
  /** Cursor mode: the cursors of the pages around this one (null at an end, and in other modes). */
  next: string | null
  previous: string | null
}

/**
 * `pageInfo` / `meta.pagination`: the window asked for, whatever the amount limit. A cursor page
 * has no page number: `page` is 0, and `pageCount` and `total` are counted only when selected.
 */
export function pageInfo (window: Window, total: number, links: CursorLinks | null = null): PageInfo {
  if (window.mode === 'cursor') {
    return { page: 0, pageSize: window.pageSize, pageCount: Math.ceil(total / window.pageSize), total, next: links?.next ?? null, previous: links?.previous ?? null }
  }
  return { ...offsetPageInfo(window, total), next: null, previous: null }
}

function offsetPageInfo (window: Window, total: number): Omit<PageInfo, 'next' | 'previous'> {
  if (window.mode === 'all') {
    const pageSize = Math.max(total - window.start, 0)
    return { page: 1, pageSize, pageCount: pageSize > 0 ? 1 : 0, total }
  }
  return { page: window.page, pageSize: window.pageSize, pageCount: Math.ceil(total / window.pageSize), total }
}
