/**
 * The benchmark's two model sets (`BENCH_MODELS`), in a module of its own that imports nothing,
 * so that the floor's process does not load the plugin (its RSS is the floor's own):
 *
 * - `oracle` (the default): the oracle fixture's models (test/fixtures/oracle/models.ts), the ones
 *   Strapi's recorded numbers (../shared/bench/strapi-compare-10k.json) were measured on: articles
 *   with draft & publish and i18n (locales en, fr), categories and authors without either. Every
 *   article is created published, so it has a draft row and a published row; 50 categories.
 * - `plain`: bench/article.ts, no draft & publish and no i18n, 20 categories: each read is the
 *   plainest statement the compiler writes, and its floor is written out by hand in baseline.ts.
 */
export type ModelSet = 'oracle' | 'plain'

if (process.env.BENCH_MODELS !== undefined && process.env.BENCH_MODELS !== 'plain' && process.env.BENCH_MODELS !== 'oracle') {
  throw new Error(`BENCH_MODELS must be oracle or plain, not ${process.env.BENCH_MODELS}`)
}

export const MODEL_SET: ModelSet = process.env.BENCH_MODELS === 'plain' ? 'plain' : 'oracle'

/** The default locale every oracle read and write uses (no `locale` parameter in the requests). */
export const LOCALE = 'en'
