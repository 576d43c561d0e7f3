import { ForbiddenError, ValidationError } from '../errors.js'
import type { ContentType, Field, Registry } from '../model/registry.js'
import { parseFields } from './fields.js'
import { filtersLocale, parseFilters, type FilterNode } from './filters.js'
import { parsePagination, type Pagination, type PaginationLimits } from './pagination.js'
import { sortSignature, type CursorCodec } from './cursor.js'
import { parseSort, type SortTerm } from './sort.js'
import { checkInputDepth, type RequestLimits } from './limits.js'
import { UNLIMITED_POPULATE, parsePopulate, type PopulateTree } from './populate.js'
import type { RawQuery } from './querystring.js'
import type { AccessScope } from './access-scope.js'
import { Visibility } from './visibility.js'
import { parsePublicationFilter, type PublicationFilter } from './publication-filter.js'

export type { CursorLinks, CursorPagination, PageEdges, Pagination, PaginationLimits, PaginationMeta } from './pagination.js'
export { CursorCodec, sortSignature, type CursorPosition } from './cursor.js'
export type { SortTerm } from './sort.js'
export type { FilterNode, ComparisonOperator } from './filters.js'
export type { PopulateTree, PopulateNode } from './populate.js'
export type { RawQuery } from './querystring.js'
export type { RequestLimits } from './limits.js'
export { checkRootPagination, cursorLinks, paginationMeta } from './pagination.js'
export { parseQueryString, searchOf } from './querystring.js'
export { checkInputDepth, overLimit } from './limits.js'
export { Visibility, andFilters } from './visibility.js'
export type { AccessScope, ReadAccess, ReadAccessOf } from './access-scope.js'
export { PUBLICATION_FILTERS, type PublicationFilter } from './publication-filter.js'

export type Status = 'published' | 'draft'

export interface LocaleSettings {
  locales: readonly string[]
  defaultLocale: string
  fallbacks?: Readonly<Record<string, readonly string[]>>
}

/**
 * A request's query, validated against the model and ready to compile. Every field in it is a
 * `Field` from the registry, so the compiler never sees a name a client typed.
 */
export interface QueryTree {
  fields: Field[] | null
  filters: FilterNode | null
  sort: SortTerm[]
  populate: PopulateTree
  pagination: Pagination
  status: Status
  /**
   * Strapi 5's publication cohort (`publicationFilter`, or the deprecated `hasPublishedVersion`):
   * the rows of `status` kept by how their other version relates, here and in populated draft &
   * publish relations; null for every row.
   */
  publicationFilter: PublicationFilter | null
  /**
   * One locale, several (a list's `locale[0]=en&locale[1]=fr`), or null for every locale
   * (`locale=*`); always null for non-localized types.
   */
  locale: string | readonly string[] | null
  /** Locales read instead, in order, for documents missing in `locale` (`i18n.fallbacks`). */
  fallbacks: readonly string[]
}

/**
 * The status a request reads, as Strapi 5's document service decides it (`defaultToDraft`): no
 * status (or `published`) is the published version, and ANY other value (`draft`, `''`,
 * `archived`, `PUBLISHED`, a list) is the draft version, never a 400. Types without draft &
 * publish ignore it. Writes take it the same way: only `published` publishes.
 */
export function parseStatus (raw: unknown): Status {
  return raw === undefined || raw === null || raw === 'published' ? 'published' : 'draft'
}

/** Whether a request's `status` parameter reads drafts: what the access check asks for. */
export function readsDrafts (raw: unknown): boolean {
  return parseStatus(raw) === 'draft'
}

/**
 * The locale a request addresses: the `locale` parameter, the default locale when it is absent
 * or empty, and null (every locale) for `*` on lists, the one value Strapi 5 treats specially.
 * Any other string is a locale code, matched literally: `all`, `de` (not configured) and `x/y`
 * (not a code at all) match no document. Non-localized types ignore it, as Strapi does.
 */
export function parseLocale (model: ContentType, raw: unknown, settings: LocaleSettings, allowAll: boolean): string | null {
  if (!model.localized) return null
  if (raw === undefined || raw === null || raw === '') return settings.defaultLocale
  if (typeof raw !== 'string') {
    throw new ValidationError(`Invalid locale param ${JSON.stringify(raw)} provided. Document locales must be strings.`)
  }
  if (allowAll && raw === '*') return null
  return raw
}

