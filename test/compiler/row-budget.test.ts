import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { AccessScope } from '../../lib/query/access-scope.js'
import { compileFindPage, compileRowProbe } from '../../lib/compiler/find.js'
import { staticRowBound } from '../../lib/compiler/row-budget.js'
import type { ContentType, Registry } from '../../lib/model/registry.js'
import { parseQuery, parseQueryString, type PopulateTree, type RawQuery } from '../../lib/query/index.js'
import { parsePopulate } from '../../lib/query/populate.js'
import { build } from '../helpers/build.js'
import { ARTICLE, AUTHOR, CATEGORY, LABEL, TAG, createFile, relationOptions } from '../fixtures/relations.js'

/**
 * `limits.maxRows` in the compiler (lib/compiler/row-budget.ts): the static bound, the probe's
 * SQL, and the property that matters: the probe counts exactly the rows the read renders, the
 * documents and every populated row, whatever limits them (filters, the caller's visible rows,
 * per-parent windows, the status, draft-only targets, components, dynamic zones, media,
 * localizations).
 */

const COMPILE = { escapeLikeWildcards: false }
const LIMITS = { defaultLimit: 25, maxLimit: 100, withCount: true }
const I18N = { locales: ['en', 'fr'], defaultLocale: 'en' }

function tree (registry: Registry, uid: string, search: string, access?: AccessScope) {
  const model = registry.get(uid) as ContentType
  const raw: RawQuery = parseQueryString(`?${search}`, { queryLength: 16384, queryParameters: 1000 })
  return { model, query: parseQuery(model, raw, { registry, limits: LIMITS, i18n: I18N, allowAllLocales: true, access }) }
}

// One app and one data set for every test below: they only read.
const { app } = await build(t, relationOptions)

t.test('the static bound: the page size times what each level keeps per parent', async (t) => {
  const { registry } = app.contentApi
  const populate = (raw: unknown): PopulateTree => parsePopulate(registry, registry.get(ARTICLE)!, raw)
  t.equal(staticRowBound(10, populate(undefined)), 10, 'no populate: the documents')
  t.equal(staticRowBound(10, populate({ category: true, cover: true, seo: { populate: { og: true } } })), 10 + 10 + 10 + 10 + 10, 'to-one levels: one each')
  t.equal(staticRowBound(10, populate({ tags: { limit: 3, populate: { articles: { limit: 2 } } } })), 10 + 30 + 60, 'limits multiply')
  t.equal(staticRowBound(10, populate({ category: { populate: { articles: { count: true } } } })), 20, 'a count is no row')
  t.equal(staticRowBound(10, populate({ tags: true })), null, 'a list without a limit: unknown')
  t.equal(staticRowBound(10, populate({ blocks: true })), null, 'a dynamic zone: unknown')
  t.equal(staticRowBound(10, populate({ sections: true })), null, 'a repeatable component: unknown')
  t.equal(staticRowBound(10, populate({ category: { populate: { articles: true } } })), null, 'unknown below a to-one')
  t.equal(staticRowBound(null, populate({ category: true })), null, 'every match (no page): unknown')
})

