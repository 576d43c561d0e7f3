import type { ContentSchemas, ResultOf } from '../model/document-types.js'
import type { DataOf, Filters, NoExtraKeys, TypedQuery } from '../model/query-types.js'
import type { DocumentService } from './service.js'
import type { QueryParams, WriteParams } from './types.js'

/**
 * The document service of a content type the application registered its models' types for
 * (lib/index.ts `Register`): the same object as `DocumentService`, seen through types that check
 * every parameter against the model and compute each result from `fields`, `populate` and
 * `status` (lib/model/document-types.ts). Nothing here exists at run time.
 */

/** What application code passes besides the query: the REST routes' access and bounds (docs/documents.md). */
type ServerOptions = Pick<QueryParams, 'access' | 'omitUnreadable' | 'limits' | 'consistency'>

/** Typed read parameters: the model's query, and the service's own options. */
export type TypedQueryParams<S extends ContentSchemas, M> = TypedQuery<S, M> & ServerOptions & {
  page?: number
  pageSize?: number
  start?: number
  limit?: number
}

/** Typed write parameters: `data` checked against the model, and what the answer shows. */
export type TypedWriteParams<S extends ContentSchemas, M> = Pick<TypedQuery<S, M>, 'fields' | 'populate' | 'status' | 'locale'> &
  Pick<WriteParams, 'access' | 'trusted' | 'limits' | 'ifMatch'> & { data: DataOf<S, M> }

type Untyped = 'findMany' | 'findFirst' | 'findOne' | 'count' | 'create' | 'update' | 'upsertSingle' | 'publish' | 'discardDraft'

export interface TypedDocumentService<S extends ContentSchemas, M> extends Omit<DocumentService, Untyped> {
  findMany<const Q extends TypedQueryParams<S, M> = {}>(params?: NoExtraKeys<Q, TypedQueryParams<S, M>>): Promise<Array<ResultOf<S, M, Q>>>
  findFirst<const Q extends TypedQueryParams<S, M> = {}>(params?: NoExtraKeys<Q, TypedQueryParams<S, M>>): Promise<ResultOf<S, M, Q> | null>
  findOne<const Q extends TypedQueryParams<S, M> & { documentId: string }>(params: NoExtraKeys<Q, TypedQueryParams<S, M> & { documentId: string }>): Promise<ResultOf<S, M, Q> | null>
  count (params?: Pick<TypedQueryParams<S, M>, 'status' | 'locale' | 'access' | 'limits' | 'consistency'> & { filters?: Filters<S, M> }): Promise<number>
  create<const Q extends TypedWriteParams<S, M>>(params: NoExtraKeys<Q, TypedWriteParams<S, M>>): Promise<ResultOf<S, M, Q>>
  update<const Q extends TypedWriteParams<S, M> & { documentId: string | null }>(params: NoExtraKeys<Q, TypedWriteParams<S, M> & { documentId: string | null }>): Promise<ResultOf<S, M, Q> | null>
  upsertSingle<const Q extends TypedWriteParams<S, M>>(params: NoExtraKeys<Q, TypedWriteParams<S, M>>): Promise<ResultOf<S, M, Q>>
  publish (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Array<ResultOf<S, M, { status: 'published' }>> }>
  discardDraft (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Array<ResultOf<S, M, { status: 'draft' }>> }>
}
