import { sql as raw, type Kysely } from 'kysely'
import { createDocumentId } from '../lib/documents/document-id.js'
import { slugify } from '../lib/documents/slugify.js'
import { articleData, articleRelations } from './article.js'
import { LOCALE, type ModelSet } from './model-set.js'

/**
 * `BENCH_SEED=rows`: the articles written as the rows the document service writes, in batches
 * of 5,000 documents by three statements each (the rows, the category links, the author links),
 * for sizes the document service takes too long to seed (10,000 published articles took it 81 s
 * on two loaded cores, so 1,000,000 would take two hours or more; 3,000 took 1.6 s this way). The same values, slugs and
 * relations as `createAll`'s: with the oracle models a draft row then a published row per
 * document (`published_at` null, then set), in the default locale; links on both rows, the
 * authors in their given order (`author_ord` 1..n), each article at the end of its category's
 * and authors' lists (`article_ord`, the same on both rows, as publication copies it).
 * Categories and authors are still created through the document service.
 */

const BATCH = 5000

export async function seedRows (db: Kysely<any>, set: ModelSet, count: number, categoryIds: number[], authorIds: number[]): Promise<void> {
  const dp = set === 'oracle'
  const categoryOrd = new Map<number, number>()
  const authorOrd = new Map<number, number>()
  const next = (ords: Map<number, number>, id: number): number => {
    const n = (ords.get(id) ?? 0) + 1
    ords.set(id, n)
    return n
  }
  for (let from = 0; from < count; from += BATCH) {
    const size = Math.min(BATCH, count - from)
    const docs: string[] = []
    const columns: Record<string, unknown[]> = { title: [], slug: [], summary: [], views: [], rating: [], featured: [], publish_date: [], kind: [] }
    const catLinks: Array<[string, number, number]> = []
    const authorLinks: Array<[string, number, number, number]> = []
    for (let i = from; i < from + size; i++) {
      const doc = createDocumentId()
      const data = articleData(i)
      docs.push(doc)
      for (const [key, value] of Object.entries({ ...data, publish_date: data.publishDate })) if (key in columns) columns[key].push(value)
      columns.slug.push(slugify(String(data.title)))
      const category = categoryIds[(i * 7) % categoryIds.length]
      catLinks.push([doc, category, next(categoryOrd, category)])
      articleRelations(i).authors.forEach((a, k) => { authorLinks.push([doc, authorIds[a], k + 1, next(authorOrd, authorIds[a])]) })
    }
    const now = new Date().toISOString()
    const locale = dp ? raw`, ${LOCALE}::text` : raw``
    await raw`insert into "articles" ("document_id", "title", "slug", "summary", "views", "rating", "featured", "publish_date", "kind", "created_at", "updated_at", "published_at"${dp ? raw`, "locale"` : raw``})
      select "x"."d", "x"."title", "x"."slug", "x"."summary", "x"."views", "x"."rating", "x"."featured", "x"."publish_date"::date, "x"."kind", ${now}::timestamptz, ${now}::timestamptz, "p"."at"${locale}
      from unnest(${docs}::text[], ${columns.title}::text[], ${columns.slug}::text[], ${columns.summary}::text[], ${columns.views}::int[], ${columns.rating}::numeric[],
        ${columns.featured}::boolean[], ${columns.publish_date}::text[], ${columns.kind}::text[]) with ordinality as "x"("d", "title", "slug", "summary", "views", "rating", "featured", "publish_date", "kind", "n")
      cross join (values ${dp ? raw`(null::timestamptz, 0), (${now}::timestamptz, 1)` : raw`(${now}::timestamptz, 1)`}) as "p"("at", "o")
      order by "x"."n", "p"."o"`.execute(db)
    await raw`insert into "articles_category_lnk" ("article_id", "category_id", "article_ord")
      select "a"."id", "x"."c", "x"."o" from unnest(${catLinks.map((l) => l[0])}::text[], ${catLinks.map((l) => l[1])}::int[], ${catLinks.map((l) => l[2])}::int[]) with ordinality as "x"("d", "c", "o", "n")
      join "articles" as "a" on "a"."document_id" = "x"."d" order by "a"."id"`.execute(db)
    await raw`insert into "articles_authors_lnk" ("article_id", "author_id", "author_ord", "article_ord")
      select "a"."id", "x"."r", "x"."k", "x"."o" from unnest(${authorLinks.map((l) => l[0])}::text[], ${authorLinks.map((l) => l[1])}::int[], ${authorLinks.map((l) => l[2])}::int[], ${authorLinks.map((l) => l[3])}::int[]) with ordinality as "x"("d", "r", "k", "o", "n")
      join "articles" as "a" on "a"."document_id" = "x"."d" order by "a"."id", "x"."n"`.execute(db)
    if (count >= 20000 && (from + size) % 20000 === 0) process.stdout.write(`  seeded ${from + size}/${count}\r`)
  }
}
