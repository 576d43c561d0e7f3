import type { Kysely } from 'kysely'
import { compileFindOne, compileFindPage, type CompileOptions } from '../compiler/find.js'
import type { ContentType, Registry } from '../model/registry.js'
import { parseQuery, type LocaleSettings, type QueryTree, type Status } from '../query/index.js'
import { toStrapiFilters } from './filters.js'
import { attachSlots, levelFields, populateTree, rootFieldNames, type Level, type PlanContext } from './plan.js'
import type { Window } from './pagination.js'

type Json = Record<string, unknown>

export interface ReadArgs {
  filters?: unknown
  sort?: string[]
  status: Status
  locale?: string
}

/**
 * Runs a planned read as ONE statement through the document compiler, the same one REST's
 * routes use (`compileFindPage` with its count strategy, `compileFindOne`).
 *
 * This goes beneath the document service's public methods because they cannot take a populate
 * tree whose keys are slots (one attribute read twice with other arguments), nor GraphQL's own
 * page limits: the module's report asks for a `DocumentService` entry point taking a validated
 * query tree, which would replace this file.
 */
export class Reader {
  readonly #db: Kysely<any>
  readonly #registry: Registry
  readonly #i18n: LocaleSettings
  readonly #compile: CompileOptions

  constructor (db: Kysely<any>, registry: Registry, i18n: LocaleSettings, compile: CompileOptions) {
    this.#db = db
    this.#registry = registry
    this.#i18n = i18n
    this.#compile = compile
  }

  /**
   * The validated query of the root level: filters (with the caller's row conditions ANDed in),
   * sort, status and locale checked as REST checks them; fields and populate from the plan.
   */
  #tree (model: ContentType, level: Level, args: ReadArgs, ctx: PlanContext, allowAllLocales: boolean): QueryTree {
    const raw = {
      filters: toStrapiFilters(model, this.#registry, args.filters, ctx.entity),
      sort: args.sort ?? [],
      fields: rootFieldNames(level),
      status: args.status,
      locale: args.locale
    }
    const tree = parseQuery(model, raw, {
      registry: this.#registry,
      limits: { defaultLimit: ctx.defaultLimit, maxLimit: Number.MAX_SAFE_INTEGER, withCount: false },
      i18n: this.#i18n,
      allowAllLocales,
      access: ctx.access ?? undefined
    })
    tree.fields = level.fields === null ? tree.fields : levelFields(level)
    tree.populate = populateTree(level, ctx)
    return tree
  }

  /** One window of documents, and their total when the plan asks for it (in the same statement). */
  async list (model: ContentType, level: Level, args: ReadArgs, window: Window, ctx: PlanContext): Promise<{ documents: Json[], total: number | null }> {
    const tree = this.#tree(model, level, args, ctx, true)
    const pagination = { mode: 'offset' as const, page: null, pageSize: null, start: window.start, limit: window.sqlLimit, withCount: level.count }
    const row = await compileFindPage(this.#db, model, { ...tree, pagination }, this.#compile).executeTakeFirstOrThrow()
    const documents = JSON.parse(row.data as string) as Json[]
    attachSlots(level, documents)
    return { documents, total: (row.total as number | null) ?? null }
  }

  /** One document by documentId (a single type's only one with null), or null. */
  async one (model: ContentType, level: Level, documentId: string | null, args: ReadArgs, ctx: PlanContext): Promise<Json | null> {
    const tree = this.#tree(model, level, args, ctx, false)
    const row = await compileFindOne(this.#db, model, tree, documentId, this.#compile).executeTakeFirst()
    if (row === undefined) return null
    const document = JSON.parse(row.data) as Json
    attachSlots(level, document)
    return document
  }
}
