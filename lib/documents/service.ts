import { sql, type CompiledQuery, type Kysely, type Transaction } from 'kysely'
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js'
import type { Association } from '../model/associations.js'
import type { ContentType, Registry } from '../model/registry.js'
import type { LruCache } from '../compiler/cache.js'
import { compileFindOne, compileRowProbe, scopedRows, type CompileOptions, type FindSpec } from '../compiler/find.js'
import {
  checkInputDepth, parseLocale, parseQuery, parseStatus,
  type LocaleSettings, type ParseOptions, type PaginationLimits, type QueryTree, type RawQuery, type RequestLimits, type Status
} from '../query/index.js'
import type { AccessScope } from '../auth/access.js'
import { parseFields } from '../query/fields.js'
import { parseFilters, type FilterNode } from '../query/filters.js'
import { UNLIMITED_POPULATE, parsePopulate } from '../query/populate.js'
import { Visibility } from '../query/visibility.js'
import { createDocumentId } from './document-id.js'
import { hashPasswords } from './password.js'
import { toColumns } from './columns.js'
import { namedDocuments, parseRelationInput, type RelationInput } from './relation-input.js'
import { lockDocuments, type LockedDocuments } from './document-locks.js'
import { isWriteConflict, writeConflictError } from './write-conflict.js'
import { enforceUnique, generateUids } from './unique.js'
import { assertPublishable, publishVersion, versionLocales, versionPair, versionRows } from './publication.js'
import { copyRowAssociations, deleteRows } from './versions.js'
import { writeComponentAttribute } from './write-components.js'
import { writeMedia } from './write-media.js'
import { writeRelation, type VisibleDocuments, type WrittenRow } from './write-relations.js'
import { validateInput } from './validate-input.js'
import { withinRows } from './within-rows.js'
import { DocumentReader, type CachedRead, type ReadOptions } from './reader.js'

export type { CachedRead } from './reader.js'

/** A document as the API returns it: `id`, `documentId`, attributes, timestamps, `locale`. */
export type Document = Record<string, unknown> & { id: number, documentId: string }

/** Strapi's document-service parameters, as application code passes them. */
export interface QueryParams {
  fields?: string | string[]
  /** Related attributes to include, in any of Strapi's populate forms. */
  populate?: unknown
  /** Strapi's filter object, e.g. `{ views: { $gt: 100 }, $or: [...] }`. */
  filters?: Record<string, unknown> | Array<Record<string, unknown>>
  sort?: string | string[] | Record<string, 'asc' | 'desc'> | Array<Record<string, 'asc' | 'desc'>>
  status?: Status
  locale?: string
  /** Page or offset window; without it `findMany` returns every match. */
  pagination?: { page?: number, pageSize?: number } | { start?: number, limit?: number }
  page?: number
  pageSize?: number
  start?: number
  limit?: number
  /** The caller's limits from the access check (REST and GraphQL pass them; application code need not). */
  access?: AccessScope
  /**
   * `populate` leaves out relations to types the caller may not read instead of refusing them
   * with a 400 (Strapi's users routes sanitise their query so). Only with `access`.
   */
  omitUnreadable?: boolean
  /**
   * Apply the plugin's `limits` (docs/operations.md) to this call, as the REST routes do:
   * `inputDepth`, `populateDepth` and `maxRows`, each a 400 `LimitError` past its bound.
   * Application code is unbounded unless it asks.
   */
  limits?: boolean
}

export interface WriteParams {
  data: Record<string, unknown>
  status?: Status
  locale?: string
  /** What the returned document shows, as in reads. */
  fields?: string | string[]
  populate?: unknown
  access?: AccessScope
  /**
   * Values the application sets itself (a default role, a provider), written with `data` but not
   * the caller's: neither its field limits nor its reach through relations apply to them. Its
   * row-level conditions still hold for the document written.
   */
  trusted?: Record<string, unknown>
  /**
   * Apply the plugin's `limits` to this write, as the REST routes do: the nesting of `data`
   * (`inputDepth`), and the response's `populate` (`populateDepth`, `maxRows`: a response over
   * it rolls the write back).
   */
  limits?: boolean
}

export interface ServiceContext {
  db: Kysely<any>
  /** Compiled reads by content type and query tree, whichever surface built the tree (see reader.ts). */
  queries: LruCache<string, CachedRead>
  registry: Registry
  limits: PaginationLimits
  /** The `limits` options: applied to REST reads, and to calls that ask (`limits: true`). */
  bounds: RequestLimits
  i18n: LocaleSettings
  compile: CompileOptions
}

