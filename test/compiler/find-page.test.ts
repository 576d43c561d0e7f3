import t, { type Test } from 'tap'
import { compileFindPage } from '../../lib/compiler/find.js'
import { rowLimit } from '../../lib/compiler/row-limit.js'
import { defineComponent, defineContentType } from '../../lib/index.js'
import { createRegistry } from '../../lib/model/registry.js'
import { parseQuery, type QueryTree, type RawQuery } from '../../lib/query/index.js'
import { build } from '../helpers/build.js'
import { compiler } from '../helpers/sql-compiler.js'

/**
 * `compileFindPage` in Kysely's style: each case validates a query, compiles the page statement,
 * asserts its SQL text and parameters, then runs it on a small seeded schema and asserts the
 * rendered documents and the total. Populate cases cover a relation, a nested relation, a
 * component, a dynamic zone and the count strategy.
 */

const shelf = defineContentType({
  kind: 'collectionType',
  collectionName: 'shelves',
  info: { singularName: 'shelf', pluralName: 'shelves', displayName: 'Shelf' },
  options: { draftAndPublish: false },
  attributes: { name: { type: 'string' }, books: { type: 'relation', relation: 'oneToMany', target: 'api::book.book', mappedBy: 'shelf' } }
})
const book = defineContentType({
  kind: 'collectionType',
  collectionName: 'books',
  info: { singularName: 'book', pluralName: 'books', displayName: 'Book' },
  options: { draftAndPublish: false },
  attributes: {
    title: { type: 'string' },
    pages: { type: 'integer' },
    shelf: { type: 'relation', relation: 'manyToOne', target: 'api::shelf.shelf', inversedBy: 'books' },
    tags: { type: 'relation', relation: 'manyToMany', target: 'api::tag.tag' },
    blurb: { type: 'component', component: 'parts.blurb', repeatable: false },
    sections: { type: 'dynamiczone', components: ['parts.blurb', 'parts.link'] }
  }
})
const tag = defineContentType({
  kind: 'collectionType',
  collectionName: 'tags',
  info: { singularName: 'tag', pluralName: 'tags', displayName: 'Tag' },
  options: { draftAndPublish: false },
  attributes: { label: { type: 'string' } }
})
const components = {
  'parts.blurb': defineComponent({ collectionName: 'components_parts_blurbs', info: { displayName: 'Blurb' }, attributes: { text: { type: 'string' } } }),
  'parts.link': defineComponent({ collectionName: 'components_parts_links', info: { displayName: 'Link' }, attributes: { url: { type: 'string' } } })
}

const registry = createRegistry([shelf, book, tag], components)
const model = registry.get('api::book.book')!
const OPTIONS = { escapeLikeWildcards: false }

const tree = (raw: RawQuery): QueryTree => parseQuery(model, { fields: ['title'], ...raw }, {
  registry, limits: { defaultLimit: 25, maxLimit: 100, withCount: true }, i18n: { locales: ['en'], defaultLocale: 'en' }, allowAllLocales: true
})

/**
 * The statement of a page in the default order (by id), 25 rows from the first, counted: the
 * books' id, documentId and title, then `populated` (the populate's sub-selects), whose
 * parameters come before the count's, from `$1`. The page size is in the text (row-limit.ts),
 * and a first page has no offset.
 */
function defaultPage (populated: string, count: number): string {
  return 'with "page" as (select "t"."id" as "__id" from "books" as "t" where true order by "t"."id" asc limit 25) ' +
    `select (select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by "page"."__id" asc), '') || ']'
    from "page" join "books" as "t" on "t"."id" = "page"."__id"
    cross join lateral (select "t"."id" as "id", "t"."document_id" as "documentId", "t"."title" as "title", ${populated}) as d) as "data", ` +
    `(select case when n.c < $${count}::int and (n.c > 0 or $${count + 1}::int = 0) then $${count + 2}::int + n.c ` +
    'else ((select count(*)::int as "count" from "books" as "t" where true)) end from (select count(*)::int as c from "page") as n) as "total"'
}

/** The sub-select of the to-one relation `shelf`, rendering `columns` of the shelf (alias r1, its view v3). */
const shelfOf = (columns: string): string =>
  '(select row_to_json("v3") from "books_shelf_lnk" as "l2" cross join lateral (select * from "shelves" as "r1" where "r1"."id" = "l2"."shelf_id" offset 0) as "r1" ' +
  `cross join lateral (select "r1"."id" as "id", "r1"."document_id" as "documentId", "r1"."name" as "name"${columns}) as "v3" ` +
  'where "l2"."book_id" = "t"."id" order by "l2"."id" asc limit 1) as "shelf"'

interface Case {
  query: RawQuery
  sql: string
  parameters: unknown[]
  /** The rendered documents without their ids (documentIds replaced by the title of the row). */
  data: unknown[]
  total: number | null
}

