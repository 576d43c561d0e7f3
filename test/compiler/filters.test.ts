import t, { type Test } from 'tap'
import type { Kysely, RawBuilder, SqlBool } from 'kysely'
import { compileFilter, createFilterContext, type FilterCompileOptions } from '../../lib/compiler/filters.js'
import { defineContentType } from '../../lib/index.js'
import { createRegistry } from '../../lib/model/registry.js'
import { parseFilters } from '../../lib/query/filters.js'
import { build } from '../helpers/build.js'
import { compiler } from '../helpers/sql-compiler.js'

/**
 * Compiler tests in Kysely's style: each case parses a raw Strapi filter, compiles it, asserts the
 * exact SQL text and parameters, then runs the same expression on a small seeded table and
 * asserts which rows it selects.
 */

const item = defineContentType({
  kind: 'collectionType',
  collectionName: 'items',
  info: { singularName: 'item', pluralName: 'items', displayName: 'Item' },
  options: { draftAndPublish: false },
  attributes: {
    label: { type: 'string' },
    title: { type: 'string' },
    views: { type: 'integer' },
    price: { type: 'decimal' },
    big: { type: 'biginteger' },
    ok: { type: 'boolean' },
    day: { type: 'date' },
    at: { type: 'datetime' },
    kind: { type: 'enumeration', enum: ['news', 'opinion', 'review'] },
    meta: { type: 'json' }
  }
})

const model = createRegistry([item]).get('api::item.item')!

/** Rows a..f; `label` names them in the expected results. */
const ROWS = [
  { label: 'a', title: 'Alpha', views: 10, price: 1.5, big: '9007199254740993', ok: true, day: '2024-01-01', at: '2024-01-01T10:00:00.000Z', kind: 'news', meta: { a: 1 } },
  { label: 'b', title: 'beta', views: 20, price: null, big: '-5', ok: false, day: '2024-02-01', at: '2024-02-01T00:00:00.000Z', kind: 'opinion', meta: null },
  { label: 'c', title: 'Gamma ray', views: null, price: 3.25, big: null, ok: null, day: null, at: null, kind: 'review', meta: ['x'] },
  { label: 'd', title: '100% pure', views: 30, price: 10, big: '12', ok: true, day: '2024-03-15', at: '2024-03-15T12:30:00.000Z', kind: null, meta: 'odd' },
  { label: 'e', title: 'snake_case', views: 40, price: 0.5, big: '0', ok: false, day: '2023-12-31', at: '2023-12-31T23:59:59.999Z', kind: 'news', meta: 7 },
  { label: 'f', title: null, views: 20, price: 2, big: '7', ok: null, day: '2024-02-01', at: null, kind: 'opinion', meta: null }
]

const DEFAULT: FilterCompileOptions = { escapeLikeWildcards: false }
const ESCAPED: FilterCompileOptions = { escapeLikeWildcards: true }

const PREFIX = 'select "t"."label" from "items" as "t" where '
const SUFFIX = ' order by "t"."id"'

function expression (raw: unknown, options: FilterCompileOptions): RawBuilder<SqlBool> {
  const node = parseFilters(model, raw)
  if (node === null) throw new Error(`filter ${JSON.stringify(raw)} filters nothing`)
  return compileFilter(node, 't', createFilterContext(options, 'published'))
}

function listQuery (db: Kysely<any>, raw: unknown, options: FilterCompileOptions) {
  return db.selectFrom('items as t').select('t.label').where(expression(raw, options)).orderBy('t.id')
}

const { app, database } = await build(t, { models: [item] })
const items = app.contentApi.documents('api::item.item')
for (const row of ROWS) await items.create({ data: { ...row } })

interface Case {
  filter: unknown
  /** The WHERE expression compileFilter produces. */
  where: string
  parameters: unknown[]
  /** Labels of the selected rows, in id order. */
  rows: string[]
  options?: FilterCompileOptions
}

