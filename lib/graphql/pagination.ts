import { PaginationError } from '../errors.js'

export interface PaginationArg {
  page?: number | null
  pageSize?: number | null
  start?: number | null
  limit?: number | null
}

/**
 * A list's window as GraphQL asks for it (Strapi's GraphQL semantics, not REST's): page mode by
 * default with `defaultLimit` items; `limit: -1` (any negative limit) means every item. The SQL
 * never reads more than `amountLimit + 1` rows, so a list over the limit is detected without
 * reading it whole.
 */
export interface Window {
  mode: 'page' | 'offset' | 'all'
  page: number
  pageSize: number
  start: number
  /** The rows the statement reads. */
  sqlLimit: number
}

const given = (v: number | null | undefined): v is number => v !== undefined && v !== null

export function resolveWindow (arg: PaginationArg | null | undefined, defaultLimit: number, amountLimit: number): Window {
  const p = arg ?? {}
  const hasPage = given(p.page) || given(p.pageSize)
  const hasOffset = given(p.start) || given(p.limit)
  if (hasPage && hasOffset) throw new PaginationError('Cannot use both page & offset pagination in the same query')
  const cap = amountLimit + 1
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
}

/** `pageInfo` / `meta.pagination`: the window asked for, whatever the amount limit. */
export function pageInfo (window: Window, total: number): PageInfo {
  if (window.mode === 'all') {
    const pageSize = Math.max(total - window.start, 0)
    return { page: 1, pageSize, pageCount: pageSize > 0 ? 1 : 0, total }
  }
  return { page: window.page, pageSize: window.pageSize, pageCount: Math.ceil(total / window.pageSize), total }
}
