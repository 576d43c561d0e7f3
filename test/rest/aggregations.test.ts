import t from 'tap'
import { build } from '../helpers/build.js'
import { oracleOptions } from '../fixtures/oracle/models.js'

/**
 * Aggregations (`GET /api/<plural>/aggregate`, our extension) and sorting and filtering by a
 * relation's count, through REST, on the oracle model (draft & publish, localized articles):
 *
 * | article | locale | published | kind    | views | rating | publishDate | category | authors  |
 * |---------|--------|-----------|---------|-------|--------|-------------|----------|----------|
 * | a1      | en     | yes       | news    | 10    | 4.5    | 2024-01-01  | Tech     | Ann      |
 * | a1      | fr     | yes       | news    | 1000  | -      | -           | Tech     |          |
 * | a2      | en     | yes (draft: views 25) | news | 20 | 3 | 2024-03-01 | Food    |          |
 * | a3      | en     | yes       | opinion | 5     | -      | -           | Tech     | Ann, Bob |
 * | a4      | en     | draft only| review  | 100   | -      | -           | Tech     |          |
 *
 * Category Empty has no article.
 */

const ARTICLE = 'api::article.article'
const CATEGORY = 'api::category.category'
const AUTHOR = 'api::author.author'

const { app } = await build(t, oracleOptions)
const id: Record<string, string> = {}
const create = async (uid: string, key: string, data: Record<string, unknown>, status: 'draft' | 'published' = 'published'): Promise<void> => {
  id[key] = (await app.contentApi.documents(uid).create({ data, status })).documentId
}
for (const name of ['Tech', 'Food', 'Empty']) await create(CATEGORY, name, { name })
for (const name of ['Ann', 'Bob']) await create(AUTHOR, name, { name })
await create(ARTICLE, 'a1', { title: 'a1', kind: 'news', views: 10, rating: 4.5, publishDate: '2024-01-01', category: id.Tech, authors: [id.Ann] })
await app.contentApi.documents(ARTICLE).update({ documentId: id.a1, locale: 'fr', data: { title: 'a1 fr', kind: 'news', views: 1000, category: id.Tech } })
await create(ARTICLE, 'a2', { title: 'a2', kind: 'news', views: 20, rating: 3, publishDate: '2024-03-01', category: id.Food })
await app.contentApi.documents(ARTICLE).update({ documentId: id.a2, data: { views: 25 }, status: 'draft' })
await create(ARTICLE, 'a3', { title: 'a3', kind: 'opinion', views: 5, category: id.Tech, authors: [id.Ann, id.Bob] })
await create(ARTICLE, 'a4', { title: 'a4', kind: 'review', views: 100, category: id.Tech }, 'draft')

async function get (url: string): Promise<{ status: number, body: any }> {
  const res = await app.inject({ method: 'GET', url })
  return { status: res.statusCode, body: res.json() }
}

t.test('count, sum, avg, min, max over the published documents of the default locale', async (t) => {
  const res = await get('/api/articles/aggregate?sum=views&avg[0]=views&avg[1]=rating&min=publishDate,title&max[0]=views&max[1]=publishDate')
  t.equal(res.status, 200)
  t.same(res.body, {
    data: [{
      group: {},
      count: 3,
      sum: { views: 35 },
      avg: { views: 35 / 3, rating: 3.75 },
      min: { publishDate: '2024-01-01', title: 'a1' },
      max: { views: 20, publishDate: '2024-03-01' }
    }],
    meta: {}
  })
})

t.test('groupBy a scalar field and a to-one relation, in key order', async (t) => {
  const byKind = await get('/api/articles/aggregate?groupBy=kind&sum=views')
  t.same(byKind.body.data, [
    { group: { kind: 'news' }, count: 2, sum: { views: 30 } },
    { group: { kind: 'opinion' }, count: 1, sum: { views: 5 } }
  ])
  const byCategory = await get('/api/articles/aggregate?groupBy[0]=category.name&groupBy[1]=kind&count=true')
  t.same(byCategory.body.data, [
    { group: { 'category.name': 'Food', kind: 'news' }, count: 1 },
    { group: { 'category.name': 'Tech', kind: 'news' }, count: 1 },
    { group: { 'category.name': 'Tech', kind: 'opinion' }, count: 1 }
  ])
  const byId = await get('/api/articles/aggregate?groupBy=category&count=false&max=views')
  t.same(byId.body.data.map((g: any) => [g.group.category, g.max.views, 'count' in g]).sort(), [[id.Food, 20, false], [id.Tech, 10, false]].sort(), 'category alone is its documentId')
})

