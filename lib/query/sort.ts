import { ValidationError } from '../errors.js'
import type { Component, ContentType, Field } from '../model/registry.js'
import { resolveField, splitList } from './fields.js'

export interface SortTerm {
  field: Field
  direction: 'asc' | 'desc'
}

const INVALID_SORT = 'Invalid sort parameter. Expected a string, an array of strings, a sort object or an array of sort objects'

function direction (value: unknown): 'asc' | 'desc' {
  if (typeof value !== 'string') throw new ValidationError(INVALID_SORT)
  const lower = value.toLowerCase()
  if (lower !== 'asc' && lower !== 'desc') throw new ValidationError('Invalid order. order can only be one of asc|desc|ASC|DESC')
  return lower
}

function termFromString (model: ContentType | Component, item: string): SortTerm {
  const [name, order = 'asc', ...rest] = item.split(':')
  if (rest.length > 0) throw new ValidationError('Invalid order. order can only be one of asc|desc|ASC|DESC')
  if (name.trim() === '') throw new ValidationError('Field cannot be empty')
  return { field: resolveField(model, name.trim(), 'sort'), direction: direction(order.trim()) }
}

function termsFromObject (model: ContentType | Component, item: Record<string, unknown>): SortTerm[] {
  return Object.entries(item).map(([name, order]) => {
    if (name === '__proto__' || name === 'constructor' || name === 'prototype') throw new ValidationError('Invalid sort query')
    return { field: resolveField(model, name, 'sort'), direction: direction(order) }
  })
}

/**
 * `sort` in all of Strapi's forms: `title`, `title:desc`, `kind,title:desc`, `sort[0]=a&sort[1]=b:desc`,
 * `sort[title]=desc` and `sort[0][title]=desc`. The direction is case-insensitive; unknown,
 * private and password fields are a 400.
 */
export function parseSort (model: ContentType | Component, raw: unknown): SortTerm[] {
  if (raw === undefined || raw === null || raw === '') return []
  const items = Array.isArray(raw) ? raw : [raw]
  const terms: SortTerm[] = []
  for (const item of items) {
    if (typeof item === 'string') for (const part of splitList(item)) terms.push(termFromString(model, part))
    else if (typeof item === 'object' && item !== null && !Array.isArray(item)) terms.push(...termsFromObject(model, item as Record<string, unknown>))
    else throw new ValidationError(INVALID_SORT)
  }
  return terms
}
