import type { ContentSchemas, LooseDocument, ResultOf } from '../model/document-types.js'
import type { Asked, Asks, DataOf, Fields, Pagination, Populate, Status, TypedQuery } from '../model/query-types.js'
import { ContentApiClientError, envelopeOf } from './errors.js'
import { toQueryString } from './query-string.js'

/**
 * `fastify-content-api/client`: calls the content API's REST routes with Strapi's query syntax
 * and returns the documents typed by the models (the types `generateTypes` writes, or the
 * server's own `SchemasOf<...>`). It imports nothing but types from the rest of the library and
 * runs wherever `fetch` does (browsers, Node 20+, workers). docs/client.md.
 */

export { ContentApiClientError, type ErrorEnvelope } from './errors.js'
export { toQueryString } from './query-string.js'
export type { ContentSchemas, ResultOf, MediaFile, LooseDocument } from '../model/document-types.js'
export type { TypedQuery, DataOf, Filters, Sort, Populate, Fields, Pagination } from '../model/query-types.js'

/** The part of `fetch` the client uses, so that any implementation (undici, a test double, a wrapper) fits. */
export type FetchLike = (url: string, init: { method: string, headers: Record<string, string>, body?: string }) => Promise<{
  ok: boolean
  status: number
  statusText: string
  text: () => Promise<string>
}>

export interface ClientOptions {
  /** The URL of the REST prefix: `'https://cms.example.com/api'`. */
  baseUrl: string
  /** A JWT or an API token, sent as `Authorization: Bearer <token>`; a function is called before each request. */
  auth?: string | (() => string | null | undefined | Promise<string | null | undefined>)
  /** Headers sent with every request. */
  headers?: Record<string, string>
  /** The `fetch` to call; the global one by default. */
  fetch?: FetchLike
}

/**
 * Cursor pagination (docs/rest.md#cursor-pagination, not Strapi's): the page after (or before) a
 * cursor a list answered in `meta.pagination.next` (`previous`); `''` starts at the first (last) row.
 */
export type CursorPagination =
  | { after: string, pageSize?: number, limit?: number, withCount?: boolean }
  | { before: string, pageSize?: number, limit?: number, withCount?: boolean }

/**
 * `meta.pagination` in the request's mode: page, offset or cursor. `total` (and a page's
 * `pageCount`) only when the list was counted (`withCount`; a cursor page only when it asks).
 */
export type PaginationMeta =
  | { page: number, pageSize: number, pageCount?: number, total?: number }
  | { start: number, limit: number, total?: number }
  | { pageSize: number, next: string | null, previous: string | null, total?: number }

/** A list answer: the documents and the pagination meta. */
export interface ListResponse<T> {
  data: T[]
  meta: { pagination: PaginationMeta }
}

/** A one-document answer. */
export interface DocumentResponse<T> {
  data: T
  meta: Record<string, unknown>
}

/** Query parameters of an untyped client. */
export interface LooseQuery {
  fields?: string | readonly string[]
  filters?: Record<string, unknown>
  sort?: string | readonly string[] | Record<string, string> | ReadonlyArray<Record<string, string>>
  populate?: unknown
  status?: 'draft' | 'published'
  locale?: string
  pagination?: Pagination | CursorPagination
}

type Model<S, N> = S extends ContentSchemas
  ? { [U in keyof S['contentTypes']]: S['contentTypes'][U] extends { info: { pluralName: N } | { singularName: N } } ? S['contentTypes'][U] : never }[keyof S['contentTypes']]
  : never

type NameOf<S, Kind, Key extends 'pluralName' | 'singularName'> = S extends ContentSchemas
  ? { [U in keyof S['contentTypes']]: S['contentTypes'][U] extends { kind: Kind, info: Record<Key, infer P extends string> } ? P : never }[keyof S['contentTypes']]
  : string

/** A list's parameters: a typed read's, with cursor pagination besides Strapi's two modes. */
type ListQuery<S extends ContentSchemas, M> = Omit<TypedQuery<S, M>, 'pagination'> & { pagination?: Pagination | CursorPagination }
type WriteQuery<S extends ContentSchemas, M> = Pick<TypedQuery<S, M>, 'fields' | 'populate' | 'status' | 'locale'>
type LooseWriteQuery = Pick<LooseQuery, 'fields' | 'populate' | 'status' | 'locale'>

/**
 * The document a typed call answers. Calls infer only `fields`, `populate` and `status` (what the
 * result follows), so that the other parameters and `data` get TypeScript's excess-property checks.
 */
type Doc<S extends ContentSchemas, M, F, P, St> = ResultOf<S, M, Asked<F, P, St>>

/** A collection type's routes: `GET|POST /api/<plural>`, `GET|PUT|DELETE /api/<plural>/:documentId`. */
export interface CollectionClient<S extends ContentSchemas, M> {
  find<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    query?: ListQuery<S, M> & Asks<F, P, St>
  ): Promise<ListResponse<Doc<S, M, F, P, St>>>
  findOne<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    documentId: string, query?: TypedQuery<S, M> & Asks<F, P, St>
  ): Promise<DocumentResponse<Doc<S, M, F, P, St>>>
  create<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    data: DataOf<S, M>, query?: WriteQuery<S, M> & Asks<F, P, St>
  ): Promise<DocumentResponse<Doc<S, M, F, P, St>>>
  update<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    documentId: string, data: DataOf<S, M>, query?: WriteQuery<S, M> & Asks<F, P, St>
  ): Promise<DocumentResponse<Doc<S, M, F, P, St>>>
  delete (documentId: string, query?: { locale?: string }): Promise<void>
}

