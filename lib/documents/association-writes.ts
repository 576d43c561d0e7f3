import type { Transaction } from 'kysely'
import type { AccessScope } from '../query/access-scope.js'
import { ValidationError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import { Visibility } from '../query/visibility.js'
import { lockDocuments, type LockedDocuments } from './document-locks.js'
import { namedDocuments, parseRelationInput, type RelationInput } from './relation-input.js'
import { visibleDocuments } from './row-access.js'
import type { AssociationWrite, ServiceContext } from './types.js'
import { writeComponentAttribute } from './write-components.js'
import { writeMedia } from './write-media.js'
import { writeRelation, type WrittenRow } from './write-relations.js'

/**
 * The associations of a write (relations, media, components and dynamic zones): their inputs
 * parsed before the transaction, the locks their relations need taken first in it, and each
 * written, once the row they belong to exists, by its own module.
 */

/**
 * Parses a write's association inputs before the transaction opens: relation inputs in full
 * (components and media validate as they write), each with, when the caller's row-level
 * conditions restrict its target, the check of which related documents it sees. An unknown
 * name, or a relation to a type the registry does not hold, is a 400. No SQL.
 */
export function associationInputs (
  model: ContentType, ctx: ServiceContext, deferred: Record<string, unknown>, access: AccessScope | undefined, trusted: ReadonlySet<string>
): AssociationWrite[] {
  const visibility = access === undefined ? null : new Visibility(ctx.registry, access.read)
  return Object.entries(deferred).map(([name, value]): AssociationWrite => {
    const association = model.associations.get(name)
    const target = association?.kind === 'relation' ? ctx.registry.get(association.target) : undefined
    if (association === undefined || (association.kind === 'relation' && target === undefined)) {
      throw ValidationError.invalidKey(name, { key: name, source: 'body' })
    }
    if (association.kind !== 'relation') return [association, value, null]
    const conditions = trusted.has(name) ? null : visibility?.rows(target!) ?? null
    return [association, parseRelationInput(name, value), conditions === null ? null : visibleDocuments(target!, conditions, ctx.compile)]
  })
}

/**
 * Locks, before anything else in the write's transaction, the document written (null: a new
 * one, which no other writer can know yet) and every document its relation inputs link or
 * unlink (see lib/documents/document-locks.ts). A second writer of the same document waits here
 * until the first commits, then reads what it wrote; so does a writer of a related document,
 * until the links made to it are committed. Writers linking the same document do not wait for
 * each other, unless the relation is exclusive.
 *
 * ```sql
 * select id from "articles" where document_id in ($1) order by id for no key update;
 * select id from "tags" where document_id in ($2, $3) or document_id in (select document_id from "tags" where id in ($4))
 * order by id for share
 * ```
 */
export async function lockWrite (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string | null, associations: AssociationWrite[] = []
): Promise<void> {
  const documents: LockedDocuments[] = documentId === null ? [] : [{ table: model.tableName, documentIds: [documentId], rowIds: [], for: 'write' }]
  for (const [association, input] of associations) {
    if (association.kind !== 'relation') continue
    const refs = namedDocuments(input as RelationInput)
    documents.push({
      table: ctx.registry.get(association.target)!.tableName,
      documentIds: refs.flatMap((r) => r.documentId ?? []),
      rowIds: refs.flatMap((r) => r.documentId === undefined && r.id !== undefined ? [r.id] : []),
      for: association.exclusive ? 'write' : 'link'
    })
  }
  await lockDocuments(trx, documents)
}

/**
 * Writes a row's associations, in the order of the input: each relation's links
 * (write-relations.ts), media links (write-media.ts), owned components (write-components.ts).
 *
 * ```sql
 * delete from "articles_tags_lnk" where id in ($1);
 * insert into "articles_tags_lnk" ("article_id", "tag_id", "tag_ord", "article_ord") values ($2, $3, $4, $5);
 * insert into "files_related_mph" (file_id, related_id, related_type, field, "order") values ...;
 * insert into "components_shared_quotes" (...) values (...) returning "id"; insert into "articles_cmps" ...
 * ```
 */
export async function writeAssociations (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, row: WrittenRow, inputs: AssociationWrite[]
): Promise<void> {
  for (const [association, input, visible] of inputs) {
    switch (association.kind) {
      case 'relation':
        await writeRelation(trx, row, association, ctx.registry.get(association.target)!, input as RelationInput, ctx.i18n.defaultLocale, visible)
        break
      case 'media':
        await writeMedia(trx, ctx.registry, { uid: model.uid, rowId: row.rowId }, association, input)
        break
      default:
        await writeComponentAttribute(trx, ctx.registry, { joinTable: association.joinTable, rowId: row.rowId }, association, input)
    }
  }
}
