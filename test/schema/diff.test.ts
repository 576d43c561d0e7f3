import t from 'tap'
import type { TableSpec } from '../../lib/schema/desired-schema.js'
import { diffSchema } from '../../lib/schema/diff.js'
import { quoteIdent } from '../../lib/model/naming.js'
import type { CurrentColumn, CurrentSchema, CurrentTable } from '../../lib/schema/introspect.js'
import { isWidening, normalizeType, sameType } from '../../lib/schema/sql-type.js'

function current (tables: Record<string, Array<Partial<CurrentColumn> & { name: string }>>): CurrentSchema {
  const map = new Map<string, CurrentTable>()
  for (const [name, columns] of Object.entries(tables)) {
    map.set(name, {
      name,
      columns: new Map(columns.map((c) => [c.name, { type: 'integer', nullable: true, default: null, ...c }])),
      indexes: new Map(),
      foreignKeys: new Set()
    })
  }
  return map
}

const parent: TableSpec = {
  name: 'parents',
  columns: [{ name: 'id', type: 'serial', nullable: false, primaryKey: true }],
  indexes: [],
  foreignKeys: []
}
const child: TableSpec = {
  name: 'children',
  columns: [
    { name: 'id', type: 'serial', nullable: false, primaryKey: true },
    { name: 'parent_id', type: 'integer', nullable: true }
  ],
  indexes: [{ name: 'children_parent_id_idx', columns: ['parent_id'] }],
  foreignKeys: [{ name: 'children_parent_id_fk', columns: ['parent_id'], references: { table: 'parents', columns: ['id'] }, onDelete: 'cascade' }]
}

t.test('tables first, foreign keys once every table exists, indexes last', async (t) => {
  t.same(diffSchema([child, parent], current({})).statements, [
    'create table "children" ("id" serial primary key, "parent_id" integer)',
    'create table "parents" ("id" serial primary key)',
    'alter table "children" add constraint "children_parent_id_fk" foreign key ("parent_id") references "parents" ("id") on delete cascade',
    'create index "children_parent_id_idx" on "children" ("parent_id")'
  ])
})

t.test('existing foreign keys and indexes are not planned again', async (t) => {
  const db = new Map([...current({ parents: [{ name: 'id', type: 'serial', nullable: false }] })])
  db.set('children', {
    name: 'children',
    columns: new Map([
      ['id', { name: 'id', type: 'serial', nullable: false, default: null }],
      ['parent_id', { name: 'parent_id', type: 'integer', nullable: true, default: null }]
    ]),
    indexes: new Map([['children_parent_id_idx', { name: 'children_parent_id_idx', columns: ['parent_id'], unique: false, primary: false }]]),
    foreignKeys: new Set(['children_parent_id_fk'])
  })
  t.same(diffSchema([child, parent], db), { statements: [], destructive: [] })
})

t.test('serial and integer are the same storage type', async (t) => {
  const plan = diffSchema([parent], current({ parents: [{ name: 'id', type: 'integer', nullable: false }] }))
  t.same(plan, { statements: [], destructive: [] })
})

t.test('a new NOT NULL column without default is added nullable; the NOT NULL is destructive', async (t) => {
  const spec: TableSpec = { ...parent, columns: [...parent.columns, { name: 'code', type: 'text', nullable: false }] }
  const plan = diffSchema([spec], current({ parents: [{ name: 'id', type: 'serial', nullable: false }] }))
  t.same(plan.statements, ['alter table "parents" add column "code" text'])
  t.same(plan.destructive.map((d) => d.sql), ['alter table "parents" alter column "code" set not null'])
})

t.test('a new NOT NULL column with a default is added as is', async (t) => {
  const spec: TableSpec = { ...parent, columns: [...parent.columns, { name: 'at', type: 'timestamp(3) with time zone', nullable: false, default: 'now()' }] }
  const plan = diffSchema([spec], current({ parents: [{ name: 'id', type: 'serial', nullable: false }] }))
  t.same(plan, { statements: ['alter table "parents" add column "at" timestamp(3) with time zone not null default now()'], destructive: [] })
})

t.test('loosening NOT NULL is additive, tightening is destructive', async (t) => {
  const spec: TableSpec = {
    ...parent,
    columns: [...parent.columns, { name: 'loose', type: 'text', nullable: true }, { name: 'tight', type: 'text', nullable: false }]
  }
  const plan = diffSchema([spec], current({
    parents: [{ name: 'id', type: 'serial', nullable: false }, { name: 'loose', type: 'text', nullable: false }, { name: 'tight', type: 'text', nullable: true }]
  }))
  t.same(plan.statements, ['alter table "parents" alter column "loose" drop not null'])
  t.same(plan.destructive, [{
    description: 'parents.tight: nullable in the database but NOT NULL in the model; fails while a row has no value',
    sql: 'alter table "parents" alter column "tight" set not null'
  }])
})

t.test('identifiers are quoted', async (t) => {
  t.equal(quoteIdent('order'), '"order"')
  t.equal(quoteIdent('a"b'), '"a""b"')
  const spec: TableSpec = { name: 'user', columns: [{ name: 'select', type: 'text', nullable: true }], indexes: [], foreignKeys: [] }
  t.same(diffSchema([spec], current({})).statements, ['create table "user" ("select" text)'])
})

t.test('type spellings are normalised to what columnType produces', async (t) => {
  t.equal(normalizeType('character varying(255)'), 'varchar(255)')
  t.equal(normalizeType('TIMESTAMPTZ(3)'), 'timestamp(3) with time zone')
  t.equal(normalizeType('timestamp(3) with time zone'), 'timestamp(3) with time zone')
  t.equal(normalizeType('time(3)'), 'time(3) without time zone')
  t.equal(normalizeType('float8'), 'double precision')
  t.equal(normalizeType('int4'), 'integer')
  t.equal(normalizeType('decimal'), 'numeric')
  t.ok(sameType('serial', 'integer'))
  t.notOk(sameType('varchar(255)', 'varchar(500)'))
})

t.test('only lossless varchar changes count as widening', async (t) => {
  t.ok(isWidening('varchar(255)', 'varchar(1000)'))
  t.ok(isWidening('varchar(255)', 'text'))
  t.notOk(isWidening('varchar(1000)', 'varchar(255)'))
  t.notOk(isWidening('integer', 'bigint'), 'integer to bigint rewrites the table')
  t.notOk(isWidening('text', 'varchar(255)'))
})