/** A single type's routes: `GET|PUT|DELETE /api/<singular>`. */
export interface SingleClient<S extends ContentSchemas, M> {
  find<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    query?: TypedQuery<S, M> & Asks<F, P, St>
  ): Promise<DocumentResponse<Doc<S, M, F, P, St>>>
  update<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    data: DataOf<S, M>, query?: WriteQuery<S, M> & Asks<F, P, St>
  ): Promise<DocumentResponse<Doc<S, M, F, P, St>>>
  delete (query?: { locale?: string }): Promise<void>
}

/** A collection of an untyped client: the same calls, documents as `LooseDocument`. */
export interface LooseCollectionClient {
  find (query?: LooseQuery): Promise<ListResponse<LooseDocument>>
  findOne (documentId: string, query?: LooseQuery): Promise<DocumentResponse<LooseDocument>>
  create (data: Record<string, unknown>, query?: LooseWriteQuery): Promise<DocumentResponse<LooseDocument>>
  update (documentId: string, data: Record<string, unknown>, query?: LooseWriteQuery): Promise<DocumentResponse<LooseDocument>>
  delete (documentId: string, query?: { locale?: string }): Promise<void>
}

/** A single type of an untyped client. */
export interface LooseSingleClient {
  find (query?: LooseQuery): Promise<DocumentResponse<LooseDocument>>
  update (data: Record<string, unknown>, query?: LooseWriteQuery): Promise<DocumentResponse<LooseDocument>>
  delete (query?: { locale?: string }): Promise<void>
}

export interface ContentApiClient<S extends ContentSchemas | null> {
  /** A collection type by its plural API id: `collection('articles')`. */
  collection<N extends NameOf<S, 'collectionType', 'pluralName'>>(pluralName: N): S extends ContentSchemas ? CollectionClient<S, Model<S, N>> : LooseCollectionClient
  /** A single type by its singular API id: `single('homepage')`. */
  single<N extends NameOf<S, 'singleType', 'singularName'>>(singularName: N): S extends ContentSchemas ? SingleClient<S, Model<S, N>> : LooseSingleClient
  /** Any request under the base URL, answered with the parsed JSON body (or null for an empty one); errors thrown as for the others. */
  request<T = unknown>(method: string, path: string, options?: { query?: Record<string, unknown>, body?: unknown }): Promise<T>
}

/**
 * A client of the content API's REST routes. `S` is the models' types (`Schemas` from the file
 * `fastify-content-api types` writes); without it every document is a `LooseDocument`.
 *
 * @example
 * import { createClient } from 'fastify-content-api/client'
 * import type { Schemas } from './content-types.js'
 * const client = createClient<Schemas>({ baseUrl: 'http://localhost:3000/api', auth: token })
 * const { data } = await client.collection('articles').find({ fields: ['title'], populate: { category: { fields: ['name'] } } })
 * data[0].category?.name // string | null
 */
export function createClient<S extends ContentSchemas | null = null> (options: ClientOptions): ContentApiClient<S> {
  const base = options.baseUrl.replace(/\/+$/, '')
  const call = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined)
  if (typeof call !== 'function') throw new TypeError('fastify-content-api/client: no fetch; pass options.fetch')

  async function request<T> (method: string, path: string, { query, body }: { query?: Record<string, unknown>, body?: unknown } = {}): Promise<T> {
    const search = query === undefined ? '' : toQueryString(query)
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
    const token = typeof options.auth === 'function' ? await options.auth() : options.auth
    if (token != null && token !== '') headers.authorization = `Bearer ${token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const response = await call!(`${base}${path}${search === '' ? '' : `?${search}`}`, {
      method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    let parsed: unknown = null
    if (text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        // Not JSON (a proxy's error page): an error answer is described by its status alone.
        if (response.ok) throw new ContentApiClientError(envelopeOf(response.status, 'The answer is not JSON', null))
      }
    }
    if (!response.ok) throw new ContentApiClientError(envelopeOf(response.status, response.statusText, parsed))
    return parsed as T
  }

  const id = (documentId: string): string => `/${encodeURIComponent(documentId)}`
  type Query = Record<string, unknown> | undefined

  const client: UntypedClient = {
    collection (pluralName) {
      const path = `/${encodeURIComponent(pluralName)}`
      return {
        find: async (query?: Query) => await request('GET', path, { query }),
        findOne: async (documentId: string, query?: Query) => await request('GET', `${path}${id(documentId)}`, { query }),
        create: async (data: unknown, query?: Query) => await request('POST', path, { query, body: { data } }),
        update: async (documentId: string, data: unknown, query?: Query) => await request('PUT', `${path}${id(documentId)}`, { query, body: { data } }),
        delete: async (documentId: string, query?: Query) => { await request('DELETE', `${path}${id(documentId)}`, { query }) }
      }
    },
    single (singularName) {
      const path = `/${encodeURIComponent(singularName)}`
      return {
        find: async (query?: Query) => await request('GET', path, { query }),
        update: async (data: unknown, query?: Query) => await request('PUT', path, { query, body: { data } }),
        delete: async (query?: Query) => { await request('DELETE', path, { query }) }
      }
    },
    request
  }
  // The typed view of the same calls: the types only describe what the server answers.
  return client as unknown as ContentApiClient<S>
}

/** The client as it runs: every call takes and answers plain JSON values. */
interface UntypedClient {
  collection (pluralName: string): Record<'find' | 'findOne' | 'create' | 'update' | 'delete', (...args: any[]) => Promise<unknown>>
  single (singularName: string): Record<'find' | 'update' | 'delete', (...args: any[]) => Promise<unknown>>
  request: ContentApiClient<null>['request']
}
