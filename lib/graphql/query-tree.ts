import type { ContentType, Registry } from '../model/registry.js'
import { parseQuery, type CursorCodec, type LocaleSettings, type QueryTree, type Status } from '../query/index.js'
import { toStrapiFilters } from './filters.js'
import type { Window } from './pagination.js'
import { levelFields, populateTree, rootFieldNames, type Level, type PlanContext } from './plan.js'

/**
 * A root field's read, planned: the query tree the document service runs (the same methods the
 * REST routes call, `findPageJson` and `findOneJson`), and the plan its rendered documents follow
 * when resolvers look up their slots (`attachSlots`). Memoized per AST node, variables and
 * caller, as a REST query string's tree is.
 */
export interface PlannedRead {
  tree: QueryTree
  level: Level
}

/** A root field's arguments, as the resolvers read them. */
export interface ReadArgs {
  filters?: unknown
  sort?: string[]
  status: Status
  /** Strapi 5's publication cohort, as the query layer reads it (`never-published`...), and the deprecated boolean. */
  publicationFilter?: string
  hasPublishedVersion?: boolean
  locale?: string
}

export interface TreeSettings {
  registry: Registry
  i18n: LocaleSettings
  /** Checks `after`/`before` cursors (the document service's codec); without it cursor pagination is refused. */
  cursors?: CursorCodec
}

/**
 * The validated query of the root level: filters (with the caller's row conditions ANDed in),
 * sort, status and locale checked as REST checks them; fields and populate from the plan, whose
 * populate keys are slots (one attribute read twice with other arguments, see plan.ts).
 */
function rootTree (model: ContentType, level: Level, args: ReadArgs, ctx: PlanContext, settings: TreeSettings, allowAllLocales: boolean, pagination?: unknown): QueryTree {
  const raw = {
    filters: toStrapiFilters(model, settings.registry, args.filters, ctx.entity),
    sort: args.sort ?? [],
    fields: rootFieldNames(level),
    status: args.status,
    publicationFilter: args.publicationFilter,
    hasPublishedVersion: args.hasPublishedVersion,
    locale: args.locale,
    pagination
  }
  const tree = parseQuery(model, raw, {
    registry: settings.registry,
    limits: { defaultLimit: ctx.defaultLimit, maxLimit: Number.MAX_SAFE_INTEGER, withCount: false },
    i18n: settings.i18n,
    allowAllLocales,
    access: ctx.access ?? undefined,
    cursors: settings.cursors
  })
  return { ...tree, fields: level.fields === null ? tree.fields : levelFields(level), populate: populateTree(level, ctx) }
}

/** A window of documents, with their total in the same statement when the plan asks for it (`pageInfo`, `meta`). */
export function listRead (model: ContentType, level: Level, args: ReadArgs, window: Window, ctx: PlanContext, settings: TreeSettings): PlannedRead {
  if (window.cursor !== undefined) {
    // REST's cursor parameters, checked by the query layer against the sort; counted only for `total`/`pageCount`.
    const pagination = { ...window.cursor, pageSize: window.sqlLimit, withCount: level.total }
    return { tree: rootTree(model, level, args, ctx, settings, true, pagination), level }
  }
  const tree = rootTree(model, level, args, ctx, settings, true)
  const pagination = { mode: 'offset' as const, page: null, pageSize: null, start: window.start, limit: window.sqlLimit, withCount: level.count }
  return { tree: { ...tree, pagination }, level }
}

/** One document (its documentId is the service call's, not the tree's). */
export function oneRead (model: ContentType, level: Level, args: ReadArgs, ctx: PlanContext, settings: TreeSettings): PlannedRead {
  return { tree: rootTree(model, level, args, ctx, settings, false), level }
}
