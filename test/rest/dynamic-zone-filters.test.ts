import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/build.js'
import { ARTICLE, openAccess, relationOptions } from '../fixtures/relations.js'

/**
 * Filters inside dynamic zones (`filters[blocks][on][<uid>]...`, our extension) and through
 * components at any depth, in REST and GraphQL, on the relations fixture:
 *
 * | article | blocks                                            | seo / sections                  |
 * |---------|---------------------------------------------------|---------------------------------|
 * | A1      | quote "Hello world" by Ann, cta Go -> /go          | seo.og "OG one", sections.links /deep |
 * | A2      | quote "Another quote" by Bob (draft: "Hello draft") | seo.links /a                    |
 * | A3      | cta Buy -> /buy                                    |                                 |
 * | A4      | -                                                 |                                 |
 * | D1      | quote "hello unpublished" (a draft, never published) |                               |
 */

interface Data { app: FastifyInstance, id: Record<string, string> }

async function setup (): Promise<Data> {
  const { app } = await build(t, relationOptions)
  await openAccess(app)
  const docs = app.contentApi.documents(ARTICLE)
  const id: Record<string, string> = {}
  const create = async (title: string, data: Record<string, unknown>, status: 'draft' | 'published' = 'published'): Promise<void> => {
    id[title] = (await docs.create({ data: { title, ...data }, status })).documentId
  }
  await create('A1', {
    blocks: [{ __component: 'content.quote', text: 'Hello world', by: 'Ann' }, { __component: 'content.cta', label: 'Go', target: { url: '/go' } }],
    seo: { metaTitle: 'S1', og: { ogTitle: 'OG one' } },
    sections: [{ heading: 'H1', links: [{ url: '/deep' }] }]
  })
  await create('A2', { blocks: [{ __component: 'content.quote', text: 'Another quote', by: 'Bob' }], seo: { metaTitle: 'S2', links: [{ url: '/a' }] } })
  await docs.update({ documentId: id.A2, data: { blocks: [{ __component: 'content.quote', text: 'Hello draft', by: 'Bob' }] }, status: 'draft' })
  await create('A3', { blocks: [{ __component: 'content.cta', label: 'Buy', target: { url: '/buy' } }] })
  await create('A4', {})
  await create('D1', { blocks: [{ __component: 'content.quote', text: 'hello unpublished' }] }, 'draft')
  return { app, id }
}

const { app } = await setup()

async function titles (query: string): Promise<{ status: number, titles: string[], total: number, body: any }> {
  const res = await app.inject({ method: 'GET', url: `/api/articles?sort=title&${query}` })
  const body = res.json()
  return { status: res.statusCode, titles: (body.data ?? []).map((d: { title: string }) => d.title), total: body.meta?.pagination?.total, body }
}

const ON = 'filters[blocks][on]'

t.test('REST: a dynamic-zone item of one component type, with its attribute filters', async (t) => {
  const hello = await titles(`${ON}[content.quote][text][$containsi]=hello`)
  t.same([hello.status, hello.titles, hello.total], [200, ['A1'], 1])
  t.same((await titles(`${ON}[content.quote][text][$containsi]=hello&status=draft`)).titles, ['A1', 'A2', 'D1'], 'drafts are matched by their own items')
  t.same((await titles(`${ON}[content.cta][label][$containsi]=hello`)).titles, [], 'the quote is not a cta')
  t.same((await titles(`${ON}[content.cta][target][url][$eq]=/buy`)).titles, ['A3'], 'a component inside an item')
  t.same((await titles(`${ON}[content.quote][$or][0][by]=Ann&${ON}[content.quote][$or][1][by]=Bob`)).titles, ['A1', 'A2'], '$or inside a component')
  t.same((await titles(`${ON}[content.quote][$not][by]=Ann`)).titles, ['A2'], '$not inside: some quote not by Ann')
  t.same((await titles(`${ON}[content.quote][by]=Ann&${ON}[content.cta][label]=Go`)).titles, ['A1'], 'two types under one on are AND-ed')
  t.same((await titles('filters[blocks][$or][0][on][content.quote][by]=Bob&filters[blocks][$or][1][on][content.cta][label]=Buy')).titles, ['A2', 'A3'], '$or of on conditions')
  t.same((await titles('filters[blocks][$not][on][content.quote][text][$containsi]=hello')).titles, ['A2', 'A3', 'A4'], '$not of an on condition')
  t.same((await titles(`${ON}[content.quote][$null]=true`)).titles, ['A3', 'A4'], 'no item of the type at all')
  t.same((await titles(`${ON}[content.quote][id][$notNull]=true`)).titles, ['A1', 'A2'], 'some item of the type')
  const page = await titles(`${ON}[content.quote][id][$notNull]=true&pagination[pageSize]=1`)
  t.same([page.titles, page.total, page.body.meta.pagination.pageCount], [['A1'], 2, 2], 'the total counts documents, not items')
})