t.test('the probe\'s SQL: one branch per level, counted up to maxRows + 1', async (t) => {
  const { model, query } = tree(app.contentApi.registry, CATEGORY, 'populate[articles][populate][tags]=true&populate[articles][populate][category]=true&pagination[pageSize]=10')
  const probe = compileRowProbe(app.contentApi.db, model, { ...query, maxRows: 1000 }, { start: 0, limit: 10 }, COMPILE)!.compile()
  t.equal(probe.sql, 'with "page" as (select "t"."id" as "__id" from "categories" as "t" where true order by "t"."id" asc limit 10) ' +
    'select "budget"."n" as "n" from (select count(*)::int as n from (' +
    'select 1 from "page" union all ' +
    'select 1 from (select "__id" as "id" from "page") as "t", "articles" as "r1" join "articles_category_lnk" as "l2" on "l2"."article_id" = "r1"."id" ' +
    'where "l2"."category_id" = "t"."id" and "r1"."published_at" is not null union all ' +
    'select 1 from (select "__id" as "id" from "page") as "t", "articles" as "r1" join "articles_category_lnk" as "l2" on "l2"."article_id" = "r1"."id", "articles_tags_lnk" as "l4" ' +
    'where "l2"."category_id" = "t"."id" and "r1"."published_at" is not null and "l4"."article_id" = "r1"."id" union all ' +
    'select 1 from (select "__id" as "id" from "page") as "t", "articles" as "r1" join "articles_category_lnk" as "l2" on "l2"."article_id" = "r1"."id" ' +
    'where "l2"."category_id" = "t"."id" and "r1"."published_at" is not null and exists (select 1 from "categories" as "r5" join "articles_category_lnk" as "l6" on "l6"."category_id" = "r5"."id" where "l6"."article_id" = "r1"."id") ' +
    'limit 1001) as b) as "budget"')
  t.same(probe.parameters, [], 'the page size and the bound in the text (row-limit.ts)')
  t.equal(compileRowProbe(app.contentApi.db, model, { ...query, maxRows: 1000 }, { start: 0, limit: 10 }, COMPILE) === null, false)
  const flat = tree(app.contentApi.registry, CATEGORY, 'populate[articles]=true')
  t.equal(compileRowProbe(app.contentApi.db, flat.model, { ...flat.query, maxRows: 1000 }, { start: 0, limit: 25 }, COMPILE), null, 'one level deep: the probe runs inside the read')
  const bounded = tree(app.contentApi.registry, ARTICLE, 'populate[category][populate][articles][limit]=2')
  t.equal(compileRowProbe(app.contentApi.db, bounded.model, { ...bounded.query, maxRows: 1000 }, { start: 0, limit: 25 }, COMPILE), null, 'a static bound within the budget: none')
})

/** Rows of a rendered answer: each document, and each populated object or list item, at every level. */
function renderedRows (documents: unknown[], populate: PopulateTree): number {
  let rows = 0
  for (const doc of documents as Array<Record<string, unknown>>) {
    rows++
    for (const [name, node] of populate) {
      const value = doc[name]
      if (value === null || value === undefined) continue
      if (node.kind === 'dynamiczone') {
        for (const item of value as Array<Record<string, unknown>>) rows += renderedRows([item], node.components.get(item.__component as string)!.populate)
        continue
      }
      if (node.kind !== 'component' && node.kind !== 'localizations' && node.count) continue
      rows += renderedRows(Array.isArray(value) ? value : [value], node.populate)
    }
  }
  return rows
}

async function seed (app: FastifyInstance): Promise<void> {
  const docs = (uid: string) => app.contentApi.documents(uid)
  const id = async (uid: string, data: Record<string, unknown>, status: 'draft' | 'published' = 'published'): Promise<string> => (await docs(uid).create({ data, status })).documentId
  const tech = await id(CATEGORY, { name: 'Tech' })
  const food = await id(CATEGORY, { name: 'Food' })
  await id(CATEGORY, { name: 'Empty' })
  const tags = [await id(TAG, { name: 'X' }), await id(TAG, { name: 'Y' }), await id(TAG, { name: 'Z' })]
  const authors = [await id(AUTHOR, { name: 'U1' }), await id(AUTHOR, { name: 'U2' }), await id(AUTHOR, { name: 'U3' }, 'draft')]
  const label = await id(LABEL, { text: 'L en' })
  await docs(LABEL).update({ documentId: label, locale: 'fr', data: { text: 'L fr' } })
  const cover = (await createFile(app, 'a.png')).id
  const gallery = [(await createFile(app, 'b.png')).id, (await createFile(app, 'c.png')).id]
  for (let i = 0; i < 8; i++) {
    await id(ARTICLE, {
      title: `A${i}`,
      views: i,
      category: i % 3 === 2 ? null : [tech, food][i % 2],
      tags: tags.slice(0, i % 4),
      author: authors[i % 3],
      reviewers: authors.slice(0, i % 3),
      labels: i % 2 === 0 ? [label] : [],
      cover: i % 2 === 0 ? cover : null,
      gallery: gallery.slice(0, i % 3),
      seo: i % 4 === 0 ? null : { metaTitle: `S${i}`, og: { ogTitle: `O${i}` }, links: [{ url: '/a' }, { url: '/b' }].slice(0, i % 3) },
      sections: Array.from({ length: i % 3 }, (_, k) => ({ heading: `H${k}`, links: [{ url: '/s' }] })),
      blocks: [{ __component: 'content.quote', text: 'Q' }, { __component: 'content.cta', label: 'C', target: { url: '/c' } }].slice(0, i % 3)
    }, i === 7 ? 'draft' : 'published')
  }
}

