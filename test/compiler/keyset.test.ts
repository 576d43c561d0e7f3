import t from 'tap'
import { compileFindPage, type CursorPageRow } from '../../lib/compiler/find.js'
import { defineContentType } from '../../lib/index.js'
import { createRegistry } from '../../lib/model/registry.js'
import { CursorCodec, parseQuery, sortSignature, type CursorPosition, type QueryTree } from '../../lib/query/index.js'
import { parseSort } from '../../lib/query/sort.js'
import { build } from '../helpers/build.js'
import { compiler } from '../helpers/sql-compiler.js'

/**
 * `compileFindPage` for a cursor page (keyset.ts, `withPage`): the SQL text and parameters of the
 * keyset conditions for each key's NULL placement, then the statement run on a few rows whose
 * sort key has ties and NULLs.
 */

const book = defineContentType({
  kind: 'collectionType',
  collectionName: 'books',
  info: { singularName: 'book', pluralName: 'books', displayName: 'Book' },
  options: { draftAndPublish: false },
  attributes: { title: { type: 'string' }, pages: { type: 'integer' } }
})
const registry = createRegistry([book], {})
const model = registry.get('api::book.book')!
const OPTIONS = { escapeLikeWildcards: false }
const codec = new CursorCodec('keyset-test-secret')

/** A cursor page of 2 titles in `sort`, after (or before) `position`. */
function tree (sort: string, direction: 'after' | 'before', position: CursorPosition | null): QueryTree {
  const cursor = position === null ? '' : codec.encode(sortSignature(model.uid, parseSort(model, sort)), position)
  return parseQuery(model, { fields: ['title'], sort, pagination: { [direction]: cursor, pageSize: 2 } }, {
    registry, limits: { defaultLimit: 25, maxLimit: 100, withCount: true }, i18n: { locales: ['en'], defaultLocale: 'en' }, allowAllLocales: true, cursors: codec
  })
}

const keyset = (sql: string): string => sql.slice(sql.indexOf('with "keyset" as ('), sql.indexOf(', "page" as ('))

t.test('the keyset conditions: one range per index seek, NULLs where ORDER BY puts them', async (t) => {
  const desc = compileFindPage(compiler, model, tree('pages:desc', 'after', { values: ['100'], id: 7 }), OPTIONS).compile()
  t.equal(keyset(desc.sql), 'with "keyset" as (select "t"."id" as "__id", "t"."pages" as "s0" from "books" as "t" where true and ' +
    '"t"."pages" <= $1 and ("t"."pages" < $2 or ("t"."pages" = $3 and "t"."id" > $4)) order by "s0" desc, "t"."id" asc limit 3)', 'descending: one range, reading the page size + 1')
  t.same(desc.parameters.slice(0, 4), ['100', '100', '100', 7], 'the key as text, the id')

  const asc = compileFindPage(compiler, model, tree('pages:asc', 'after', { values: ['100'], id: 7 }), OPTIONS).compile()
  t.match(keyset(asc.sql), '"t"."pages" >= $1 and ("t"."pages" > $2 or ("t"."pages" = $3 and "t"."id" > $4))', 'ascending: the values from the position on')
  t.match(keyset(asc.sql), 'union all', 'then the NULLs, a second range')
  t.match(keyset(asc.sql), '"t"."pages" is null', 'the NULLs are after every value')

  const nullAsc = compileFindPage(compiler, model, tree('pages:asc', 'after', { values: [null], id: 7 }), OPTIONS).compile()
  t.match(keyset(nullAsc.sql), 'where true and "t"."pages" is null and "t"."id" > $1 order by', 'ascending from a NULL: only NULLs past the id')

  const before = compileFindPage(compiler, model, tree('pages:asc', 'before', { values: ['100'], id: 7 }), OPTIONS).compile()
  t.match(keyset(before.sql), 'order by "s0" desc, "t"."id" desc', 'before: the walk reversed')
  t.match(keyset(before.sql), '"t"."pages" <= $1', 'and its bound')

  const first = compileFindPage(compiler, model, tree('pages:asc', 'after', null), OPTIONS).compile()
  t.match(first.sql, 'null::boolean as "near"', 'a first page has nothing before it: no probe')
})

t.test('run: pages, their edges and the far and near sides', async (t) => {
  const { database, app } = await build(t, { models: [book] })
  const books = app.contentApi.documents('api::book.book')
  const ids: number[] = []
  for (const [title, pages] of [['a', 100], ['b', null], ['c', 100], ['d', 50], ['e', null]] as const) ids.push((await books.create({ data: { title, pages } })).id)
  const run = async (q: QueryTree) => await compileFindPage(database.db, model, q, OPTIONS).executeTakeFirstOrThrow() as unknown as CursorPageRow
  // pages asc: d(50), a(100), c(100), b(null), e(null)
  const page1 = await run(tree('pages:asc', 'after', { values: ['100'], id: ids[0] }))
  t.same(JSON.parse(page1.data).map((d: { title: string }) => d.title), ['c', 'b'], 'after a: c, then the NULLs')
  t.same([JSON.parse(page1.first!), JSON.parse(page1.last!)], [['100', ids[2]], [null, ids[1]]], 'the edges: key text and id')
  t.same([page1.more, page1.near], [true, true], 'e follows; d and a precede')
  const back = await run(tree('pages:asc', 'before', { values: ['100'], id: ids[2] }))
  t.same(JSON.parse(back.data).map((d: { title: string }) => d.title), ['d', 'a'], 'before c: d, a in the sort\'s order')
  t.same([back.more, back.near], [false, true], 'nothing before d; c and more after')
})