const { app, database } = await build(t, { models: [shelf, book, tag], components })
const documents = (uid: string) => app.contentApi.documents(uid)
const fiction = await documents('api::shelf.shelf').create({ data: { name: 'Fiction' } })
const [x, y] = [await documents('api::tag.tag').create({ data: { label: 'x' } }), await documents('api::tag.tag').create({ data: { label: 'y' } })]
await documents('api::book.book').create({
  data: {
    title: 'Alpha',
    pages: 50,
    shelf: fiction.documentId,
    tags: [x.documentId, y.documentId],
    blurb: { text: 'a' },
    sections: [{ __component: 'parts.blurb', text: 's1' }, { __component: 'parts.link', url: 'u1' }]
  }
})
await documents('api::book.book').create({ data: { title: 'Beta', pages: 150, shelf: fiction.documentId, tags: [x.documentId] } })
await documents('api::book.book').create({ data: { title: 'Gamma', pages: 300 } })

/** Rendered rows without their generated ids and documentIds, which the cases cannot know. */
function stripIds (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripIds)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'id' && key !== 'documentId').map(([key, v]) => [key, stripIds(v)]))
}

async function check (t: Test, name: string, c: Case): Promise<void> {
  const compiled = compileFindPage(compiler, model, tree(c.query), OPTIONS).compile()
  t.equal(compiled.sql, c.sql, `${name}: SQL`)
  t.same(compiled.parameters, c.parameters, `${name}: parameters`)
  const row = await compileFindPage(database.db, model, tree(c.query), OPTIONS).executeTakeFirstOrThrow()
  t.strictSame(stripIds(JSON.parse(row.data)), c.data, `${name}: documents`)
  t.equal(row.total, c.total, `${name}: total`)
}

t.test('a page: its rows chosen on ids and sort keys, then rendered; the count only when the page cannot tell it', async (t) => {
  await check(t, 'filtered, sorted, counted', {
    query: { filters: { pages: { $gt: 100 } }, sort: 'title:desc', pagination: { page: 1, pageSize: 2 } },
    sql: 'with "page" as (select "t"."id" as "__id", "t"."title" as "s0" from "books" as "t" where "t"."pages" > $1 order by "s0" desc, "t"."id" asc limit 2) ' +
      `select (select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by "page"."s0" desc, "page"."__id" asc), '') || ']'
    from "page" join "books" as "t" on "t"."id" = "page"."__id"
    cross join lateral (select "t"."id" as "id", "t"."document_id" as "documentId", "t"."title" as "title") as d) as "data", ` +
      '(select case when n.c < $2::int and (n.c > 0 or $3::int = 0) then $4::int + n.c ' +
      'else ((select count(*)::int as "count" from "books" as "t" where "t"."pages" > $5)) end from (select count(*)::int as c from "page") as n) as "total"',
    parameters: [100, 2, 0, 0, 100],
    data: [{ title: 'Gamma' }, { title: 'Beta' }],
    total: 2
  })
  await check(t, 'withCount=false: no count', {
    query: { pagination: { start: 1, limit: 2, withCount: false } },
    sql: 'with "page" as (select "t"."id" as "__id" from "books" as "t" where true order by "t"."id" asc limit 2 offset $1) ' +
      `select (select '[' || coalesce(string_agg(row_to_json(d)::text, ',' order by "page"."__id" asc), '') || ']'
    from "page" join "books" as "t" on "t"."id" = "page"."__id"
    cross join lateral (select "t"."id" as "id", "t"."document_id" as "documentId", "t"."title" as "title") as d) as "data", null::int as "total"`,
    parameters: [1],
    data: [{ title: 'Beta' }, { title: 'Gamma' }],
    total: null
  })
})

