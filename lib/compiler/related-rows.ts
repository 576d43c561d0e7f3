import { sql, type RawBuilder } from 'kysely'
import { MEDIA_LINK_TABLE, type ComponentAssociation, type DynamicZoneAssociation, type MediaAssociation, type RelationAssociation } from '../model/associations.js'
import type { Component, ContentType } from '../model/registry.js'
import type { PublicationFilter, Status } from '../query/index.js'
import { cohortCondition } from './scope.js'

export const ref = (alias: string, column: string): RawBuilder<unknown> => sql.ref(`${alias}.${column}`)

export interface OrderTerm {
  expr: RawBuilder<unknown>
  direction: 'asc' | 'desc'
  /** Rows linked without an order value sort after the ordered ones. */
  nullsLast?: boolean
}

const asc = (expr: RawBuilder<unknown>, nullsLast = false): OrderTerm => ({ expr, direction: 'asc', nullsLast })

export function orderSql (terms: readonly OrderTerm[]): RawBuilder<unknown> {
  return sql.join(terms.map((t) => sql`${t.expr} ${sql.raw(`${t.direction}${t.nullsLast === true ? ' nulls last' : ''}`)}`))
}

/**
 * The rows related to the parent row aliased `parent` through one association, as the pieces of
 * a sub-select: `select ... from <from> where <where> order by <order>`, with the related rows
 * aliased `r` and the link (or join) rows aliased `l`. Populate, filters and sort all read
 * related rows through this one description, so they always agree on what "related" means:
 *
 * - relation: `"categories" as r join "articles_category_lnk" as l on l.category_id = r.id
 *   where l.article_id = parent.id [and r.published_at is (not) null]`, in the link's stored order;
 * - media: the polymorphic `files_related_mph` link, by owner uid and attribute name;
 * - component (or one component type of a dynamic zone): the owner's `_cmps` join table.
 */
export interface RelatedRows {
  from: RawBuilder<unknown>
  /**
   * The same rows as `from`, written link first, each related row read by its primary key behind
   * an optimisation fence (`offset 0`). Populate renders a few rows per parent row: joined plainly,
   * PostgreSQL's default costs (a random read at four sequential ones) make it hash the whole
   * related table once per parent row when the table is small, which it reads again for every
   * parent (25 articles with their authors: a third of the statement's time). Filters and sorts
   * keep `from`, where a hash join over many parent rows is the right plan.
   */
  perParent: RawBuilder<unknown>
  where: Array<RawBuilder<unknown>>
  /** Stored order, ending with a unique tie-breaker. */
  order: OrderTerm[]
  toMany: boolean
}

/** The table of the links `relatedRows` reads an association through (aliased `l` there). */
export function linkTable (association: RelationAssociation | MediaAssociation | ComponentAssociation | DynamicZoneAssociation): string {
  switch (association.kind) {
    case 'relation': return association.link.table
    case 'media': return MEDIA_LINK_TABLE
    default: return association.joinTable
  }
}

/** `from` and `perParent` of the rows of `table` (aliased `r`) that the links in `links` (aliased `l`) name by `column`. */
function joined (table: string, r: string, links: string, l: string, column: string): Pick<RelatedRows, 'from' | 'perParent'> {
  return {
    from: sql`${sql.table(table)} as ${sql.id(r)} join ${sql.table(links)} as ${sql.id(l)} on ${ref(l, column)} = ${ref(r, 'id')}`,
    perParent: sql`${sql.table(links)} as ${sql.id(l)} cross join lateral (select * from ${sql.table(table)} as ${sql.id(r)} where ${ref(r, 'id')} = ${ref(l, column)} offset 0) as ${sql.id(r)}`
  }
}

export function relatedRows (
  association: RelationAssociation | MediaAssociation | ComponentAssociation | DynamicZoneAssociation,
  target: ContentType | Component, ownerUid: string, parent: string, r: string, l: string, status: Status,
  cohort: PublicationFilter | null = null
): RelatedRows {
  switch (association.kind) {
    case 'relation': {
      const { link } = association
      const where = [sql`${ref(l, link.sourceColumn)} = ${ref(parent, 'id')}`]
      // A row links to every version of a related document; the request's status picks one.
      if ((target as ContentType).draftAndPublish === true) {
        where.push(status === 'draft' ? sql`${ref(r, 'published_at')} is null` : sql`${ref(r, 'published_at')} is not null`)
        // A populated target keeps the request's publication cohort, as Strapi's sub-queries do.
        const kept = cohort === null ? null : cohortCondition(target as ContentType, cohort, status, r)
        if (kept !== null) where.push(kept)
      }
      return {
        ...joined(target.tableName, r, link.table, l, link.targetColumn),
        where,
        order: link.orderColumn === null ? [asc(ref(l, 'id'))] : [asc(ref(l, link.orderColumn), true), asc(ref(l, 'id'))],
        toMany: association.toMany
      }
    }
    case 'media':
      return {
        ...joined(target.tableName, r, MEDIA_LINK_TABLE, l, 'file_id'),
        where: [
          sql`${ref(l, 'related_id')} = ${ref(parent, 'id')}`,
          sql`${ref(l, 'related_type')} = ${ownerUid}`,
          sql`${ref(l, 'field')} = ${association.name}`
        ],
        order: [asc(ref(l, 'order'), true), asc(ref(l, 'id'))],
        toMany: association.multiple
      }
    default:
      return {
        ...joined(target.tableName, r, association.joinTable, l, 'cmp_id'),
        where: [
          sql`${ref(l, 'entity_id')} = ${ref(parent, 'id')}`,
          sql`${ref(l, 'component_type')} = ${target.uid}`,
          sql`${ref(l, 'field')} = ${association.name}`
        ],
        order: [asc(ref(l, 'order'), true), asc(ref(l, 'id'))],
        toMany: association.kind === 'dynamiczone' || association.repeatable
      }
  }
}
