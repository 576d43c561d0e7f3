import { identifier, indexName, versionIndexName } from '../model/naming.js'
import { ConfigurationError } from '../errors.js'
import { FILE_UID, MEDIA_LINK_TABLE } from '../model/associations.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import { columnType } from '../model/column-types.js'
import { rowCountsTable } from './row-counts.js'

/**
 * The tables the models need, as plain data. Schema sync compares these specs with what the
 * database holds; nothing here talks to the database. Every table the library will ever own
 * (content types, components, and later relation, component and media join tables) is one
 * `TableSpec`, so a new kind of table is added by producing more specs, not by changing the diff.
 */

export interface ColumnSpec {
  readonly name: string
  /** PostgreSQL type spelled as `columnType()` spells it: `varchar(255)`, `serial`, `timestamp(3) with time zone`... */
  readonly type: string
  readonly nullable: boolean
  /** SQL expression used when the column is created, e.g. `now()`. Defaults are never diffed afterwards. */
  readonly default?: string
  readonly primaryKey?: boolean
}

export interface IndexSpec {
  readonly name: string
  readonly columns: readonly string[]
  /**
   * SQL expressions indexed after `columns`, e.g. `("published_at" is null)`. Written in this
   * file only, never taken from a model.
   */
  readonly expressions?: readonly string[]
  /**
   * Link tables (one link per pair) and the version index of content types; attribute columns
   * never get unique indexes (see `attributeIndexes`).
   */
  readonly unique?: boolean
  /**
   * Indexes of this library's own that this one supersedes: sync drops them once this one
   * exists (an index an earlier version created, or the other form of a version index when a
   * type's localization changes).
   */
  readonly replaces?: readonly string[]
}

export interface ForeignKeySpec {
  readonly name: string
  readonly columns: readonly string[]
  readonly references: { readonly table: string, readonly columns: readonly string[] }
  readonly onDelete?: 'cascade' | 'set null' | 'restrict' | 'no action'
}

export interface TableSpec {
  readonly name: string
  readonly columns: readonly ColumnSpec[]
  readonly indexes: readonly IndexSpec[]
  readonly foreignKeys: readonly ForeignKeySpec[]
}

function columnSpec (field: Field): ColumnSpec {
  const type = columnType(field)
  if (!field.system) return { name: field.column, type, nullable: true }
  switch (field.name) {
    case 'id': return { name: field.column, type, nullable: false, primaryKey: true }
    case 'documentId': return { name: field.column, type, nullable: false }
    case 'createdAt':
    case 'updatedAt': return { name: field.column, type, nullable: false, default: 'now()' }
    default: return { name: field.column, type, nullable: true }
  }
}

/** `document_id`, then `locale` on a localized type: the columns a document's versions are keyed by. */
const versionColumns = (localized: boolean): string[] => localized ? ['document_id', 'locale'] : ['document_id']

/**
 * The version index: a document has at most one draft row and at most one published row per
 * locale. The database enforces it, so no interleaving of writers can store a second one (the
 * document service locks the document first, so writers wait rather than meet this index). A
 * type without draft & publish has published rows only, so the index holds it to one row per
 * (document, locale); turning draft & publish on or off needs no other index.
 *
 * Every read and write of a document looks rows up by document id, then by locale and draft or
 * published state, so this index also serves them all. It replaces the plain composite index
 * `(document_id, [locale,] published_at)` of earlier versions, and the other form of itself when
 * a type's localization changes.
 *
 * ```sql
 * create unique index "articles_document_id_locale_version_unique"
 *   on "articles" ("document_id", "locale", ("published_at" is null))
 * ```
 *
 * A row whose `locale` is null (written before its type was localized) is not constrained:
 * PostgreSQL's unique indexes treat nulls as distinct, and `nulls not distinct` needs PostgreSQL 15.
 */
export function versionIndex (ct: ContentType): IndexSpec {
  const name = (localized: boolean): string => versionIndexName(ct.tableName, versionColumns(localized))
  const composite = (localized: boolean): string => indexName(ct.tableName, [...versionColumns(localized), 'published_at'], 'idx')
  return {
    name: name(ct.localized),
    columns: versionColumns(ct.localized),
    expressions: ['("published_at" is null)'],
    unique: true,
    replaces: [composite(true), composite(false), name(!ct.localized)]
  }
}