t.test('populate: one JSON sub-select per populated attribute, in the same statement', async (t) => {
  await check(t, 'a to-one relation', {
    query: { populate: { shelf: { fields: ['name'] } } },
    sql: defaultPage(shelfOf(''), 1),
    parameters: [25, 0, 0],
    data: [{ title: 'Alpha', shelf: { name: 'Fiction' } }, { title: 'Beta', shelf: { name: 'Fiction' } }, { title: 'Gamma', shelf: null }],
    total: 3
  })
  await check(t, 'a relation populated inside a relation', {
    query: { populate: { shelf: { fields: ['name'], populate: { books: { fields: ['title'] } } } } },
    sql: defaultPage(shelfOf(', (select coalesce(json_agg(q.doc order by "q"."o0" asc nulls last, "q"."o1" asc), \'[]\'::json) from ' +
      '(select row_to_json("v6") as doc, "l5"."book_ord" as "o0", "l5"."id" as "o1" from "books_shelf_lnk" as "l5" cross join lateral (select * from "books" as "r4" where "r4"."id" = "l5"."book_id" offset 0) as "r4" ' +
      'cross join lateral (select "r4"."id" as "id", "r4"."document_id" as "documentId", "r4"."title" as "title") as "v6" ' +
      'where "l5"."shelf_id" = "r1"."id" order by "l5"."book_ord" asc nulls last, "l5"."id" asc) as q) as "books"'), 1),
    parameters: [25, 0, 0],
    data: [
      { title: 'Alpha', shelf: { name: 'Fiction', books: [{ title: 'Alpha' }, { title: 'Beta' }] } },
      { title: 'Beta', shelf: { name: 'Fiction', books: [{ title: 'Alpha' }, { title: 'Beta' }] } },
      { title: 'Gamma', shelf: null }
    ],
    total: 3
  })
  await check(t, 'a component', {
    query: { populate: { blurb: true } },
    sql: defaultPage('(select row_to_json("v3") from "books_cmps" as "l2" cross join lateral (select * from "components_parts_blurbs" as "r1" where "r1"."id" = "l2"."cmp_id" offset 0) as "r1" ' +
      'cross join lateral (select "r1"."id" as "id", "r1"."text" as "text") as "v3" ' +
      'where "l2"."entity_id" = "t"."id" and "l2"."component_type" = $1 and "l2"."field" = $2 order by "l2"."order" asc nulls last, "l2"."id" asc limit 1) as "blurb"', 3),
    parameters: ['parts.blurb', 'blurb', 25, 0, 0],
    data: [{ title: 'Alpha', blurb: { text: 'a' } }, { title: 'Beta', blurb: null }, { title: 'Gamma', blurb: null }],
    total: 3
  })
  const member = (n: number, table: string, column: string, p: number): string =>
    `select row_to_json("v${n + 2}") as doc, "l${n + 1}"."order" as o0, "l${n + 1}"."id" as o1 from "books_cmps" as "l${n + 1}" ` +
    `cross join lateral (select * from "${table}" as "r${n}" where "r${n}"."id" = "l${n + 1}"."cmp_id" offset 0) as "r${n}" ` +
    `cross join lateral (select $${p}::text as "__component", "r${n}"."id" as "id", "r${n}"."${column}" as "${column}") as "v${n + 2}" ` +
    `where "l${n + 1}"."entity_id" = "t"."id" and "l${n + 1}"."component_type" = $${p + 1} and "l${n + 1}"."field" = $${p + 2}`
  await check(t, 'a dynamic zone: its components in one ordered list', {
    query: { populate: { sections: true } },
    sql: defaultPage('(select coalesce(json_agg(q.doc order by q.o0 asc nulls last, q.o1 asc), \'[]\'::json) from (' +
      `${member(1, 'components_parts_blurbs', 'text', 1)} union all ${member(4, 'components_parts_links', 'url', 4)}) as q) as "sections"`, 7),
    parameters: ['parts.blurb', 'parts.blurb', 'sections', 'parts.link', 'parts.link', 'sections', 25, 0, 0],
    data: [
      { title: 'Alpha', sections: [{ __component: 'parts.blurb', text: 's1' }, { __component: 'parts.link', url: 'u1' }] },
      { title: 'Beta', sections: [] },
      { title: 'Gamma', sections: [] }
    ],
    total: 3
  })
  await check(t, 'the count strategy: `{ count }` instead of the rows', {
    query: { populate: { tags: { count: true } } },
    sql: defaultPage('(select (\'{"count":\' || count(*) || \'}\')::json from "books_tags_lnk" as "l2" cross join lateral (select * from "tags" as "r1" where "r1"."id" = "l2"."tag_id" offset 0) as "r1" ' +
      'where "l2"."book_id" = "t"."id") as "tags"', 1),
    parameters: [25, 0, 0],
    data: [{ title: 'Alpha', tags: { count: 2 } }, { title: 'Beta', tags: { count: 1 } }, { title: 'Gamma', tags: { count: 0 } }],
    total: 3
  })
})

t.test('row limits are written into the text, an offset only past the first row (row-limit.ts)', async (t) => {
  const page2 = compileFindPage(compiler, model, tree({ pagination: { page: 2, pageSize: 2 } }), OPTIONS).compile()
  t.match(page2.sql, /order by "t"\."id" asc limit 2 offset \$1\)/, 'a later page: its size in the text, its offset a parameter')
  t.equal(page2.parameters[0], 2)
  const first = compileFindPage(compiler, model, tree({ populate: { tags: { start: 0, limit: 1 } } }), OPTIONS).compile()
  t.match(first.sql, /limit 1\) as q\) as "tags"/, 'a populate\'s limit in the text, and no offset from its first row')
  const later = compileFindPage(compiler, model, tree({ populate: { tags: { start: 1, limit: 1 } } }), OPTIONS).compile()
  t.match(later.sql, /limit 1 offset \$\d+\) as q\) as "tags"/, 'from its second row: an offset parameter')
  const row = await compileFindPage(database.db, model, tree({ sort: 'title', populate: { tags: { start: 1, limit: 1, fields: ['label'] } } }), OPTIONS).executeTakeFirstOrThrow()
  t.strictSame((stripIds(JSON.parse(row.data)) as Array<{ tags: unknown }>).map((b) => b.tags), [[{ label: 'y' }], [], []], 'Alpha\'s second tag only')
})

t.test('a row limit that is not a non-negative integer is refused before it reaches the text', async (t) => {
  for (const n of [1.5, -1, Number.NaN, 2 ** 53]) t.throws(() => rowLimit(n), TypeError, String(n))
  t.equal(compiler.selectFrom('books').select('id').limit(rowLimit(0)).compile().sql, 'select "id" from "books" limit 0')
})