t.test('REST: components at any depth', async (t) => {
  t.same((await titles('filters[seo][og][ogTitle][$eq]=OG one')).titles, ['A1'])
  t.same((await titles('filters[seo][links][url][$eq]=/a')).titles, ['A2'])
  t.same((await titles('filters[sections][links][url][$startsWith]=/de')).titles, ['A1'], 'a repeatable inside a repeatable')
  t.same((await titles('filters[$or][0][seo][metaTitle]=S2&filters[$or][1][blocks][on][content.cta][target][url]=/buy')).titles, ['A2', 'A3'])
})

t.test('REST: what stays a 400', async (t) => {
  for (const [query, message] of [
    ['filters[blocks][text][$eq]=x', 'Invalid key blocks'],
    ['filters[blocks][$null]=true', 'Invalid key blocks'],
    ['filters[blocks]=1', 'Invalid key blocks'],
    [`${ON}[shared.link][url]=x`, 'Invalid key shared.link'],
    [`${ON}[content.quote][nope]=x`, 'Invalid key nope'],
    [`${ON}=x`, 'Invalid key on'],
    [`${ON}[content.quote][text][$nope]=x`, 'Invalid key $nope']
  ] as const) {
    const res = await app.inject({ method: 'GET', url: `/api/articles?${query}` })
    t.equal(res.statusCode, 400, query)
    t.match(res.json().error.message, new RegExp(`^${message.replace(/\$/g, '\\$')}( at |$)`), query)
  }
})

t.test('GraphQL: blocks: { on: { ComponentContentQuote: ... } }', async (t) => {
  const gql = async (filters: string, extra = ''): Promise<any> => {
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: `{ articles(filters: ${filters}, sort: "title"${extra}) { data { attributes { title } } meta { pagination { total } } } }` }
    })
    const body = res.json()
    if (body.errors !== undefined) return body
    return { titles: body.data.articles.data.map((a: any) => a.attributes.title), total: body.data.articles.meta.pagination.total }
  }
  const hello = await gql('{ blocks: { on: { ComponentContentQuote: { text: { containsi: "hello" } } } } }')
  t.same(hello, { titles: ['A1'], total: 1 })
  const drafts = await gql('{ blocks: { on: { ComponentContentQuote: { text: { containsi: "hello" } } } } }', ', status: DRAFT')
  t.same(drafts.titles, ['A1', 'A2', 'D1'])
  const nested = await gql('{ blocks: { or: [{ on: { ComponentContentCta: { target: { url: { eq: "/buy" } } } } }, { not: { on: { ComponentContentQuote: { text: { notNull: true } } } } }] } }')
  t.same(nested.titles, ['A3', 'A4'])
  const deep = await gql('{ sections: { links: { url: { eq: "/deep" } } } }')
  t.same(deep.titles, ['A1'])
  const wrong = await gql('{ blocks: { on: { ComponentSharedLink: { url: { eq: "x" } } } } }')
  t.ok(wrong.errors?.length > 0, 'a component the zone does not allow is not in the input type')
})

t.test('a field-level permission without the zone refuses the filter', async (t) => {
  await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`], { fields: ['title'] })
  t.teardown(async () => { await openAccess(app) })
  const res = await app.inject({ method: 'GET', url: `/api/articles?${ON}[content.quote][text][$containsi]=hello` })
  t.equal(res.statusCode, 400)
  t.equal(res.json().error.message, 'Invalid key blocks')
})
