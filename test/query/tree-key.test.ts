import t, { type Test } from 'tap'
import { isDeepStrictEqual } from 'node:util'
import { createRegistry } from '../../lib/model/registry.js'
import { parseQuery, type QueryTree, type RawQuery } from '../../lib/query/index.js'
import type { PopulateTree } from '../../lib/query/populate.js'
import { treeKey } from '../../lib/query/tree-key.js'
import { oracleComponents, oracleModels } from '../fixtures/oracle/models.js'
import { seededRandom, type Random } from '../helpers/random.js'

/**
 * The document service caches a compiled statement under its tree's key, whichever surface built
 * the tree: two different trees sharing a key would answer one query with another's SQL. Random
 * queries over the oracle's models (filters with values JSON cannot tell apart, sorts through
 * relations and by relation counts, dynamic-zone and count filters, populate of relations, media,
 * components and dynamic zones, pagination, status, locale), and populate trees with GraphQL's slots, grouped by key: every group holds one tree.
 */

const registry = createRegistry(oracleModels, oracleComponents)
const article = registry.get('api::article.article')!
const options = { registry, limits: { defaultLimit: 25, maxLimit: 100, withCount: true }, i18n: { locales: ['en', 'fr'], defaultLocale: 'en' }, allowAllLocales: true }
const parse = (raw: RawQuery): QueryTree => parseQuery(article, raw, options)

/** `tags` is a json attribute: its filter values are kept as given, so `1`, `'1'`, `-0`, `NaN`, `[1]` are all different. */
const JSON_VALUES: unknown[] = [1, '1', 0, -0, NaN, null, true, 'true', [1], ['1'], [[1]], 1e21, '1e21', Infinity]
const FILTERS: Array<(r: Random) => unknown> = [
  () => undefined,
  (r) => ({ title: { $eq: r.pick(['a', 'b', 'A', '']) } }),
  (r) => ({ title: { [r.pick(['$contains', '$containsi', '$startsWith', '$ne'])]: r.pick(['a', 'b']) } }),
  (r) => ({ views: { [r.pick(['$gt', '$gte', '$lt'])]: r.pick([1, 2, '3']) } }),
  (r) => ({ views: { $in: r.pick([[1, 2], [2, 1], [1], []]) } }),
  (r) => ({ tags: { $eq: r.pick(JSON_VALUES) } }),
  (r) => ({ category: { name: { $eq: r.pick(['x', 'y']) } } }),
  (r) => ({ authors: { name: { $null: r.pick([true, false]) } } }),
  (r) => ({ seo: { metaTitle: { $notNull: true } }, featured: r.pick([true, false]) }),
  (r) => ({ $or: [{ title: r.pick(['a', 'b']) }, { views: r.pick([1, 2]) }] }),
  (r) => ({ $not: { title: r.pick(['a', 'b']) } }),
  (r) => ({ blocks: { on: { [r.pick(['shared.quote', 'shared.rich-text'])]: { id: { $notNull: true } } } } }),
  (r) => ({ blocks: { on: { 'shared.quote': { [r.pick(['text', 'author'])]: { $eq: 'x' } } } } }),
  (r) => ({ authors: { $count: { [r.pick(['$gt', '$lt'])]: r.pick([1, 2]) } } }),
  (r) => ({ authors: { $count: { $gt: 1 }, name: { $eq: r.pick(['x', 'y']) } } })
]
const SORTS: unknown[] = [undefined, 'title', 'title:desc', ['views:asc', 'title'], ['title', 'views:asc'], 'category.name', 'category.name:desc', 'authors:count', 'authors:count:desc', 'category.articles:count']
const FIELDS: unknown[] = [undefined, ['title'], ['title', 'views'], ['views', 'title']]
const POPULATES: unknown[] = [
  undefined, '*', { category: true }, { authors: true }, { authors: { sort: 'name' } }, { authors: { sort: 'name', limit: 1 } },
  { authors: { limit: 1 } }, { authors: { fields: ['name'] } }, { authors: { filters: { name: { $eq: 'x' } } } }, { cover: true }, { seo: true },
  { blocks: true }, { blocks: { on: { 'shared.quote': { fields: ['text'] } } } }, { blocks: { on: { 'shared.quote': { fields: ['author'] } } } },
  { category: { populate: { articles: { count: true } } } }, { category: { populate: { articles: true } } }, { localizations: true },
  { category: true, authors: true }, { authors: true, category: true }
]
const PAGINATIONS: unknown[] = [undefined, { page: 2 }, { pageSize: 10 }, { start: 5, limit: 3 }, { start: 0, limit: 25 }, { withCount: false }]

