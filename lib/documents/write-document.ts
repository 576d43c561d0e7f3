import { sql, type Transaction } from 'kysely'
import type { AccessScope } from '../query/access-scope.js'
import type { FindSpec } from '../compiler/find.js'
import { NotFoundError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import type { Status } from '../query/index.js'
import { lockWrite, writeAssociations } from './association-writes.js'
import { toColumns } from './columns.js'
import { createDirect } from './create-direct.js'
import { createDocumentId } from './document-id.js'
import { newLocale, syncShared } from './locales.js'
import { checkPrecondition, type Precondition } from './precondition.js'
import { prepareWrite } from './prepare-write.js'
import { readInTransaction, readWrittenCached } from './reader.js'
import { assertPublishable, draftOnly, publishVersion } from './publication.js'
import { checkWritten, conditionsOn, permits, writableRows } from './row-access.js'
import type { AssociationWrite, Document, PreparedWrite, ServiceContext, WriteParams } from './types.js'
import type { ChangeAction } from './change-events.js'
import { enforceUnique } from './unique.js'
import { deleteRows } from './versions.js'

/**
 * The SQL of creating, updating and deleting a document, inside the transaction the service
 * opens for each write (write-transaction.ts). The statement order is the lock order: the
 * documents a write touches are locked first (association-writes.ts), so that concurrent writers
 * queue instead of deadlocking (test/reliability/concurrency.test.ts).
 */

/**
 * Creates a document from a prepared write: locks the documents its relations name, inserts its
 * first row (and publishes it unless `status: 'draft'`), checks the caller's row-level
 * conditions on it, and reads it back. A write whose associations are relations only takes
 * create-direct.ts's two or three statements (locks; rows and links; re-read), the second of
 * which also announces the write to other instances, as the change event `action` (the one the
 * caller's transaction announces: write-transaction.ts), and renders the answer when it needs
 * none of the links (no populate: the re-read is then not sent); the general path below
 * takes every other one, and those the direct path hands back (a missing target, a taken unique
 * value) to answer as it always has.
 *
 * ```sql
 * select id from "tags" where document_id in ($1) order by id for no key update;
 * insert into "articles" ("title", "document_id", "created_at", "updated_at", "published_at") values ($2, $3, $4, $4, null) returning "id";
 * update "articles" as p set ... from "articles" as d where ...; -- or insert into "articles" (...) select ... (publishing)
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where ... and t.document_id = $3 limit 1) as r
 * ```
 */
export async function createDocument (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, write: PreparedWrite, action: ChangeAction): Promise<Document> {
  const documentId = createDocumentId()
  // A cached shape's response may be rendered by the direct path's own statement (reader.ts's writtenInStatement).
  const direct = await createDirect(trx, model, ctx, documentId, write, action, write.cache ? writtenSpec(write) : null)
  if (direct === null) {
    await lockWrite(trx, model, ctx, null, write.associations)
    await insertVersion(trx, model, ctx, { ...write, documentId })
  }
  await checkWritten(trx, model, ctx, documentId, write)
  if (direct?.data != null) return JSON.parse(direct.data) as Document
  return await reread(trx, model, ctx, documentId, write)
}

/**
 * Writes a new (draft, or only) row of a document in one locale: a new document, or a new
 * locale of an existing one, which takes the values of the document's non-localized
 * attributes from its other locales (`shared`). Publishes it unless `status` is draft.
 *
 * ```sql
 * select pg_advisory_xact_lock(hashtext($1), hashtext($2)); select 1 as "x" from "articles" as t where ... limit 1; -- each unique value
 * insert into "articles" (...) values (...) returning "id";
 * -- then the row's associations, the other locales' shared values, and the publication
 * ```
 */
async function insertVersion (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, version: {
  documentId: string
  locale: string | null
  status: Status
  values: Record<string, unknown>
  associations: AssociationWrite[]
  generated: ReadonlySet<string>
  shared?: Record<string, unknown>
}): Promise<void> {
  const { documentId, locale, status, values } = version
  await enforceUnique(trx, model, values, { documentId, locale, draftsOnly: draftOnly(model, status) }, version.generated)
  const now = new Date().toISOString()
  const row: Record<string, unknown> = {
    ...version.shared,
    ...toColumns(model, values),
    document_id: documentId,
    created_at: now,
    updated_at: now,
    // The first row is the draft of a draft & publish type, the only row of any other.
    published_at: model.draftAndPublish ? null : now
  }
  if (model.localized) row.locale = locale
  const inserted = await trx.insertInto(model.tableName).values(row).returning('id').executeTakeFirstOrThrow()
  await writeAssociations(trx, model, ctx, { model, rowId: inserted.id as number, documentId, locale }, version.associations)
  await syncShared(trx, model, documentId, locale, values)
  if (model.draftAndPublish && status === 'published') await publishVersion(trx, model, ctx, documentId, locale, now)
}

/**
 * Updates a document (null: the single type's) from a prepared partial write, or creates the
 * locale it does not have yet. Draft & publish types edit the draft and, unless
 * `status: 'draft'`, publish it again, once it passes the publication rules. Null when no such
 * document exists, or the caller's row-level conditions hide it.
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update;
 * update "articles" set "title" = $2, "updated_at" = $3 where "document_id" = $1 and "locale" = $4 and "published_at" is null returning "id";
 * -- no row: the new locale is inserted instead (locales.ts)
 * update "articles" as p set ... from "articles" as d where ...; -- publishing
 * select row_to_json(r)::text as "data" from (select ... from "articles" as t where ... and t.document_id = $1 limit 1) as r
 * ```
 */
export async function updateDocument (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string | null, write: PreparedWrite, ifMatch?: Precondition
): Promise<Document | null> {
  const id = documentId ?? await singleDocumentId(trx, model)
  if (id === null) return null
  const { status, locale, values, associations } = write
  await lockWrite(trx, model, ctx, id, associations)
  // Before the row-level check: a document gone (or hidden) fails `If-Match` as one changed does.
  await checkPrecondition(trx, model, ctx, id, ifMatch)
  if (!(await permits(trx, model, ctx, id, write.access, model.localized ? locale : null))) return null
  const target = trx.updateTable(model.tableName)
    .where('document_id', '=', id)
    .where((eb) => model.localized && locale !== null ? eb('locale', '=', locale) : sql<boolean>`true`)
    .where((eb) => model.draftAndPublish ? eb('published_at', 'is', null) : sql<boolean>`true`)
  const now = new Date().toISOString()
  const updated = await target.set({ ...toColumns(model, values), updated_at: now }).returning(['id']).execute()
  if (updated.length === 0) {
    // Writing an existing document in a locale it does not have yet creates that locale.
    const version = await newLocale(trx, model, ctx, id, locale, status, write.data)
    if (version === null) return null
    await insertVersion(trx, model, ctx, { documentId: id, locale, status, associations, ...version })
    await checkWritten(trx, model, ctx, id, write)
    return await reread(trx, model, ctx, id, write)
  }
  await writeAssociations(trx, model, ctx, { model, rowId: updated[0].id as number, documentId: id, locale }, associations)
  await enforceUnique(trx, model, values, { documentId: id, locale, draftsOnly: draftOnly(model, status) }, new Set())
  await syncShared(trx, model, id, locale, values)
  await checkWritten(trx, model, ctx, id, write)
  if (model.draftAndPublish && status === 'published') {
    // A partial update may publish a draft written under the draft rules: it must be complete now.
    await assertPublishable(trx, model, ctx, id, locale)
    await publishVersion(trx, model, ctx, id, locale, now)
  }
  return await reread(trx, model, ctx, id, write)
}

/**
 * Creates the single type's document on its first write, updates it afterwards. The write is
 * prepared inside the transaction, once it is known to be a creation or an update; a document
 * the caller's row-level conditions hide is a 404.
 *
 * ```sql
 * select pg_advisory_xact_lock(hashtext($1)); -- 'single:<table>'
 * select "document_id" from "homepages" order by "id" limit 1;
 * -- then createDocument's statements, or updateDocument's
 * ```
 */
export async function upsertSingle (trx: Transaction<any>, model: ContentType, ctx: ServiceContext, params: WriteParams): Promise<Document> {
  // Two first writes at once must not create two documents: serialise them on the type.
  await sql`select pg_advisory_xact_lock(hashtext(${`single:${model.tableName}`}))`.execute(trx)
  const existing = await singleDocumentId(trx, model)
  if (existing === null) {
    // `If-Match` on a document that does not exist yet fails (RFC 9110: no current representation).
    await checkPrecondition(trx, model, ctx, null, params.ifMatch)
    return await createDocument(trx, model, ctx, await prepareWrite(model, ctx, params, false), 'update')
  }
  const updated = await updateDocument(trx, model, ctx, existing, await prepareWrite(model, ctx, params, true), params.ifMatch)
  if (updated === null) throw new NotFoundError()
  return updated
}

/**
 * Deletes every version (draft and published) of a document (null: the single type's) in one
 * locale (`locale` null: every locale), with the components and media links its rows own.
 * With row-level conditions, only the locales whose draft the caller may write go. Returns the
 * number of rows removed; an unknown or hidden document removes none.
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update;
 * select "id" from "articles" where "document_id" = $1 and "locale" = $2;
 * delete from "files_related_mph" where "related_type" = $3 and "related_id" in ($4, $5);
 * delete from "articles" where "id" in ($4, $5)
 * ```
 */
export async function deleteDocument (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string | null, locale: string | null, access: AccessScope | undefined, ifMatch?: Precondition
): Promise<{ documentId: string | null, entries: number }> {
  const id = documentId ?? await singleDocumentId(trx, model)
  const inLocale = model.localized ? locale : null
  if (id !== null) await lockWrite(trx, model, ctx, id)
  if (id === null || !(await permits(trx, model, ctx, id, access, inLocale))) {
    await checkPrecondition(trx, model, ctx, null, ifMatch)
    return { documentId: null, entries: 0 }
  }
  await checkPrecondition(trx, model, ctx, id, ifMatch)
  let query = trx.selectFrom(model.tableName).select('id').where('document_id', '=', id)
  if (inLocale !== null) query = query.where('locale', '=', inLocale)
  else if (model.localized && access?.conditions != null) {
    // Every locale: only those whose version the caller may write.
    const conditions = conditionsOn(model, ctx, id, access.conditions)
    query = query.where('locale', 'in', writableRows(trx, model, conditions, null, ctx.compile).select('t.locale'))
  }
  const rows = await query.execute()
  const entries = await deleteRows(trx, ctx.registry, model, rows.map((r) => r.id as number))
  return { documentId: id, entries }
}

/** The single type's one document, whichever locales it has: `select "document_id" from "homepages" order by "id" limit 1`. */
async function singleDocumentId (trx: Transaction<any>, model: ContentType): Promise<string | null> {
  const row = await trx.selectFrom(model.tableName).select('document_id').orderBy('id').limit(1).executeTakeFirst()
  return (row?.document_id as string | undefined) ?? null
}

/** The read of a written document's version, in the shape the write asked its answer in. */
function writtenSpec (version: Pick<PreparedWrite, 'status' | 'locale' | 'shape'>): FindSpec {
  return {
    // The written row itself ignores status on a type without draft & publish; populated
    // relations to draft & publish types follow it, as in reads.
    status: version.status,
    locale: version.locale,
    ...version.shape,
    filters: null,
    sort: []
  }
}

/**
 * The document as written, read in the write's transaction (never from the statement cache:
 * the shape is the write's own). With `maxRows` in the shape, a response over it throws, which
 * rolls the write back: the client is refused, nothing is kept.
 *
 * ```sql
 * select row_to_json(r)::text as "data" from (select t.id as "id", t.document_id as "documentId", ...
 *   from "articles" as t where t.published_at is not null and t.locale = $1 and t.document_id = $2 limit 1) as r
 * ```
 */
export async function reread (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, version: Pick<PreparedWrite, 'status' | 'locale' | 'shape'> & { cache?: boolean }
): Promise<Document> {
  const spec = writtenSpec(version)
  const data = version.cache === true
    ? await readWrittenCached(trx, model, spec, documentId, ctx)
    : await readInTransaction(trx, model, spec, documentId, ctx.compile)
  // The transaction has just written it: the read cannot miss.
  return JSON.parse(data!) as Document
}
