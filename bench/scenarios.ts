import { listStatement, oneStatement, parseListQuery, type Statement } from './baseline.js'

/** The benchmarked requests, shared by run.ts (autocannon) and breakdown.ts (CPU per stage). */
export interface Scenario {
  name: string
  /** The scenario of Strapi's recorded bench.json it compares with (the nearest one, for list-populate). */
  strapi: string
  path: (documentId: string) => string
  /** The statement the baseline runs for it, which must be the one the plugin sends. */
  statement: (documentId: string) => Statement
}

const FILTERED = '/api/articles?filters[views][$gt]=500&sort=title:desc&pagination[pageSize]=10'
const POPULATED = '/api/articles?populate[category]=true&populate[authors]=true'

export const ALL_SCENARIOS: Scenario[] = [
  { name: 'list', strapi: 'list-default', path: () => '/api/articles', statement: () => listStatement(parseListQuery({})) },
  { name: 'get-one', strapi: 'get-one', path: (id) => `/api/articles/${id}`, statement: (id) => oneStatement(id) },
  {
    name: 'list-filter-sort-page',
    strapi: 'list-filter-sort-page',
    path: () => FILTERED,
    statement: () => listStatement(parseListQuery({ 'filters[views][$gt]': '500', sort: 'title:desc', 'pagination[pageSize]': '10' }))
  },
  {
    name: 'list-populate',
    strapi: 'list-populate-star',
    path: () => POPULATED,
    statement: () => listStatement(parseListQuery({ 'populate[category]': 'true', 'populate[authors]': 'true' }))
  }
]

/** The scenarios BENCH_ONLY (comma-separated names) selects; all without it. */
export const SCENARIOS = ALL_SCENARIOS.filter((s) => process.env.BENCH_ONLY === undefined || process.env.BENCH_ONLY.split(',').includes(s.name))