async function check (t: Test, name: string, c: Case): Promise<void> {
  const options = c.options ?? DEFAULT
  const compiled = listQuery(compiler, c.filter, options).compile()
  t.equal(compiled.sql, PREFIX + c.where + SUFFIX, `${name}: SQL`)
  t.same(compiled.parameters, c.parameters, `${name}: parameters`)
  const result = await listQuery(database.db, c.filter, options).execute()
  t.same(result.map((r) => r.label), c.rows, `${name}: rows`)
}

async function cases (t: Test, table: Record<string, Case>): Promise<void> {
  for (const [name, c] of Object.entries(table)) await check(t, name, c)
}

t.test('$eq and implicit $eq', async (t) => {
  await cases(t, {
    'string $eq': { filter: { title: { $eq: 'Alpha' } }, where: '"t"."title" = $1', parameters: ['Alpha'], rows: ['a'] },
    'implicit $eq': { filter: { title: 'Alpha' }, where: '"t"."title" = $1', parameters: ['Alpha'], rows: ['a'] },
    '$eq is case-sensitive': { filter: { title: 'alpha' }, where: '"t"."title" = $1', parameters: ['alpha'], rows: [] },
    '$eq null is IS NULL': { filter: { title: { $eq: null } }, where: '"t"."title" is null', parameters: [], rows: ['f'] },
    'implicit $eq null': { filter: { views: null }, where: '"t"."views" is null', parameters: [], rows: ['c'] },
    'integer value cast from a string': { filter: { views: '20' }, where: '"t"."views" = $1', parameters: [20], rows: ['b', 'f'] },
    'decimal value cast from a string': { filter: { price: '1.5' }, where: '"t"."price" = $1', parameters: [1.5], rows: ['a'] },
    'biginteger compared as text, beyond 2^53': { filter: { big: '9007199254740993' }, where: '"t"."big" = $1', parameters: ['9007199254740993'], rows: ['a'] },
    'boolean "t"': { filter: { ok: 't' }, where: '"t"."ok" = $1', parameters: [true], rows: ['a', 'd'] },
    'boolean "0"': { filter: { ok: { $eq: '0' } }, where: '"t"."ok" = $1', parameters: [false], rows: ['b', 'e'] },
    'date, a date-time truncated to its day': { filter: { day: '2024-02-01T18:00:00Z' }, where: '"t"."day" = $1', parameters: ['2024-02-01'], rows: ['b', 'f'] },
    'datetime normalised to ISO UTC': { filter: { at: '2024-01-01T11:00:00+01:00' }, where: '"t"."at" = $1', parameters: ['2024-01-01T10:00:00.000Z'], rows: ['a'] },
    enumeration: { filter: { kind: 'news' }, where: '"t"."kind" = $1', parameters: ['news'], rows: ['a', 'e'] },
    'json compared as jsonb, the value JSON text': { filter: { meta: { $eq: '"odd"' } }, where: '"t"."meta" = $1::jsonb', parameters: ['"odd"'], rows: ['d'] },
    'json array': { filter: { meta: { $eq: '["x"]' } }, where: '"t"."meta" = $1::jsonb', parameters: ['["x"]'], rows: ['c'] },
    'json number': { filter: { meta: { $eq: '7' } }, where: '"t"."meta" = $1::jsonb', parameters: ['7'], rows: ['e'] }
  })
})

