import { sql, type Transaction } from 'kysely'
import { MEDIA_LINK_TABLE } from '../model/associations.js'
import type { ContentType, Registry } from '../model/registry.js'
import { copyOwnedComponents, deleteOwnedComponents } from './write-components.js'

/**
 * What one row of a document owns besides its columns, and how it moves between the versions of
 * a document (draft and published rows share a documentId, and each holds its own links).
 *
 * The invariant: a row links to EVERY version of each related document (its draft and its
 * published row), and populate picks the version matching the request's status. So a relation
 * never has to be re-targeted when the related document is published or edited.
 */

/** Gives `toRow` copies of `fromRow`'s relations, components and media, replacing its own. */
export async function copyRowAssociations (
  trx: Transaction<any>, registry: Registry, model: ContentType, fromRow: number, toRow: number
): Promise<void> {
  for (const association of model.associations.values()) {
    if (association.kind !== 'relation' || registry.get(association.target) === undefined) continue
    const { table, sourceColumn, targetColumn, orderColumn, otherOrderColumn } = association.link
    await trx.deleteFrom(table).where(sql<boolean>`${sql.ref(sourceColumn)} = ${toRow}`).execute()
    const copied = [targetColumn, ...(orderColumn === null ? [] : [orderColumn]), otherOrderColumn]
    await sql`insert into ${sql.table(table)} (${sql.id(sourceColumn)}, ${sql.join(copied.map((c) => sql.id(c)))})
      select ${toRow}, ${sql.join(copied.map((c) => sql.id(c)))} from ${sql.table(table)} where ${sql.ref(sourceColumn)} = ${fromRow}
      order by id`.execute(trx)
  }
  await copyOwnedComponents(trx, registry, model, fromRow, toRow)
  await trx.deleteFrom(MEDIA_LINK_TABLE).where('related_id', '=', toRow).where('related_type', '=', model.uid).execute()
  await sql`insert into ${sql.table(MEDIA_LINK_TABLE)} (file_id, related_id, related_type, field, "order")
    select file_id, ${toRow}, related_type, field, "order" from ${sql.table(MEDIA_LINK_TABLE)}
    where related_id = ${fromRow} and related_type = ${model.uid} order by id`.execute(trx)
}

/**
 * A new version row of a document (its first published row) must be linked wherever its draft
 * is: relations declared on other models that point here without an inverse attribute on this
 * model (those with an inverse are copied by `copyRowAssociations`).
 */
export async function mirrorIncomingLinks (
  trx: Transaction<any>, registry: Registry, model: ContentType, fromRow: number, toRow: number
): Promise<void> {
  for (const other of registry.contentTypes.values()) {
    for (const association of other.associations.values()) {
      if (association.kind !== 'relation' || !association.owner || association.target !== model.uid) continue
      if (association.inverse !== null && model.associations.has(association.inverse)) continue
      const { table, owner } = association.link
      await sql`insert into ${sql.table(table)} (${sql.id(owner.sourceColumn)}, ${sql.id(owner.targetColumn)}, ${sql.id(owner.orderColumn)}, ${sql.id(owner.inverseOrderColumn)})
        select ${sql.ref(owner.sourceColumn)}, ${toRow}, ${sql.ref(owner.orderColumn)}, ${sql.ref(owner.inverseOrderColumn)}
        from ${sql.table(table)} where ${sql.ref(owner.targetColumn)} = ${fromRow}
        on conflict do nothing`.execute(trx)
    }
  }
}

/**
 * Deletes document rows with everything they own: their components (which no foreign key
 * reaches) and media links (polymorphic, so no foreign key either). Relation links go with the
 * rows through their foreign keys.
 */
export async function deleteRows (trx: Transaction<any>, registry: Registry, model: ContentType, rowIds: number[]): Promise<number> {
  if (rowIds.length === 0) return 0
  await deleteOwnedComponents(trx, registry, model, rowIds)
  await trx.deleteFrom(MEDIA_LINK_TABLE).where('related_type', '=', model.uid).where('related_id', 'in', rowIds).execute()
  const result = await trx.deleteFrom(model.tableName).where('id', 'in', rowIds).executeTakeFirst()
  return Number(result.numDeletedRows)
}