function randomQuery (r: Random): RawQuery {
  const raw: RawQuery = {}
  // Each part often left out, so that equal queries meet among the random ones.
  const set = (key: string, value: unknown): void => { if (value !== undefined && r.chance(0.4)) raw[key] = value }
  set('filters', r.pick(FILTERS)(r))
  set('sort', r.pick(SORTS))
  set('fields', r.pick(FIELDS))
  set('populate', r.pick(POPULATES))
  set('pagination', r.pick(PAGINATIONS))
  set('status', r.pick([undefined, 'draft', 'published']))
  set('locale', r.pick([undefined, 'fr', '*']))
  return raw
}

/** A populate tree with GraphQL's slots: one attribute under several keys, each with its own arguments. */
function slots (entries: Array<[key: string, populate: unknown]>): PopulateTree {
  return new Map(entries.map(([key, populate]) => [key, parse({ populate: { authors: populate } }).populate.get('authors')!]))
}

/** Groups trees by key and checks that each group is one tree; returns the number of keys. */
function checkGroups (t: Test, trees: QueryTree[]): number {
  const groups = new Map<string, QueryTree>()
  let collisions = 0
  for (const tree of trees) {
    const key = treeKey(tree)
    const first = groups.get(key)
    if (first === undefined) groups.set(key, tree)
    else if (!isDeepStrictEqual(first, tree)) {
      collisions++
      t.fail(`two different trees share the key ${key}`)
    }
  }
  t.equal(collisions, 0, 'no key shared by two different trees')
  return groups.size
}

t.test('random queries: equal keys only for equal trees, and the same query always has the same key', async (t) => {
  const r = seededRandom(14)
  const trees: QueryTree[] = []
  for (let i = 0; i < 3000; i++) {
    const raw = randomQuery(r)
    const tree = parse(raw)
    trees.push(tree)
    if (i % 10 === 0) t.equal(treeKey(parse(raw)), treeKey(tree), 'parsed again, the same key')
  }
  const keys = checkGroups(t, trees)
  t.ok(keys > 1000, `the queries are varied (${keys} keys for ${trees.length} trees)`)
  t.ok(keys < trees.length, 'and some repeat, so equal trees did meet')
})

t.test('filter values JSON cannot tell apart have keys of their own', async (t) => {
  const scalars = [1, '1', 0, -0, NaN, null, true, 'true', 1e21, '1e21', Infinity, -Infinity]
  const lists = [[1], ['1'], [1, 2], [2, 1], [null], [NaN]]
  const filters = [...scalars.map((value) => ({ tags: { $eq: value } })), ...lists.map((value) => ({ tags: { $in: value } }))]
  const trees = [...filters, ...filters].map((raw) => parse({ filters: raw }))
  t.equal(checkGroups(t, trees), filters.length, 'one key per value, the same for the same value parsed twice')
})

t.test('GraphQL slots: one attribute under several keys with other arguments', async (t) => {
  const base = parse({})
  const populates: PopulateTree[] = [
    slots([['authors', { sort: 'name' }], ['authors__2', { limit: 1 }]]),
    slots([['authors', { limit: 1 }], ['authors__2', { sort: 'name' }]]),
    slots([['authors__2', { limit: 1 }], ['authors', { sort: 'name' }]]),
    slots([['authors', { sort: 'name' }], ['authors__2', { sort: 'name', limit: 1 }]]),
    slots([['authors', { sort: 'name' }], ['authors__3', { limit: 1 }]]),
    slots([['authors', { sort: 'name' }]]),
    slots([['authors__2', { sort: 'name' }]]),
    slots([['authors', { sort: 'name:desc' }], ['authors__2', { limit: 1 }]]),
    slots([['authors', { fields: ['name'] }], ['authors__2', { fields: ['email'] }]]),
    slots([['authors', { filters: { name: { $eq: 'a' } } }], ['authors__2', { filters: { name: { $eq: 'b' } } }]])
  ]
  const trees = populates.map((populate) => ({ ...base, populate }))
  t.equal(checkGroups(t, trees), trees.length, 'every slot tree has a key of its own')
  t.not(treeKey(trees[0]), treeKey(trees[2]), 'the same slots in another order are another statement (columns in another order)')
})

t.test('the key is memoized per tree object', async (t) => {
  const tree = parse({ populate: '*', filters: { title: 'a' } })
  const key = treeKey(tree)
  t.equal(treeKey(tree), key)
  t.equal(treeKey({ ...tree }), key, 'a copy is keyed again, to the same text')
})
