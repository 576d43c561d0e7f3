import type { FastifyInstance } from 'fastify'

const CATEGORIES = [
  { name: 'Engineering', description: 'How things are built, and why.' },
  { name: 'Product', description: 'What we ship and what we learned shipping it.' },
  { name: 'Culture', description: 'People, teams and the way we work.' },
  { name: 'Releases', description: 'Release notes and upgrade guides.' }
]

const AUTHORS = [
  { name: 'Ada Lovelace', email: 'ada@example.com', bio: 'Private note: prefers long-form pieces.' },
  { name: 'Grace Hopper', email: 'grace@example.com', bio: 'Private note: ask before editing headlines.' },
  { name: 'Alan Turing', email: 'alan@example.com', bio: 'Private note: on leave in December.' }
]

const SUBJECTS = [
  'PostgreSQL', 'Fastify', 'Kysely', 'Edge caching', 'Schema migrations', 'Draft & publish',
  'Localization', 'Query languages', 'Pagination', 'Observability'
]
const ANGLES = ['in practice', 'for beginners', 'under load', 'a retrospective', 'the hard parts', 'at scale']
const KINDS = ['news', 'opinion', 'review'] as const
const LEADS = { news: 'News about', opinion: 'An opinion on', review: 'A review of' }

/** The Strapi "blocks" rich-text value of a one-paragraph body. */
function blocks (text: string): Array<Record<string, unknown>> {
  return [
    { type: 'heading', level: 2, children: [{ type: 'text', text: 'Overview' }] },
    { type: 'paragraph', children: [{ type: 'text', text }] }
  ]
}

/** Thirty articles with deterministic, varied values; every sixth one stays a draft. */
export function articleData (): Array<{ data: Record<string, unknown>, draft: boolean }> {
  const articles: Array<{ data: Record<string, unknown>, draft: boolean }> = []
  for (let i = 0; i < 30; i++) {
    const subject = SUBJECTS[i % SUBJECTS.length]
    const angle = ANGLES[(i * 7) % ANGLES.length]
    const title = `${subject} ${angle}`
    const day = new Date(Date.UTC(2025, 0, 1) + i * 9 * 86_400_000).toISOString().slice(0, 10)
    articles.push({
      draft: i % 6 === 5,
      data: {
        title,
        body: blocks(`${title}: notes, numbers and the trade-offs we made.`),
        summary: `${LEADS[KINDS[i % 3]]} ${subject} ${angle}.`,
        views: (i * 137) % 1000,
        featured: i % 5 === 0,
        publishDate: day,
        kind: KINDS[i % 3]
      }
    })
  }
  return articles
}

/**
 * Writes the example content through the document service, as application code would. Each
 * content type is seeded only while it is empty, so running it again (a persistent `DATA_DIR`,
 * or PostgreSQL) changes nothing.
 */
export async function seed (app: FastifyInstance): Promise<{ created: number }> {
  const categories = app.contentApi.documents('api::category.category')
  const authors = app.contentApi.documents('api::author.author')
  const articles = app.contentApi.documents('api::article.article')
  const homepage = app.contentApi.documents('api::homepage.homepage')
  let created = 0

  if (await categories.count() === 0) {
    for (const data of CATEGORIES) { await categories.create({ data }); created++ }
  }
  if (await authors.count() === 0) {
    for (const data of AUTHORS) { await authors.create({ data }); created++ }
  }
  // Every article has a draft version, so counting drafts counts articles.
  if (await articles.count({ status: 'draft' }) === 0) {
    const categoryIds = (await categories.findMany({ sort: 'id' })).map((c) => c.documentId)
    const authorIds = (await authors.findMany({ sort: 'id' })).map((a) => a.documentId)
    for (const [i, { data, draft }] of articleData().entries()) {
      const related = {
        category: categoryIds[i % categoryIds.length],
        // One or two authors per article.
        authors: i % 4 === 0 ? [authorIds[i % authorIds.length], authorIds[(i + 1) % authorIds.length]] : [authorIds[i % authorIds.length]]
      }
      await articles.create({ data: { ...data, ...related }, status: draft ? 'draft' : 'published' })
      created++
    }
  }
  if (await homepage.findFirst() === null) {
    await homepage.upsertSingle({ data: { title: 'The Fastify Content API blog', tagline: 'Notes on building a Strapi-compatible API on Fastify' } })
    created++
  }
  return { created }
}