t.test('the same filters, status and locale as a list', async (t) => {
  t.same((await get('/api/articles/aggregate?filters[category][name]=Tech&sum=views')).body.data, [{ group: {}, count: 2, sum: { views: 15 } }])
  t.same((await get('/api/articles/aggregate?status=draft&sum=views')).body.data, [{ group: {}, count: 4, sum: { views: 140 } }], 'drafts: a2 at 25, a4')
  t.same((await get('/api/articles/aggregate?locale=fr&sum=views')).body.data, [{ group: {}, count: 1, sum: { views: 1000 } }])
  t.same((await get('/api/articles/aggregate?locale=*&sum=views&groupBy=locale')).body.data, [
    { group: { locale: 'en' }, count: 3, sum: { views: 35 } },
    { group: { locale: 'fr' }, count: 1, sum: { views: 1000 } }
  ])
  t.same((await get('/api/articles/aggregate?filters[kind]=review')).body.data, [{ group: {}, count: 0 }], 'no match: one group of zero')
  t.same((await get('/api/articles/aggregate?filters[kind]=review&groupBy=kind')).body.data, [], 'no match, grouped: no group')
})

t.test('what is refused', async (t) => {
  for (const [query, message] of [
    ['sum=title', 'sum cannot apply to title, of type string'],
    ['avg=publishDate', 'avg cannot apply to publishDate, of type date'],
    ['min=featured', 'min cannot apply to featured, of type boolean'],
    ['sum=nope', 'Invalid key nope'],
    ['groupBy=authors', 'groupBy goes through to-one relations only: authors is not one'],
    ['groupBy=authors.name', 'groupBy goes through to-one relations only: authors is not one'],
    ['groupBy=nope', 'Invalid key nope'],
    ['count=maybe', 'Invalid count parameter. Expected true or false'],
    ['sum[a][b]=views', 'Invalid sum parameter. Expected a field name, a comma-separated list or an array of field names']
  ] as const) {
    const res = await get(`/api/articles/aggregate?${query}`)
    t.equal(res.status, 400, query)
    t.equal(res.body.error.message, message, query)
  }
})

t.test('sort and filter by a relation\'s count', async (t) => {
  const titles = async (url: string): Promise<string[]> => (await get(url)).body.data.map((d: { name?: string, title?: string }) => d.name ?? d.title)
  t.same(await titles('/api/categories?sort=articles:count:desc'), ['Tech', 'Food', 'Empty'], 'published rows only, as populate counts them: Tech 3 (a1 en and fr, a3), Food 1')
  t.same(await titles('/api/categories?sort[0][articles][$count]=asc'), ['Empty', 'Food', 'Tech'])
  t.same(await titles('/api/categories?sort=articles:count:desc&status=draft'), ['Tech', 'Food', 'Empty'], 'drafts: Tech 4')
  t.same(await titles('/api/categories?filters[articles][$count][$gt]=1'), ['Tech'])
  t.same(await titles('/api/categories?filters[articles][$count][$gt]=2&status=draft'), ['Tech'], 'a draft read counts draft articles')
  t.same(await titles('/api/categories?filters[articles][$count]=0'), ['Empty'])
  t.same(await titles('/api/categories?filters[articles][$count][$gte]=1&filters[articles][kind]=opinion'), ['Tech'], '$count next to attribute filters')
  t.same(await titles('/api/articles?sort[0]=authors:count:desc&sort[1]=title'), ['a3', 'a1', 'a2'])
  t.same(await titles('/api/articles?filters[$not][authors][$count][$lt]=1&sort=title'), ['a1', 'a3'])
  const list = await get('/api/categories?filters[articles][$count][$gt]=0&pagination[pageSize]=1')
  t.equal(list.body.meta.pagination.total, 2, 'the total runs the same condition')
  t.equal((await get('/api/categories?sort=name:count')).status, 400, 'a scalar has no count')
  t.equal((await get('/api/categories?filters[articles][$count][$gt]=x')).status, 400, 'the count compares integers')
  t.equal((await get('/api/articles?filters[seo][$count][$gt]=0')).status, 400, 'components are not counted')
})

t.test('permissions: rows the caller cannot see are not counted, fields it cannot read are refused', async (t) => {
  await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`], { conditions: { kind: 'news' }, fields: ['title', 'kind'] })
  t.teardown(async () => {
    await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`])
  })
  t.same((await get('/api/articles/aggregate?groupBy=kind')).body.data, [{ group: { kind: 'news' }, count: 2 }])
  const views = await get('/api/articles/aggregate?sum=views')
  t.equal(views.status, 400)
  t.equal(views.body.error.message, 'Invalid key views')
  t.equal((await get('/api/articles/aggregate?groupBy=category')).status, 400, 'nor grouped by')
  const counted = await get('/api/categories?filters[articles][$count]=2')
  t.same(counted.body.data.map((d: { name: string }) => d.name), ['Tech'], 'a count through a relation sees the caller\'s rows: Tech 2 (a1 en and fr; a3 is an opinion)')
  await app.contentApi.permissions.revoke('public', [`${ARTICLE}.find`])
  t.equal((await get('/api/articles/aggregate')).status, 403, 'without find, no aggregate')
})