t.test('the probe counts exactly the rows the read renders', async (t) => {
  await seed(app)
  const { registry, db } = app.contentApi
  // Visible rows: tags X and Y only; authors named U1 only.
  const access: AccessScope = {
    conditions: null,
    fields: null,
    drafts: true,
    key: 'row-budget-test',
    read: (uid) => uid === TAG ? { conditions: { name: { $in: ['X', 'Y'] } }, fields: null } : uid === AUTHOR ? { conditions: { name: 'U1' }, fields: null } : { conditions: null, fields: null }
  }
  const cases: Array<[string, string, AccessScope | undefined]> = [
    [CATEGORY, 'populate[articles][populate][tags][populate][articles]=true', undefined],
    [CATEGORY, 'populate[articles][populate][tags][populate][articles]=true', access],
    [CATEGORY, 'populate[articles][populate]=*', undefined],
    [CATEGORY, 'populate[articles][populate]=*&status=draft', undefined],
    [CATEGORY, 'populate[articles][filters][views][$gt]=2&populate[articles][populate][reviewers]=true', undefined],
    [CATEGORY, 'populate[articles][sort]=views:desc&populate[articles][limit]=2&populate[articles][start]=1&populate[articles][populate][tags]=true', undefined],
    [CATEGORY, 'populate[articles][populate][seo][populate][links]=true&populate[articles][populate][sections][populate]=*', undefined],
    [CATEGORY, 'populate[articles][populate][blocks][on][content.cta][populate][target]=true&populate[articles][populate][blocks][on][content.quote]=true', undefined],
    [CATEGORY, 'populate[articles][populate][gallery]=true&populate[articles][populate][cover]=true&populate[articles][populate][labels][populate]=localizations', undefined],
    [CATEGORY, 'populate[articles][populate][reviewers]=true&populate[articles][populate][author]=true', access],
    [ARTICLE, 'populate[tags][populate][articles][populate][category]=true&populate[category][populate][articles][count]=true', undefined],
    [ARTICLE, 'populate=*&pagination[pageSize]=3&pagination[page]=2', access],
    [ARTICLE, 'populate[related][populate][children]=true&populate[parent][populate][children]=true', undefined],
    [LABEL, 'populate=localizations&locale=*', undefined]
  ]
  for (const [uid, search, scope] of cases) {
    const { model, query } = tree(registry, uid, search, scope)
    const plain = await compileFindPage(db, model, query, COMPILE).executeTakeFirstOrThrow()
    const expected = renderedRows(JSON.parse(plain.data) as unknown[], query.populate)
    const spec = { ...query, maxRows: 1_000_000 }
    const probe = compileRowProbe(db, model, spec, { start: query.pagination.start, limit: query.pagination.limit }, COMPILE)
    const counted = probe === null
      ? (await compileFindPage(db, model, spec, COMPILE).executeTakeFirstOrThrow()).rows
      : (await probe.executeTakeFirstOrThrow()).n
    t.equal(counted, expected, `${uid} ${search}${scope === undefined ? '' : ' (visible rows only)'}: ${expected} rows`)
    t.ok(expected > (query.populate.size === 0 ? 0 : 3), 'a case with rows to count')
  }
})

t.test('checked inside the read: within the budget it renders, past it nothing', async (t) => {
  const { registry, db } = app.contentApi
  const { model, query } = tree(registry, ARTICLE, 'populate[tags]=true&populate[category]=true')
  const plain = await compileFindPage(db, model, query, COMPILE).executeTakeFirstOrThrow()
  const rows = renderedRows(JSON.parse(plain.data) as unknown[], query.populate)
  const within = await compileFindPage(db, model, { ...query, maxRows: rows }, COMPILE).executeTakeFirstOrThrow()
  t.same({ data: within.data, total: within.total, rows: within.rows }, { data: plain.data, total: plain.total, rows }, 'exactly the budget: the same answer, and the rows counted')
  const over = await compileFindPage(db, model, { ...query, maxRows: rows - 1 }, COMPILE).executeTakeFirstOrThrow()
  t.same({ data: over.data, total: over.total, rows: over.rows }, { data: null, total: null, rows }, 'one row over: nothing rendered, the count capped at maxRows + 1')
})
