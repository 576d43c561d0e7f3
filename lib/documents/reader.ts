import type { CompiledQuery, Kysely, Transaction } from 'kysely'
import { LruCache } from '../lru-cache.js'
import type { CachedRead, ServiceContext } from './types.js'
import {
  compileCount, compileFindMany, compileFindOne, compileFindPage, compileRowProbe, compileWrittenOne, readsWrittenRowsOnly,
  type CompileOptions, type FindSpec
} from '../compiler/find.js'
import type { ContentType } from '../model/registry.js'
import type { PageEdges, QueryTree } from '../query/index.js'
import { freshTreeKey, treeKey } from '../query/tree-key.js'
import { checkRows, withinRows } from './within-rows.js'
import { KnownTotal } from './known-total.js'

/** What the reader needs of the service's context: the database (and where reads run), the compiler's options, the statement cache, the named statements. */
export type ReaderContext = Pick<ServiceContext, 'db' | 'reads' | 'primaryReads' | 'compile' | 'queries' | 'prepared'>

/**
 * What a read takes of a tree: the page `tree.pagination` names (with its total when counted), a
 * window of documents (`limit` null: every match), or one document (a single type's with null).
 */
export type Target =
  | { kind: 'page' }
  | { kind: 'window', start: number, limit: number | null }
  | { kind: 'one', documentId: string | null }

export interface ReadOptions {
  /** `limits.maxRows`: refuse, with a 400, an answer of more rows (documents and populated rows). */
  maxRows?: number
  /**
   * Keep the compiled statement for the next read of a tree with the same key. Trees built per
   * call by application code are not cached: their filter values are the caller's objects, which
   * it may change after the call, and a cached statement would keep the old ones.
   */
  cache: boolean
  /**
   * Run on the primary even when `db` has read replicas: the caller wrote in this request, or
   * asked to read its own writes (docs/operations.md#read-replicas).
   */
  primary: boolean
}

/** What a read returns: the JSON text PostgreSQL rendered (null: no such document), and a page's total. */
export interface ReadRow {
  data: string | null
  total: number | null
  /** A cursor page's edges (lib/compiler/find.ts `CursorPageRow`); absent for other reads. */
  edges?: PageEdges
}

/**
 * The one place reads of a content type are compiled and run. It takes a validated query tree
 * (lib/query) and answers the JSON text PostgreSQL rendered, under the read's row budget
 * (within-rows.ts). The REST routes, GraphQL's resolvers and application code all come here
 * through the document service, so the statement compiled for a tree serves every surface: the
 * cache is keyed by the tree's shape, not by the text the tree was parsed from.
 */
export class DocumentReader {
  readonly #model: ContentType
  readonly #ctx: ReaderContext

  constructor (model: ContentType, ctx: ReaderContext) {
    this.#model = model
    this.#ctx = ctx
  }

  read (tree: QueryTree, target: Target, options: ReadOptions): Promise<ReadRow> {
    const compiled = options.cache ? this.#cached(tree, target, options.maxRows) : this.#compile(tree, target, options.maxRows, false)
    const read = target.kind === 'one' && target.documentId !== null ? bind(compiled, target.documentId) : compiled
    // Outside any transaction: on the plugin's own pool, straight on the pool (lib/db/pool.ts),
    // or on a replica's (lib/db/replicas.ts). Only such reads remember a total (known-total.ts):
    // inside a transaction, a change count could include the transaction's own uncommitted writes.
    const reads = options.primary ? this.#ctx.primaryReads : this.#ctx.reads
    const { known } = compiled
    const query = known === undefined ? read.query : known.bound(read.query, reads)
    const { maxRows } = options
    if (read.probe !== null && maxRows !== undefined) {
      return withinRows(reads, read.probe, maxRows, async () => (await reads.executeQuery(query)).rows[0]).then((row) => {
        known?.learn(reads, row)
        return readRow(row)
      })
    }
    // One statement (most reads): one promise, no async frames, as reads are most requests.
    return reads.executeQuery(query).then((result) => {
      const row = result.rows[0]
      if (maxRows !== undefined) checkRows(row, maxRows)
      known?.learn(reads, row)
      return readRow(row)
    })
  }

