import { sql, type Transaction } from 'kysely'
import { ValidationError } from '../errors.js'
import type { RelationAssociation } from '../model/associations.js'
import type { ContentType } from '../model/registry.js'
import { APPENDED_BASE, nextLinkId } from './list-positions.js'
import type { RelationInput, RelationRef } from './relation-input.js'

/** The row being written and the document it belongs to. */
export interface WrittenRow {
  model: ContentType
  rowId: number
  documentId: string
  locale: string | null
}

/**
 * Which of some related documents the caller may see (its row-level conditions on the target
 * type); a write can neither link nor unlink a document it cannot see.
 */
export type VisibleDocuments = (trx: Transaction<any>, documentIds: string[]) => Promise<ReadonlySet<string>>

interface ResolvedTargets {
  documentOf: (ref: RelationRef) => string
  /** Every version (draft and published) of a related document in its locale: links go to all. */
  rowsOf: (documentId: string) => number[]
}

function targetLocale (target: ContentType, ref: RelationRef, source: WrittenRow, defaultLocale: string): string | null {
  if (!target.localized) return null
  return ref.locale ?? source.locale ?? defaultLocale
}

/**
 * Finds the related documents a write names, by documentId or row id, in the locale that applies.
 * A document that does not exist, or that the caller may not see, is a 400 naming it, as Strapi
 * answers for a missing one; row ids that name no row are counted in Strapi's entity-validator
 * message (`1 relation(s) of type api::category.category associated with this entity do not exist`).
 */
async function resolveTargets (
  trx: Transaction<any>, target: ContentType, refs: RelationRef[], source: WrittenRow, defaultLocale: string, visible: VisibleDocuments | null
): Promise<ResolvedTargets> {
  const byId = new Map<number, string>()
  const ids = refs.filter((r) => r.id !== undefined).map((r) => r.id!)
  if (ids.length > 0) {
    const rows = await trx.selectFrom(target.tableName).select(['id', 'document_id']).where('id', 'in', ids).execute()
    for (const row of rows) byId.set(row.id as number, row.document_id as string)
  }
  const missingIds = new Set(ids.filter((id) => !byId.has(id)))
  if (missingIds.size > 0) {
    // Strapi's entity validator counts row ids that name nothing, at the root of the payload.
    const message = `${missingIds.size} relation(s) of type ${target.uid} associated with this entity do not exist`
    throw ValidationError.fromFieldErrors([{ path: [], message, name: 'ValidationError' }])
  }
  const documentOf = (ref: RelationRef): string => ref.documentId ?? byId.get(ref.id!)!
  const wanted = [...new Set(refs.map(documentOf))]
  const rows = wanted.length === 0
    ? []
    : await trx.selectFrom(target.tableName).select(['id', 'document_id', ...(target.localized ? ['locale'] : [])])
      .where('document_id', 'in', wanted).orderBy('id').execute()
  const seen = visible === null || wanted.length === 0 ? null : await visible(trx, wanted)
  const versions = new Map<string, number[]>()
  for (const ref of refs) {
    const documentId = documentOf(ref)
    const locale = targetLocale(target, ref, source, defaultLocale)
    const matching = seen !== null && !seen.has(documentId)
      ? []
      : rows.filter((r) => r.document_id === documentId && (locale === null || r.locale === locale)).map((r) => r.id as number)
    if (matching.length === 0) {
      // Strapi's documentId-to-row-id transform: a plain ValidationError, no details. A row id
      // is echoed as sent, never the documentId it resolved to (the caller may not see it).
      throw new ValidationError(`Document with id "${ref.documentId ?? String(ref.id)}", locale "${locale}" not found`)
    }
    versions.set(documentId, matching)
  }
  return { documentOf, rowsOf: (documentId) => versions.get(documentId) ?? [] }
}

