import {
  addColumn, addForeignKey, alterColumnType, alterNullability, createIndex, createTable, dropColumn, dropIndex
} from './ddl.js'
import type { ColumnSpec, TableSpec } from './desired-schema.js'
import type { CurrentSchema, CurrentTable } from './introspect.js'
import { isWidening, sameType } from './sql-type.js'

/** A change sync will not make unless `allowDestructive` is set, with the SQL it would run. */
export interface DestructiveChange {
  /** `articles.subtitle: ...`, for logs and for the person reviewing a dry run. */
  readonly description: string
  readonly sql: string
}

/**
 * What sync would do. `statements` only ever add (tables, columns, indexes, foreign keys),
 * loosen (a longer varchar, a dropped NOT NULL) or drop an index of this library's own that a new
 * one supersedes (`IndexSpec.replaces`), so running them can lose no data; `destructive` lists
 * everything else separately.
 */
export interface SchemaPlan {
  readonly statements: string[]
  readonly destructive: DestructiveChange[]
}

interface Phases {
  create: string[]
  alter: string[]
  foreignKeys: string[]
  indexes: string[]
  destructive: DestructiveChange[]
}

/**
 * A new NOT NULL column without a default cannot be added to a table that has rows, so it is
 * added nullable and the NOT NULL is planned apart as destructive (it fails while rows lack a value).
 */
function planNewColumn (table: string, column: ColumnSpec, phases: Phases): void {
  const needsValue = !column.nullable && column.default === undefined && column.primaryKey !== true
  if (!needsValue) { phases.alter.push(addColumn(table, column)); return }
  phases.alter.push(addColumn(table, { ...column, nullable: true }))
  phases.destructive.push({
    description: `${table}.${column.name}: new column added as nullable; the model wants NOT NULL, which fails while a row has no value`,
    sql: alterNullability(table, column.name, false)
  })
}

function planExistingTable (spec: TableSpec, current: CurrentTable, phases: Phases): void {
  const table = spec.name
  for (const column of spec.columns) {
    const existing = current.columns.get(column.name)
    if (existing === undefined) { planNewColumn(table, column, phases); continue }

    if (!sameType(column.type, existing.type)) {
      if (isWidening(existing.type, column.type)) {
        phases.alter.push(alterColumnType(table, column.name, column.type))
      } else {
        phases.destructive.push({
          description: `${table}.${column.name}: type is ${existing.type} in the database but ${column.type} in the model; converting may fail or lose data`,
          sql: alterColumnType(table, column.name, column.type)
        })
      }
    }

    // Primary keys are NOT NULL by definition; their nullability is never a difference.
    if (column.primaryKey === true || column.nullable === existing.nullable) continue
    if (column.nullable) {
      phases.alter.push(alterNullability(table, column.name, true))
    } else {
      phases.destructive.push({
        description: `${table}.${column.name}: nullable in the database but NOT NULL in the model; fails while a row has no value`,
        sql: alterNullability(table, column.name, false)
      })
    }
  }

  const wanted = new Set(spec.columns.map((c) => c.name))
  for (const name of current.columns.keys()) {
    if (wanted.has(name)) continue
    phases.destructive.push({
      description: `${table}.${name}: column is no longer in the model; dropping it deletes its data`,
      sql: dropColumn(table, name)
    })
  }
}

/**
 * Compares the tables the models need with the tables the database has and plans the difference
 * as ordered SQL: new tables, then new or loosened columns, then foreign keys (once every table
 * they reference exists), then indexes. Pure: reads nothing, runs nothing.
 *
 * Only tables that a spec names are compared. A table no model describes may be the
 * application's own and is never dropped, altered or even reported. Indexes and constraints
 * missing from a spec are left alone too (an application may add its own to our tables).
 *
 * @example
 * diffSchema([articlesWithViews], current)
 * // { statements: ['alter table "articles" add column "views" integer'],
 * //   destructive: [{ description: 'articles.subtitle: column is no longer in the model; ...',
 * //                   sql: 'alter table "articles" drop column "subtitle"' }] }
 */
export function diffSchema (desired: readonly TableSpec[], current: CurrentSchema): SchemaPlan {
  const phases: Phases = { create: [], alter: [], foreignKeys: [], indexes: [], destructive: [] }
  for (const spec of desired) {
    const existing = current.get(spec.name)
    if (existing === undefined) phases.create.push(createTable(spec))
    else planExistingTable(spec, existing, phases)

    for (const fk of spec.foreignKeys) {
      if (existing?.foreignKeys.has(fk.name) !== true) phases.foreignKeys.push(addForeignKey(spec.name, fk))
    }
    for (const index of spec.indexes) {
      if (existing?.indexes.has(index.name) !== true) phases.indexes.push(createIndex(spec.name, index))
      // An index this one supersedes goes once its replacement exists (the statement above).
      for (const replaced of index.replaces ?? []) {
        if (existing?.indexes.has(replaced) === true) phases.indexes.push(dropIndex(replaced))
      }
    }
  }
  return {
    statements: [...phases.create, ...phases.alter, ...phases.foreignKeys, ...phases.indexes],
    destructive: phases.destructive
  }
}