/**
 * A plain btree index per uid, `unique: true` or `index: true` attribute. Unique attributes never get
 * a UNIQUE constraint: like Strapi, this
 * library enforces uniqueness per locale and per publication state (a document's draft row and
 * published row carry the same slug, and two locales may share one), which a column-wide UNIQUE
 * constraint would forbid. The application checks uniqueness before writing; the index keeps
 * that check an index lookup instead of a table scan.
 */
function attributeIndexes (ct: ContentType): IndexSpec[] {
  const indexes: IndexSpec[] = []
  for (const field of ct.fields.values()) {
    // uids are always unique in Strapi, declared so or not.
    const checked = field.type === 'uid' || field.attribute?.unique === true || field.attribute?.index === true
    if (field.system || !checked) continue
    indexes.push({ name: indexName(ct.tableName, [field.column], 'idx'), columns: [field.column] })
  }
  return indexes
}

/**
 * The table of one content type: every field of `ct.fields` (system fields included) as a column.
 *
 * @example
 * // For a localized `articles` type with a `title` string and a unique `slug`:
 * // create table "articles" ("id" serial primary key, "document_id" varchar(255) not null,
 * //   "title" varchar(255), "slug" varchar(255),
 * //   "created_at" timestamp(3) with time zone not null default now(),
 * //   "updated_at" timestamp(3) with time zone not null default now(),
 * //   "published_at" timestamp(3) with time zone, "locale" varchar(255))
 * // create unique index "articles_document_id_locale_version_unique" on "articles" ("document_id", "locale", ("published_at" is null))
 * // create index "articles_slug_idx" on "articles" ("slug")
 */
export function contentTypeTable (ct: ContentType): TableSpec {
  return {
    name: ct.tableName,
    columns: [...ct.fields.values()].map(columnSpec),
    indexes: [versionIndex(ct), ...attributeIndexes(ct)],
    foreignKeys: []
  }
}

/**
 * The table of one component: `id` and its scalar attributes. Rows are tied to their owners by
 * the `<table>_cmps` join tables, which come with component support.
 *
 * @example
 * // create table "components_shared_seos" ("id" serial primary key, "meta_title" varchar(255))
 */
export function componentTable (component: Component): TableSpec {
  return {
    name: component.tableName,
    columns: [...component.fields.values()].map(columnSpec),
    indexes: [],
    foreignKeys: []
  }
}

const idColumn: ColumnSpec = { name: 'id', type: 'serial', nullable: false, primaryKey: true }
const column = (name: string, type: string): ColumnSpec => ({ name, type, nullable: true })

/**
 * One side's lists of a link table in their order: `(article_id, author_ord)` holds each
 * article's list of authors, `(author_id, article_ord)` each author's list of articles, in the
 * order populate reads them. It replaces the index on the id alone that earlier versions
 * created, which it serves too.
 */
function orderedIndex (table: string, key: string, orderColumn: string): IndexSpec {
  return { name: indexName(table, [key, orderColumn], 'idx'), columns: [key, orderColumn], replaces: [indexName(table, [key], 'idx')] }
}

/**
 * One link table per owning relation attribute (see `LinkSpec` in lib/model/associations.ts).
 * A unique index on (source, target) makes connecting the same document twice impossible.
 *
 * @example
 * // create table "articles_authors_lnk" ("id" serial primary key, "article_id" integer,
 * //   "author_id" integer, "author_ord" double precision, "article_ord" double precision)
 * // foreign keys on both ids (on delete cascade), indexes (article_id, author_ord), (author_id, article_ord)
 * // and unique (article_id, author_id)
 */
function linkTables (registry: Registry): TableSpec[] {
  const tables: TableSpec[] = []
  for (const model of registry.contentTypes.values()) {
    for (const association of model.associations.values()) {
      if (association.kind !== 'relation' || !association.owner) continue
      const target = registry.get(association.target)
      if (target === undefined) continue
      const { table, owner } = association.link
      tables.push({
        name: table,
        columns: [idColumn, column(owner.sourceColumn, 'integer'), column(owner.targetColumn, 'integer'),
          column(owner.orderColumn, 'double precision'), column(owner.inverseOrderColumn, 'double precision')],
        indexes: [
          orderedIndex(table, owner.sourceColumn, owner.orderColumn),
          orderedIndex(table, owner.targetColumn, owner.inverseOrderColumn),
          { name: indexName(table, [owner.sourceColumn, owner.targetColumn], 'unique'), columns: [owner.sourceColumn, owner.targetColumn], unique: true }
        ],
        foreignKeys: [
          { name: identifier(`${table}_${owner.sourceColumn}_fk`), columns: [owner.sourceColumn], references: { table: model.tableName, columns: ['id'] }, onDelete: 'cascade' },
          { name: identifier(`${table}_${owner.targetColumn}_fk`), columns: [owner.targetColumn], references: { table: target.tableName, columns: ['id'] }, onDelete: 'cascade' }
        ]
      })
    }
  }
  return tables
}