/** The related documents of a row in stored order, each with the rows (versions) it is linked through. */
async function currentDocuments (
  trx: Transaction<any>, association: RelationAssociation, target: ContentType, rowId: number
): Promise<Map<string, number[]>> {
  const { link } = association
  const rows = await trx.selectFrom(`${link.table} as l`)
    .innerJoin(`${target.tableName} as r`, 'r.id', `l.${link.targetColumn}`)
    .select(['r.document_id', 'r.id'])
    .where(sql<boolean>`${sql.ref(`l.${link.sourceColumn}`)} = ${rowId}`)
    .orderBy(link.orderColumn === null ? sql`l.id` : sql`${sql.ref(`l.${link.orderColumn}`)} asc nulls last`)
    .orderBy('l.id')
    .execute()
  const documents = new Map<string, number[]>()
  for (const row of rows) documents.set(row.document_id as string, [...(documents.get(row.document_id as string) ?? []), row.id as number])
  return documents
}

function place (list: string[], documentId: string, position: RelationRef['position'], documentOf: (ref: RelationRef) => string): string[] {
  const without = list.filter((d) => d !== documentId)
  if (position === undefined || 'end' in position) return [...without, documentId]
  if ('start' in position) return [documentId, ...without]
  const anchor = documentOf('before' in position ? position.before : position.after)
  const at = without.indexOf(anchor)
  if (at === -1) return [...without, documentId]
  const index = 'before' in position ? at : at + 1
  return [...without.slice(0, index), documentId, ...without.slice(index)]
}

/**
 * Applies one relation write to a row: computes the new ordered list of related documents
 * (`set` replaces it; `disconnect` then positional `connect` edit it), then rewrites the row's
 * links in one delete and one insert, keeping the other side's order of existing links.
 * The write runs inside the document write's transaction, so a missing target rolls it all back.
 * With `visible` (the caller's row-level conditions on the target), documents it names must be
 * visible, and `set` on a to-many relation keeps the links to documents the caller cannot see.
 */
export async function writeRelation (
  trx: Transaction<any>, source: WrittenRow, association: RelationAssociation, target: ContentType,
  input: RelationInput, defaultLocale: string, visible: VisibleDocuments | null = null
): Promise<void> {
  const refs = input.mode === 'set'
    ? input.items
    : [...input.connect, ...input.disconnect, ...input.connect.flatMap((r) => {
        const p = r.position
        return p !== undefined && ('before' in p || 'after' in p) ? ['before' in p ? p.before : p.after] : []
      })]
  const resolved = await resolveTargets(trx, target, refs, source, defaultLocale, visible)

  let documents: string[]
  // Documents kept from the current list stay linked through the rows they already use.
  const kept = new Map<string, number[]>()
  if (input.mode === 'set') {
    documents = [...new Set(input.items.map(resolved.documentOf))]
    if (visible !== null && association.toMany) {
      const current = await currentDocuments(trx, association, target, source.rowId)
      const seen = current.size === 0 ? new Set<string>() : await visible(trx, [...current.keys()])
      for (const [documentId, rows] of current) {
        if (!seen.has(documentId) && !documents.includes(documentId)) {
          kept.set(documentId, rows)
          documents.push(documentId)
        }
      }
    }
  } else {
    const disconnected = new Set(input.disconnect.map(resolved.documentOf))
    const current = await currentDocuments(trx, association, target, source.rowId)
    for (const [documentId, rows] of current) if (!disconnected.has(documentId)) kept.set(documentId, rows)
    documents = [...kept.keys()]
    for (const ref of input.connect) documents = place(documents, resolved.documentOf(ref), ref.position, resolved.documentOf)
  }
  if (!association.toMany && documents.length > 1) documents = documents.slice(-1)
  const rowsOf = (documentId: string): number[] => {
    const connected = resolved.rowsOf(documentId)
    return connected.length > 0 ? connected : kept.get(documentId) ?? []
  }

  const wanted = documents.flatMap((documentId, index) => rowsOf(documentId).map((row) => ({ row, position: index + 1 })))
  await writeLinks(trx, source, association, wanted)
}

