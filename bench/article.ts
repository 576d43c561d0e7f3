// Not from the package's entry: beside the built package (serve.ts, BENCH_PLUGIN) it would load the plugin twice.
import { defineContentType } from '../lib/model/types.js'

/**
 * The benchmark's content types. Articles have scalar fields and no draft & publish, so the
 * list and get-one queries are the plain single-statement shapes the hand-written baseline
 * copies. Each article belongs to one category (manyToOne, owning side) and has 1-3 authors
 * (manyToMany, owning side), read by the populate scenario; neither target has draft & publish.
 */
export const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: false },
  attributes: {
    title: { type: 'string', required: true },
    slug: { type: 'uid', targetField: 'title' },
    summary: { type: 'text' },
    views: { type: 'integer' },
    rating: { type: 'decimal' },
    featured: { type: 'boolean', default: false },
    publishDate: { type: 'date' },
    kind: { type: 'enumeration', enum: ['news', 'opinion', 'review'] },
    category: { type: 'relation', relation: 'manyToOne', target: 'api::category.category', inversedBy: 'articles' },
    authors: { type: 'relation', relation: 'manyToMany', target: 'api::author.author', inversedBy: 'articles' }
  }
})

export const category = defineContentType({
  kind: 'collectionType',
  collectionName: 'categories',
  info: { singularName: 'category', pluralName: 'categories', displayName: 'Category' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', required: true, unique: true },
    description: { type: 'text' },
    articles: { type: 'relation', relation: 'oneToMany', target: 'api::article.article', mappedBy: 'category' }
  }
})

export const author = defineContentType({
  kind: 'collectionType',
  collectionName: 'authors',
  info: { singularName: 'author', pluralName: 'authors', displayName: 'Author' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', required: true },
    email: { type: 'email' },
    articles: { type: 'relation', relation: 'manyToMany', target: 'api::article.article', mappedBy: 'authors' }
  }
})

export const models = [article, category, author]

export const ARTICLE_UID = 'api::article.article'
export const CATEGORY_UID = 'api::category.category'
export const AUTHOR_UID = 'api::author.author'

/** What the public role may do: read articles, and read the types the populate scenario reaches. */
export const PUBLIC_READ = [ARTICLE_UID, CATEGORY_UID, AUTHOR_UID].flatMap((uid) => [`${uid}.find`, `${uid}.findOne`])

export const CATEGORIES = 20
export const AUTHORS = 200

const SUBJECTS = ['PostgreSQL', 'Fastify', 'Kysely', 'Caching', 'Migrations', 'Localization', 'Pagination', 'Queues']
const KINDS = ['news', 'opinion', 'review'] as const
const FIRST = ['Ada', 'Brian', 'Chloé', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas']

/**
 * The i-th seeded article: deterministic, varied values (views spread over 0..999 so that
 * `views > 500` matches about half the rows; titles unique so every slug is generated once).
 */
export function articleData (i: number): Record<string, unknown> {
  const subject = SUBJECTS[i % SUBJECTS.length]
  const kind = KINDS[i % KINDS.length]
  return {
    title: `${subject} note ${String(i).padStart(5, '0')}`,
    summary: `A ${kind} about ${subject}: how it behaves, what it costs and when to reach for it (#${i}).`,
    views: (i * 7919) % 1000,
    rating: ((i * 37) % 50) / 10,
    featured: i % 7 === 0,
    publishDate: new Date(Date.UTC(2020, 0, 1) + (i % 2000) * 86_400_000).toISOString().slice(0, 10),
    kind
  }
}

export function categoryData (i: number): Record<string, unknown> {
  return { name: `Category ${String(i).padStart(2, '0')}`, description: `Articles filed under topic #${i}.` }
}

export function authorData (i: number): Record<string, unknown> {
  const first = FIRST[i % FIRST.length]
  const last = `Writer${String(i).padStart(3, '0')}`
  return { name: `${first} ${last}`, email: `${first.normalize('NFD').replace(/[^a-z]/gi, '').toLowerCase()}.${last.toLowerCase()}@example.com` }
}

/**
 * The relations of the i-th article, as indexes into the seeded categories and authors: one
 * category, and 1-3 distinct authors (1, 2, 3, 1, 2, 3, ...: two on average).
 */
export function articleRelations (i: number): { category: number, authors: number[] } {
  const count = 1 + (i % 3)
  const first = (i * 31) % AUTHORS
  return {
    category: (i * 7) % CATEGORIES,
    authors: Array.from({ length: count }, (_, k) => (first + k * 67) % AUTHORS)
  }
}
