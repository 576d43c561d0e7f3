import { defineContentType } from '../lib/index.js'

/**
 * The benchmark's content type: scalar fields only and no draft & publish, so the list and
 * get-one queries are the plain single-statement shapes the hand-written baseline copies.
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
    kind: { type: 'enumeration', enum: ['news', 'opinion', 'review'] }
  }
})

export const ARTICLE_UID = 'api::article.article'

const SUBJECTS = ['PostgreSQL', 'Fastify', 'Kysely', 'Caching', 'Migrations', 'Localization', 'Pagination', 'Queues']
const KINDS = ['news', 'opinion', 'review'] as const

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
