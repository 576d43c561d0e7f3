import type { ContentApiOptions } from '../lib/index.js'
import { oracleOptions } from '../test/fixtures/oracle/models.js'
import { articleData, authorData, models as plainModels } from './article.js'
import type { ModelSet } from './model-set.js'

export { MODEL_SET, type ModelSet } from './model-set.js'

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
