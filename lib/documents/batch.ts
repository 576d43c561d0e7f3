import { BatchOperationError, NotFoundError, ValidationError } from '../errors.js'
import { toContentApiError } from '../error-handler.js'
import type { AccessScope } from '../query/access-scope.js'
import { BatchTransaction } from './batch-transaction.js'
import { checkLid, resolveDataLids, resolveDocumentRef, type DocumentRef, type LidLookup } from './batch-lids.js'
import { DocumentService } from './service.js'
import type { Document, ServiceContext, WriteParams } from './types.js'
import { isWriteConflict, writeConflictError } from './write-conflict.js'

export type { DocumentRef } from './batch-lids.js'

/**
 * Atomic batches (docs/batches.md): several writes of any content types in ONE transaction,
 * all committed or none, each made exactly as the document service's own call makes it (its
 * middlewares, lifecycle hooks, validation, row-level access, webhook events), JSON:API's
 * atomic operations in the document service's vocabulary.
 *
 * ```sql
 * begin;
 *   -- operation 0: create's statements (locks, insert, links, publication, the re-read)
 *   -- operation 1: update's statements, naming the documentId operation 0 made (its lid)
 *   -- ...
 *   select pg_notify('content_api_' || md5(current_schema()), $1); -- one per write, with other instances
 *   -- every operation's lifecycle after hooks, in order
 * commit  -- or rollback: the first failing operation, after hook or deadlock undoes everything
 * ```
 */

/** The parameters of a write a batch operation takes (If-Match has no batch equivalent). */
type BatchWriteParams = Omit<WriteParams, 'ifMatch'>

/** Creates a document; `lid` names it for the batch's later operations. */
export interface BatchCreate extends BatchWriteParams {
  op: 'create'
  uid: string
  lid?: string
}

/** Updates a document; without `documentId`, a single type's document (created on its first write). */
export interface BatchUpdate extends BatchWriteParams {
  op: 'update'
  uid: string
  documentId?: DocumentRef | null
}

/** Deletes a document in one locale (all with `'*'`); without `documentId`, a single type's. */
export interface BatchDelete {
  op: 'delete'
  uid: string
  documentId?: DocumentRef | null
  locale?: string
  access?: AccessScope
}

/** Publishes or unpublishes a document of a draft & publish type, or discards its draft. */
export interface BatchPublication {
  op: 'publish' | 'unpublish' | 'discardDraft'
  uid: string
  documentId: DocumentRef
  locale?: string
}

export type BatchOperation = BatchCreate | BatchUpdate | BatchDelete | BatchPublication

/** Per operation: the document written, or what a delete or publication answers. */
export type BatchResult = Document | { documentId: string | null, entries: number | Document[] }

const OPS = new Set(['create', 'update', 'delete', 'publish', 'unpublish', 'discardDraft'])

/**
 * Runs the operations in order in one transaction and returns their results, or throws the
 * first failure (a `BatchOperationError` naming its index, for a refusal of the operation;
 * a 503 for a deadlock with a concurrent write) with nothing written. `onChange` listeners hear
 * of the writes after the commit only.
 *
 * @example
 * const [category, article] = await app.contentApi.documents.batch([
 *   { op: 'create', uid: 'api::category.category', lid: 'news', data: { name: 'News' } },
 *   { op: 'create', uid: 'api::article.article', data: { title: 'Hello', category: { lid: 'news' } } }
 * ])
 */
export async function runBatch (ctx: ServiceContext, operations: readonly BatchOperation[]): Promise<BatchResult[]> {
  if (!Array.isArray(operations)) throw new ValidationError('operations must be an array')
  checkOperations(ctx, operations)
  if (operations.length === 0) return []
  let outcome: { results: BatchResult[], batch: BatchTransaction }
  try {
    outcome = await ctx.db.transaction().execute(async (trx) => {
      const batch = new BatchTransaction(trx, ctx.changes)
      const scoped: ServiceContext = { ...ctx, db: trx, batch }
      const services = new Map<string, DocumentService>()
      const serviceOf = (uid: string): DocumentService => {
        let service = services.get(uid)
        if (service === undefined) services.set(uid, service = new DocumentService(ctx.registry.get(uid)!, scoped))
        return service
      }
      const lids = new Map<string, string>()
      const lookup: LidLookup = (lid) => lids.get(lid)!
      const results: BatchResult[] = []
      for (let i = 0; i < operations.length; i++) {
        const operation = operations[i]
        batch.operation = i
        try {
          results.push(await runOperation(serviceOf(operation.uid), operation, lookup))
        } catch (err) {
          throw atOperation(err, i)
        }
        if (operation.op === 'create' && operation.lid !== undefined) lids.set(operation.lid, (results[i] as Document).documentId)
      }
      await batch.runAfterHooks(results, atOperation)
      return { results, batch }
    })
  } catch (err) {
    throw isWriteConflict(err) ? writeConflictError(err) : err
  }
  outcome.batch.emit()
  return outcome.results
}

