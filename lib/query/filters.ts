import { ValidationError } from '../errors.js'
import { FILE_UID, type Association, type ComponentAssociation, type DynamicZoneAssociation, type MediaAssociation, type RelationAssociation } from '../model/associations.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import { castFilterValue } from './cast.js'
import { isKnownAttribute } from './fields.js'

/** Comparison operators, matched case-sensitively as Strapi does (`$STARTSWITH` is invalid). */
export const COMPARISON_OPERATORS = [
  '$eq', '$eqi', '$ne', '$nei', '$lt', '$lte', '$gt', '$gte', '$in', '$notIn',
  '$contains', '$notContains', '$containsi', '$notContainsi', '$startsWith', '$startsWithi',
  '$endsWith', '$endsWithi', '$null', '$notNull', '$between'
] as const
export type ComparisonOperator = typeof COMPARISON_OPERATORS[number]

const OPERATORS = new Set<string>(COMPARISON_OPERATORS)
/** Operators whose value is a string pattern: never cast to the field's type. */
export const PATTERN_OPERATORS = new Set<ComparisonOperator>([
  '$eqi', '$nei', '$contains', '$notContains', '$containsi', '$notContainsi',
  '$startsWith', '$startsWithi', '$endsWith', '$endsWithi'
])

/**
 * A validated filter: every field is a registry `Field`, every value already cast to the field's
 * type, so compiling it cannot fail and evaluating it cannot surprise.
 */
export type FilterNode =
  | { kind: 'and', children: FilterNode[] }
  | { kind: 'or', children: FilterNode[] }
  | { kind: 'not', child: FilterNode }
  | { kind: 'compare', field: Field, operator: ComparisonOperator, value: unknown }
  | RelatedFilter
  | CountFilter

/**
 * Our extension, `filters[articles][$count][$gt]=3`: a condition on the number of related rows
 * (those the caller may see, in the request's status), compiled as a count sub-select. `child`
 * compares `COUNT_FIELD`, the count's own column.
 */
export interface CountFilter {
  kind: 'count'
  owner: string
  association: RelationAssociation | MediaAssociation
  target: ContentType
  visible: FilterNode | null
  child: FilterNode
}

/** The column a `CountFilter`'s child compares: the count, an integer, never NULL. */
export const COUNT_FIELD: Field = Object.freeze({
  name: '$count', column: 'n', type: 'integer', attribute: null, system: true, hidden: false, writable: false, localized: false
})

/**
 * A condition on related rows (a relation, media field, component, or one component type of a
 * dynamic zone), with the semantics of
 * Strapi's LEFT JOIN: it holds when some related row satisfies `child`, or when there is no
 * related row at all and a row of NULLs would satisfy it (`filters[category][$null]=true`).
 * Compiled as EXISTS sub-selects, so a parent never appears twice and totals stay right.
 */
export interface RelatedFilter {
  kind: 'related'
  /** The uid of the model declaring the association (media links are polymorphic on it). */
  owner: string
  association: RelationAssociation | MediaAssociation | ComponentAssociation | DynamicZoneAssociation
  /** For a dynamic zone, the one component type (`on`) whose rows are tested. */
  target: ContentType | Component
  /** The related rows the caller may see (their type's row-level conditions), or null for all. */
  visible: FilterNode | null
  child: FilterNode
  /** Whether `child` holds for a row of NULLs: then parents without (visible) related rows match too. */
  matchesNone: boolean
}

/**
 * What a query may reach beyond its root, through relations: the parsers (filters, sort,
 * populate) ask it; `Visibility` (./visibility.ts) answers it from the caller's access.
 */