/**
 * The locales a list reads: `parseLocale`'s answer, or for a list of codes
 * (`locale[0]=en&locale[1]=fr`) each of them, as Strapi 5's document service takes an array
 * (`locale in (...)`). Its codes are literal, `*` included; a repeated code counts once, and a
 * list of one is that locale. Anything but strings in it is a 400, as a non-string locale is.
 */
export function parseListLocales (model: ContentType, raw: unknown, settings: LocaleSettings): string | readonly string[] | null {
  if (!model.localized || !Array.isArray(raw)) return parseLocale(model, raw, settings, true)
  if (raw.some((code) => typeof code !== 'string')) {
    throw new ValidationError(`Invalid locale param ${JSON.stringify(raw)} provided. Document locales must be strings.`)
  }
  const codes = [...new Set(raw as string[])]
  return codes.length === 1 ? codes[0] : codes
}

export interface ParseOptions {
  registry: Registry
  /** The caller's limits from the access check; none for application code. */
  access?: AccessScope
  limits: PaginationLimits
  i18n: LocaleSettings
  /** Lists accept `locale=*` and lists of locales; single-document reads take one locale literally. */
  allowAllLocales: boolean
  /** `populate` leaves out relations the caller may not read instead of answering 400. */
  omitUnreadable?: boolean
  /**
   * The bounds of a client's request (`limits`): the query's nesting (`inputDepth`, checked
   * before it is walked) and `populateDepth`. Without them only the fixed ceilings apply.
   */
  bounds?: RequestLimits
  /** Signs and checks pagination cursors (`pagination[after]`); without it cursor pagination is a 400. */
  cursors?: CursorCodec
}

/**
 * Validates a request's raw (qs-parsed) query into a `QueryTree`; every mistake is a 400.
 * Filters apply to single-document reads too: a document that does not match is a 404, as in Strapi.
 */
export function parseQuery (model: ContentType, raw: RawQuery, options: ParseOptions): QueryTree {
  const { access, bounds } = options
  if (bounds !== undefined) checkInputDepth(raw, bounds.inputDepth, 'The query')
  const status = parseStatus(raw.status)
  // The grant was checked for the status the route read from the URL; this is the status the
  // query runs with, parsed from the same text, so the two cannot disagree.
  if (status === 'draft' && access !== undefined && !access.drafts) throw new ForbiddenError()
  const visibility = access === undefined ? null : new Visibility(options.registry, access.read)
  const allowed = access?.fields ?? null
  const requested = parseFilters(model, raw.filters, options.registry, visibility, allowed)
  // A row-level permission is one more filter, ANDed in, so it is enforced by the same SQL.
  const required = access?.conditions == null ? null : parseFilters(model, access.conditions, options.registry)
  const filters = required === null ? requested : requested === null ? required : { kind: 'and' as const, children: [requested, required] }
  // A filter on `locale` chooses the locales itself, so the default-locale scope steps aside.
  const locale = raw.locale === undefined && filtersLocale(filters)
    ? null
    : options.allowAllLocales ? parseListLocales(model, raw.locale, options.i18n) : parseLocale(model, raw.locale, options.i18n, false)
  const sort = parseSort(model, raw.sort, options.registry, visibility, allowed)
  const cursors = options.cursors === undefined ? null : { codec: options.cursors, signature: () => sortSignature(model.uid, sort) }
  return {
    fields: parseFields(model, raw.fields, allowed),
    filters,
    sort,
    populate: parsePopulate(options.registry, model, raw.populate, visibility, allowed, options.omitUnreadable === true,
      bounds === undefined ? UNLIMITED_POPULATE : { max: bounds.populateDepth, limited: true }),
    pagination: parsePagination(raw.pagination, options.limits, cursors),
    status,
    publicationFilter: parsePublicationFilter(raw.publicationFilter, raw.hasPublishedVersion),
    locale,
    // Fallbacks complete one locale; a list of locales reads each as it is.
    fallbacks: typeof locale !== 'string' ? [] : options.i18n.fallbacks?.[locale] ?? []
  }
}