t.test('GraphQL: <plural>_aggregate, the selection says what is computed', async (t) => {
  const gql = async (query: string, variables?: Record<string, unknown>): Promise<any> =>
    (await app.inject({ method: 'POST', url: '/graphql', payload: { query, variables } })).json()
  const grouped = await gql('{ articles_aggregate(groupBy: ["kind"]) { group count sum { views } avg { rating } max { publishDate } } }')
  t.same(grouped, {
    data: {
      articles_aggregate: [
        { group: { kind: 'news' }, count: 2, sum: { views: 30 }, avg: { rating: 3.75 }, max: { publishDate: '2024-03-01' } },
        { group: { kind: 'opinion' }, count: 1, sum: { views: 5 }, avg: { rating: null }, max: { publishDate: null } }
      ]
    }
  })
  const filtered = await gql(`query ($status: PublicationStatus, $locale: I18NLocaleCode) {
    articles_aggregate(filters: { category: { name: { eq: "Tech" } } }, status: $status, locale: $locale) { ...values }
  }
  fragment values on ArticleAggregate { count sum { views } }`, { status: 'DRAFT', locale: 'en' })
  t.same(filtered.data.articles_aggregate, [{ count: 3, sum: { views: 115 } }], 'filters, status and fragments: a1, a3, a4 drafts')
  const fr = await gql('{ articles_aggregate(locale: "fr") { count min { title } } }')
  t.same(fr.data.articles_aggregate, [{ count: 1, min: { title: 'a1 fr' } }])
  const wrong = await gql('{ articles_aggregate(groupBy: ["authors"]) { count } }')
  t.match(wrong.errors?.[0]?.message, /to-one relations only/)
  const counted = await gql('{ categories(filters: { articles_count: { gt: 0 } }, sort: ["articles:count:desc"]) { data { attributes { name } } } }')
  t.same(counted.data.categories.data.map((c: any) => c.attributes.name), ['Tech', 'Food'], '<relation>_count filters, and sort takes REST\'s count form')
  const both = await gql('{ categories(filters: { articles_count: { gte: 1 }, articles: { kind: { eq: "opinion" } } }) { data { attributes { name } } } }')
  t.same(both.data.categories.data.map((c: any) => c.attributes.name), ['Tech'])
})

t.test('dynamic-zone filters, per locale, in a list and in an aggregate', async (t) => {
  const docs = app.contentApi.documents(ARTICLE)
  await docs.update({ documentId: id.a1, data: { blocks: [{ __component: 'shared.quote', text: 'Hello there' }] } })
  await docs.update({ documentId: id.a1, locale: 'fr', data: { blocks: [{ __component: 'shared.quote', text: 'Bonjour' }] } })
  const on = 'filters[blocks][on][shared.quote][text][$containsi]'
  const titles = async (query: string): Promise<string[]> => (await get(`/api/articles?${query}`)).body.data.map((d: { title: string }) => d.title)
  t.same(await titles(`${on}=bonjour&locale=fr`), ['a1 fr'])
  t.same(await titles(`${on}=bonjour`), [], 'the default locale\'s items')
  t.same(await titles(`${on}=o&locale=*&sort=title`), ['a1', 'a1 fr'])
  t.same((await get(`/api/articles/aggregate?${on}=hello&sum=views`)).body.data, [{ group: {}, count: 1, sum: { views: 10 } }])
  const gql = await app.inject({
    method: 'POST',
    url: '/graphql',
    payload: { query: '{ articles_aggregate(locale: "fr", filters: { blocks: { on: { ComponentSharedQuote: { text: { containsi: "bonjour" } } } } }) { count } }' }
  })
  t.same(gql.json(), { data: { articles_aggregate: [{ count: 1 }] } })
})

t.test('GraphQL: a field the caller may not read is refused, its rows are not counted', async (t) => {
  await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`], { conditions: { kind: 'opinion' }, fields: ['title', 'kind'] })
  t.teardown(async () => {
    await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`])
  })
  const gql = async (query: string): Promise<any> => (await app.inject({ method: 'POST', url: '/graphql', payload: { query } })).json()
  t.same((await gql('{ articles_aggregate { count } }')).data.articles_aggregate, [{ count: 1 }])
  const refused = await gql('{ articles_aggregate { sum { views } } }')
  t.equal(refused.errors?.[0]?.message, 'Invalid key views')
})