/**
 * Brings a row's links to `wanted` (related rows with their positions in the row's list) by
 * touching only what changes: links to rows no longer wanted are deleted, kept links whose
 * position changed are updated in place, new links are inserted at the end of the related row's
 * own list (the other order column, at a position of the link's own: list-positions.ts). A kept
 * link is never deleted and inserted again, so a concurrent writer that removes it (a document
 * moving to another list of an exclusive relation) is not undone.
 *
 * ```sql
 * delete from "articles_tags_lnk" where id in ($1);
 * update "articles_tags_lnk" as l set "tag_ord" = v.position from (values ($2, $3)) as v(id, position) where l.id = v.id;
 * insert into "articles_tags_lnk" ("id", "article_id", "tag_id", "tag_ord", "article_ord")
 *   select s."k", $4::integer, s."target", s."position", 2147483648 + s."k"
 *   from (select nextval(pg_get_serial_sequence('"articles_tags_lnk"', 'id'))::integer as "k", v."target", v."position"
 *     from (values ($5::integer, $6::double precision)) as v("target", "position")) as s
 * ```
 */
async function writeLinks (
  trx: Transaction<any>, source: WrittenRow, association: RelationAssociation, wanted: ReadonlyArray<{ row: number, position: number }>
): Promise<void> {
  const { link } = association
  const existing = await trx.selectFrom(link.table)
    .select([
      'id',
      sql<number>`${sql.ref(link.targetColumn)}`.as('target'),
      (link.orderColumn === null ? sql<number | null>`null` : sql<number | null>`${sql.ref(link.orderColumn)}`).as('position')
    ])
    .where(sql<boolean>`${sql.ref(link.sourceColumn)} = ${source.rowId}`)
    .execute()
  const current = new Map(existing.map((r) => [r.target, r]))
  const wantedRows = new Set(wanted.map((w) => w.row))
  const removed = existing.filter((r) => !wantedRows.has(r.target)).map((r) => r.id as number)
  if (removed.length > 0) await trx.deleteFrom(link.table).where('id', 'in', removed).execute()
  if (wanted.length === 0) return

  const targetRows = wanted.map((w) => w.row)
  if (association.exclusive) {
    // A related document may belong to one document on this side only: unlink it elsewhere,
    // except from the other versions (draft, published) of the document being written.
    await trx.deleteFrom(link.table)
      .where(sql<boolean>`${sql.ref(link.targetColumn)} in (${sql.join(targetRows)})`)
      .where(sql<boolean>`${sql.ref(link.sourceColumn)} not in (select id from ${sql.table(source.model.tableName)} where document_id = ${source.documentId})`)
      .execute()
  }
  if (link.orderColumn !== null) {
    const moved = wanted.flatMap((w) => {
      const kept = current.get(w.row)
      return kept !== undefined && kept.position !== w.position ? [{ id: kept.id as number, position: w.position }] : []
    })
    if (moved.length > 0) {
      await sql`update ${sql.table(link.table)} as l set ${sql.id(link.orderColumn)} = v.position
        from (values ${sql.join(moved.map((m) => sql`(${m.id}::integer, ${m.position}::double precision)`))}) as v(id, position)
        where l.id = v.id`.execute(trx)
    }
  }

  const added = wanted.filter((w) => !current.has(w.row))
  if (added.length === 0) return
  // Each new link at the end of its related row's list, at a position of its own (list-positions.ts).
  const columns = [link.sourceColumn, link.targetColumn, ...(link.orderColumn === null ? [] : [link.orderColumn]), link.otherOrderColumn]
  const rows = added.map(({ row, position }) => sql`(${row}::integer, ${position}::double precision)`)
  await sql`insert into ${sql.table(link.table)} ("id", ${sql.join(columns.map((c) => sql.id(c)))})
    select s."k", ${source.rowId}::integer, s."target", ${link.orderColumn === null ? sql`` : sql`s."position", `}${sql.lit(APPENDED_BASE)} + s."k"
    from (select ${sql.raw(nextLinkId(link.table))} as "k", v."target", v."position" from (values ${sql.join(rows)}) as v("target", "position")) as s`.execute(trx)
}
