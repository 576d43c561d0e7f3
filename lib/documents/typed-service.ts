import type { ContentSchemas, ResultOf } from '../model/document-types.js'
import type { Asked, Asks, DataOf, Fields, Populate, Status, TypedQuery } from '../model/query-types.js'
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

/**
 * The methods infer only `fields`, `populate` and `status` (the parts the result follows), so that
 * every other parameter, `filters` and `data` among them, is checked against its declared type,
 * excess properties included: a misspelt key fails at any depth.
 */
export interface TypedDocumentService<S extends ContentSchemas, M> extends Omit<DocumentService, Untyped> {
  findMany<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    params?: TypedQueryParams<S, M> & Asks<F, P, St>
  ): Promise<Array<ResultOf<S, M, Asked<F, P, St>>>>
  findFirst<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    params?: TypedQueryParams<S, M> & Asks<F, P, St>
  ): Promise<ResultOf<S, M, Asked<F, P, St>> | null>
  findOne<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    params: TypedQueryParams<S, M> & Asks<F, P, St> & { documentId: string }
  ): Promise<ResultOf<S, M, Asked<F, P, St>> | null>
  count (params?: Pick<TypedQueryParams<S, M>, 'status' | 'locale' | 'filters' | 'access' | 'limits' | 'consistency'>): Promise<number>
  create<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    params: TypedWriteParams<S, M> & Asks<F, P, St>
  ): Promise<ResultOf<S, M, Asked<F, P, St>>>
  update<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    params: TypedWriteParams<S, M> & Asks<F, P, St> & { documentId: string | null }
  ): Promise<ResultOf<S, M, Asked<F, P, St>> | null>
  upsertSingle<const F extends Fields<M> | undefined = undefined, const P extends Populate<S, M> | undefined = undefined, St extends Status | undefined = undefined>(
    params: TypedWriteParams<S, M> & Asks<F, P, St>
  ): Promise<ResultOf<S, M, Asked<F, P, St>>>
  publish (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Array<ResultOf<S, M, { status: 'published' }>> }>
  discardDraft (params: { documentId: string, locale?: string }): Promise<{ documentId: string, entries: Array<ResultOf<S, M, { status: 'draft' }>> }>
}
