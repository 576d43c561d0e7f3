import { identifier, snakeCase } from './naming.js'
import type { Attribute, RelationAttribute, RelationKind } from './types.js'

/**
 * Where a relation's rows live. Every relation, to-one or to-many, is stored in a link table
 * owned by the side that declares `inversedBy` (or by the only side of a unidirectional
 * relation), as Strapi v5 stores them:
 *
 * ```sql
 * create table "articles_category_lnk" (
 *   "id" serial primary key,
 *   "article_id" integer references "articles" on delete cascade,   -- sourceColumn
 *   "category_id" integer references "categories" on delete cascade, -- targetColumn
 *   "category_ord" double precision,  -- position of the category among the article's (to-many only)
 *   "article_ord" double precision    -- position of the article among the category's articles
 * )
 * ```
 *
 * Links join row ids, so a document's draft and published versions each hold their own links.
 * The inverse side (`mappedBy`) reads the same table with source and target swapped.
 */
export interface LinkSpec {
  readonly table: string
  /** Column holding the id of the row that declares the attribute being read. */
  readonly sourceColumn: string
  /** Column holding the id of the related row. */
  readonly targetColumn: string
  /** Position of the related row among the source's relations (null: no order kept). */
  readonly orderColumn: string | null
  /** Position of the source among the related row's relations, maintained for the other side. */
  readonly otherOrderColumn: string
  /** The owner's table columns, whichever side reads: writes always address the owner's layout. */
  readonly owner: { readonly sourceColumn: string, readonly targetColumn: string, readonly orderColumn: string, readonly inverseOrderColumn: string }
}

export interface RelationAssociation {
  readonly kind: 'relation'
  readonly name: string
  readonly relation: RelationKind
  readonly target: string
  readonly toMany: boolean
  /** True on the side that owns the link table. */
  readonly owner: boolean
  /**
   * True when a related document may have only one document on this side (`oneToOne`,
   * `oneToMany`): linking it here unlinks it from any other.
   */
  readonly exclusive: boolean
  /** The attribute on the target that points back, if any. */
  readonly inverse: string | null
  readonly link: LinkSpec
  readonly attribute: RelationAttribute
}

export interface MediaAssociation {
  readonly kind: 'media'
  readonly name: string
  readonly multiple: boolean
  readonly allowedTypes: readonly string[] | null
}

export interface ComponentAssociation {
  readonly kind: 'component'
  readonly name: string
  readonly component: string
  readonly repeatable: boolean
  /** `<owner table>_cmps`: which component rows belong to which owner row, in order. */
  readonly joinTable: string
}

export interface DynamicZoneAssociation {
  readonly kind: 'dynamiczone'
  readonly name: string
  readonly components: readonly string[]
  readonly joinTable: string
}

/** An attribute that is not a column: relations, media, components and dynamic zones. */
export type Association = RelationAssociation | MediaAssociation | ComponentAssociation | DynamicZoneAssociation

/** The polymorphic link table of media fields, as Strapi names it. */
export const MEDIA_LINK_TABLE = 'files_related_mph'
export const FILE_UID = 'plugin::upload.file'

export interface ModelNames {
  uid: string
  tableName: string
  singularName: string
  attributes: Readonly<Record<string, Attribute>>
}

const toMany = (kind: RelationKind): boolean => kind === 'oneToMany' || kind === 'manyToMany'
/** `oneTo...`: seen from this side, the other side holds at most one document. */
const exclusive = (kind: RelationKind): boolean => kind === 'oneToOne' || kind === 'oneToMany'

/** `<table>_cmps`, the join table between an owner's rows and its component rows. */
export const componentJoinTable = (ownerTable: string): string => identifier(`${ownerTable}_cmps`)

function linkColumns (owner: ModelNames, target: ModelNames): LinkSpec['owner'] {
  const source = snakeCase(owner.singularName)
  const related = snakeCase(target.singularName)
  // A self-relation needs two column names for one model: Strapi prefixes the related side with inv_.
  const targetName = related === source ? `inv_${related}` : related
  return {
    sourceColumn: identifier(`${source}_id`),
    targetColumn: identifier(`${targetName}_id`),
    orderColumn: identifier(`${targetName}_ord`),
    inverseOrderColumn: identifier(`${source}_ord`)
  }
}

function ownerLink (owner: ModelNames, attributeName: string, target: ModelNames, kind: RelationKind): LinkSpec {
  const columns = linkColumns(owner, target)
  return {
    table: identifier(`${owner.tableName}_${snakeCase(attributeName)}_lnk`),
    sourceColumn: columns.sourceColumn,
    targetColumn: columns.targetColumn,
    orderColumn: toMany(kind) ? columns.orderColumn : null,
    otherOrderColumn: columns.inverseOrderColumn,
    owner: columns
  }
}

/**
 * The associations of one model, given every model by uid (relations need their target's table
 * and the owning side's link table). Relations to a target that is not registered are left out.
 */
export function buildAssociations (model: ModelNames, models: ReadonlyMap<string, ModelNames>): Map<string, Association> {
  const associations = new Map<string, Association>()
  for (const [name, attribute] of Object.entries(model.attributes)) {
    switch (attribute.type) {
      case 'relation': {
        const target = models.get(attribute.target)
        if (target === undefined) break
        if (attribute.mappedBy !== undefined) {
          // The inverse side reads the owner's link table backwards.
          const ownerAttribute = target.attributes[attribute.mappedBy] as RelationAttribute
          const link = ownerLink(target, attribute.mappedBy, model, ownerAttribute.relation)
          const inverseOrdered = toMany(attribute.relation)
          associations.set(name, {
            kind: 'relation',
            name,
            relation: attribute.relation,
            target: attribute.target,
            toMany: toMany(attribute.relation),
            owner: false,
            exclusive: exclusive(attribute.relation),
            inverse: attribute.mappedBy,
            attribute,
            link: {
              table: link.table,
              sourceColumn: link.targetColumn,
              targetColumn: link.sourceColumn,
              orderColumn: inverseOrdered ? link.owner.inverseOrderColumn : null,
              otherOrderColumn: link.owner.orderColumn,
              owner: link.owner
            }
          })
        } else {
          associations.set(name, {
            kind: 'relation',
            name,
            relation: attribute.relation,
            target: attribute.target,
            toMany: toMany(attribute.relation),
            owner: true,
            exclusive: exclusive(attribute.relation),
            inverse: attribute.inversedBy ?? null,
            attribute,
            link: ownerLink(model, name, target, attribute.relation)
          })
        }
        break
      }
      case 'media':
        associations.set(name, { kind: 'media', name, multiple: attribute.multiple === true, allowedTypes: attribute.allowedTypes ?? null })
        break
      case 'component':
        associations.set(name, {
          kind: 'component', name, component: attribute.component, repeatable: attribute.repeatable === true, joinTable: componentJoinTable(model.tableName)
        })
        break
      case 'dynamiczone':
        associations.set(name, { kind: 'dynamiczone', name, components: attribute.components, joinTable: componentJoinTable(model.tableName) })
        break
    }
  }
  return associations
}
