import type { Transaction } from 'kysely'
import type { FindSpec } from '../compiler/find.js'
import { PreconditionFailedError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import { readInTransaction } from './reader.js'
import type { ServiceContext } from './types.js'

/**
 * A write's precondition (HTTP `If-Match`, optimistic concurrency): what the document looks
 * like now, read with `spec` in the write's transaction once the write holds the document's rows
 * (`for no key update`, document-locks.ts), must satisfy `matches`. Two writers holding the same
 * version queue on those locks; the second reads the first one's committed change and fails,
 * rolled back whole, with a 412 PreconditionFailedError.
 */
export interface Precondition {
  /** How the version was read: the REST routes pass the query tree of the `GET` the ETag came from. */
  spec: FindSpec
  /** Whether the current representation (null: none in that scope) is the version the caller names. */
  matches: (current: string | null) => boolean
}

/**
 * Checks `precondition` on the document, in the write's transaction, after its locks:
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update; -- the write's own lock, taken before
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where <the GET's scope> and t.document_id = $1 limit 1) as r
 * ```
 */
export async function checkPrecondition (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string | null, precondition: Precondition | undefined): Promise<void> {
  if (precondition === undefined) return
  const current = documentId === null ? null : await readInTransaction(trx, model, precondition.spec, documentId, ctx.compile)
  if (!precondition.matches(current)) throw new PreconditionFailedError()
}
