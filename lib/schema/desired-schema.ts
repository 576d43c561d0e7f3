import { indexName } from '../db/naming.js'
import { ConfigurationError } from '../errors.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import { columnType } from './column-types.js'

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
  /** For join tables later; attribute columns never get unique indexes (see `attributeIndexes`). */
  readonly unique?: boolean
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

/**
 * Every read and write of a document looks rows up by document id, then by locale and draft or
 * published state, so one composite index serves them all.
 */
function documentIndex (ct: ContentType): IndexSpec {
  const columns = ct.localized ? ['document_id', 'locale', 'published_at'] : ['document_id', 'published_at']
  return { name: indexName(ct.tableName, columns, 'idx'), columns }
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
 * // create index "articles_document_id_locale_published_at_idx" on "articles" ("document_id", "locale", "published_at")
 * // create index "articles_slug_idx" on "articles" ("slug")
 */
export function contentTypeTable (ct: ContentType): TableSpec {
  return {
    name: ct.tableName,
    columns: [...ct.fields.values()].map(columnSpec),
    indexes: [documentIndex(ct), ...attributeIndexes(ct)],
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
 * What the models need: one table per content type, then one per component, in registry order
 * (the order `create table` statements are planned in). Throws a `ConfigurationError` when two
 * tables or indexes would get the same name.
 */
export function desiredSchema (registry: Registry): TableSpec[] {
  const tables = [
    ...[...registry.contentTypes.values()].map(contentTypeTable),
    ...[...registry.components.values()].map(componentTable)
  ]
  checkNames(tables)
  return tables
}
