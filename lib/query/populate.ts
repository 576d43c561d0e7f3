import { ValidationError } from '../errors.js'
import type { Association } from '../model/associations.js'
import { FILE_UID } from '../model/associations.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import { parseFields, splitList } from './fields.js'
import { parseFilters, type FilterNode, type ReadLimits } from './filters.js'
import { overLimit } from './limits.js'
import { QS_DEPTH } from './querystring.js'
import { parseSort, type SortTerm } from './sort.js'
import { andFilters } from './visibility.js'

/** What to render for one populated attribute; targets are registry models, never client names. */
export interface PopulateSelection {
  fields: Field[] | null
  /** The request's filters on the related rows, ANDed with the rows the caller may see. */
  filters: FilterNode | null
  sort: SortTerm[]
  populate: PopulateTree
  /** Per-parent window, applied to each parent's related rows separately (Strapi applies it to all). */
  start: number | null
  limit: number | null
}

export type PopulateNode =
  | ({ kind: 'relation', association: Association & { kind: 'relation' }, target: ContentType, count: boolean } & PopulateSelection)
  | ({ kind: 'media', association: Association & { kind: 'media' }, target: ContentType, count: boolean } & PopulateSelection)
  | ({ kind: 'component', association: Association & { kind: 'component' }, target: Component } & PopulateSelection)
  | { kind: 'dynamiczone', association: Association & { kind: 'dynamiczone' }, components: Map<string, { target: Component } & PopulateSelection> }
  /** The document's other locales (i18n's `localizations`), in the request's status. */
  | ({ kind: 'localizations', target: ContentType } & PopulateSelection)

/** The i18n attribute every localized content type has: the same document in its other locales. */
export const LOCALIZATIONS = 'localizations'

/** Populated attributes by name, in request order. */
export type PopulateTree = Map<string, PopulateNode>

type Model = ContentType | Component
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const SELECTION_KEYS = new Set(['fields', 'filters', 'sort', 'populate', 'count', 'on', 'start', 'limit', 'page', 'pageSize'])
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function invalidKey (key: string, path: string): ValidationError {
  return ValidationError.invalidKey(key, { key, path, source: 'query', param: 'populate' })
}

/** Strapi's boolean spellings for `populate[x]=true` and `count`. */
function flag (value: unknown): boolean | null {
  if (value === true || value === 'true' || value === 't' || value === '1' || value === 1) return true
  if (value === false || value === 'false' || value === 'f' || value === '0' || value === 0) return false
  return null
}

function nonNegativeInteger (value: unknown, name: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN
  if (!Number.isInteger(n) || n < 0) throw new ValidationError(`Invalid populate ${name}: expected a non-negative integer, got ${JSON.stringify(value)}`)
  return n
}

/**
 * A window's size (`limit`, `pageSize`), written into the statement as its row count
 * (lib/compiler/row-limit.ts), which holds integers up to 2^53 - 1: `1e29` is an integer too. A
 * start stays a parameter, and PostgreSQL refuses one past its bigint (a 400 too).
 */
function rowCount (value: unknown, name: string): number {
  const n = nonNegativeInteger(value, name)
  if (!Number.isSafeInteger(n)) throw new ValidationError(`Invalid populate ${name}: ${JSON.stringify(value)} is more than ${Number.MAX_SAFE_INTEGER}`)
  return n
}

function window (options: Record<string, unknown>): { start: number | null, limit: number | null } {
  const hasPage = options.page !== undefined || options.pageSize !== undefined
  const hasOffset = options.start !== undefined || options.limit !== undefined
  if (hasPage && hasOffset) throw new ValidationError('Cannot use both page & offset pagination in the same query')
  if (hasPage) {
    const page = options.page === undefined ? 1 : Math.max(nonNegativeInteger(options.page, 'page'), 1)
    const pageSize = options.pageSize === undefined ? 25 : Math.max(rowCount(options.pageSize, 'pageSize'), 1)
    return { start: (page - 1) * pageSize, limit: pageSize }
  }
  return {
    start: options.start === undefined ? null : nonNegativeInteger(options.start, 'start'),
    limit: options.limit === undefined ? null : rowCount(options.limit, 'limit')
  }
}

/** The attributes of a level the caller may see (all when null): a field-level permission. */
type Allowed = ReadonlySet<string> | null

/**
 * How deep `populate` may nest. A populated attribute of the queried documents is level 1, an
 * attribute populated inside it level 2, and so on, whatever the attribute is: a relation, media,
 * a component, a dynamic zone (whose components are the rows of its level) or `localizations`.
 * `populate=*` populates one level. With `limits` (REST) the bound is `limits.populateDepth`
 * and going past it is a `LimitError`; without, it is the depth the query string's bracket form
 * allows anyway (`QS_DEPTH`), so no caller's populate nests without bound.
 */
export interface PopulateDepth {
  max: number
  /** The bound is `limits.populateDepth` (a `LimitError` names it), not the fixed ceiling. */
  limited: boolean
}

