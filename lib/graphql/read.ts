import type { CompiledQuery, Kysely } from 'kysely'
import { LruCache } from '../lru-cache.js'
import { compileFindOne, compileFindPage, type CompileOptions } from '../compiler/find.js'
import type { ContentType, Registry } from '../model/registry.js'
import { parseQuery, type LocaleSettings, type QueryTree, type Status } from '../query/index.js'
import { toStrapiFilters } from './filters.js'
import { attachSlots, levelFields, populateTree, rootFieldNames, type Level, type PlanContext } from './plan.js'
import type { Window } from './pagination.js'

type Json = Record<string, unknown>

/** A root field's statement, compiled, with the plan its rendered documents follow. */
export interface CompiledRead {
  query: CompiledQuery<unknown>
  level: Level
}

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
  readonly #cache = new WeakMap<object, LruCache<string, CompiledRead>>()

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
  compileList (model: ContentType, level: Level, args: ReadArgs, window: Window, ctx: PlanContext): CompiledRead {
    const tree = this.#tree(model, level, args, ctx, true)
    const pagination = { mode: 'offset' as const, page: null, pageSize: null, start: window.start, limit: window.sqlLimit, withCount: level.count }
    return { query: compileFindPage(this.#db, model, { ...tree, pagination }, this.#compile).compile(), level }
  }

  /** One document by documentId (a single type's only one with null). */
  compileOne (model: ContentType, level: Level, documentId: string | null, args: ReadArgs, ctx: PlanContext): CompiledRead {
    const tree = this.#tree(model, level, args, ctx, false)
    return { query: compileFindOne(this.#db, model, tree, documentId, this.#compile).compile(), level }
  }

  async list (read: CompiledRead): Promise<{ documents: Json[], total: number | null }> {
    const { rows } = await this.#db.executeQuery(read.query)
    const row = rows[0] as { data: string, total?: number | null }
    const documents = JSON.parse(row.data) as Json[]
    attachSlots(read.level, documents)
    return { documents, total: row.total ?? null }
  }

  async one (read: CompiledRead): Promise<Json | null> {
    const { rows } = await this.#db.executeQuery(read.query)
    if (rows.length === 0) return null
    const document = JSON.parse((rows[0] as { data: string }).data) as Json
    attachSlots(read.level, document)
    return document
  }

  /**
   * The compiled read of a root field, from the cache or built now. Mercurius keeps one parsed
   * document per query text, so a field's AST node identifies the query; with the variables and
   * the caller's access key it determines the plan and the SQL, as a REST query string does.
   */
  cached (node: object, key: string, build: () => CompiledRead): CompiledRead {
    let reads = this.#cache.get(node)
    if (reads === undefined) {
      reads = new LruCache(100)
      this.#cache.set(node, reads)
    }
    let read = reads.get(key)
    if (read === undefined) {
      read = build()
      reads.set(key, read)
    }
    return read
  }
}