/** A page rendered by PostgreSQL: `json` is the `data` array as JSON text, ready to send. */
export interface JsonPage {
  json: string
  /** Every match, when `tree.pagination.withCount`; null otherwise. */
  total: number | null
}

/** How a tree-taking read runs. */
export interface TreeReadOptions {
  /** Refuse, with a 400, an answer of more than `limits.maxRows` rows, as the REST routes do. */
  limits?: boolean
}

type Row = Record<string, unknown>

/**
 * One association of a write with its input (parsed, for relations) and, for a relation whose
 * target the caller sees only in part (row-level conditions), which of its documents it sees.
 */
type AssociationWrite = [association: Association, input: unknown, visible: VisibleDocuments | null]

/** Rows of `model` matching `filters`, in the version writes address (the draft of a draft & publish type). */
function writableRows (db: Kysely<any>, model: ContentType, filters: FilterNode | null, locale: string | null, compile: CompileOptions) {
  return scopedRows(db, model, { status: model.draftAndPublish ? 'draft' : 'published', locale, filters }, compile)
}

/** A write validated and ready for its transaction. */
interface PreparedWrite {
  shape: Shape
  data: Record<string, unknown>
  status: Status
  locale: string | null
  values: Record<string, unknown>
  associations: AssociationWrite[]
  generated: ReadonlySet<string>
  access: AccessScope | undefined
}

/** What a read or a write renders: its fields and populate, and with `limits` its `maxRows`. */
type Shape = Pick<FindSpec, 'fields' | 'populate' | 'maxRows'>

/**
 * The one path through which REST, GraphQL and application code read and write documents of a
 * content type. Reads compile to a single SQL statement (under `limits`, a nested populate's row
 * budget may be counted by one small statement first); each write runs in one transaction.
 *
 * @example
 * const articles = app.contentApi.documents('api::article.article')
 * const doc = await articles.create({ data: { title: 'Hello' } })
 * await articles.update({ documentId: doc.documentId, data: { views: 3 } })
 * const page = await articles.findMany({ sort: 'title:desc', pagination: { page: 1, pageSize: 10 } })
 */
export class DocumentService {
  readonly model: ContentType
  readonly #ctx: ServiceContext
  readonly #listeners = new Set<() => void>()
  readonly #reader: DocumentReader

  constructor (model: ContentType, ctx: ServiceContext) {
    this.model = model
    this.#ctx = ctx
    this.#reader = new DocumentReader(model, ctx)
  }

