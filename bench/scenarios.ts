import { listStatement, oneStatement, parseListQuery, type Statement } from './baseline.js'
import { MODEL_SET, type ModelSet } from './model-set.js'

/** What the requests refer to, known once the data is seeded. */
export interface Context {
  /** The article the get-one requests read (the middle one). */
  documentId: string
  /** The category and the author a create links to. */
  categoryId: string
  authorId: string
  /** A full-access API token's key, for the create. */
  token: string
}

/** The benchmarked requests, shared by run.ts (autocannon) and breakdown.ts (CPU per stage). */
export interface Scenario {
  name: string
  /** The request of Strapi's recorded numbers (BENCH_STRAPI_JSON's `summary`) it compares with. */
  strapi: string
  /** The model sets it runs on: the new ones need draft & publish, i18n and the flat GraphQL schema. */
  sets: ModelSet[]
  /**
   * `list` and `one` are REST reads (one statement each, recorded from the plugin and checked or
   * replayed by the floor), `graphql` a GraphQL read, `create` a write (answers compared by status
   * and shape: ids and timestamps differ).
   */
  kind: 'list' | 'one' | 'graphql' | 'create'
  method: 'GET' | 'POST'
  path: (documentId: string) => string
  /** The JSON body of a POST; autocannon replaces `[<id>]` with a fresh id at every request. */
  body?: (context: Context) => string
  headers?: (context: Context) => Record<string, string>
  /** Plain models: the statement the hand-written baseline runs for it, which must be the one the plugin sends. */
  statement?: (documentId: string) => Statement
}

const FILTERED = '/api/articles?filters[views][$gt]=500&sort=title:desc&pagination[pageSize]=10'
const POPULATED = '/api/articles?populate[category]=true&populate[authors]=true'
const GRAPHQL = '{articles(pagination:{pageSize:10}){title category{name}}}'

const both: ModelSet[] = ['oracle', 'plain']
const get = { method: 'GET' as const, sets: both }

export const ALL_SCENARIOS: Scenario[] = [
  { ...get, name: 'list', strapi: 'list-default', kind: 'list', path: () => '/api/articles', statement: () => listStatement(parseListQuery({})) },
  { ...get, name: 'get-one', strapi: 'get-one', kind: 'one', path: (id) => `/api/articles/${id}`, statement: (id) => oneStatement(id) },
  {
    ...get,
    name: 'list-filter-sort-page',
    strapi: 'list-filter-sort-page',
    kind: 'list',
    path: () => FILTERED,
    statement: () => listStatement(parseListQuery({ 'filters[views][$gt]': '500', sort: 'title:desc', 'pagination[pageSize]': '10' }))
  },
  {
    ...get,
    name: 'list-populate',
    strapi: 'list-populate-category-authors',
    kind: 'list',
    path: () => POPULATED,
    statement: () => listStatement(parseListQuery({ 'populate[category]': 'true', 'populate[authors]': 'true' }))
  },
  { name: 'get-one-populate-star', strapi: 'get-one-populate-star', sets: ['oracle'], kind: 'one', method: 'GET', path: (id) => `/api/articles/${id}?populate=*` },
  {
    name: 'graphql',
    strapi: 'graphql-10-articles-with-category',
    sets: ['oracle'],
    kind: 'graphql',
    method: 'POST',
    path: () => '/graphql',
    body: () => JSON.stringify({ query: GRAPHQL }),
    headers: () => ({ 'content-type': 'application/json' })
  },
  {
    // Last: it adds articles, which the reads after it would count.
    name: 'create',
    strapi: 'create-article',
    sets: ['oracle'],
    kind: 'create',
    method: 'POST',
    path: () => '/api/articles',
    body: (c) => JSON.stringify({ data: { title: 'Bench article [<id>]', views: 42, kind: 'news', category: c.categoryId, authors: [c.authorId] } }),
    headers: (c) => ({ 'content-type': 'application/json', authorization: `Bearer ${c.token}` })
  }
]

/** The scenarios of the model set (BENCH_MODELS) that BENCH_ONLY (comma-separated names) selects; all without it. */
export const SCENARIOS = ALL_SCENARIOS.filter((s) => s.sets.includes(MODEL_SET) &&
  (process.env.BENCH_ONLY === undefined || process.env.BENCH_ONLY.split(',').includes(s.name)))