/**
 * Every operation's shape, and its lids (declared once, referenced after their create), before
 * the transaction opens: a batch refused for its input takes no connection and no lock.
 */
function checkOperations (ctx: ServiceContext, operations: readonly BatchOperation[]): void {
  const declared = new Set<string>()
  const lookup: LidLookup = (lid) => {
    if (!declared.has(lid)) throw new ValidationError(`No earlier operation of the batch creates lid "${lid}"`, { lid })
    return lid
  }
  for (let i = 0; i < operations.length; i++) {
    const operation = operations[i] as unknown as Record<string, unknown>
    try {
      if (typeof operation !== 'object' || operation === null || !OPS.has(operation.op as string)) {
        throw new ValidationError(`op must be one of ${[...OPS].join(', ')}`, { path: 'op' })
      }
      const model = typeof operation.uid === 'string' ? ctx.registry.get(operation.uid) : undefined
      if (model === undefined) throw new ValidationError('Unknown content type', { path: 'uid' })
      if (operation.op !== 'create') resolveDocumentRef(operation.documentId, lookup)
      if (operation.op === 'create' || operation.op === 'update') resolveDataLids(model.attributes, operation.data, lookup)
      if (operation.op === 'create' && operation.lid !== undefined) {
        const lid = checkLid(operation.lid, 'lid')
        if (declared.has(lid)) throw new ValidationError(`lid "${lid}" is declared twice`, { lid })
        declared.add(lid)
      }
    } catch (err) {
      throw atOperation(err, i)
    }
  }
}

/** One operation through its content type's document service, joined to the batch's transaction. */
async function runOperation (service: DocumentService, operation: BatchOperation, lookup: LidLookup): Promise<BatchResult> {
  const single = service.model.kind === 'singleType'
  const documentId = operation.op === 'create' ? undefined : resolveDocumentRef(operation.documentId, lookup) as string | null | undefined
  const required = (): string => {
    if (typeof documentId !== 'string' || documentId === '') throw new ValidationError('documentId must be a non-empty string', { path: 'documentId' })
    return documentId
  }
  switch (operation.op) {
    case 'create': {
      const { op: _op, uid: _uid, lid: _lid, data, ...params } = operation
      return await service.create({ ...params, data: resolveDataLids(service.model.attributes, data, lookup) as Record<string, unknown> })
    }
    case 'update': {
      const { op: _op, uid: _uid, documentId: _documentId, data, ...params } = operation
      const write = { ...params, data: resolveDataLids(service.model.attributes, data, lookup) as Record<string, unknown> }
      if (single && documentId == null) return await service.upsertSingle(write)
      const document = await service.update({ ...write, documentId: required() })
      if (document === null) throw new NotFoundError()
      return document
    }
    case 'delete':
      return await service.delete({ documentId: single && documentId == null ? null : required(), locale: operation.locale, access: operation.access })
    case 'publish':
      return await service.publish({ documentId: required(), locale: operation.locale })
    case 'unpublish':
      return await service.unpublish({ documentId: required(), locale: operation.locale })
    case 'discardDraft':
      return await service.discardDraft({ documentId: required(), locale: operation.locale })
  }
}

/**
 * A client's refusal (4xx) as the batch's answer, naming the operation; anything else (a lost
 * race, the database unavailable, our own failure) as it is, for the caller's error handling.
 */
function atOperation (err: unknown, operation: number): unknown {
  if (err instanceof BatchOperationError || isWriteConflict(err)) return err
  const error = toContentApiError(err)
  return error.status < 500 ? new BatchOperationError(error, operation) : err
}