class PopulateParser {
  readonly #registry: Registry
  readonly #visibility: ReadLimits | null
  readonly #omitUnreadable: boolean
  readonly #depth: PopulateDepth
  constructor (registry: Registry, visibility: ReadLimits | null, omitUnreadable: boolean, depth: PopulateDepth) {
    this.#registry = registry
    this.#visibility = visibility
    this.#omitUnreadable = omitUnreadable
    this.#depth = depth
  }

  /** Populating attributes at `level` (1 for the queried documents' own) must stay within the bound. */
  #checkDepth (level: number): void {
    const { max, limited } = this.#depth
    if (level <= max) return
    if (limited) throw overLimit('populateDepth', max, `populate is nested more than ${max} levels deep`)
    throw new ValidationError(`Invalid populate: deeper than ${max} levels`)
  }

  #canRead (uid: string): boolean {
    return this.#visibility === null || this.#visibility.canRead(uid)
  }

  /** Relations and media to types the caller cannot read: left out of `*`, a 400 when named. */
  #readable (association: Association): boolean {
    if (association.kind === 'relation') return this.#canRead(association.target)
    if (association.kind === 'media') return this.#canRead(FILE_UID)
    return true
  }

  /** The document's other locales are rows of its own type, read as through a relation. */
  #hasLocalizations (model: Model): model is ContentType {
    return model.modelType === 'contentType' && model.localized && this.#canRead(model.uid)
  }

  /** Every association of a model, one level deep: what `populate=*` means. */
  #all (model: Model, allowed: Allowed): Record<string, unknown> {
    const visible = (a: Association): boolean => (model.attributes[a.name] as { private?: boolean }).private !== true
    const names = [...model.associations.values()].filter((a) => visible(a) && this.#readable(a) && (allowed === null || allowed.has(a.name))).map((a) => a.name)
    if (this.#hasLocalizations(model)) names.push(LOCALIZATIONS)
    return Object.fromEntries(names.map((name) => [name, true]))
  }

  /** Normalises every accepted form into `{ attribute: true | options-object }`. */
  #normalise (model: Model, raw: unknown, allowed: Allowed): Record<string, unknown> {
    if (raw === undefined || raw === null || raw === '') return {}
    if (raw === '*') return this.#all(model, allowed)
    if (typeof raw === 'string') return this.#fromList(splitList(raw))
    if (Array.isArray(raw)) {
      if (!raw.every((item) => typeof item === 'string')) {
        throw new ValidationError('Invalid populate parameter. Expected a string, an array of strings, a populate object')
      }
      if (raw.includes('*')) return this.#all(model, allowed)
      return this.#fromList(raw.flatMap(splitList))
    }
    if (isPlainObject(raw)) return raw
    throw new ValidationError('Invalid populate parameter. Expected a string, an array of strings, a populate object')
  }

  /** `category,authors.avatar` → `{ category: true, authors: { populate: { avatar: true } } }`. */
  #fromList (names: string[]): Record<string, unknown> {
    const tree: Record<string, unknown> = {}
    for (const name of names) {
      const parts = name.split('.')
      // Refused before the tree is built: `a.b.c...` needs no more than its length to tell.
      this.#checkDepth(parts.length)
      let level = tree
      for (const [i, part] of parts.entries()) {
        // Not attributes of any model; as object keys they would reach Object.prototype.
        if (FORBIDDEN_KEYS.has(part)) throw invalidKey(part, parts.slice(0, i + 1).join('.'))
        if (i === parts.length - 1) {
          if (level[part] === undefined) level[part] = true
          break
        }
        const options = isPlainObject(level[part]) ? level[part] as Record<string, unknown> : {}
        const nested = isPlainObject(options.populate) ? options.populate as Record<string, unknown> : {}
        options.populate = nested
        level[part] = options
        level = nested
      }
    }
    return tree
  }

  /** The attributes populated at `level` of `model` (the queried documents' own are level 1). */
  parse (model: Model, raw: unknown, path: string[], allowed: Allowed, level: number): PopulateTree {
    const tree: PopulateTree = new Map()
    for (const [name, value] of Object.entries(this.#normalise(model, raw, allowed))) {
      if (value === undefined || value === null) continue
      if (name === LOCALIZATIONS && model.modelType === 'contentType' && model.localized) {
        if (!this.#hasLocalizations(model)) {
          if (this.#omitUnreadable) continue
          throw invalidKey(name, name)
        }
        const enabled = flag(value)
        if (enabled === false) continue
        this.#checkDepth(level)
        const options = isPlainObject(value) ? value : {}
        tree.set(name, { kind: 'localizations', target: model, ...this.#selection(model, options, [...path, name], level) })
        continue
      }
      const association = model.associations.get(name)
      if (association !== undefined && !this.#readable(association) && this.#omitUnreadable) continue
      if (association === undefined || (model.attributes[name] as { private?: boolean } | undefined)?.private === true || !this.#readable(association) ||
        (allowed !== null && !allowed.has(name))) {
        throw invalidKey(name, name)
      }
      const enabled = flag(value)
      if (enabled === false) continue
      const options = isPlainObject(value) ? value : value === '*' ? { populate: '*' } : {}
      if (enabled === null && !isPlainObject(value) && value !== '*') {
        throw new ValidationError('Invalid nested populate. Expected \'*\' or an object')
      }
      for (const key of Object.keys(options)) if (!SELECTION_KEYS.has(key)) throw invalidKey(key, [...path, name, key].join('.'))
      this.#checkDepth(level)
      const node = this.#node(association, options, [...path, name], level)
      if (node !== null) tree.set(name, node)
    }
    return tree
  }

  /**
   * What to render of the related `target` rows: a content type shows only the rows and
   * attributes the caller may see (its `find` grant's limits); a component, what its owner shows.
   */
  #selection (target: Model, options: Record<string, unknown>, path: string[], level: number): PopulateSelection {
    const visibility = this.#visibility
    const content = target.modelType === 'contentType' && visibility !== null ? target : null
    const allowed = content === null ? null : visibility!.fields(content.uid)
    const requested = parseFilters(target, options.filters, this.#registry, visibility, allowed)
    return {
      fields: parseFields(target, options.fields, allowed),
      filters: content === null ? requested : andFilters(requested, visibility!.rows(content)),
      sort: parseSort(target, options.sort, this.#registry, visibility, allowed),
      populate: this.parse(target, options.populate, path, allowed, level + 1),
      ...window(options)
    }
  }

  #node (association: Association, options: Record<string, unknown>, path: string[], level: number): PopulateNode | null {
    const where = path.join('.')
    if (association.kind === 'dynamiczone') {
      for (const key of Object.keys(options)) {
        if (key !== 'on' && key !== 'populate' && key !== 'count') {
          throw new ValidationError(`Invalid nested populate for ${where}. Expected a fragment ("on") or "count" but found ${JSON.stringify(key)}`)
        }
      }
      if (options.populate !== undefined && options.populate !== '*') {
        throw new ValidationError(`Invalid nested populate for ${where}: populate inside a dynamic zone must be '*'`)
      }
      const components = new Map<string, { target: Component } & PopulateSelection>()
      const fragments = options.on
      if (fragments !== undefined && !isPlainObject(fragments)) throw new ValidationError(`Invalid "on" for ${where}: expected an object keyed by component uid`)
      for (const uid of fragments === undefined ? association.components : Object.keys(fragments)) {
        const target = this.#registry.components.get(uid)
        if (target === undefined || !association.components.includes(uid)) throw invalidKey(uid, `${where}.on.${uid}`)
        const fragment = fragments === undefined ? (options.populate === '*' ? { populate: '*' } : {}) : fragments[uid]
        if (flag(fragment) === false) continue
        const fragmentOptions = isPlainObject(fragment) ? fragment : {}
        // A dynamic zone's components are the rows of its level; what they populate is the next.
        components.set(uid, { target, ...this.#selection(target, fragmentOptions, [...path, uid], level) })
      }
      return components.size === 0 && fragments !== undefined ? null : { kind: 'dynamiczone', association, components }
    }
    if (options.on !== undefined) throw new ValidationError(`Using fragments is not permitted to populate "${path[path.length - 1]}"`)
    if (association.kind === 'component') {
      const target = this.#registry.components.get(association.component)!
      return { kind: 'component', association, target, ...this.#selection(target, options, path, level) }
    }
    const targetUid = association.kind === 'media' ? FILE_UID : association.target
    const target = this.#registry.get(targetUid)!
    const count = options.count !== undefined && flag(options.count) === true
    return association.kind === 'media'
      ? { kind: 'media', association, target, count, ...this.#selection(target, options, path, level) }
      : { kind: 'relation', association, target, count, ...this.#selection(target, options, path, level) }
  }
}

/** The bound of callers without `limits`: as deep as the query string's bracket form can nest. */
export const UNLIMITED_POPULATE: PopulateDepth = { max: QS_DEPTH, limited: false }

/**
 * Validates Strapi's `populate` in every form (`*`, `a,b`, `a.b`, `populate[0]=a`, and the object
 * form with `fields`, `filters`, `sort`, `populate`, `count`, per-parent `start`/`limit`, and `on`
 * fragments for dynamic zones) into a tree of registry models. Unknown or scalar attributes are a
 * 400 "Invalid key"; nesting deeper than `depth.max` levels is a 400 too (see `PopulateDepth`).
 */
export function parsePopulate (
  registry: Registry, model: Model, raw: unknown, visibility: ReadLimits | null = null, allowed: ReadonlySet<string> | null = null, omitUnreadable = false,
  depth: PopulateDepth = UNLIMITED_POPULATE
): PopulateTree {
  return new PopulateParser(registry, visibility, omitUnreadable, depth).parse(model, raw, [], allowed, 1)
}