  /** `select count(*)::int from <table> as t where <scope and filters>`. */
  async count (tree: QueryTree, primary: boolean): Promise<number> {
    const query = compileCount(this.#ctx.db, this.#model, tree, this.#ctx.compile).compile()
    const { rows } = await (primary ? this.#ctx.primaryReads : this.#ctx.reads).executeQuery(query)
    return rows[0].count
  }

  /**
   * The statement of a read from the cache, or compiled (and cached) now. A cached read is one
   * that repeats: on the plugin's pool its statements run named, parsed and planned once per
   * connection (lib/db/prepared-statements.ts). A one-document statement is named once for every
   * documentId, which is a parameter (`bind`).
   */
  #cached (tree: QueryTree, target: Target, maxRows: number | undefined): CachedRead {
    const key = `${this.#model.uid}\0${shapeOf(tree)}\0${maxRows ?? ''}\0${targetKey(target)}`
    const { pagination } = tree
    if (pagination.mode !== 'cursor' || pagination.cursor === null) return kept(this.#ctx, key, () => this.#compile(tree, target, maxRows, true))
    if (pagination.cursor.values.length > CURSOR_VALUES.length) return this.#compile(tree, target, maxRows, false)
    // A cursor page's statement is kept once per sort and NULL pattern, its position bound at
    // each read (the tree key holds which values are NULL, not the values).
    const { values, id } = pagination.cursor
    const template = { ...tree, pagination: { ...pagination, cursor: { values: values.map((v, i) => v === null ? null : CURSOR_VALUES[i]), id: CURSOR_ID } } }
    const read = kept(this.#ctx, key, () => this.#compile(template as unknown as QueryTree, target, maxRows, true))
    const position = new Map<unknown, unknown>([[CURSOR_ID, id], ...values.map((v, i) => [CURSOR_VALUES[i], v] as const)])
    return bindAll(read, position)
  }

  /** A kept statement (`kept`) remembers its page's total when it can (known-total.ts): it repeats. */
  #compile (tree: QueryTree, target: Target, maxRows: number | undefined, kept: boolean): CachedRead {
    const { db, compile } = this.#ctx
    const spec: FindSpec & QueryTree = maxRows === undefined ? tree : { ...tree, maxRows }
    const probe = (read: Parameters<typeof compileRowProbe>[3]) => compileRowProbe(db, this.#model, spec, read, compile)?.compile() ?? null
    switch (target.kind) {
      case 'page': {
        const { pagination } = tree
        const query = compileFindPage(db, this.#model, { ...spec, rememberTotal: kept }, compile).compile()
        const read: CachedRead = { query, probe: probe(pagination.mode === 'cursor' ? pagination : { start: pagination.start, limit: pagination.limit }) }
        if (KnownTotal.wanted(query)) read.known = new KnownTotal()
        return read
      }
      case 'window': {
        const { start, limit } = target
        const window = limit === null ? { start } : { start, limit }
        return { query: compileFindMany(db, this.#model, { ...spec, ...window }, compile).compile(), probe: probe({ start, limit }) }
      }
      case 'one':
        return compileOne(db, this.#model, spec, target.documentId === null ? null : DOCUMENT_ID, compile)
    }
  }
}

/**
 * One document read inside a write's transaction: the written document re-read for the answer,
 * a draft read back to check it before publication, the shared values a new locale starts from.
 * Compiled for the call and never cached (the spec carries the write's own status, locale and
 * shape), under the row budget like every read: past `spec.maxRows` it throws, which rolls the
 * write back. Null when the document has no row in that scope.
 *
 * ```sql
 * select row_to_json(r)::text as "data" from (select t.id as "id", t.document_id as "documentId", ...
 *   from "articles" as t where t.published_at is not null and t.locale = $1 and t.document_id = $2 limit 1) as r
 * ```
 */
export async function readInTransaction (
  trx: Transaction<any>, model: ContentType, spec: FindSpec, documentId: string, compile: CompileOptions
): Promise<string | null> {
  const probe = compileRowProbe(trx, model, spec, { documentId }, compile)?.compile() ?? null
  const row = await withinRows(trx, probe, spec.maxRows, async () => await compileFindOne(trx, model, spec, documentId, compile).executeTakeFirst())
  return row?.data ?? null
}

/** A missing document is no row, or (a row budget checked inline) a row whose data is null. */
function readRow (row: { data: string | null, total?: number | null, first?: string | null, last?: string | null, more?: boolean, near?: boolean | null } | undefined): ReadRow {
  const read: ReadRow = { data: row?.data ?? null, total: row?.total ?? null }
  if (row?.more !== undefined) {
    const keys = (text: string | null | undefined) => text == null ? null : JSON.parse(text) as Array<string | number | null>
    read.edges = { first: keys(row.first), last: keys(row.last), more: row.more, near: row.near ?? null }
  }
  return read
}

/**
 * `readInTransaction` for a shape the plugin parsed itself (a REST or GraphQL write's `fields`
 * and `populate`, which no application code holds): the statement is kept in the reads' cache,
 * keyed by the spec's shape, and runs named, as a cached read does. A written document is
 * re-read so at every write, and compiling its statement (populate included) cost more than
 * the rest of a create.
 */
export async function readWrittenCached (
  trx: Transaction<any>, model: ContentType, spec: FindSpec, documentId: string, ctx: ReaderContext
): Promise<string | null> {
  const bound = bind(kept(ctx, writtenKey(model, spec, 'written'), () => compileOne(ctx.db, model, spec, DOCUMENT_ID, ctx.compile)), documentId)
  const row = await withinRows(trx, bound.probe, spec.maxRows, async () => (await trx.executeQuery(bound.query)).rows[0])
  return row?.data ?? null
}

/**
 * `readWrittenCached`'s read as the end of the statement that writes the document
 * (create-direct.ts), reading the rows the statement's CTE `from` returns: `statement`, the same
 * object for every write of the shape (kept in the reads' cache, never run on its own), and its
 * `parameters` with the documentId bound. Null when the read needs more than those rows
 * (`readsWrittenRowsOnly`): the write then reads the document back as usual.
 */
export function writtenInStatement (
  model: ContentType, spec: FindSpec, documentId: string, ctx: ReaderContext, from: string
): { statement: CachedRead['query'], parameters: readonly unknown[] } | null {
  if (!readsWrittenRowsOnly(model, spec, ctx.compile)) return null
  // Not named: the statement that ends with it is (create-direct.ts).
  const read = kept(ctx, writtenKey(model, spec, `written in ${from}`), () => ({
    query: compileWrittenOne(ctx.db, model, spec, DOCUMENT_ID as unknown as string, ctx.compile, from).compile(), probe: null
  }), false)
  return { statement: read.query, parameters: bind(read, documentId).query.parameters }
}

/**
 * A written document's read's key in the statement cache: keyed as a tree (tree-key.ts), the spec
 * with the pagination and fallbacks a one-document read ignores. The spec is built per write, so
 * its key is not memoized.
 */
function writtenKey (model: ContentType, spec: FindSpec, kind: string): string {
  const tree = { ...spec, pagination: ONE_ROW, fallbacks: [] } as unknown as QueryTree
  return `${model.uid}\0${kind}\0${freshTreeKey(tree)}\0${spec.maxRows ?? ''}`
}

/**
 * The read kept under `key` in the statement cache, or `compile()`'s, kept now and, unless
 * `named` is false (a read only ever sent inside another statement), marked to run named: a
 * cached read is one that repeats.
 */
function kept (ctx: ReaderContext, key: string, compile: () => CachedRead, named = true): CachedRead {
  let read = ctx.queries.get(key)
  if (read === undefined) {
    read = compile()
    ctx.queries.set(key, read)
    if (named) {
      ctx.prepared?.add(read.query.sql)
      if (read.probe !== null) ctx.prepared?.add(read.probe.sql)
    }
  }
  return read
}

/**
 * A one-document read and its row probe, the documentId a parameter `bind` fills in (`DOCUMENT_ID`),
 * or null: a single type's one document.
 */
function compileOne (db: Kysely<any>, model: ContentType, spec: FindSpec, placeholder: typeof DOCUMENT_ID | null, compile: CompileOptions): CachedRead {
  // The compiler takes a documentId as a parameter value, whatever it is.
  const documentId = placeholder as unknown as string | null
  const probe = compileRowProbe(db, model, spec, { documentId }, compile)?.compile() ?? null
  return { query: compileFindOne(db, model, spec, documentId, compile).compile(), probe }
}

/** The pagination a one-document spec is keyed with: a one-document read has none. */
const ONE_ROW: QueryTree['pagination'] = { mode: 'offset', page: null, pageSize: null, start: 0, limit: 1, withCount: false }

/**
 * Tree keys by a number that stands for them in statement keys. A tree key may run to
 * kilobytes, and a key built per request is hashed per request: the number is looked up once per
 * tree object (trees are reused from the edges' memos), so a cached read costs a short key's
 * hash. Equal tree keys get the same number while it is remembered (the most recent shapes); a
 * number is never given to another key, so a forgotten shape costs a compilation, never a
 * wrong statement.
 */
const shapes = new LruCache<string, number>(2000)
const shapeOfTree = new WeakMap<QueryTree, number>()
let nextShape = 0

function shapeOf (tree: QueryTree): number {
  let shape = shapeOfTree.get(tree)
  if (shape === undefined) {
    const key = treeKey(tree)
    shape = shapes.get(key)
    if (shape === undefined) {
      shape = nextShape++
      shapes.set(key, shape)
    }
    shapeOfTree.set(tree, shape)
  }
  return shape
}

function targetKey (target: Target): string {
  switch (target.kind) {
    case 'page': return 'page'
    case 'window': return `window\0${target.start}\0${target.limit ?? ''}`
    case 'one': return target.documentId === null ? 'single' : 'one'
  }
}

/**
 * Stands for the documentId in a one-document statement, so that one statement serves every
 * document (`where t.document_id = $n`): `bind` puts the documentId read in its place. An object
 * no caller can pass, so no other parameter is taken for it.
 */
const DOCUMENT_ID = Object.freeze({ documentId: 'bound at execution' })

function bind (read: CachedRead, documentId: string): CachedRead {
  return bindAll(read, new Map([[DOCUMENT_ID, documentId]]))
}

/** A cached statement with its placeholders (`DOCUMENT_ID`, `CURSOR_VALUES`, `CURSOR_ID`) replaced by their values. */
function bindAll (read: CachedRead, values: ReadonlyMap<unknown, unknown>): CachedRead {
  const at = <Q extends CompiledQuery<any>>(query: Q): Q => ({ ...query, parameters: query.parameters.map((p) => values.has(p) ? values.get(p) : p) })
  return { ...read, query: at(read.query), probe: read.probe === null ? null : at(read.probe) }
}

/**
 * Stand for a cursor's values and id in a cursor page's cached statement (`#cached`), as
 * `DOCUMENT_ID` for a documentId: objects no caller can pass. As many as a sort may have keys.
 */
const CURSOR_VALUES: readonly object[] = Array.from({ length: 64 }, (_, i) => Object.freeze({ cursorKey: i }))
const CURSOR_ID = Object.freeze({ cursorId: 'bound at execution' })
