import type { Transaction } from 'kysely'
import { ValidationError } from '../errors.js'
import {
  cursorLinks, parseLocale, parseQuery,
  type CursorCodec, type CursorLinks, type ParseOptions, type QueryTree, type RawQuery
} from '../query/index.js'
import type { MediaAssociation } from '../model/associations.js'
import type { AccessScope } from '../query/access-scope.js'
import type { ContentType } from '../model/registry.js'
import { discardDraft, publishDocument, requireDraftAndPublish, unpublishDocument } from './draft-and-publish.js'
import { writeScope } from './locales.js'
import { canLinkMedia, linkMedia, type EntryGuard } from './media-links.js'
import { prepareWrite } from './prepare-write.js'
import { permits } from './row-access.js'
import type { Consistency, Document, QueryParams, ServiceContext, WriteParams } from './types.js'
import type { Precondition } from './precondition.js'
import { createDocument, deleteDocument, updateDocument, upsertSingle } from './write-document.js'
import { runWrite, type ChangeOf } from './write-transaction.js'
import type { ChangeAction, ChangeListener } from './change-events.js'
import { queueRemoved, queueVersions, queueWritten, readRemoved } from './webhook-events.js'
import { DocumentReader, type ReadOptions, type ReadRow } from './reader.js'
import { compileAggregate } from '../compiler/aggregate.js'
import { parseAggregate } from '../query/aggregate.js'
import { Visibility } from '../query/visibility.js'
import type { LifecycleRun, LifecycleStage } from './lifecycles.js'
import type { DocumentAction } from './middlewares.js'

export type { CachedRead, Document, QueryParams, ServiceContext, WriteParams } from './types.js'
export type { ChangeAction, ChangeEvent, ChangeListener } from './change-events.js'

/** A page rendered by PostgreSQL: `json` is the `data` array as JSON text, ready to send. */
export interface JsonPage {
  json: string
  /** Every match, when `tree.pagination.withCount`; null otherwise. */
  total: number | null
  /** A cursor page's `next` and `previous` cursors (null at an end); null for page and offset reads. */
  links: CursorLinks | null
}

/** How a tree-taking read runs. */
export interface TreeReadOptions {
  /** Refuse, with a 400, an answer of more than `limits.maxRows` rows, as the REST routes do. */
  limits?: boolean
  /**
   * With read replicas, `'eventual'` (the default: the REST and GraphQL reads) reads on a
   * replica; `'strong'` on the primary, for a request that wrote or that asked to see its own
   * writes (`x-content-api-consistency: strong`, docs/operations.md#read-replicas).
   */
  consistency?: Consistency
}

