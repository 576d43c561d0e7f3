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

/**
 * Gives `toRow` copies of `fromRow`'s relations, components and media, replacing its own: one
 * statement per relation and one for the media links (components: write-components.ts).
 *
 * A relation's statement brings `toRow`'s links to `fromRow`'s in three parts that touch
 * different rows, as one statement's parts must (they run in no set order, on one snapshot):
 * the links to targets `fromRow` has not are deleted, those to targets both have take
 * `fromRow`'s positions, and the targets only `fromRow` has are linked, in `fromRow`'s link
 * order. A link kept keeps its id.
 *
 * ```sql
 * with "gone" as (delete from "articles_tags_lnk" as l where l."article_id" = $1
 *     and not exists (select 1 from "articles_tags_lnk" as f where f."article_id" = $2 and f."tag_id" = l."tag_id")),
 *   "kept" as (update "articles_tags_lnk" as l set "tag_ord" = f."tag_ord", "article_ord" = f."article_ord"
 *     from "articles_tags_lnk" as f where l."article_id" = $1 and f."article_id" = $2 and f."tag_id" = l."tag_id"
 *     and (l."tag_ord", l."article_ord") is distinct from (f."tag_ord", f."article_ord"))
 * insert into "articles_tags_lnk" ("article_id", "tag_id", "tag_ord", "article_ord")
 *   select $1, f."tag_id", f."tag_ord", f."article_ord" from "articles_tags_lnk" as f where f."article_id" = $2
 *   and not exists (select 1 from "articles_tags_lnk" as l where l."article_id" = $1 and l."tag_id" = f."tag_id") order by f.id;
 * with "gone" as (delete from "files_related_mph" where related_id = $1 and related_type = $3)
 * insert into "files_related_mph" (...) select file_id, $1, related_type, field, "order" from "files_related_mph"
 *   where related_id = $2 and related_type = $3 order by id
 * ```
 */
export async function copyRowAssociations (
  trx: Transaction<any>, registry: Registry, model: ContentType, fromRow: number, toRow: number
): Promise<void> {
  for (const association of model.associations.values()) {
    if (association.kind !== 'relation' || registry.get(association.target) === undefined) continue
    const { table, sourceColumn, targetColumn, orderColumn, otherOrderColumn } = association.link
    const link = sql.table(table)
    const [source, target] = [sql.id(sourceColumn), sql.id(targetColumn)]
    const positions = [...(orderColumn === null ? [] : [orderColumn]), otherOrderColumn].map((c) => sql.id(c))
    const of = (alias: string) => sql.join(positions.map((c) => sql`${sql.id(alias)}.${c}`))
    await sql`with "gone" as (delete from ${link} as l where l.${source} = ${toRow}
        and not exists (select 1 from ${link} as f where f.${source} = ${fromRow} and f.${target} = l.${target})),
      "kept" as (update ${link} as l set ${sql.join(positions.map((c) => sql`${c} = f.${c}`))}
        from ${link} as f where l.${source} = ${toRow} and f.${source} = ${fromRow} and f.${target} = l.${target}
        and (${of('l')}) is distinct from (${of('f')}))
      insert into ${link} (${source}, ${target}, ${sql.join(positions)})
      select ${toRow}::integer, f.${target}, ${of('f')} from ${link} as f where f.${source} = ${fromRow}
        and not exists (select 1 from ${link} as l where l.${source} = ${toRow} and l.${target} = f.${target})
      order by f.id`.execute(trx)
  }
  await copyOwnedComponents(trx, registry, model, fromRow, toRow)
  await sql`with "gone" as (delete from ${sql.table(MEDIA_LINK_TABLE)} where related_id = ${toRow} and related_type = ${model.uid})
    insert into ${sql.table(MEDIA_LINK_TABLE)} (file_id, related_id, related_type, field, "order")
    select file_id, ${toRow}::integer, related_type, field, "order" from ${sql.table(MEDIA_LINK_TABLE)}
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
