import { ValidationError } from '../errors.js'
import type { ContentType, Field, Registry } from '../model/registry.js'
import type { ScalarType } from '../model/types.js'
import { splitList } from './fields.js'
import type { ReadLimits } from './filters.js'
import { resolveReadPath, type SortHop } from './sort.js'

export const AGGREGATE_FUNCTIONS = ['sum', 'avg', 'min', 'max'] as const
export type AggregateFunction = typeof AGGREGATE_FUNCTIONS[number]

/** Types `sum` and `avg` take. */
export const NUMERIC_TYPES: ReadonlySet<ScalarType> = new Set(['integer', 'biginteger', 'float', 'decimal'])
/** Types `min` and `max` take: numbers, text that orders, and the temporal types. */
export const ORDERED_TYPES: ReadonlySet<ScalarType> = new Set([
  ...NUMERIC_TYPES, 'string', 'text', 'richtext', 'email', 'uid', 'enumeration', 'date', 'time', 'datetime', 'timestamp'
])

/** One aggregated value: `sum[0]=views` is `{ fn: 'sum', field: views }`. */
export interface Measure { fn: AggregateFunction, field: Field }

/**
 * One grouping key: a field of the document (`kind`), or of a to-one relation's document
 * (`category.name`; `category` alone is `category.documentId`). `name` is the key as asked.
 */
export interface GroupKey { name: string, path: SortHop[], field: Field }

/** What an aggregate request computes, per group of the documents the query tree selects. */
export interface AggregateSpec {
  /** The number of documents per group (on unless `count=false`). */
  count: boolean
  measures: Measure[]
  groupBy: GroupKey[]
  /** The most groups an answer may hold (`limits.maxLimit`): more is a 400. */
  maxGroups: number
}

const param = (key: string): ValidationError => new ValidationError(`Invalid ${key} parameter. Expected a field name, a comma-separated list or an array of field names`, { key, source: 'query', param: key })

function names (raw: unknown, key: string): string[] {
  if (raw === undefined || raw === null || raw === '') return []
  if (typeof raw === 'string') return splitList(raw)
  if (Array.isArray(raw) && raw.every((v) => typeof v === 'string')) return raw.flatMap(splitList)
  throw param(key)
}

function invalidKey (name: string, key: string): ValidationError {
  return ValidationError.invalidKey(name, { key: name, path: name, source: 'query', param: key })
}

function measure (model: ContentType, fn: AggregateFunction, name: string, allowed: ReadonlySet<string> | null): Measure {
  const field = model.fields.get(name)
  // A field the caller may not read is not there for it, as in `fields`, `sort` and `filters`.
  if (field === undefined || field.hidden || (allowed !== null && !field.system && !allowed.has(name))) throw invalidKey(name, fn)
  const types = fn === 'sum' || fn === 'avg' ? NUMERIC_TYPES : ORDERED_TYPES
  if (!types.has(field.type)) {
    throw new ValidationError(`${fn} cannot apply to ${name}, of type ${field.type}`, { key: name, path: name, source: 'query', param: fn })
  }
  return { fn, field }
}

function groupKey (model: ContentType, name: string, registry: Registry, visibility: ReadLimits | null, allowed: ReadonlySet<string> | null): GroupKey {
  const parts = name.split('.').map((s) => s.trim())
  // `category` alone groups by the related document: its documentId.
  let current: ContentType | undefined = model
  for (const part of parts) current = current === undefined ? undefined : relationTarget(current, part, registry)
  const path = current === undefined ? parts : [...parts, 'documentId']
  const resolved = resolveReadPath(model, path, registry, visibility, allowed)
  for (const [i, hop] of resolved.path.entries()) {
    if (hop.association.kind !== 'relation' || hop.association.toMany) {
      throw new ValidationError(`groupBy goes through to-one relations only: ${parts.slice(0, i + 1).join('.')} is not one`, { key: name, path: name, source: 'query', param: 'groupBy' })
    }
  }
  return { name, ...resolved }
}

function relationTarget (model: ContentType, name: string, registry: Registry): ContentType | undefined {
  const association = model.associations.get(name)
  return association?.kind === 'relation' ? registry.get(association.target) : undefined
}

function flag (raw: unknown): boolean {
  if (raw === undefined || raw === null || raw === '' || raw === 'true' || raw === true || raw === '1') return true
  if (raw === 'false' || raw === false || raw === '0') return false
  throw new ValidationError('Invalid count parameter. Expected true or false', { key: 'count', source: 'query', param: 'count' })
}

/**
 * Our extension's aggregate parameters, next to the list parameters (`filters`, `status`,
 * `locale`) that choose the documents: `count=false`, `sum`, `avg`, `min`, `max` (each a field
 * name, a comma-separated list or an array: `sum[0]=views&sum[1]=rating`) and `groupBy` (scalar
 * fields, and to-one relations: `groupBy[0]=kind&groupBy[1]=category.name`).
 *
 * Fields are checked for the caller as `sort` checks them (a field it may not read is a 400
 * `Invalid key`); `sum` and `avg` take numeric types only, `min` and `max` also text and dates.
 */
export function parseAggregate (
  model: ContentType, raw: Record<string, unknown>, registry: Registry, visibility: ReadLimits | null,
  allowed: ReadonlySet<string> | null, maxGroups: number
): AggregateSpec {
  // A name asked twice is one value (`sum=views,views`), as one key of the answer.
  const measures = AGGREGATE_FUNCTIONS.flatMap((fn) => [...new Set(names(raw[fn], fn))].map((name) => measure(model, fn, name, allowed)))
  const groupBy = [...new Set(names(raw.groupBy, 'groupBy'))].map((name) => groupKey(model, name, registry, visibility, allowed))
  return { count: flag(raw.count), measures, groupBy, maxGroups }
}