/**
 * The one path through which REST, GraphQL and application code read and write documents of a
 * content type. Reads compile to a single SQL statement (under `limits`, a nested populate's row
 * budget may be counted by one small statement first); each write runs in one transaction
 * (write-transaction.ts), its statements built by the modules beside this one: prepare-write.ts
 * (checks before the transaction), write-document.ts (create, update, delete), locales.ts,
 * draft-and-publish.ts, row-access.ts, association-writes.ts.
 *
 * Every call runs through the document-service middlewares (middlewares.ts) and between its
 * lifecycle hooks (lifecycles.ts), when there are any: one check each otherwise. A write's
 * before hooks run before its input is validated, its after hooks inside its transaction.
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
  readonly #reader: DocumentReader

  constructor (model: ContentType, ctx: ServiceContext) {
    this.model = model
    this.#ctx = ctx
    this.#reader = new DocumentReader(model, ctx)
  }

  /**
   * Application-code parameters go through the same validation as a REST query string; with
   * `limits`, under the same bounds.
   */
  #tree (params: QueryParams, allowAllLocales: boolean): QueryTree {
    const pagination = params.pagination ?? pick(params as Record<string, unknown>, ['page', 'pageSize', 'start', 'limit'])
    const { access, omitUnreadable, limits, consistency: _consistency, ...query } = params
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
  #appRead (params: { limits?: boolean, consistency?: Consistency }): ReadOptions {
    return { maxRows: params.limits === true ? this.#ctx.bounds.maxRows : undefined, cache: false, primary: params.consistency !== 'eventual' }
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
    return await this.#call('findMany', params, async (p) => await this.#hooked('FindMany', 'findMany', p, async (q) => await this.#findMany(q)))
  }

  async #findMany (params: QueryParams): Promise<Document[]> {
    const tree = this.#tree(params, true)
    const bounded = params.pagination !== undefined || ['page', 'pageSize', 'start', 'limit'].some((k) => k in params)
    const { start, limit } = tree.pagination
    const { data } = await this.#reader.read(tree, bounded ? { kind: 'window', start, limit } : { kind: 'window', start: 0, limit: null }, this.#appRead(params))
    return JSON.parse(data!) as Document[]
  }

  /** The first matching document (in `sort` order, then by id), or null: `findMany`'s statement with `limit 1`. */
  async findFirst (params: QueryParams = {}): Promise<Document | null> {
    return await this.#call('findFirst', params, async (p) => await this.#hooked('FindOne', 'findFirst', p, async (q) => await this.#findFirst(q)))
  }

  async #findFirst (params: QueryParams): Promise<Document | null> {
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
    return await this.#call('findOne', params, async (p) => await this.#hooked('FindOne', 'findOne', p, async (q) => await this.#findOne(q)))
  }

  async #findOne (params: QueryParams & { documentId: string }): Promise<Document | null> {
    const { data } = await this.#reader.read(this.#tree(params, false), { kind: 'one', documentId: params.documentId }, this.#appRead(params))
    return data === null ? null : JSON.parse(data) as Document
  }

  /** The number of matching documents: `select count(*)::int as "count" from "articles" as t where <scope and filters>`. */
  async count (params: Pick<QueryParams, 'status' | 'locale' | 'filters' | 'access' | 'limits' | 'consistency'> = {}): Promise<number> {
    return await this.#call('count', params, async (p) => await this.#hooked('Count', 'count', p, async (q) => await this.#reader.count(this.#tree(q, true), q.consistency !== 'eventual')))
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
    if (this.#ctx.middlewares.active || this.#ctx.lifecycles.has(this.model.uid, 'FindMany')) return await this.#findPageExtended(tree, options)
    const row = await this.#reader.read(tree, { kind: 'page' }, this.#treeRead(options))
    return { json: row.data!, total: row.total, links: this.#links(tree, row.edges) }
  }

  /** The codec of cursor pagination's cursors, for surfaces that build query trees themselves (GraphQL). */
  get cursors (): CursorCodec {
    return this.#ctx.cursors
  }

  #links (tree: QueryTree, edges: ReadRow['edges']): CursorLinks | null {
    return tree.pagination.mode === 'cursor' && edges !== undefined ? cursorLinks(tree.pagination, edges, this.#ctx.cursors) : null
  }

  /**
   * `findPageJson` through the middlewares and the findMany hooks: they see `{ tree }` and the
   * parsed documents, and the documents they return are serialized again (docs/extending.md says
   * what this costs). A tree replaced by a middleware is read uncached.
   */
  async #findPageExtended (tree: QueryTree, options: TreeReadOptions): Promise<JsonPage> {
    let total: number | null = null
    let links: CursorLinks | null = null
    const read = async (params: { tree: QueryTree }): Promise<Document[]> => {
      const row = await this.#reader.read(params.tree, { kind: 'page' }, { ...this.#treeRead(options), cache: params.tree === tree })
      total = row.total
      links = this.#links(params.tree, row.edges)
      return JSON.parse(row.data!) as Document[]
    }
    const documents = await this.#call('findMany', { tree }, async (p) => await this.#hooked('FindMany', 'findMany', p, read))
    return { json: JSON.stringify(documents), total, links }
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
    if (this.#ctx.middlewares.active || this.#ctx.lifecycles.has(this.model.uid, 'FindOne')) return await this.#findOneExtended(documentId, tree, options)
    return (await this.#reader.read(tree, { kind: 'one', documentId }, this.#treeRead(options))).data
  }

  /** `findOneJson` through the middlewares and the findOne hooks, as `#findPageExtended`. */
  async #findOneExtended (documentId: string | null, tree: QueryTree, options: TreeReadOptions): Promise<string | null> {
    const read = async (params: { documentId: string | null, tree: QueryTree }): Promise<Document | null> => {
      const { data } = await this.#reader.read(params.tree, { kind: 'one', documentId: params.documentId }, { ...this.#treeRead(options), cache: params.tree === tree })
      return data === null ? null : JSON.parse(data) as Document
    }
    const document = await this.#call('findOne', { documentId, tree }, async (p) => await this.#hooked('FindOne', 'findOne', p, read))
    return document === null || document === undefined ? null : JSON.stringify(document)
  }

  /**
   * Our extension: counts, sums, averages, minimums and maximums, grouped, over the documents a
   * list with the same `filters`, `status` and `locale` would read for the caller (its row
   * conditions included), as the JSON text of `data` (docs/aggregations.md). One statement
   * (compileAggregate); more groups than `limits.maxLimit` is a 400.
   *
   * ```sql
   * select coalesce(json_agg(json_build_object('group', ..., 'count', g.n, 'sum', ...) order by g.g0), '[]')::text as "data",
   *   count(*)::int as "groups"
   * from (select t.kind as g0, count(*)::int as n, sum(t.views) as m0 from "articles" as t
   *       where <scope and filters> group by 1 order by 1 limit $1) as g
   * ```
   */
  async aggregateJson (raw: RawQuery, options: { access?: AccessScope, consistency?: Consistency } = {}): Promise<string> {
    const { access } = options
    const tree = parseQuery(this.model, raw, this.#parseOptions(true, access))
    const visibility = access === undefined ? null : new Visibility(this.#ctx.registry, access.read)
    const maxGroups = this.#ctx.limits.maxLimit
    const spec = parseAggregate(this.model, raw, this.#ctx.registry, visibility, access?.fields ?? null, maxGroups)
    const query = compileAggregate(this.#ctx.db, this.model, tree, spec, this.#ctx.compile).compile()
    const { rows } = await (options.consistency === 'strong' ? this.#ctx.primaryReads : this.#ctx.reads).executeQuery(query)
    const row = rows[0] as { data: string, groups: number }
    if (row.groups > maxGroups) {
      throw new ValidationError(`The aggregate has more than ${maxGroups} groups; narrow it with filters`, { key: 'groupBy', source: 'query', param: 'groupBy' })
    }
    return row.data
  }

  #treeRead (options: TreeReadOptions): ReadOptions {
    return { maxRows: options.limits === true ? this.#ctx.bounds.maxRows : undefined, cache: true, primary: options.consistency === 'strong' }
  }

  /** REST reads: a client's query string, under every bound of `limits`. */
  #parseOptions (allowAllLocales: boolean, access: AccessScope | undefined): ParseOptions {
    return { registry: this.#ctx.registry, limits: this.#ctx.limits, i18n: this.#ctx.i18n, allowAllLocales, access, bounds: this.#ctx.bounds, cursors: this.#ctx.cursors }
  }

  /**
   * Creates a document. For draft & publish types the draft version is written and, unless
   * `status: 'draft'`, published at once (Strapi v5's REST behaviour); the published version is
   * returned. The data is validated before the transaction opens (prepare-write.ts).
   *
   * ```sql
   * begin;
   * select id from "tags" where document_id in ($1) order by id for no key update; -- documents its relations name
   * insert into "articles" ("title", "document_id", ...) values ($2, $3, ...) returning "id";
   * insert into "articles_tags_lnk" (...) values (...); -- relations, media, components
   * insert into "articles" (...) select ... from "articles" as d where ...; -- published at once
   * select row_to_json(r)::text as "data" from (select ... from "articles" as t where ... and t.document_id = $3 limit 1) as r;
   * commit
   * ```
   */
  async create (params: WriteParams): Promise<Document> {
    return await this.#call('create', params, async (p) => {
      const hooks = await this.#before('Create', 'create', p)
      const write = await prepareWrite(this.model, this.#ctx, hooks?.params as WriteParams ?? p, false)
      return await this.#write(this.#change('create', (doc) => doc.documentId), async (trx) => {
        const doc = await createDocument(trx, this.model, this.#ctx, write, 'create')
        await queueWritten(trx, this.model, this.#ctx, 'create', doc)
        return doc
      }, hooks)
    })
  }

  /**
   * Partially updates a document (`documentId: null`: the single type's): keys absent from
   * `data` keep their values, `null` clears one. Draft & publish types edit the draft and,
   * unless `status: 'draft'`, publish it again. Writing a locale the document does not have
   * yet creates it. Returns null when no such document exists.
   *
   * ```sql
   * begin;
   * select id from "articles" where document_id in ($1) order by id for no key update;
   * update "articles" set "title" = $2, "updated_at" = $3 where "document_id" = $1 and "locale" = $4 and "published_at" is null returning "id";
   * update "articles" set "views" = $5 where "document_id" = $1 and "locale" <> $4 and "published_at" is null; -- non-localized values
   * update "articles" as p set "title" = d."title", ... from "articles" as d where ...; -- publishing again
   * select row_to_json(r)::text as "data" from (select ... from "articles" as t where ... and t.document_id = $1 limit 1) as r;
   * commit
   * ```
   */
  async update (params: WriteParams & { documentId: string | null }): Promise<Document | null> {
    return await this.#call('update', params, async (p) => {
      const hooks = await this.#before('Update', 'update', p)
      const q = hooks?.params as typeof params ?? p
      const write = await prepareWrite(this.model, this.#ctx, q, true)
      return await this.#write(this.#change('update', (doc) => doc?.documentId ?? q.documentId), async (trx) => {
        const doc = await updateDocument(trx, this.model, this.#ctx, q.documentId, write, q.ifMatch)
        await queueWritten(trx, this.model, this.#ctx, 'update', doc)
        return doc
      }, hooks)
    })
  }

  /**
   * Creates the single type's document on its first write, updates it afterwards (REST
   * `PUT /api/<singularApiId>`).
   *
   * ```sql
   * begin;
   * select pg_advisory_xact_lock(hashtext($1)); -- 'single:homepages': two first writes create one document
   * select "document_id" from "homepages" order by "id" limit 1;
   * -- then create's statements, or update's;
   * commit
   * ```
   */
  async upsertSingle (params: WriteParams): Promise<Document> {
    return await this.#call('update', params, async (p) => {
      const hooks = await this.#before('Update', 'update', p)
      const q = hooks?.params as WriteParams ?? p
      return await this.#write(this.#change('update', (doc) => doc.documentId), async (trx) => {
        const doc = await upsertSingle(trx, this.model, this.#ctx, q)
        await queueWritten(trx, this.model, this.#ctx, 'update', doc)
        return doc
      }, hooks)
    })
  }

  /**
   * Deletes every version (draft and published) of a document in one locale (every locale with
   * `locale: '*'`). Returns the number of rows removed; deleting an unknown document is not an error.
   *
   * ```sql
   * begin;
   * select id from "articles" where document_id in ($1) order by id for no key update;
   * select "id" from "articles" where "document_id" = $1 and "locale" = $2;
   * delete from "files_related_mph" where "related_type" = $3 and "related_id" in ($4, $5);
   * delete from "articles" where "id" in ($4, $5);
   * commit
   * ```
   */
  async delete (params: { documentId: string | null, locale?: string, access?: AccessScope, ifMatch?: Precondition }): Promise<{ documentId: string | null, entries: number }> {
    return await this.#call('delete', params, async (p) => {
      const hooks = await this.#before('Delete', 'delete', p)
      const q = hooks?.params as typeof params ?? p
      const locale = parseLocale(this.model, q.locale, this.#ctx.i18n, true)
      if (locale !== null) writeScope(this.model, this.#ctx, { locale })
      return await this.#write(this.#change('delete', () => q.documentId), async (trx) => {
        const removed = await readRemoved(trx, this.model, this.#ctx, 'delete', q.documentId, locale)
        const result = await deleteDocument(trx, this.model, this.#ctx, q.documentId, locale, q.access, q.ifMatch)
        await queueRemoved(trx, this.model, this.#ctx, 'delete', removed, result.entries)
        return result
      }, hooks)
    })
  }

  /**
   * Publishes the current draft of a document in one locale (every locale with `locale: '*'`).
   * Returns the published versions; none when the document has no draft there.
   *
   * ```sql
   * begin;
   * select id from "articles" where document_id in ($1) order by id for no key update;
   * select distinct "locale" from "articles" where "document_id" = $1 and "published_at" is null;
   * select row_to_json(r)::text as "data" from (select ... from "articles" as t where t.published_at is null ...) as r; -- the publication rules
   * update "articles" as p set "title" = d."title", ..., "published_at" = $2 from "articles" as d where ...;
   * select row_to_json(r)::text as "data" from (select ... from "articles" as t where t.published_at is not null ...) as r;
   * commit
   * ```
   */
  async publish (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Document[] }> {
    requireDraftAndPublish(this.model, 'publish')
    return await this.#call('publish', params, async (p) => {
      const hooks = await this.#before('Update', 'publish', p)
      const q = hooks?.params as typeof params ?? p
      return await this.#write(this.#change('publish', () => q.documentId), async (trx) => {
        const result = await publishDocument(trx, this.model, this.#ctx, q.documentId, q.locale)
        await queueVersions(trx, this.model, this.#ctx, 'publish', result.entries)
        return result
      }, hooks)
    })
  }

  /**
   * Removes the published version of a document (one locale, or all with `'*'`); the draft stays.
   *
   * ```sql
   * begin;
   * select id from "articles" where document_id in ($1) order by id for no key update;
   * select "id" from "articles" where "document_id" = $1 and "published_at" is not null and "locale" = $2;
   * delete from "articles" where "id" in ($3);
   * commit
   * ```
   */
  async unpublish (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: number }> {
    requireDraftAndPublish(this.model, 'unpublish')
    return await this.#call('unpublish', params, async (p) => {
      const hooks = await this.#before('Update', 'unpublish', p)
      const q = hooks?.params as typeof params ?? p
      return await this.#write(this.#change('unpublish', () => q.documentId), async (trx) => {
        const removed = await readRemoved(trx, this.model, this.#ctx, 'unpublish', q.documentId, q.locale)
        const result = await unpublishDocument(trx, this.model, this.#ctx, q.documentId, q.locale)
        await queueRemoved(trx, this.model, this.#ctx, 'unpublish', removed, result.entries)
        return result
      }, hooks)
    })
  }

  /**
   * Replaces the draft with a copy of the published version, dropping unpublished edits.
   *
   * ```sql
   * begin;
   * select id from "articles" where document_id in ($1) order by id for no key update;
   * update "articles" as d set "title" = p."title", ... from "articles" as p where d.id = $2 and p.id = $3;
   * select row_to_json(r)::text as "data" from (select ... from "articles" as t where t.published_at is null ...) as r;
   * commit
   * ```
   */
  async discardDraft (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Document[] }> {
    requireDraftAndPublish(this.model, 'discardDraft')
    return await this.#call('discardDraft', params, async (p) => {
      const hooks = await this.#before('Update', 'discardDraft', p)
      const q = hooks?.params as typeof params ?? p
      return await this.#write(this.#change('discardDraft', () => q.documentId), async (trx) => {
        const result = await discardDraft(trx, this.model, this.#ctx, q.documentId, q.locale)
        await queueVersions(trx, this.model, this.#ctx, 'discardDraft', result.entries)
        return result
      }, hooks)
    })
  }

  /**
   * Calls `listener` after every committed write of this content type, made through this
   * instance (`origin: 'local'`, once the transaction has committed) or through another instance
   * on the same database (`origin: 'remote'`, within milliseconds, through PostgreSQL's
   * LISTEN/NOTIFY; docs/operations.md#many-instances). `{ action: 'resync' }` says changes may
   * have been missed (the listening connection was lost): drop what was derived from this type.
   * A listener that throws is logged, never fails the write.
   *
   * @example
   * app.contentApi.documents('api::article.article').onChange(({ action, documentId, origin }) => {
   *   cache.delete(documentId) // 'create' | 'update' | 'delete' | 'publish' | 'unpublish' | 'discardDraft' | 'resync'
   * })
   */
  onChange (listener: ChangeListener): void {
    this.#ctx.changes.on(this.model.uid, listener)
  }

  /**
   * Whether the entry with row id `rowId` exists and is within `access`'s conditions (on its
   * draft under draft & publish, in its locale): what the upload routes check before storing
   * files they will link to it. True for any existing entry when `access` has no conditions.
   *
   * ```sql
   * select "document_id", "locale" from "articles" where "id" = $1
   * ```
   */
  async canLinkMedia (params: { rowId: number, access?: AccessScope }): Promise<boolean> {
    return await canLinkMedia(this.#ctx.db, { model: this.model, rowId: params.rowId }, this.#linkGuard(params.access))
  }

  /**
   * Links files to a media attribute of the entry with row id `rowId` and of its other versions
   * in that locale, as Strapi's upload `ref`/`refId`/`field` does (./media-links.ts has the SQL).
   * False, nothing written, when the entry is gone or outside `access`'s conditions;
   * `ForbiddenError` when the link would take it out of them.
   */
  async linkMedia (params: { rowId: number, association: MediaAssociation, fileIds: readonly number[], access?: AccessScope }): Promise<boolean> {
    const target = { model: this.model, association: params.association, rowId: params.rowId }
    return await linkMedia(this.#ctx.db, this.#ctx.changes, this.#ctx.registry, target, params.fileIds, this.#linkGuard(params.access))
  }

  /** The row-level check of a link, through the link's transaction. */
  #linkGuard (access: AccessScope | undefined): EntryGuard {
    return async (trx, entry) => await permits(trx, this.model, this.#ctx, entry.documentId, access, entry.locale)
  }

  /**
   * A call through the document-service middlewares (middlewares.ts), or straight to `fn` when
   * there are none.
   */
  async #call<P extends object, T> (action: DocumentAction, params: P, fn: (params: P) => Promise<T>): Promise<T> {
    if (!this.#ctx.middlewares.active) return await fn(params)
    return await this.#ctx.middlewares.run({ uid: this.model.uid, contentType: this.model, action, params: params as Record<string, any> }, fn as (params: Record<string, any>) => Promise<unknown>) as T
  }

  /** A read between its before and after hooks (lifecycles.ts), or just the read when there are none. */
  async #hooked<P extends object, T> (stage: LifecycleStage, operation: DocumentAction, params: P, read: (params: P) => Promise<T>): Promise<T> {
    const hooks = this.#ctx.lifecycles.run(this.model, stage, operation, params as Record<string, any>)
    if (hooks === null) return await read(params)
    await hooks.before()
    return await hooks.after(await read(hooks.params as P)) as T
  }

  /**
   * A write's before hooks, run before its data is validated (a hook may set `data.slug`, which
   * is then validated as any value) and before its transaction opens; null when there are none.
   * Its after hooks run inside the transaction (`after`).
   */
  async #before (stage: LifecycleStage, operation: DocumentAction, params: object): Promise<LifecycleRun | null> {
    const hooks = this.#ctx.lifecycles.run(this.model, stage, operation, params as Record<string, any>)
    await hooks?.before()
    return hooks
  }

  /**
   * One write in its transaction, announced to other instances in it, its after hooks run in it,
   * then this type's `onChange` listeners (write-transaction.ts); in a batch, in the batch's
   * transaction, its after hooks and listeners deferred to the batch's end (batch-transaction.ts).
   */
  async #write<T> (change: ChangeOf<T>, fn: (trx: Transaction<any>) => Promise<T>, hooks: LifecycleRun | null = null): Promise<T> {
    const after = hooks === null ? undefined : async (result: T) => await hooks.after(result) as T
    if (this.#ctx.batch !== undefined) return await this.#ctx.batch.write(change, fn, after)
    return await runWrite(this.#ctx.db, this.#ctx.changes, change, fn, after)
  }

  #change<T> (action: ChangeAction, documentId: (result: T) => string | null | undefined): ChangeOf<T> {
    return (result) => ({ uid: this.model.uid, action, documentId: documentId(result) })
  }
}

function pick (source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key]
  return out
}