  #scope (params: { status?: unknown, locale?: unknown }, allowAllLocales: boolean): { status: Status, locale: string | null } {
    return { status: parseStatus(params.status), locale: parseLocale(this.model, params.locale, this.#ctx.i18n, allowAllLocales) }
  }

  /**
   * Application-code parameters go through the same validation as a REST query string; with
   * `limits`, under the same bounds.
   */
  #tree (params: QueryParams, allowAllLocales: boolean): QueryTree {
    const pagination = params.pagination ?? pick(params as Record<string, unknown>, ['page', 'pageSize', 'start', 'limit'])
    const { access, omitUnreadable, limits, ...query } = params
    return parseQuery(this.model, { ...query, pagination } as RawQuery, {
      registry: this.#ctx.registry,
      limits: { ...this.#ctx.limits, withCount: false },
      i18n: this.#ctx.i18n,
      allowAllLocales,
      access,
      omitUnreadable,
      bounds: limits === true ? this.#ctx.bounds : undefined
    })
  }

  /** How an application-code read runs: uncached (reader.ts says why), with `limits` under `maxRows`. */
  #appRead (params: { limits?: boolean }): ReadOptions {
    return { maxRows: params.limits === true ? this.#ctx.bounds.maxRows : undefined, cache: false }
  }

  /** The row budget's probe of a write's re-read (null: none needed), compiled. */
  #probe (spec: FindSpec, read: Parameters<typeof compileRowProbe>[3], db: Kysely<any> = this.#ctx.db): CompiledQuery<{ n: number }> | null {
    return compileRowProbe(db, this.model, spec, read, this.#ctx.compile)?.compile() ?? null
  }

  /**
   * Every matching document, or one window of them when pagination is given, in `sort` order
   * then by id:
   *
   * ```sql
   * select '[' || coalesce(string_agg(row_to_json(r)::text, ','), '') || ']' as "data"
   * from (select t.id as "id", t.document_id as "documentId", ... from "articles" as t where <scope and filters>
   *       order by ..., t.id asc [limit $1] [offset $2]) as r
   * ```
   */
  async findMany (params: QueryParams = {}): Promise<Document[]> {
    const tree = this.#tree(params, true)
    const bounded = params.pagination !== undefined || ['page', 'pageSize', 'start', 'limit'].some((k) => k in params)
    const { start, limit } = tree.pagination
    const { data } = await this.#reader.read(tree, bounded ? { kind: 'window', start, limit } : { kind: 'window', start: 0, limit: null }, this.#appRead(params))
    return JSON.parse(data!) as Document[]
  }

  /** The first matching document (in `sort` order, then by id), or null: `findMany`'s statement with `limit 1`. */
  async findFirst (params: QueryParams = {}): Promise<Document | null> {
    const { data } = await this.#reader.read(this.#tree(params, true), { kind: 'window', start: 0, limit: 1 }, this.#appRead(params))
    return (JSON.parse(data!) as Document[])[0] ?? null
  }

  /**
   * The document with this documentId in the requested status and locale, or null:
   *
   * ```sql
   * select row_to_json(r)::text as "data" from (select ... from "articles" as t where <scope and filters> and t.document_id = $1 order by t.id asc limit 1) as r
   * ```
   */
  async findOne (params: QueryParams & { documentId: string }): Promise<Document | null> {
    const { data } = await this.#reader.read(this.#tree(params, false), { kind: 'one', documentId: params.documentId }, this.#appRead(params))
    return data === null ? null : JSON.parse(data) as Document
  }

  /** The number of matching documents: `select count(*)::int as "count" from "articles" as t where <scope and filters>`. */
  async count (params: Pick<QueryParams, 'status' | 'locale' | 'filters' | 'access' | 'limits'> = {}): Promise<number> {
    return await this.#reader.count(this.#tree(params, true))
  }

  /**
   * Validates a client's query (as `parseQueryString` parses it) into the query tree the REST
   * routes read with: under every bound of `limits`, for the caller's access (its row
   * conditions ANDed into the filters, its field limits applied). `list` accepts `locale=*`.
   */
  queryTree (raw: RawQuery, options: { list: boolean, access?: AccessScope }): QueryTree {
    return parseQuery(this.model, raw, this.#parseOptions(options.list, options.access))
  }

  /**
   * One page of documents, `tree.pagination`'s window, as JSON text rendered by PostgreSQL (never
   * parsed in Node), and the total of matches when `withCount`, in ONE statement (see
   * `compileFindPage`):
   *
   * ```sql
   * with "page" as (select t.id as "__id", <sort keys> from "articles" as t where <scope and filters> order by ..., t.id asc limit $1 offset $2)
   * select (select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by ...), '') || ']'
   *         from "page" join "articles" as t on t.id = "page"."__id" cross join lateral (select ...) as d) as "data",
   *        (<the count, when the page cannot tell it>) as "total"
   * ```
   *
   * `tree` is validated for the caller already (`queryTree`, or `parseQuery` with its access):
   * nothing is checked again. The statement is cached by the tree's key (lib/query/tree-key.ts),
   * so a tree must not change once read. With `limits`, an answer over `limits.maxRows` rows is
   * a 400 (a nested populate's row budget may be counted by one small statement first).
   */
  async findPageJson (tree: QueryTree, options: TreeReadOptions = {}): Promise<JsonPage> {
    const row = await this.#reader.read(tree, { kind: 'page' }, this.#treeRead(options))
    return { json: row.data!, total: row.total }
  }

  /**
   * One document as JSON text, or null, in the tree's status and locale; a null documentId reads
   * a single type's document. Cached and bounded as `findPageJson`:
   *
   * ```sql
   * select row_to_json(r)::text as "data" from (select t.id as "id", ... from "articles" as t
   *   where <scope and filters> and t.document_id = $1 order by t.id asc limit 1) as r
   * ```
   */
  async findOneJson (documentId: string | null, tree: QueryTree, options: TreeReadOptions = {}): Promise<string | null> {
    return (await this.#reader.read(tree, { kind: 'one', documentId }, this.#treeRead(options))).data
  }

  #treeRead (options: TreeReadOptions): ReadOptions {
    return { maxRows: options.limits === true ? this.#ctx.bounds.maxRows : undefined, cache: true }
  }

  /** REST reads: a client's query string, under every bound of `limits`. */
  #parseOptions (allowAllLocales: boolean, access: AccessScope | undefined): ParseOptions {
    return { registry: this.#ctx.registry, limits: this.#ctx.limits, i18n: this.#ctx.i18n, allowAllLocales, access, bounds: this.#ctx.bounds }
  }

  /**
   * Creates a document. For draft & publish types the draft version is written and, unless
   * `status: 'draft'`, published at once (Strapi v5's REST behaviour); the published version is
   * returned.
   */
  async create (params: WriteParams): Promise<Document> {
    const write = await this.#prepare(params, false)
    return await this.#write(async (trx) => await this.#createIn(trx, write))
  }

  /**
   * Validates a write before any transaction opens: its response shape, the caller's field
   * limits, status and locale, and the data (a creation in full; an update partially; a
   * draft-only write of a draft & publish type with Strapi's draft rules, which let required
   * values wait until publication).
   */
  async #prepare (params: WriteParams, partial: boolean): Promise<PreparedWrite> {
    // Before anything walks them: validation, relation inputs and error messages all recurse.
    if (params.limits === true) {
      checkInputDepth(params.data, this.#ctx.bounds.inputDepth, 'data')
      checkInputDepth({ fields: params.fields, populate: params.populate }, this.#ctx.bounds.inputDepth, 'The query')
    }
    const shape = this.#shape(params)
    const requested = plainData(params.data)
    this.#checkWritable(requested, params.access)
    const data = params.trusted === undefined ? requested : { ...requested, ...params.trusted }
    const { status, locale } = this.#writeScope(params)
    const generated = partial ? new Set<string>() : generateUids(this.model, data)
    const input = validateInput(this.model, data, { partial, draft: this.#draftOnly(status) })
    const associations = this.#associationInputs(input.deferred, params.access, new Set(Object.keys(params.trusted ?? {})))
    const values = await hashPasswords(this.model, input.values)
    return { shape, data, status, locale, values, associations, generated, access: params.access }
  }

  async #createIn (trx: Transaction<any>, write: PreparedWrite): Promise<Document> {
    await this.#lock(trx, null, write.associations)
    const documentId = createDocumentId()
    await this.#insertVersion(trx, { ...write, documentId })
    await this.#checkWritten(trx, documentId, write)
    return await this.#reread(trx, documentId, write.status, write.locale, write.shape)
  }

  /**
   * Writes a new (draft, or only) row of a document in one locale: a new document, or a new
   * locale of an existing one, which takes the values of the document's non-localized
   * attributes from its other locales. Publishes it unless `status` is draft.
   */
  async #insertVersion (trx: Transaction<any>, version: {
    documentId: string
    locale: string | null
    status: Status
    values: Record<string, unknown>
    associations: AssociationWrite[]
    generated: ReadonlySet<string>
    shared?: Row
  }): Promise<void> {
    const { documentId, locale, status, values } = version
    await enforceUnique(trx, this.model, values, { documentId, locale, draftsOnly: this.#draftOnly(status) }, version.generated)
    const now = new Date().toISOString()
    const row: Row = {
      ...version.shared,
      ...toColumns(this.model, values),
      document_id: documentId,
      created_at: now,
      updated_at: now,
      // The first row is the draft of a draft & publish type, the only row of any other.
      published_at: this.model.draftAndPublish ? null : now
    }
    if (this.model.localized) row.locale = locale
    const inserted = await trx.insertInto(this.model.tableName).values(row).returning('id').executeTakeFirstOrThrow()
    await this.#writeAssociations(trx, { model: this.model, rowId: inserted.id as number, documentId, locale }, version.associations)
    await this.#syncShared(trx, documentId, locale, values)
    if (this.model.draftAndPublish && status === 'published') await publishVersion(trx, this.model, this.#ctx, documentId, locale, now)
  }

  /**
   * Partially updates a document: keys absent from `data` keep their values, `null` clears one.
   * Draft & publish types edit the draft and, unless `status: 'draft'`, publish it again.
   * Returns null when no such document exists.
   */
  async update (params: WriteParams & { documentId: string | null }): Promise<Document | null> {
    const write = await this.#prepare(params, true)
    return await this.#write(async (trx) => {
      const documentId = params.documentId ?? await this.#singleDocumentId(trx)
      return documentId === null ? null : await this.#updateIn(trx, documentId, write)
    })
  }

  async #updateIn (trx: Transaction<any>, documentId: string, write: PreparedWrite): Promise<Document | null> {
    const { status, locale, values, associations, shape } = write
    await this.#lock(trx, documentId, associations)
    if (!(await this.#permits(trx, documentId, write.access, this.model.localized ? locale : null))) return null
    const target = trx.updateTable(this.model.tableName)
      .where('document_id', '=', documentId)
      .where((eb) => this.model.localized && locale !== null ? eb('locale', '=', locale) : sql<boolean>`true`)
      .where((eb) => this.model.draftAndPublish ? eb('published_at', 'is', null) : sql<boolean>`true`)
    const now = new Date().toISOString()
    const updated = await target.set({ ...toColumns(this.model, values), updated_at: now }).returning(['id']).execute()
    if (updated.length === 0) {
      // Writing an existing document in a locale it does not have yet creates that locale.
      const created = await this.#createLocale(trx, documentId, locale, status, write.data, associations)
      if (!created) return null
      await this.#checkWritten(trx, documentId, write)
      return await this.#reread(trx, documentId, status, locale, shape)
    }
    await this.#writeAssociations(trx, { model: this.model, rowId: updated[0].id as number, documentId, locale }, associations)
    await enforceUnique(trx, this.model, values, { documentId, locale, draftsOnly: this.#draftOnly(status) }, new Set())
    await this.#syncShared(trx, documentId, locale, values)
    await this.#checkWritten(trx, documentId, write)
    if (this.model.draftAndPublish && status === 'published') {
      // A partial update may publish a draft written under the draft rules: it must be complete now.
      await assertPublishable(trx, this.model, this.#ctx, documentId, locale)
      await publishVersion(trx, this.model, this.#ctx, documentId, locale, now)
    }
    return await this.#reread(trx, documentId, status, locale, shape)
  }

  /**
   * A new locale of an existing document (PUT `?locale=fr` on its documentId, as Strapi v5 does):
   * validated as a creation, with the non-localized attributes taken from the other locales.
   * Returns false when the document does not exist in any locale.
   */
  async #createLocale (
    trx: Transaction<any>, documentId: string, locale: string | null, status: Status,
    data: Record<string, unknown>, associations: AssociationWrite[]
  ): Promise<boolean> {
    if (!this.model.localized || locale === null) return false
    const shared = [...this.model.writableFields.values()].filter((f) => !f.localized).map((f) => f.column)
    const sibling = await trx.selectFrom(this.model.tableName)
      .select(['id', ...shared])
      .where('document_id', '=', documentId)
      .orderBy(sql`published_at is not null`).orderBy('id')
      .executeTakeFirst()
    if (sibling === undefined) return false
    // The new locale starts from the document's shared values, so neither a default nor a
    // "required" check overrides what the other locales already hold.
    const copy = { ...await this.#sharedValues(trx, documentId), ...data }
    const generated = generateUids(this.model, copy)
    const input = validateInput(this.model, copy, { partial: false, draft: this.#draftOnly(status) })
    const values = await hashPasswords(this.model, input.values)
    const { id: _, ...sharedValues } = sibling
    await this.#insertVersion(trx, { documentId, locale, status, values, associations, generated, shared: sharedValues })
    return true
  }

  /** The visible non-localized attributes of a document, as the API renders them. */
  async #sharedValues (trx: Transaction<any>, documentId: string): Promise<Record<string, unknown>> {
    const fields = [...this.model.writableFields.values()].filter((f) => !f.localized && !f.hidden)
    if (fields.length === 0) return {}
    const spec: FindSpec = {
      status: this.model.draftAndPublish ? 'draft' : 'published', locale: null, fields, filters: null, sort: [], populate: new Map()
    }
    const row = await compileFindOne(trx, this.model, spec, documentId, this.#ctx.compile).executeTakeFirst()
    return row === undefined ? {} : JSON.parse(row.data) as Record<string, unknown>
  }

  /**
   * Non-localized attributes hold one value for all locales of a document: a write in one
   * locale is copied to the draft rows (the only rows without draft & publish) of the others.
   */
  async #syncShared (trx: Transaction<any>, documentId: string, locale: string | null, values: Record<string, unknown>): Promise<void> {
    if (!this.model.localized || locale === null) return
    const shared = Object.fromEntries(Object.entries(values).filter(([name]) => this.model.writableFields.get(name)?.localized === false))
    if (Object.keys(shared).length === 0) return
    let query = trx.updateTable(this.model.tableName).set(toColumns(this.model, shared))
      .where('document_id', '=', documentId).where('locale', '<>', locale)
    if (this.model.draftAndPublish) query = query.where('published_at', 'is', null)
    await query.execute()
  }

  /** A write's status and locale; the locale must be one of the configured ones. */
  #writeScope (params: { status?: unknown, locale?: unknown }): { status: Status, locale: string | null } {
    const scope = this.#scope(params, false)
    if (scope.locale !== null && !this.#ctx.i18n.locales.includes(scope.locale)) {
      throw new ValidationError(`This locale doesn't exist: ${scope.locale}`, { key: 'locale', source: 'query', param: 'locale' })
    }
    return scope
  }

  /**
   * Creates the single type's document on its first write, updates it afterwards (REST
   * `PUT /api/<singularApiId>`).
   */
  async upsertSingle (params: WriteParams): Promise<Document> {
    return await this.#write(async (trx) => {
      // Two first writes at once must not create two documents: serialise them on the type.
      await sql`select pg_advisory_xact_lock(hashtext(${`single:${this.model.tableName}`}))`.execute(trx)
      const existing = await this.#singleDocumentId(trx)
      if (existing === null) return await this.#createIn(trx, await this.#prepare(params, false))
      const updated = await this.#updateIn(trx, existing, await this.#prepare(params, true))
      if (updated === null) throw new NotFoundError()
      return updated
    })
  }

  /**
   * Deletes every version (draft and published) of a document in one locale (every locale with
   * `locale: '*'`). Returns the number of rows removed; deleting an unknown document is not an error.
   */
  async delete (params: { documentId: string | null, locale?: string, access?: AccessScope }): Promise<{ documentId: string | null, entries: number }> {
    const locale = parseLocale(this.model, params.locale, this.#ctx.i18n, true)
    if (locale !== null) this.#writeScope({ locale })
    return await this.#write(async (trx) => {
      const documentId = params.documentId ?? await this.#singleDocumentId(trx)
      const inLocale = this.model.localized ? locale : null
      if (documentId !== null) await this.#lock(trx, documentId)
      if (documentId === null || !(await this.#permits(trx, documentId, params.access, inLocale))) return { documentId: null, entries: 0 }
      let query = trx.selectFrom(this.model.tableName).select('id').where('document_id', '=', documentId)
      if (inLocale !== null) query = query.where('locale', '=', inLocale)
      else if (this.model.localized && params.access?.conditions != null) {
        // Every locale: only those whose version the caller may write.
        const conditions = this.#conditionsOn(documentId, params.access.conditions)
        query = query.where('locale', 'in', writableRows(trx, this.model, conditions, null, this.#ctx.compile).select('t.locale'))
      }
      const rows = await query.execute()
      const entries = await deleteRows(trx, this.#ctx.registry, this.model, rows.map((r) => r.id as number))
      return { documentId, entries }
    })
  }

  /**
   * Publishes the current draft of a document in one locale (every locale with `locale: '*'`).
   * Returns the published versions; none when the document has no draft there.
   */
  async publish (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Document[] }> {
    this.#requireDraftAndPublish('publish')
    return await this.#write(async (trx) => {
      await this.#lock(trx, params.documentId)
      const now = new Date().toISOString()
      const locales = await versionLocales(trx, this.model, this.#ctx, params.documentId, params.locale, true)
      for (const locale of locales) {
        await assertPublishable(trx, this.model, this.#ctx, params.documentId, locale)
        await publishVersion(trx, this.model, this.#ctx, params.documentId, locale, now)
      }
      const entries: Document[] = []
      for (const locale of locales) entries.push(await this.#reread(trx, params.documentId, 'published', locale, this.#shape({ data: {} })))
      return { documentId: params.documentId, entries }
    })
  }

  /** Removes the published version of a document (one locale, or all with `'*'`); the draft stays. */
  async unpublish (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: number }> {
    this.#requireDraftAndPublish('unpublish')
    return await this.#write(async (trx) => {
      await this.#lock(trx, params.documentId)
      const rows = await versionRows(trx, this.model, this.#ctx, params.documentId, params.locale, true)
      return { documentId: params.documentId, entries: await deleteRows(trx, this.#ctx.registry, this.model, rows) }
    })
  }

  /** Replaces the draft with a copy of the published version, dropping unpublished edits. */
  async discardDraft (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Document[] }> {
    this.#requireDraftAndPublish('discardDraft')
    return await this.#write(async (trx) => {
      await this.#lock(trx, params.documentId)
      const entries: Document[] = []
      for (const locale of await versionLocales(trx, this.model, this.#ctx, params.documentId, params.locale, false)) {
        const pair = await versionPair(trx, this.model, params.documentId, locale)
        if (pair.published === null || pair.draft === null) continue
        const columns = [...this.model.fields.values()].filter((f) => !f.system || f.name === 'createdAt' || f.name === 'updatedAt').map((f) => f.column)
        await trx.updateTable(`${this.model.tableName} as d`).from(`${this.model.tableName} as p`)
          .set(Object.fromEntries(columns.map((c) => [c, sql.ref(`p.${c}`)])))
          .where('d.id', '=', pair.draft).where('p.id', '=', pair.published).execute()
        await copyRowAssociations(trx, this.#ctx.registry, this.model, pair.published, pair.draft)
        entries.push(await this.#reread(trx, params.documentId, 'draft', locale, this.#shape({ data: {} })))
      }
      return { documentId: params.documentId, entries }
    })
  }

  /**
   * Locks, before anything else in the write's transaction, the document written (null: a new
   * one, which no other writer can know yet) and every document its relation inputs link or
   * unlink (see lib/documents/document-locks.ts). A second writer of the same document, or of
   * the same related document's list, waits here until the first commits, then reads what it wrote.
   */
  async #lock (trx: Transaction<any>, documentId: string | null, associations: AssociationWrite[] = []): Promise<void> {
    const documents: LockedDocuments[] = documentId === null ? [] : [{ table: this.model.tableName, documentIds: [documentId], rowIds: [] }]
    for (const [association, input] of associations) {
      if (association.kind !== 'relation') continue
      const refs = namedDocuments(input as RelationInput)
      documents.push({
        table: this.#ctx.registry.get(association.target)!.tableName,
        documentIds: refs.flatMap((r) => r.documentId ?? []),
        rowIds: refs.flatMap((r) => r.documentId === undefined && r.id !== undefined ? [r.id] : [])
      })
    }
    await lockDocuments(trx, documents)
  }

  #requireDraftAndPublish (action: string): void {
    if (!this.model.draftAndPublish) throw new ValidationError(`${action}: ${this.model.uid} does not have draft & publish enabled`)
  }

  /**
   * A field-level permission: writing an attribute it does not list is a 400, like an unknown key.
   * A relation to a type the caller may not read is one too, as in Strapi (it would tell which
   * documents exist there, and link to them).
   */
  #checkWritable (data: unknown, access: AccessScope | undefined): void {
    if (access === undefined || typeof data !== 'object' || data === null) return
    for (const key of Object.keys(data)) {
      const association = this.model.associations.get(key)
      const unreadable = association?.kind === 'relation' && access.read(association.target) === null
      if (unreadable || (access.fields !== null && Object.hasOwn(this.model.attributes, key) && !access.fields.has(key))) {
        throw ValidationError.invalidKey(key, { key, source: 'body' })
      }
    }
  }

  /**
   * A row-level permission: the document must match its conditions to be written, in the version
   * of the locale written (`locale` null: any). A locale the document does not have yet is
   * created by the write: then the document must be the caller's in another locale, and
   * `#checkWritten` checks the new one.
   */
  async #permits (trx: Transaction<any>, documentId: string, access: AccessScope | undefined, locale: string | null = null): Promise<boolean> {
    if (access?.conditions == null) return true
    const conditions = this.#conditionsOn(documentId, access.conditions)
    const count = async (filters: FilterNode | null, inLocale: string | null): Promise<number> =>
      (await writableRows(trx, this.model, filters, inLocale, this.#ctx.compile).select(sql<number>`count(*)::int`.as('count')).executeTakeFirstOrThrow()).count
    if (await count(conditions, locale) > 0) return true
    if (locale === null) return false
    const localeExists = await count(parseFilters(this.model, { documentId }), locale) > 0
    return !localeExists && await count(conditions, null) > 0
  }

  /** A row-level permission's conditions narrowed to one document. */
  #conditionsOn (documentId: string, conditions: Record<string, unknown>): FilterNode | null {
    return parseFilters(this.model, { $and: [conditions, { documentId }] }, this.#ctx.registry)
  }

  /** Which of some documents of `target` the caller sees, given its conditions on that type. */
  #visibleDocuments (target: ContentType, conditions: FilterNode): VisibleDocuments {
    return async (trx, documentIds) => {
      const rows = await writableRows(trx, target, conditions, null, this.#ctx.compile)
        .select('t.document_id').distinct().where('t.document_id', 'in', documentIds).execute()
      return new Set(rows.map((r) => r.document_id as string))
    }
  }

  /**
   * A row-level permission holds for what a write leaves too (as PostgreSQL's `WITH CHECK`): a
   * caller may not create a document outside its conditions, nor move one out of them (give a
   * note to another owner). Throwing rolls the whole write back.
   */
  async #checkWritten (trx: Transaction<any>, documentId: string, write: PreparedWrite): Promise<void> {
    if (!(await this.#permits(trx, documentId, write.access, this.model.localized ? write.locale : null))) throw new ForbiddenError()
  }

  /**
   * Runs a write in one transaction, then tells the listeners registered with `onChange` (after
   * the commit, so they never see a write that rolled back). A write that lost a race the
   * database settled (a deadlock, a version index) is a 503 to retry (see write-conflict.ts).
   */
  async #write<T> (fn: (trx: Transaction<any>) => Promise<T>): Promise<T> {
    let result: T
    try {
      result = await this.#ctx.db.transaction().execute(fn)
    } catch (err) {
      throw isWriteConflict(err) ? writeConflictError(err) : err
    }
    for (const listener of this.#listeners) listener()
    return result
  }

  /**
   * Calls `listener` after every committed write of this content type (caches of derived data,
   * such as the authenticator's cache of users, use it to stay current).
   */
  onChange (listener: () => void): void {
    this.#listeners.add(listener)
  }

  #draftOnly (status: Status): boolean {
    return this.model.draftAndPublish && status === 'draft'
  }

  /** Relation inputs are parsed before the transaction; components and media validate as they write. */
  #associationInputs (deferred: Record<string, unknown>, access: AccessScope | undefined, trusted: ReadonlySet<string>): AssociationWrite[] {
    const visibility = access === undefined ? null : new Visibility(this.#ctx.registry, access.read)
    return Object.entries(deferred).map(([name, value]): AssociationWrite => {
      const association = this.model.associations.get(name)
      const target = association?.kind === 'relation' ? this.#ctx.registry.get(association.target) : undefined
      if (association === undefined || (association.kind === 'relation' && target === undefined)) {
        throw ValidationError.invalidKey(name, { key: name, source: 'body' })
      }
      if (association.kind !== 'relation') return [association, value, null]
      const conditions = trusted.has(name) ? null : visibility?.rows(target!) ?? null
      return [association, parseRelationInput(name, value), conditions === null ? null : this.#visibleDocuments(target!, conditions)]
    })
  }

  async #writeAssociations (trx: Transaction<any>, row: WrittenRow, inputs: AssociationWrite[]): Promise<void> {
    for (const [association, input, visible] of inputs) {
      switch (association.kind) {
        case 'relation':
          await writeRelation(trx, row, association, this.#ctx.registry.get(association.target)!, input as RelationInput, this.#ctx.i18n.defaultLocale, visible)
          break
        case 'media':
          await writeMedia(trx, this.#ctx.registry, { uid: this.model.uid, rowId: row.rowId }, association, input)
          break
        default:
          await writeComponentAttribute(trx, this.#ctx.registry, { joinTable: association.joinTable, rowId: row.rowId }, association, input)
      }
    }
  }

  /** The response shape of a write, validated before anything is written. */
  #shape (params: WriteParams): Shape {
    const access = params.access
    const bounds = params.limits === true ? this.#ctx.bounds : undefined
    const visibility = access === undefined ? null : new Visibility(this.#ctx.registry, access.read)
    return {
      fields: parseFields(this.model, params.fields, access?.fields ?? null),
      populate: parsePopulate(this.#ctx.registry, this.model, params.populate, visibility, access?.fields ?? null, false,
        bounds === undefined ? UNLIMITED_POPULATE : { max: bounds.populateDepth, limited: true }),
      maxRows: bounds?.maxRows
    }
  }

  /**
   * The document as written, read in the write's transaction. With `maxRows` in the shape, a
   * response over it throws, which rolls the write back: the client is refused, nothing is kept.
   */
  async #reread (trx: Transaction<any>, documentId: string, status: Status, locale: string | null, shape: Shape): Promise<Document> {
    const spec: FindSpec = {
      // The written row itself ignores status on a type without draft & publish; populated
      // relations to draft & publish types follow it, as in reads.
      status,
      locale,
      ...shape,
      filters: null,
      sort: []
    }
    const row = await withinRows(trx, this.#probe(spec, { documentId }, trx), shape.maxRows,
      async () => await compileFindOne(trx, this.model, spec, documentId, this.#ctx.compile).executeTakeFirstOrThrow())
    return JSON.parse(row.data) as Document
  }

  /** The single type's one document, whichever locales it has. */
  async #singleDocumentId (db: Kysely<any>): Promise<string | null> {
    const row = await db.selectFrom(this.model.tableName).select('document_id').orderBy('id').limit(1).executeTakeFirst()
    return (row?.document_id as string | undefined) ?? null
  }

  /**
   * Whether a document satisfies a row-level permission's conditions (on its draft under draft &
   * publish), in some locale (`locale` null) or in one, read through `trx`: the check updates
   * and deletes make, for callers that write the document's rows themselves in that transaction
   * (the upload routes' linking). True when `access` has no conditions.
   */
  async satisfies (trx: Transaction<any>, documentId: string, access: AccessScope | undefined, locale: string | null = null): Promise<boolean> {
    return await this.#permits(trx, documentId, access, locale)
  }
}

function pick (source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key]
  return out
}

/** A shallow copy, so uid generation never mutates the caller's object. Non-objects go to validation as they are. */
function plainData (data: unknown): Record<string, unknown> {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? { ...(data as Record<string, unknown>) } : data as Record<string, unknown>
}