/**
 * `<owner>_cmps`: which component rows belong to which owner row, under which attribute, in which
 * order. Components and dynamic zones of one owner share it; `component_type` tells the table.
 */
function componentJoinTables (registry: Registry): TableSpec[] {
  const owners = [...registry.contentTypes.values(), ...registry.components.values()]
  const tables: TableSpec[] = []
  for (const owner of owners) {
    const slot = [...owner.associations.values()].find((a) => a.kind === 'component' || a.kind === 'dynamiczone')
    if (slot === undefined || (slot.kind !== 'component' && slot.kind !== 'dynamiczone')) continue
    const table = slot.joinTable
    tables.push({
      name: table,
      columns: [idColumn, column('entity_id', 'integer'), column('cmp_id', 'integer'),
        column('component_type', 'varchar(255)'), column('field', 'varchar(255)'), column('order', 'double precision')],
      indexes: [
        { name: indexName(table, ['entity_id'], 'idx'), columns: ['entity_id'] },
        { name: indexName(table, ['component_type', 'cmp_id'], 'idx'), columns: ['component_type', 'cmp_id'] }
      ],
      foreignKeys: [
        { name: identifier(`${table}_entity_fk`), columns: ['entity_id'], references: { table: owner.tableName, columns: ['id'] }, onDelete: 'cascade' }
      ]
    })
  }
  return tables
}

/** Media attributes of every model link to files through one polymorphic table, as in Strapi. */
function mediaLinkTable (registry: Registry): TableSpec {
  const files = registry.get(FILE_UID)!
  return {
    name: MEDIA_LINK_TABLE,
    columns: [idColumn, column('file_id', 'integer'), column('related_id', 'integer'),
      column('related_type', 'varchar(255)'), column('field', 'varchar(255)'), column('order', 'double precision')],
    indexes: [
      { name: indexName(MEDIA_LINK_TABLE, ['file_id'], 'idx'), columns: ['file_id'] },
      { name: indexName(MEDIA_LINK_TABLE, ['related_id', 'related_type', 'field'], 'idx'), columns: ['related_id', 'related_type', 'field'] }
    ],
    foreignKeys: [
      { name: identifier(`${MEDIA_LINK_TABLE}_file_fk`), columns: ['file_id'], references: { table: files.tableName, columns: ['id'] }, onDelete: 'cascade' }
    ]
  }
}

/**
 * Tables and indexes share one namespace per schema in PostgreSQL, and model validation only
 * compares content-type tables with each other; a component table or an index name (shortened
 * past 63 bytes) colliding with another would otherwise fail half-way through the plan.
 */
function checkNames (tables: readonly TableSpec[]): void {
  const owners = new Map<string, string>()
  const problems: string[] = []
  const claim = (name: string, owner: string): void => {
    const previous = owners.get(name)
    if (previous !== undefined) problems.push(`"${name}" is the name of both ${previous} and ${owner}`)
    else owners.set(name, owner)
  }
  for (const table of tables) {
    claim(table.name, `table "${table.name}"`)
    for (const index of table.indexes) claim(index.name, `an index on "${table.name}"`)
  }
  if (problems.length > 0) throw new ConfigurationError(problems, 'database names')
}

/**
 * What the models need: one table per content type (the built-in file type first), one per
 * component, then the link tables of relations, the component join tables, the media link
 * table and the row counts (row-counts.ts), in that order (the order `create table` statements are planned in). Throws a `ConfigurationError` when two
 * tables or indexes would get the same name.
 */
export function desiredSchema (registry: Registry): TableSpec[] {
  const tables = [
    ...[...registry.contentTypes.values()].map(contentTypeTable),
    ...[...registry.components.values()].map(componentTable),
    ...linkTables(registry),
    ...componentJoinTables(registry),
    mediaLinkTable(registry),
    rowCountsTable
  ]
  checkNames(tables)
  return tables
}