t.test('$eqi', async (t) => {
  await cases(t, {
    'case-insensitive equality, through LIKE': { filter: { title: { $eqi: 'ALPHA' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['ALPHA'], rows: ['a'] },
    'no partial match': { filter: { title: { $eqi: 'alp' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['alp'], rows: [] },
    'on an integer, as text': { filter: { views: { $eqi: '20' } }, where: 'lower("t"."views"::text) like lower($1)', parameters: ['20'], rows: ['b', 'f'] },
    'null is IS NULL': { filter: { title: { $eqi: null } }, where: '"t"."title" is null', parameters: [], rows: ['f'] }
  })
})

t.test('$ne', async (t) => {
  await cases(t, {
    'excludes NULLs (three-valued logic)': { filter: { views: { $ne: 20 } }, where: '"t"."views" <> $1', parameters: [20], rows: ['a', 'd', 'e'] },
    string: { filter: { title: { $ne: 'Alpha' } }, where: '"t"."title" <> $1', parameters: ['Alpha'], rows: ['b', 'c', 'd', 'e'] },
    'null is IS NOT NULL': { filter: { title: { $ne: null } }, where: '"t"."title" is not null', parameters: [], rows: ['a', 'b', 'c', 'd', 'e'] }
  })
})

t.test('$nei', async (t) => {
  await cases(t, {
    'case-insensitive, excludes NULLs': { filter: { title: { $nei: 'BETA' } }, where: 'not (lower("t"."title"::text) like lower($1))', parameters: ['BETA'], rows: ['a', 'c', 'd', 'e'] },
    enumeration: { filter: { kind: { $nei: 'NEWS' } }, where: 'not (lower("t"."kind"::text) like lower($1))', parameters: ['NEWS'], rows: ['b', 'c', 'f'] },
    'null is IS NOT NULL': { filter: { kind: { $nei: null } }, where: '"t"."kind" is not null', parameters: [], rows: ['a', 'b', 'c', 'e', 'f'] }
  })
})

t.test('$lt, $lte, $gt, $gte', async (t) => {
  await cases(t, {
    $lt: { filter: { views: { $lt: 20 } }, where: '"t"."views" < $1', parameters: [20], rows: ['a'] },
    $lte: { filter: { views: { $lte: '20' } }, where: '"t"."views" <= $1', parameters: [20], rows: ['a', 'b', 'f'] },
    $gt: { filter: { views: { $gt: 20 } }, where: '"t"."views" > $1', parameters: [20], rows: ['d', 'e'] },
    $gte: { filter: { views: { $gte: 30 } }, where: '"t"."views" >= $1', parameters: [30], rows: ['d', 'e'] },
    'decimal $gt': { filter: { price: { $gt: '1.5' } }, where: '"t"."price" > $1', parameters: [1.5], rows: ['c', 'd', 'f'] },
    'biginteger $lt': { filter: { big: { $lt: '1' } }, where: '"t"."big" < $1', parameters: ['1'], rows: ['b', 'e'] },
    'date $lt': { filter: { day: { $lt: '2024-02-01' } }, where: '"t"."day" < $1', parameters: ['2024-02-01'], rows: ['a', 'e'] },
    'datetime $gte': { filter: { at: { $gte: '2024-02-01' } }, where: '"t"."at" >= $1', parameters: ['2024-02-01T00:00:00.000Z'], rows: ['b', 'd'] },
    'string, byte order': { filter: { title: { $gt: 'Z' } }, where: '"t"."title" > $1', parameters: ['Z'], rows: ['b', 'e'] },
    'boolean: false < true': { filter: { ok: { $lt: 'true' } }, where: '"t"."ok" < $1', parameters: [true], rows: ['b', 'e'] },
    'several operators on one field are AND-ed': { filter: { views: { $gte: 20, $lte: 30 } }, where: '("t"."views" >= $1 and "t"."views" <= $2)', parameters: [20, 30], rows: ['b', 'd', 'f'] }
  })
})

t.test('$in and implicit $in', async (t) => {
  await cases(t, {
    $in: { filter: { kind: { $in: ['news', 'review'] } }, where: '"t"."kind" in ($1, $2)', parameters: ['news', 'review'], rows: ['a', 'c', 'e'] },
    'implicit $in (an array value)': { filter: { views: ['10', '30'] }, where: '"t"."views" in ($1, $2)', parameters: [10, 30], rows: ['a', 'd'] },
    'a single value is a one-element list': { filter: { kind: { $in: 'opinion' } }, where: '"t"."kind" in ($1)', parameters: ['opinion'], rows: ['b', 'f'] },
    'an indexed object (qs beyond arrayLimit) is a list': { filter: { views: { $in: { 0: '10', 150: '40' } } }, where: '"t"."views" in ($1, $2)', parameters: [10, 40], rows: ['a', 'e'] },
    'empty list matches nothing': { filter: { kind: { $in: [] } }, where: 'false', parameters: [], rows: [] },
    'NULL in the list never matches a NULL': { filter: { views: { $in: [10, null] } }, where: '"t"."views" in ($1, $2)', parameters: [10, null], rows: ['a'] }
  })
})

t.test('$notIn', async (t) => {
  await cases(t, {
    'excludes NULLs': { filter: { kind: { $notIn: ['news', 'review'] } }, where: '"t"."kind" not in ($1, $2)', parameters: ['news', 'review'], rows: ['b', 'f'] },
    'empty list matches everything, NULLs included': { filter: { kind: { $notIn: [] } }, where: 'true', parameters: [], rows: ['a', 'b', 'c', 'd', 'e', 'f'] },
    'a NULL in the list matches nothing': { filter: { views: { $notIn: [10, null] } }, where: '"t"."views" not in ($1, $2)', parameters: [10, null], rows: [] }
  })
})

t.test('$contains, $notContains, $containsi, $notContainsi', async (t) => {
  await cases(t, {
    '$contains is case-sensitive': { filter: { title: { $contains: 'a' } }, where: '"t"."title"::text like $1', parameters: ['%a%'], rows: ['a', 'b', 'c', 'e'] },
    '$contains upper case': { filter: { title: { $contains: 'A' } }, where: '"t"."title"::text like $1', parameters: ['%A%'], rows: ['a'] },
    '$containsi on an integer, its text': { filter: { views: { $containsi: '0' } }, where: 'lower("t"."views"::text) like lower($1)', parameters: ['%0%'], rows: ['a', 'b', 'd', 'e', 'f'] },
    '$containsi on json, its text': { filter: { meta: { $containsi: 'X' } }, where: 'lower("t"."meta"::text) like lower($1)', parameters: ['%X%'], rows: ['c'] },
    '$notContains excludes NULLs': { filter: { title: { $notContains: 'a' } }, where: 'not ("t"."title"::text like $1)', parameters: ['%a%'], rows: ['d'] },
    $containsi: { filter: { title: { $containsi: 'A' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['%A%'], rows: ['a', 'b', 'c', 'e'] },
    '$notContainsi excludes NULLs': { filter: { title: { $notContainsi: 'RAY' } }, where: 'not (lower("t"."title"::text) like lower($1))', parameters: ['%RAY%'], rows: ['a', 'b', 'd', 'e'] }
  })
})

t.test('$startsWith, $startsWithi, $endsWith, $endsWithi', async (t) => {
  await cases(t, {
    $startsWith: { filter: { title: { $startsWith: 'Al' } }, where: '"t"."title"::text like $1', parameters: ['Al%'], rows: ['a'] },
    '$startsWith is case-sensitive': { filter: { title: { $startsWith: 'al' } }, where: '"t"."title"::text like $1', parameters: ['al%'], rows: [] },
    $startsWithi: { filter: { title: { $startsWithi: 'al' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['al%'], rows: ['a'] },
    $endsWith: { filter: { title: { $endsWith: 'ray' } }, where: '"t"."title"::text like $1', parameters: ['%ray'], rows: ['c'] },
    $endsWithi: { filter: { title: { $endsWithi: 'RAY' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['%RAY'], rows: ['c'] },
    '$startsWithi on a date, its text': { filter: { day: { $startsWithi: '2024-02' } }, where: 'lower("t"."day"::text) like lower($1)', parameters: ['2024-02%'], rows: ['b', 'f'] }
  })
})

t.test('$null and $notNull', async (t) => {
  await cases(t, {
    '$null true': { filter: { views: { $null: true } }, where: '"t"."views" is null', parameters: [], rows: ['c'] },
    '$null "t"': { filter: { views: { $null: 't' } }, where: '"t"."views" is null', parameters: [], rows: ['c'] },
    '$null "false"': { filter: { views: { $null: 'false' } }, where: '"t"."views" is not null', parameters: [], rows: ['a', 'b', 'd', 'e', 'f'] },
    '$null with no value (qs strictNullHandling) is false': { filter: { views: { $null: null } }, where: '"t"."views" is not null', parameters: [], rows: ['a', 'b', 'd', 'e', 'f'] },
    '$notNull "1"': { filter: { ok: { $notNull: '1' } }, where: '"t"."ok" is not null', parameters: [], rows: ['a', 'b', 'd', 'e'] },
    '$notNull "0"': { filter: { ok: { $notNull: '0' } }, where: '"t"."ok" is null', parameters: [], rows: ['c', 'f'] },
    '$notNull "f"': { filter: { ok: { $notNull: 'f' } }, where: '"t"."ok" is null', parameters: [], rows: ['c', 'f'] },
    '$notNull "" is false': { filter: { ok: { $notNull: '' } }, where: '"t"."ok" is null', parameters: [], rows: ['c', 'f'] },
    '$notNull any other text is true': { filter: { ok: { $notNull: 'yes' } }, where: '"t"."ok" is not null', parameters: [], rows: ['a', 'b', 'd', 'e'] }
  })
})

t.test('$between', async (t) => {
  await cases(t, {
    'inclusive bounds': { filter: { views: { $between: ['20', '30'] } }, where: '"t"."views" between $1 and $2', parameters: [20, 30], rows: ['b', 'd', 'f'] },
    'bounds in the wrong order select nothing': { filter: { views: { $between: [30, 20] } }, where: '"t"."views" between $1 and $2', parameters: [30, 20], rows: [] },
    dates: { filter: { day: { $between: ['2024-01-01', '2024-02-01'] } }, where: '"t"."day" between $1 and $2', parameters: ['2024-01-01', '2024-02-01'], rows: ['a', 'b', 'f'] },
    decimals: { filter: { price: { $between: [0.5, 2] } }, where: '"t"."price" between $1 and $2', parameters: [0.5, 2], rows: ['a', 'e', 'f'] }
  })
})

t.test('$and, $or, $not and their nesting', async (t) => {
  await cases(t, {
    'several fields are AND-ed': { filter: { kind: 'news', views: { $gt: 10 } }, where: '("t"."kind" = $1 and "t"."views" > $2)', parameters: ['news', 10], rows: ['e'] },
    $and: { filter: { $and: [{ kind: 'opinion' }, { title: { $null: true } }] }, where: '("t"."kind" = $1 and "t"."title" is null)', parameters: ['opinion'], rows: ['f'] },
    $or: {
      filter: { $or: [{ views: { $lt: 20 } }, { title: { $startsWith: 'snake' } }] },
      where: '("t"."views" < $1 or "t"."title"::text like $2)',
      parameters: [20, 'snake%'],
      rows: ['a', 'e']
    },
    '$not excludes the rows where the inner filter is unknown (NULL)': { filter: { $not: { kind: 'news' } }, where: 'not ("t"."kind" = $1)', parameters: ['news'], rows: ['b', 'c', 'f'] },
    '$not of $or': {
      filter: { $not: { $or: [{ kind: 'news' }, { kind: 'opinion' }] } },
      where: 'not (("t"."kind" = $1 or "t"."kind" = $2))',
      parameters: ['news', 'opinion'],
      rows: ['c']
    },
    '$and of $or': {
      filter: { $and: [{ $or: [{ views: { $gt: 30 } }, { views: { $lt: 20 } }] }, { ok: false }] },
      where: '(("t"."views" > $1 or "t"."views" < $2) and "t"."ok" = $3)',
      parameters: [30, 20, false],
      rows: ['e']
    },
    '$or of $and with $not inside': {
      filter: { $or: [{ $and: [{ kind: 'news' }, { $not: { ok: true } }] }, { price: { $gte: 10 } }] },
      where: '(("t"."kind" = $1 and not ("t"."ok" = $2)) or "t"."price" >= $3)',
      parameters: ['news', true, 10],
      rows: ['d', 'e']
    },
    'an array element of $or is an AND group': {
      filter: { $or: [[{ kind: 'opinion' }, { views: 20 }], { title: 'Alpha' }] },
      where: '(("t"."kind" = $1 and "t"."views" = $2) or "t"."title" = $3)',
      parameters: ['opinion', 20, 'Alpha'],
      rows: ['a', 'b', 'f']
    },
    'a root array is an AND': { filter: [{ kind: 'opinion' }, { title: { $notNull: true } }], where: '("t"."kind" = $1 and "t"."title" is not null)', parameters: ['opinion'], rows: ['b'] },
    'an empty $and filters nothing beside the rest': { filter: { $and: [], views: 10 }, where: '"t"."views" = $1', parameters: [10], rows: ['a'] }
  })
})

t.test('field-level $not', async (t) => {
  await cases(t, {
    'with an operator': { filter: { views: { $not: { $gt: 20 } } }, where: 'not ("t"."views" > $1)', parameters: [20], rows: ['a', 'b', 'f'] },
    'with a bare value ($eq)': { filter: { kind: { $not: 'news' } }, where: 'not ("t"."kind" = $1)', parameters: ['news'], rows: ['b', 'c', 'f'] },
    'with two operators': { filter: { views: { $not: { $gte: 20, $lte: 30 } } }, where: 'not (("t"."views" >= $1 and "t"."views" <= $2))', parameters: [20, 30], rows: ['a', 'e'] },
    'beside another operator': { filter: { views: { $not: { $eq: 20 }, $lt: 40 } }, where: '(not ("t"."views" = $1) and "t"."views" < $2)', parameters: [20, 40], rows: ['a', 'd'] },
    'with $null': { filter: { title: { $not: { $null: true } } }, where: 'not ("t"."title" is null)', parameters: [], rows: ['a', 'b', 'c', 'd', 'e'] }
  })
})

t.test('an array for a non-array operator is an OR over its elements', async (t) => {
  await cases(t, {
    $eq: { filter: { views: { $eq: ['10', '40'] } }, where: '("t"."views" = $1 or "t"."views" = $2)', parameters: [10, 40], rows: ['a', 'e'] },
    '$ne (almost always true)': { filter: { views: { $ne: [10, 40] } }, where: '("t"."views" <> $1 or "t"."views" <> $2)', parameters: [10, 40], rows: ['a', 'b', 'd', 'e', 'f'] },
    $gt: { filter: { views: { $gt: [35, 15] } }, where: '("t"."views" > $1 or "t"."views" > $2)', parameters: [35, 15], rows: ['b', 'd', 'e', 'f'] },
    $containsi: { filter: { title: { $containsi: ['ALP', 'pure'] } }, where: '(lower("t"."title"::text) like lower($1) or lower("t"."title"::text) like lower($2))', parameters: ['%ALP%', '%pure%'], rows: ['a', 'd'] },
    'one element': { filter: { title: { $startsWith: ['Gam'] } }, where: '"t"."title"::text like $1', parameters: ['Gam%'], rows: ['c'] },
    '$eq with a NULL element': { filter: { views: { $eq: [10, null] } }, where: '("t"."views" = $1 or "t"."views" is null)', parameters: [10], rows: ['a', 'c'] }
  })
})

/** Semantics checked on the executed result only, whatever SQL expresses them. */
async function selects (filter: unknown): Promise<string[]> {
  return (await listQuery(database.db, filter, DEFAULT).execute()).map((r) => r.label)
}

t.test('field-level $not given an array is an OR over the elements, like every non-array operator', async (t) => {
  // Strapi's applyOperator: `$not: [10, 20]` is NOT (views = 10) OR NOT (views = 20), so every
  // non-NULL row matches; it is not NOT (views IN (10, 20)).
  t.same(await selects({ views: { $not: [10, 20] } }), ['a', 'b', 'd', 'e', 'f'])
  t.same(await selects({ views: { $not: [10] } }), ['b', 'd', 'e', 'f'])
})

t.test('a comparison with NULL is unknown, so negating it selects nothing either', async (t) => {
  // `filters[views][$lt]` (no value) is `views < NULL` in Strapi (knex binds the null): unknown
  // for every row, and NOT unknown is unknown.
  t.same(await selects({ views: { $lt: null } }), [])
  t.same(await selects({ $not: { views: { $lt: null } } }), [])
  t.same(await selects({ views: { $not: { $gte: null } } }), [])
  t.same(await selects({ $not: { views: { $between: [null, 100] } } }), [])
})

t.test('LIKE wildcards in values', async (t) => {
  await cases(t, {
    'default: % is a wildcard': { filter: { title: { $contains: '%' } }, where: '"t"."title"::text like $1', parameters: ['%%%'], rows: ['a', 'b', 'c', 'd', 'e'] },
    'escaped: % is literal': { filter: { title: { $contains: '%' } }, where: '"t"."title"::text like $1', parameters: ['%\\%%'], rows: ['d'], options: ESCAPED },
    'default: _ is any one character': { filter: { title: { $contains: '_' } }, where: '"t"."title"::text like $1', parameters: ['%_%'], rows: ['a', 'b', 'c', 'd', 'e'] },
    'escaped: _ is literal': { filter: { title: { $contains: '_' } }, where: '"t"."title"::text like $1', parameters: ['%\\_%'], rows: ['e'], options: ESCAPED },
    'default: $endsWithi with _': { filter: { title: { $endsWithi: '_A' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['%_A'], rows: ['a', 'b'] },
    'escaped: $endsWithi with _': { filter: { title: { $endsWithi: '_A' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['%\\_A'], rows: [], options: ESCAPED },
    'default: $eqi with %': { filter: { title: { $eqi: '%RAY' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['%RAY'], rows: ['c'] },
    'escaped: $eqi with %': { filter: { title: { $eqi: '%RAY' } }, where: 'lower("t"."title"::text) like lower($1)', parameters: ['\\%RAY'], rows: [], options: ESCAPED },
    'escaped: $notContains with %': { filter: { title: { $notContains: '%' } }, where: 'not ("t"."title"::text like $1)', parameters: ['%\\%%'], rows: ['a', 'b', 'c', 'e'], options: ESCAPED },
    'escaped: a backslash is literal too': { filter: { title: { $endsWith: '\\' } }, where: '"t"."title"::text like $1', parameters: ['%\\\\'], rows: [], options: ESCAPED },
    'escaping leaves other operators alone': { filter: { title: { $eq: '100% pure' } }, where: '"t"."title" = $1', parameters: ['100% pure'], rows: ['d'], options: ESCAPED }
  })
})

t.test('values are always bound parameters', async (t) => {
  const hostile = "x'); drop table items; --"
  await cases(t, {
    $eq: { filter: { title: hostile }, where: '"t"."title" = $1', parameters: [hostile], rows: [] },
    $containsi: { filter: { title: { $containsi: hostile } }, where: 'lower("t"."title"::text) like lower($1)', parameters: [`%${hostile}%`], rows: [] }
  })
  const count = await database.db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  t.equal(Number(count.n), ROWS.length)
})

t.test('the alias names the table', async (t) => {
  const node = parseFilters(model, { $or: [{ views: { $lt: 30 } }, { title: { $startsWith: 'Wild' } }] })!
  const compiled = compiler.selectFrom('items as x').select('x.id').where(compileFilter(node, 'x', createFilterContext(DEFAULT, 'published'))).compile()
  t.equal(compiled.sql, 'select "x"."id" from "items" as "x" where ("x"."views" < $1 or "x"."title"::text like $2)')
  t.same(compiled.parameters, [30, 'Wild%'])
})
