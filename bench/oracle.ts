import type { ContentApiOptions } from '../lib/index.js'
import { oracleOptions } from '../test/fixtures/oracle/models.js'
import { articleData, authorData, models as plainModels } from './article.js'

/**
 * The benchmark's two model sets (`BENCH_MODELS`):
 *
 * - `oracle` (the default): the oracle fixture's models (test/fixtures/oracle/models.ts), the ones
 *   Strapi's recorded numbers (../shared/bench/strapi-compare-10k.json) were measured on: articles
 *   with draft & publish and i18n (locales en, fr), categories and authors without either. Every
 *   article is created published, so it has a draft row and a published row; 50 categories.
 * - `plain`: bench/article.ts, no draft & publish and no i18n, 20 categories: each read is the
 *   plainest statement the compiler writes, and its floor is written out by hand in baseline.ts.
 */
export type ModelSet = 'oracle' | 'plain'

export const MODEL_SET: ModelSet = process.env.BENCH_MODELS === 'plain' ? 'plain' : 'oracle'
if (process.env.BENCH_MODELS !== undefined && process.env.BENCH_MODELS !== 'plain' && process.env.BENCH_MODELS !== 'oracle') {
  throw new Error(`BENCH_MODELS must be oracle or plain, not ${process.env.BENCH_MODELS}`)
}

/** The plugin options of the set, without `db` and `auth`. GraphQL in Strapi 5's flat format, as measured against Strapi. */
export function pluginOptions (set: ModelSet): Omit<ContentApiOptions, 'db' | 'auth'> {
  if (set === 'plain') return { models: plainModels }
  const { auth: _auth, ...options } = oracleOptions
  return { ...options, graphql: { format: 'flat' } }
}

export const CATEGORIES_OF: Record<ModelSet, number> = { oracle: 50, plain: 20 }

/** The oracle's category has a name only (unique); the plain one a description too. */
export function oracleCategoryData (i: number): Record<string, unknown> {
  return { name: `Category ${String(i).padStart(2, '0')}` }
}

/**
 * The i-th oracle article: the plain article's values (views over 0..999, unique titles) minus
 * the attributes the oracle's article does not have, in the default locale.
 */
export function oracleArticleData (i: number): Record<string, unknown> {
  return articleData(i)
}

export { authorData as oracleAuthorData }

/** The default locale every oracle read and write uses (no `locale` parameter in the requests). */
export const LOCALE = 'en'