export interface ReadLimits {
  /** Whether the caller may read the type at all. */
  canRead (uid: string): boolean
  /** The attributes of `uid` the caller may see (null: all); only asked for readable types. */
  fields (uid: string): ReadonlySet<string> | null
  /** The caller's rows of `target` as a validated filter (null: every row). */
  rows (target: ContentType): FilterNode | null
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const and = (children: FilterNode[]): FilterNode | null =>
  children.length === 0 ? null : children.length === 1 ? children[0] : { kind: 'and', children }
const or = (children: FilterNode[]): FilterNode => children.length === 1 ? children[0] : { kind: 'or', children }

interface Walk {
  registry: Registry | null
  /**
   * What the caller may read through relations: a type it may not read cannot be filtered
   * through (400, as Strapi), and only its visible rows and attributes count. Null: everything.
   */
  visibility: ReadLimits | null
  /** A field-level permission: the attributes of this model a filter may name (all when null). */
  allowed: ReadonlySet<string> | null
  model: ContentType | Component
  /** Dotted path of attributes walked so far, for Strapi's "Invalid key x at a.b" messages. */
  path: string[]
}

function invalidKey (key: string, path: string | null): ValidationError {
  return ValidationError.invalidKey(key, { key, path, source: 'query', param: 'filters' })
}

/** Strapi's `$null`/`$notNull` truthiness: the usual spellings, then JavaScript truthiness. */
export function toNullFlag (value: unknown): boolean {
  if (value === true || value === 'true' || value === 't' || value === '1' || value === 1) return true
  if (value === false || value === 'false' || value === 'f' || value === '0' || value === 0) return false
  if (value === null || value === undefined || value === '') return false
  return true
}

/** Case-sensitive patterns: Strapi's `column LIKE ?`, which PostgreSQL runs on text columns only. */
const LIKE_OPERATORS = new Set<ComparisonOperator>(['$contains', '$notContains', '$startsWith', '$endsWith'])
/** Attribute types stored as text (varchar or text), where `LIKE` runs. */
const TEXT_TYPES = new Set<Field['type']>(['string', 'text', 'richtext', 'email', 'password', 'uid', 'enumeration'])

function unsupported (message: string, operator: ComparisonOperator, where: string): ValidationError {
  return new ValidationError(message, { key: operator, path: where, source: 'query', param: 'filters' })
}

/**
 * The filters Strapi cannot run (its query fails, a 500) are a 400 here, never a silent answer:
 * - a case-sensitive pattern (`$contains`, `$notContains`, `$startsWith`, `$endsWith`) on an
 *   attribute that is not text: PostgreSQL has no `LIKE` for numbers, booleans, dates or jsonb
 *   (the case-insensitive ones compare the value's text, `lower(col::text)`, as Strapi's do);
 * - a comparison (`$eq`, `$ne`, `$in`, `$notIn`, `$lt`... `$between`) on a json or blocks
 *   attribute whose value is not JSON text: Strapi sends it to the jsonb column as it is.
 * `$null` and `$notNull` run on every type.
 */
function checkRunnable (field: Field, operator: ComparisonOperator, raw: unknown, where: string): void {
  if (LIKE_OPERATORS.has(operator) && !TEXT_TYPES.has(field.type)) {
    throw unsupported(`${operator} cannot be used on ${where}, a ${field.type} attribute: it applies to text (use ${operator}i to match the value's text)`, operator, where)
  }
  if ((field.type === 'json' || field.type === 'blocks') && !PATTERN_OPERATORS.has(operator) && operator !== '$null' && operator !== '$notNull') {
    const values = Array.isArray(raw) ? raw : isPlainObject(raw) ? Object.values(raw) : [raw]
    for (const value of values) {
      if (value === null || typeof value !== 'string') continue
      try { JSON.parse(value) } catch {
        throw unsupported(`${operator} on ${where}, a ${field.type} attribute, expects JSON text (such as "text", 42 or ["a","b"])`, operator, where)
      }
    }
  }
}

function compare (field: Field, operator: ComparisonOperator, raw: unknown, where: string): FilterNode | null {
  if (operator === '$null' || operator === '$notNull') {
    return { kind: 'compare', field, operator, value: toNullFlag(raw) }
  }
  checkRunnable(field, operator, raw, where)
  if (operator === '$in' || operator === '$notIn') {
    const items = Array.isArray(raw) ? raw : isPlainObject(raw) ? Object.values(raw) : [raw]
    return { kind: 'compare', field, operator, value: items.map((v) => castFilterValue(field, v, where)) }
  }
  if (operator === '$between') {
    const items = Array.isArray(raw) ? raw : isPlainObject(raw) ? Object.values(raw) : []
    if (items.length !== 2) throw new ValidationError(`$between on ${where} expects two values`, { key: '$between', path: where, source: 'query', param: 'filters' })
    return { kind: 'compare', field, operator, value: items.map((v) => castFilterValue(field, v, where)) }
  }
  // Any other operator given an array applies to each element, OR-ed (`$ne: [41, 43]`). Given an
  // empty one (`$eq: []`, GraphQL's `eq: []` on a JSON attribute), it is no condition: Strapi's
  // query builder drops the empty group it makes.
  if (Array.isArray(raw)) {
    const nodes = raw.map((item) => compare(field, operator, item, where)).filter(notNull)
    return nodes.length === 0 ? null : or(nodes)
  }
  if (isPlainObject(raw)) throw new ValidationError(`Invalid value for ${operator} on ${where}`, { key: operator, path: where, source: 'query', param: 'filters' })
  if (PATTERN_OPERATORS.has(operator)) {
    // `$eqi: null` means IS NULL, as `$eq: null`; the other patterns search the text "null", as Strapi's do.
    const nullable = operator === '$eqi' || operator === '$nei'
    return { kind: 'compare', field, operator, value: raw === null && nullable ? null : String(raw) }
  }
  return { kind: 'compare', field, operator, value: raw === null ? null : castFilterValue(field, raw, where) }
}

/** The conditions on one field: `{ $gt: 1, $lt: 5 }`, `{ $not: {...} }`, an array (`$in`), or a value (`$eq`). */
function fieldConditions (field: Field, value: unknown, walk: Walk): FilterNode | null {
  const where = [...walk.path, field.name].join('.')
  if (Array.isArray(value)) return compare(field, '$in', value, where)
  if (!isPlainObject(value)) return compare(field, '$eq', value, where)
  const children: FilterNode[] = []
  for (const [key, operand] of Object.entries(value)) {
    if (key === '$not') {
      if (Array.isArray(operand)) {
        // Like any operator given an array, `$not` applies per element, OR-ed: (NOT a) OR (NOT b).
        const nodes = operand.map((item) => compare(field, '$eq', item, where)).filter(notNull).map((child) => ({ kind: 'not' as const, child }))
        if (nodes.length > 0) children.push(or(nodes))
        continue
      }
      const inner = isPlainObject(operand) ? fieldConditions(field, operand, walk) : compare(field, '$eq', operand, where)
      if (inner !== null) children.push({ kind: 'not', child: inner })
    } else if (key === '$and' || key === '$or') {
      const items = Array.isArray(operand) ? operand : [operand]
      const nodes = items.map((item) => fieldConditions(field, item, walk)).filter(notNull)
      if (nodes.length > 0) children.push(key === '$and' ? and(nodes)! : or(nodes))
    } else if (OPERATORS.has(key)) {
      const node = compare(field, key as ComparisonOperator, operand, where)
      if (node !== null) children.push(node)
    } else {
      throw invalidKey(key, where)
    }
  }
  return and(children)
}

function logical (key: '$and' | '$or', value: unknown, walk: Walk): FilterNode | null {
  if (!Array.isArray(value)) {
    throw new ValidationError(`Operator ${key} must be an array`, { key, path: walk.path.join('.') || null, source: 'query', param: 'filters' })
  }
  const nodes = value.map((item) => (Array.isArray(item) ? and(item.map((i) => objectFilter(i, walk)).filter(notNull)) : objectFilter(item, walk)))
    .filter(notNull)
  if (nodes.length === 0) return null
  return key === '$and' ? and(nodes) : or(nodes)
}

const notNull = (n: FilterNode | null): n is FilterNode => n !== null

function objectFilter (value: unknown, walk: Walk): FilterNode | null {
  if (!isPlainObject(value)) {
    throw new ValidationError('The filters parameter must be an object or an array')
  }
  const children: FilterNode[] = []
  for (const [key, operand] of Object.entries(value)) {
    if (key === '$and' || key === '$or') {
      const node = logical(key, operand, walk)
      if (node !== null) children.push(node)
    } else if (key === '$not') {
      const inner = objectFilter(operand, walk)
      if (inner !== null) children.push({ kind: 'not', child: inner })
    } else if (key.startsWith('$')) {
      throw invalidKey(key, walk.path.length > 0 ? walk.path.join('.') : null)
    } else {
      const path = [...walk.path, key].join('.')
      if (walk.allowed !== null && Object.hasOwn(walk.model.attributes, key) && !walk.allowed.has(key)) throw invalidKey(key, path)
      // Strapi drops filters on i18n's `localizations` (not a stored relation); so do we.
      if (key === 'localizations' && walk.model.modelType === 'contentType' && walk.model.localized) continue
      const association = walk.model.associations.get(key)
      if (association !== undefined) {
        const node = relatedFilter(association, operand, walk, path)
        if (node !== null) children.push(node)
        continue
      }
      const field = walk.model.fields.get(key)
      if (field === undefined) {
        // Strapi names the path of an attribute that exists but may not be filtered, and none
        // for a name the model does not have.
        throw invalidKey(key, isKnownAttribute(walk.model, key) || walk.path.length > 0 ? path : null)
      }
      if (field.hidden) throw invalidKey(key, path)
      // An empty object (`filters[id]={}`) filters nothing, as in Strapi.
      if (isPlainObject(operand) && Object.keys(operand).length === 0) continue
      const node = fieldConditions(field, operand, walk)
      if (node !== null) children.push(node)
    }
  }
  return and(children)
}

/**
 * `filters[category][name][$eq]=Tech`, `filters[category][$null]=true`, `filters[author]=5`:
 * operators directly under a relation compare the related row's `id`; attribute keys filter the
 * related rows. A dynamic zone is filtered only through `on` (dynamic-zone-filter below).
 */
function relatedFilter (association: Association, operand: unknown, walk: Walk, path: string): FilterNode | null {
  if (walk.registry === null) throw invalidKey(association.name, path)
  if ((walk.model.attributes[association.name] as { private?: boolean }).private === true) throw invalidKey(association.name, path)
  if (association.kind === 'dynamiczone') return dynamicZoneFilter(association, operand, walk, path)
  const target = association.kind === 'component'
    ? walk.registry.components.get(association.component)
    : walk.registry.get(association.kind === 'media' ? FILE_UID : association.target)
  if (target === undefined) throw invalidKey(association.name, path)
  const { visibility } = walk
  const related = association.kind === 'component' ? null : target as ContentType
  if (related !== null && visibility !== null && !visibility.canRead(related.uid)) throw invalidKey(association.name, path)
  const allowed = related === null || visibility === null ? null : visibility.fields(related.uid)
  const visible = related === null || visibility === null ? null : visibility.rows(related)
  let rest = operand
  let counted: FilterNode | null = null
  if (isPlainObject(operand) && Object.hasOwn(operand, '$count')) {
    if (related === null || association.kind === 'component') throw invalidKey('$count', path)
    const { $count: condition, ...others } = operand
    rest = others
    const conditions = fieldConditions(COUNT_FIELD, condition, { ...walk, path: path.split('.') })
    if (conditions !== null) counted = { kind: 'count', owner: walk.model.uid, association, target: related, visible, child: conditions }
    if (Object.keys(others).length === 0) return counted
  }
  const child = relatedChild(association.name, rest, target, allowed, walk, path)
  const node: FilterNode | null = child === null ? null : { kind: 'related', owner: walk.model.uid, association, target, visible, child, matchesNone: onNullRow(child) === true }
  const parts: Array<FilterNode | null> = [counted, node]
  return and(parts.filter(notNull))
}

/** The filter on one related row: `{ name: {...} }`, or operators/a value on its `id`. */
function relatedChild (
  name: string, operand: unknown, target: ContentType | Component, allowed: ReadonlySet<string> | null, walk: Walk, path: string
): FilterNode | null {
  let inner: unknown = operand
  if (!isPlainObject(operand)) inner = { id: operand }
  else {
    const keys = Object.keys(operand)
    const operators = keys.filter((k) => OPERATORS.has(k))
    if (operators.length > 0 && operators.length < keys.length) {
      throw new ValidationError('Operator and non-operator keys cannot be mixed in a relation where clause', { key: name, path, source: 'query', param: 'filters' })
    }
    if (operators.length > 0) inner = { id: operand }
    if (keys.length === 0) return null
  }
  return objectFilter(inner, { registry: walk.registry, visibility: walk.visibility, allowed, model: target, path: path.split('.') })
}

/**
 * Our extension (Strapi refuses every filter on a dynamic zone): `filters[blocks][on][shared.quote][text][$containsi]=x`
 * holds when some `shared.quote` item of the zone matches, with the component's attribute
 * filters (nested components, `$and`/`$or`/`$not`) under the uid. Several uids under one `on`
 * are AND-ed like any sibling keys; `$and`, `$or` and `$not` combine `on` conditions. Any other
 * key, as a filter on the zone itself, stays Strapi's 400 `Invalid key blocks`.
 */
function dynamicZoneFilter (association: DynamicZoneAssociation, operand: unknown, walk: Walk, path: string): FilterNode | null {
  if (!isPlainObject(operand)) throw invalidKey(association.name, path)
  const children: FilterNode[] = []
  for (const [key, value] of Object.entries(operand)) {
    if (key === 'on') {
      if (!isPlainObject(value)) throw invalidKey(key, `${path}.on`)
      for (const [uid, filter] of Object.entries(value)) {
        const target = association.components.includes(uid) ? walk.registry!.components.get(uid) : undefined
        if (target === undefined) throw invalidKey(uid, `${path}.on`)
        const child = relatedChild(association.name, filter, target, null, walk, `${path}.on.${uid}`)
        if (child !== null) {
          children.push({ kind: 'related', owner: walk.model.uid, association, target, visible: null, child, matchesNone: onNullRow(child) === true })
        }
      }
    } else if (key === '$and' || key === '$or') {
      if (!Array.isArray(value)) throw new ValidationError(`Operator ${key} must be an array`, { key, path, source: 'query', param: 'filters' })
      const nodes = value.map((item) => dynamicZoneFilter(association, item, walk, path)).filter(notNull)
      if (nodes.length > 0) children.push(key === '$and' ? and(nodes)! : or(nodes))
    } else if (key === '$not') {
      const inner = dynamicZoneFilter(association, value, walk, path)
      if (inner !== null) children.push({ kind: 'not', child: inner })
    } else {
      throw invalidKey(association.name, path)
    }
  }
  return and(children)
}

/** SQL's three-valued result of a filter on a row of NULLs (true, false or unknown = null). */
export function onNullRow (node: FilterNode): boolean | null {
  switch (node.kind) {
    case 'compare':
      switch (node.operator) {
        case '$null': return node.value === true
        case '$notNull': return node.value !== true
        case '$eq':
        case '$eqi': return node.value === null ? true : null
        case '$ne':
        case '$nei': return node.value === null ? false : null
        default: return null
      }
    case 'not': {
      const v = onNullRow(node.child)
      return v === null ? null : !v
    }
    case 'and': {
      const values = node.children.map(onNullRow)
      return values.includes(false) ? false : values.includes(null) ? null : true
    }
    case 'or': {
      const values = node.children.map(onNullRow)
      return values.includes(true) ? true : values.includes(null) ? null : false
    }
    case 'related': return node.matchesNone
    // A row of NULLs has no related rows to count: left unknown, so such a parent never matches.
    case 'count': return null
  }
}

/**
 * Validates Strapi's `filters` (`filters[title][$eq]=x`, `filters[$or][0][...]`, arrays as AND,
 * `filters[category][name][$eq]=x` through relations, components and media, `filters[blocks][on][<uid>]...`
 * through a dynamic zone) into a `FilterNode`, or null when it filters nothing. Unknown fields and
 * operators, private and password fields, a dynamic zone without `on` and values that cannot be
 * cast for their field are 400s.
 */
export function parseFilters (
  model: ContentType | Component, raw: unknown, registry: Registry | null = null, visibility: ReadLimits | null = null,
  allowed: ReadonlySet<string> | null = null
): FilterNode | null {
  if (raw === undefined || raw === null) return null
  const walk: Walk = { registry, visibility, allowed, model, path: [] }
  if (Array.isArray(raw)) return and(raw.map((item) => objectFilter(item, walk)).filter(notNull))
  if (!isPlainObject(raw)) throw new ValidationError('The filters parameter must be an object or an array')
  return objectFilter(raw, walk)
}

/** True when a filter names the `locale` field, which then replaces the default-locale scope. */
export function filtersLocale (node: FilterNode | null): boolean {
  if (node === null) return false
  switch (node.kind) {
    case 'and':
    case 'or': return node.children.some(filtersLocale)
    case 'not': return filtersLocale(node.child)
    case 'compare': return node.field.name === 'locale' && node.field.system
    case 'related':
    case 'count': return false
  }
}
