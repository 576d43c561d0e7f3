import type { ColumnSpec, ForeignKeySpec, IndexSpec, TableSpec } from './desired-schema.js'
import { quoteIdent } from '../model/naming.js'
import { storageType } from './sql-type.js'

/**
 * DDL statements as text. A plan is a list of these strings, shown as is by a dry run and run
 * as is by sync, so what a user reviews is exactly what executes.
 *
 * Identifiers come only from models (validated at registration), never from requests; they are
 * still quoted, so a name that is a keyword (`order`, `user`) or has capitals stays one name.
 * Types come from `columnType()`, which builds them from fixed words and validated numbers.
 */

const list = (names: readonly string[]): string => names.map(quoteIdent).join(', ')

/** `"created_at" timestamp(3) with time zone not null default now()` */
export function columnDefinition (column: ColumnSpec): string {
  let definition = `${quoteIdent(column.name)} ${column.type}`
  if (column.primaryKey === true) definition += ' primary key'
  else if (!column.nullable) definition += ' not null'
  if (column.default !== undefined) definition += ` default ${column.default}`
  return definition
}

/**
 * Foreign keys are left out and added by `addForeignKey` once every table exists, so tables
 * referencing each other can be created in any order.
 *
 * @example
 * createTable(spec) // create table "articles" ("id" serial primary key, "document_id" varchar(255) not null, ...)
 */
export function createTable (table: TableSpec): string {
  return `create table ${quoteIdent(table.name)} (${table.columns.map(columnDefinition).join(', ')})`
}

/** `alter table "articles" add column "views" integer` */
export function addColumn (table: string, column: ColumnSpec): string {
  return `alter table ${quoteIdent(table)} add column ${columnDefinition(column)}`
}

/** `alter table "articles" drop column "subtitle"` */
export function dropColumn (table: string, column: string): string {
  return `alter table ${quoteIdent(table)} drop column ${quoteIdent(column)}`
}

/**
 * `alter table "articles" alter column "views" type varchar(255) using "views"::varchar(255)`.
 * `serial` is not a type PostgreSQL can convert to; its storage type (`integer`) is used.
 */
export function alterColumnType (table: string, column: string, type: string): string {
  const target = storageType(type)
  return `alter table ${quoteIdent(table)} alter column ${quoteIdent(column)} type ${target} using ${quoteIdent(column)}::${target}`
}

/** `alter table "articles" alter column "document_id" set not null` (or `drop not null`). */
export function alterNullability (table: string, column: string, nullable: boolean): string {
  return `alter table ${quoteIdent(table)} alter column ${quoteIdent(column)} ${nullable ? 'drop' : 'set'} not null`
}

/**
 * `create index "articles_slug_idx" on "articles" ("slug")`, or with expressions:
 * `create unique index "articles_document_id_locale_version_unique" on "articles" ("document_id", "locale", ("published_at" is null))`
 */
export function createIndex (table: string, index: IndexSpec): string {
  const keys = [...index.columns.map(quoteIdent), ...index.expressions ?? []].join(', ')
  return `create ${index.unique === true ? 'unique ' : ''}index ${quoteIdent(index.name)} on ${quoteIdent(table)} (${keys})`
}

/** `drop index "articles_document_id_locale_published_at_idx"` */
export function dropIndex (name: string): string {
  return `drop index ${quoteIdent(name)}`
}

/**
 * `alter table "articles_cmps" add constraint "articles_cmps_entity_fk" foreign key ("entity_id")
 *  references "articles" ("id") on delete cascade`
 */
export function addForeignKey (table: string, fk: ForeignKeySpec): string {
  const onDelete = fk.onDelete === undefined ? '' : ` on delete ${fk.onDelete}`
  return `alter table ${quoteIdent(table)} add constraint ${quoteIdent(fk.name)} foreign key (${list(fk.columns)}) ` +
    `references ${quoteIdent(fk.references.table)} (${list(fk.references.columns)})${onDelete}`
}
