import t from 'tap'
import qs from 'qs'
import { isEnumType, isInputObjectType, isObjectType, isScalarType, isUnionType, type GraphQLSchema } from 'graphql'
import { buildGraphql, FULL_TOKEN, READ_TOKEN, seed } from './helpers.js'

/**
 * The default shape, the spec's "GraphQL types generated per content type" and "GraphQL
 * endpoint" tables, type by type and operation by operation, on the oracle model and data.
 */
const { app, seeded, gql } = await buildGraphql(t, undefined)
const schema = app.contentApi.graphql!.schema as GraphQLSchema

function fieldType (type: string, field: string): string {
  const named = schema.getType(type)
  if (!isObjectType(named) && !isInputObjectType(named)) throw new Error(`${type} is not an object`)
  const f = named.getFields()[field]
  return f === undefined ? 'absent' : String(f.type)
}

function args (type: string, field: string): Record<string, string> {
  const named = schema.getType(type)
  if (!isObjectType(named)) throw new Error(`${type} is not an object type`)
  return Object.fromEntries(named.getFields()[field].args.map((a) => [a.name, `${String(a.type)}${a.defaultValue === undefined ? '' : ` = ${JSON.stringify(a.defaultValue)}`}`]))
}

t.test('generated types per content type (the spec table)', async (t) => {
  for (const name of ['Article', 'Category', 'Author', 'Homepage', 'Secret']) {
    for (const suffix of ['', 'Entity', 'EntityResponse', 'EntityResponseCollection', 'RelationResponseCollection']) {
      t.ok(isObjectType(schema.getType(`${name}${suffix}`)), `${name}${suffix} is an object type`)
    }
    t.ok(isInputObjectType(schema.getType(`${name}FiltersInput`)), `${name}FiltersInput`)
    t.ok(isInputObjectType(schema.getType(`${name}Input`)), `${name}Input`)
    t.equal(fieldType(`${name}Entity`, 'id'), 'ID')
    t.equal(fieldType(`${name}Entity`, 'documentId'), 'ID')
    t.equal(fieldType(`${name}Entity`, 'attributes'), name)
    t.equal(fieldType(`${name}EntityResponse`, 'data'), `${name}Entity`)
    t.equal(fieldType(`${name}EntityResponseCollection`, 'data'), `[${name}Entity!]!`)
    t.equal(fieldType(`${name}EntityResponseCollection`, 'meta'), 'ResponseCollectionMeta!')
    t.equal(fieldType(`${name}RelationResponseCollection`, 'data'), `[${name}Entity!]!`)
    for (const ts of ['createdAt', 'updatedAt', 'publishedAt']) {
      t.equal(fieldType(name, ts), 'DateTime', `${name}.${ts}`)
      t.equal(fieldType(`${name}FiltersInput`, ts), 'DateTimeFilterInput', `${name}FiltersInput.${ts}`)
      t.equal(fieldType(`${name}Input`, ts), 'DateTime', `${name}Input.${ts}`)
    }
    t.equal(fieldType(`${name}FiltersInput`, 'and'), `[${name}FiltersInput]`)
    t.equal(fieldType(`${name}FiltersInput`, 'or'), `[${name}FiltersInput]`)
    t.equal(fieldType(`${name}FiltersInput`, 'not'), `${name}FiltersInput`)
    t.equal(fieldType(`${name}FiltersInput`, 'id'), 'IDFilterInput', 'id filters on the documentId')
    t.equal(fieldType(name, 'documentId'), 'ID!')
  }
  t.equal(fieldType('ResponseCollectionMeta', 'pagination'), 'Pagination!')
  for (const f of ['page', 'pageSize', 'pageCount', 'total']) t.equal(fieldType('Pagination', f), 'Int!')
  t.same(Object.keys((schema.getType('PaginationArg') as any).getFields()), ['page', 'pageSize', 'start', 'limit', 'after', 'before'])
  const state = schema.getType('PublicationState')
  t.ok(isEnumType(state) && state.getValues().map((v) => v.name).join() === 'LIVE,PREVIEW', 'enum PublicationState { LIVE PREVIEW }')
  for (const scalar of ['DateTime', 'Date', 'Time', 'JSON', 'Long']) t.ok(isScalarType(schema.getType(scalar)), `scalar ${scalar}`)
})

t.test('attributes, relations, media, components and dynamic zones in the output types', async (t) => {
  const expected: Record<string, string> = {
    title: 'String!',
    slug: 'String',
    body: 'JSON',
    summary: 'String',
    views: 'Int',
    rating: 'Float',
    featured: 'Boolean',
    publishDate: 'Date',
    tags: 'JSON',
    kind: 'ENUM_ARTICLE_KIND',
    category: 'CategoryEntityResponse',
    authors: 'AuthorRelationResponseCollection',
    cover: 'UploadFileEntityResponse',
    seo: 'ComponentSharedSeo',
    blocks: '[ArticleBlocksDynamicZone]',
    locale: 'String',
    localizations: 'ArticleRelationResponseCollection'
  }
  for (const [field, type] of Object.entries(expected)) t.equal(fieldType('Article', field), type, `Article.${field}: ${type}`)
  t.same(args('Article', 'authors'), { filters: 'AuthorFiltersInput', pagination: 'PaginationArg = {}', sort: '[String] = []' }, 'to-many relations take filters, pagination and sort')
  t.equal(fieldType('Author', 'internalNote'), 'absent', 'private attributes are not output')
  t.equal(fieldType('AuthorFiltersInput', 'internalNote'), 'absent', 'nor filtered')
  const union = schema.getType('ArticleBlocksDynamicZone')
  t.ok(isUnionType(union) && union.getTypes().map((u) => u.name).join() === 'ComponentSharedQuote,ComponentSharedRichText,Error', 'dynamic zone union')
  t.equal(fieldType('ComponentSharedSeo', 'id'), 'ID!')
  const input: Record<string, string> = {
    title: 'String', views: 'Int', kind: 'ENUM_ARTICLE_KIND', category: 'ID', authors: '[ID]', cover: 'ID', seo: 'ComponentSharedSeoInput', blocks: '[ArticleBlocksDynamicZoneInput!]'
  }
  for (const [field, type] of Object.entries(input)) t.equal(fieldType('ArticleInput', field), type, `ArticleInput.${field}: ${type}`)
  const filters: Record<string, string> = {
    documentId: 'IDFilterInput',
    title: 'StringFilterInput',
    body: 'JSONFilterInput',
    views: 'IntFilterInput',
    rating: 'FloatFilterInput',
    featured: 'BooleanFilterInput',
    publishDate: 'DateFilterInput',
    kind: 'StringFilterInput',
    category: 'CategoryFiltersInput',
    authors: 'AuthorFiltersInput',
    seo: 'ComponentSharedSeoFiltersInput',
    blocks: 'ArticleBlocksDynamicZoneFiltersInput',
    locale: 'StringFilterInput'
  }
  for (const [field, type] of Object.entries(filters)) t.equal(fieldType('ArticleFiltersInput', field), type, `ArticleFiltersInput.${field}`)
  t.equal(fieldType('ArticleBlocksDynamicZoneFiltersInput', 'on'), 'ArticleBlocksDynamicZoneOnFiltersInput', 'a dynamic zone filters through on')
  t.equal(fieldType('ArticleBlocksDynamicZoneOnFiltersInput', 'ComponentSharedQuote'), 'ComponentSharedQuoteFiltersInput', 'one field per member, by type name')
  for (const scalar of ['ID', 'String', 'Int', 'Long', 'Float', 'Boolean', 'Date', 'DateTime', 'Time', 'JSON']) {
    const input = schema.getType(`${scalar}FilterInput`)
    t.ok(isInputObjectType(input), `${scalar}FilterInput`)
    const fields = Object.keys((input as any).getFields())
    for (const op of ['and', 'or', 'not', 'eq', 'eqi', 'ne', 'nei', 'startsWith', 'endsWith', 'contains', 'notContains', 'containsi', 'notContainsi', 'gt', 'gte', 'lt', 'lte', 'null', 'notNull', 'in', 'notIn', 'between']) {
      t.ok(fields.includes(op), `${scalar}FilterInput.${op}`)
    }
  }
})

t.test('operations per content type (the spec table), with status and locale', async (t) => {
  t.same(args('Query', 'article'), { id: 'ID', status: 'PublicationStatus', locale: 'I18NLocaleCode' })
  t.same(args('Query', 'articles'), {
    filters: 'ArticleFiltersInput', pagination: 'PaginationArg = {}', sort: '[String] = []', publicationState: 'PublicationState = "LIVE"', status: 'PublicationStatus', locale: 'I18NLocaleCode'
  })
  t.equal(fieldType('Query', 'article'), 'ArticleEntityResponse')
  t.equal(fieldType('Query', 'articles'), 'ArticleEntityResponseCollection')
  t.same(args('Mutation', 'createArticle'), { data: 'ArticleInput!', status: 'PublicationStatus', locale: 'I18NLocaleCode' })
  t.same(args('Mutation', 'updateArticle'), { id: 'ID!', data: 'ArticleInput!', status: 'PublicationStatus', locale: 'I18NLocaleCode' })
  t.same(args('Mutation', 'deleteArticle'), { id: 'ID!', locale: 'I18NLocaleCode' })
  for (const op of ['createArticle', 'updateArticle', 'deleteArticle']) t.equal(fieldType('Mutation', op), 'ArticleEntityResponse')
  t.equal(fieldType('Query', 'homepage'), 'HomepageEntityResponse', 'single types: their query')
  t.equal(fieldType('Mutation', 'updateHomepage'), 'HomepageEntityResponse', 'update')
  t.equal(fieldType('Mutation', 'deleteHomepage'), 'HomepageEntityResponse', 'and delete')
  t.equal(fieldType('Mutation', 'createHomepage'), 'absent', 'but no create')
  t.equal(fieldType('Query', 'homepages'), 'absent')
  t.equal(fieldType('Query', 'uploadFiles'), 'UploadFileEntityResponseCollection', 'files can be listed')
  t.equal(fieldType('Mutation', 'createUploadFile'), 'absent', 'not created through Shadow CRUD')
  t.equal(fieldType('Query', 'apiTokens'), 'absent', 'API tokens never appear')
  t.equal(fieldType('Mutation', 'login'), 'UsersPermissionsLoginPayload!')
  t.equal(fieldType('Mutation', 'register'), 'UsersPermissionsLoginPayload!')
  t.equal(fieldType('Query', 'me'), 'UsersPermissionsMe')
})

const TITLE = 'Quick Guide to Node 000'

t.test('article(id) round-trips the entity id (the documentId)', async (t) => {
  const list = await gql('{ articles(filters: { title: { eq: "Quick Guide to Node 000" } }) { data { id documentId attributes { title } } } }')
  const entity = list.body.data.articles.data[0]
  t.equal(entity.id, seeded.articles[0], 'the entity id is the documentId')
  t.equal(entity.documentId, entity.id)
  const one = await gql('query($id: ID) { article(id: $id) { data { id attributes { title documentId } } } }', { id: entity.id })
  t.same(one.body, { data: { article: { data: { id: entity.id, attributes: { title: TITLE, documentId: entity.id } } } } })
  const unknown = await gql('{ article(id: "doesnotexist000000000000") { data { id } } }')
  t.same(unknown.body, { data: { article: { data: null } } }, 'an unknown document is { data: null }')
  const none = await gql('{ article { data { id } } }')
  t.same(none.body, { data: { article: { data: null } } }, 'no id: { data: null }')
})

t.test('relations, media, components, dynamic zones and localizations', async (t) => {
  const res = await gql(`{ articles(sort: "title", pagination: { pageSize: 3 }) { data { attributes {
    title category { data { id attributes { name } } } authors(sort: "name:desc", pagination: { limit: 1 }) { data { attributes { name } } }
    cover { data { attributes { name mime } } } seo { metaTitle }
    blocks { __typename ... on ComponentSharedQuote { text author } ... on ComponentSharedRichText { body } }
    localizations { data { attributes { title locale } } }
  } } } }`)
  t.equal(res.status, 200)
  const [a, b, c] = res.body.data.articles.data.map((d: any) => d.attributes)
  t.equal(a.title, 'Brave Look at node Streams 025')
  t.same(a.category.data.attributes, { name: 'Technology' })
  t.same(a.authors, { data: [] }, 'an empty to-many is { data: [] }')
  t.same(b.category, { data: null }, 'an empty to-one is { data: null }')
  t.same(b.authors.data, [{ attributes: { name: 'Grace Lee' } }], 'to-many arguments: sorted, limited per parent')
  t.same(a.cover.data.attributes, { name: 'blue.png', mime: 'image/png' }, 'media as UploadFileEntityResponse')
  t.same(a.blocks, [{ __typename: 'ComponentSharedQuote', text: 'Quote number 25', author: 'Farid Haddad' }], 'dynamic zone members by __typename')
  t.same(c.seo, { metaTitle: 'SEO Brave Recipe for Bread 015' }, 'component')
  t.same(c.localizations, { data: [] })
  const fr = await gql('{ articles(locale: "fr", sort: "title", pagination: { pageSize: 1 }) { data { attributes { title locale localizations { data { attributes { locale } } } } } } }')
  t.same(fr.body.data.articles.data[0].attributes, { title: 'FR Hidden Guide to Node 012', locale: 'fr', localizations: { data: [{ attributes: { locale: 'en' } }] } }, 'locale and localizations')
  const homepage = await gql('{ homepage { data { attributes { title featuredArticles(sort: "title") { data { attributes { title } } } } } } }')
  t.same(homepage.body.data.homepage.data.attributes.featuredArticles.data.map((d: any) => d.attributes.title),
    ['Deep Look at node Streams 001', 'Modern Recipe for Bread 003', 'Quick Guide to Node 000'], 'single type with a relation')
})

t.test('one attribute read with several argument sets in one query', async (t) => {
  const res = await gql(`{ categories(sort: "name", pagination: { limit: 1 }) { data { attributes { name
    first: articles(sort: "title", pagination: { limit: 1 }) { data { attributes { title } } }
    last: articles(sort: "title:desc", pagination: { limit: 1 }) { data { attributes { title } } }
    again: articles(sort: "title", pagination: { limit: 1 }) { data { id } }
  } } } }`)
  const culture = res.body.data.categories.data[0].attributes
  t.equal(culture.name, 'Culture')
  t.same(culture.first.data.map((d: any) => d.attributes.title), ['FR Simple Guide to Node 024'])
  t.same(culture.last.data.map((d: any) => d.attributes.title), ['Wild Recipe for Bread 039'])
  t.equal(culture.again.data.length, 1, 'the same arguments share the first slot')
})

t.test('pagination, sort, publicationState, status and locale arguments', async (t) => {
  const page = await gql('{ articles(sort: ["views:desc", "title"], pagination: { page: 2, pageSize: 3 }) { data { attributes { views } } meta { pagination { page pageSize pageCount total } } } }')
  t.same(page.body.data.articles.meta.pagination, { page: 2, pageSize: 3, pageCount: 17, total: 50 })
  const views = page.body.data.articles.data.map((d: any) => d.attributes.views)
  t.same(views, [...views].sort((x: number, y: number) => y - x), 'sorted by views descending')
  const offset = await gql('{ articles(pagination: { start: 48, limit: 5 }) { data { id } meta { pagination { page pageSize pageCount total } } } }')
  t.equal(offset.body.data.articles.data.length, 2)
  t.same(offset.body.data.articles.meta.pagination, { page: 10, pageSize: 5, pageCount: 10, total: 50 })
  const defaults = await gql('{ articles { data { id } meta { pagination { pageSize } } } }')
  t.equal(defaults.body.data.articles.data.length, 10, 'default page size 10')
  const all = await gql('{ articles(pagination: { limit: -1 }) { data { id } meta { pagination { page pageSize pageCount total } } } }')
  t.equal(all.body.data.articles.data.length, 50, 'limit -1: every document')
  t.same(all.body.data.articles.meta.pagination, { page: 1, pageSize: 50, pageCount: 1, total: 50 })
  const mixed = await gql('{ articles(pagination: { page: 1, limit: 5 }) { data { id } } }')
  t.equal(mixed.body.errors[0].extensions.code, 'STRAPI_PAGINATION_ERROR')
  const live = await gql('{ articles(publicationState: LIVE, filters: { title: { contains: "edited" } }) { data { id } } }')
  t.same(live.body.data.articles.data, [], 'LIVE: published versions')
  const preview = await gql('{ articles(publicationState: PREVIEW, filters: { title: { contains: "edited" } }) { data { attributes { title publishedAt } } } }')
  t.same(preview.body.data.articles.data.map((d: any) => d.attributes), [
    { title: 'Hidden Tour of Paris 002 (edited draft)', publishedAt: null }, { title: 'Hidden Tour of Paris 032 (edited draft)', publishedAt: null }
  ], 'PREVIEW: the latest drafts')
  const status = await gql('{ articles(status: DRAFT, publicationState: LIVE, filters: { title: { contains: "edited" } }) { meta { pagination { total } } } }')
  t.equal(status.body.data.articles.meta.pagination.total, 2, 'status wins over publicationState')
  const draftOnly = await gql('query($id: ID) { a: article(id: $id) { data { id } } b: article(id: $id, status: DRAFT) { data { attributes { title } } } }', { id: seeded.articles[5] })
  t.same(draftOnly.body.data, { a: { data: null }, b: { data: { attributes: { title: 'Brave History of Science 005' } } } })
  const locale = await gql('{ articles(locale: "fr") { meta { pagination { total } } } }')
  t.equal(locale.body.data.articles.meta.pagination.total, 15, 'fifteen fr articles')
  const badLocale = await gql('{ articles(locale: "de") { data { id } } }')
  t.equal(badLocale.status, 400, 'an unknown locale fails validation')
})

t.test('every filter input, with the same answers as REST filters', async (t) => {
  const count = async (filters: string): Promise<number> => {
    const res = await gql(`{ articles(filters: ${filters}, pagination: { limit: -1 }) { meta { pagination { total } } } }`)
    if (res.body.errors !== undefined) throw new Error(JSON.stringify(res.body.errors))
    return res.body.data.articles.meta.pagination.total
  }
  const rest = async (filters: Record<string, unknown>): Promise<number> => {
    const res = await app.inject(`/api/articles?${qs.stringify({ filters, pagination: { pageSize: 1 } })}`)
    return res.json().meta.pagination.total
  }
  const cases: Array<[string, Record<string, unknown>]> = [
    ['{ title: { eq: "Quick Guide to Node 000" } }', { title: { $eq: 'Quick Guide to Node 000' } }],
    ['{ title: { eqi: "QUICK GUIDE TO NODE 000" } }', { title: { $eqi: 'QUICK GUIDE TO NODE 000' } }],
    ['{ title: { ne: "Quick Guide to Node 000" } }', { title: { $ne: 'Quick Guide to Node 000' } }],
    ['{ title: { nei: "QUICK GUIDE TO NODE 000" } }', { title: { $nei: 'QUICK GUIDE TO NODE 000' } }],
    ['{ title: { startsWith: "Wild", endsWith: "9" } }', { title: { $startsWith: 'Wild', $endsWith: '9' } }],
    ['{ title: { contains: "node" } }', { title: { $contains: 'node' } }],
    ['{ title: { containsi: "NODE", notContains: "Streams" } }', { title: { $containsi: 'NODE', $notContains: 'Streams' } }],
    ['{ title: { notContainsi: "node" } }', { title: { $notContainsi: 'node' } }],
    ['{ views: { gt: 400, lte: 450 } }', { views: { $gt: 400, $lte: 450 } }],
    ['{ views: { gte: 400, lt: 450 } }', { views: { $gte: 400, $lt: 450 } }],
    ['{ views: { between: [100, 300] }, kind: { in: ["review"] } }', { views: { $between: [100, 300] }, kind: { $in: ['review'] } }],
    ['{ kind: { notIn: ["news", "opinion"] } }', { kind: { $notIn: ['news', 'opinion'] } }],
    ['{ summary: { null: true } }', { summary: { $null: true } }],
    ['{ summary: { notNull: true } }', { summary: { $notNull: true } }],
    ['{ rating: { gte: 4.5 }, featured: { eq: true } }', { rating: { $gte: 4.5 }, featured: { $eq: true } }],
    ['{ publishDate: { lt: "2024-02-01" } }', { publishDate: { $lt: '2024-02-01' } }],
    ['{ createdAt: { lt: "2100-01-01T00:00:00.000Z" } }', { createdAt: { $lt: '2100-01-01T00:00:00.000Z' } }],
    ['{ tags: { notNull: true } }', { tags: { $notNull: true } }],
    ['{ locale: { eq: "en" } }', { locale: { $eq: 'en' } }],
    ['{ and: [{ kind: { eq: "news" } }, { featured: { eq: true } }] }', { $and: [{ kind: { $eq: 'news' } }, { featured: { $eq: true } }] }],
    ['{ or: [{ kind: { eq: "news" } }, { not: { views: { lt: 400 } } }] }', { $or: [{ kind: { $eq: 'news' } }, { $not: { views: { $lt: 400 } } }] }],
    ['{ not: { or: [{ kind: { eq: "news" } }, { kind: { eq: "opinion" } }] } }', { $not: { $or: [{ kind: { $eq: 'news' } }, { kind: { $eq: 'opinion' } }] } }],
    ['{ category: { name: { eq: "Travel" } } }', { category: { name: { $eq: 'Travel' } } }],
    ['{ authors: { name: { eq: "Alice Martin" } } }', { authors: { name: { $eq: 'Alice Martin' } } }],
    ['{ seo: { metaTitle: { startsWith: "SEO" } } }', { seo: { metaTitle: { $startsWith: 'SEO' } } }],
    ['{ title: { not: { contains: "node" } } }', { title: { $not: { $contains: 'node' } } }],
    ['{ title: { or: ["Quick Guide to Node 000", "Deep Look at node Streams 001"] } }', { title: { $or: ['Quick Guide to Node 000', 'Deep Look at node Streams 001'] } }]
  ]
  for (const [filters, strapi] of cases) {
    const expected = await rest(strapi)
    t.ok((expected > 0 && expected < 50) || ['notNull', 'createdAt', 'locale'].some((k) => filters.includes(k)), `${filters} selects something (${expected})`)
    t.equal(await count(filters), expected, filters)
  }
  // A JSON attribute's operators take any JSON, an empty list too: an OR over no element, which
  // Strapi's query builder drops (it was `()` in the SQL, an INTERNAL_SERVER_ERROR).
  const views = await rest({ views: { $gt: 400 } })
  t.ok(views > 0 && views < await rest({}), 'views > 400 selects some articles')
  t.equal(await count('{ tags: { eq: [] }, views: { gt: 400 } }'), views, 'eq: [] on a JSON attribute is no condition')
  t.equal(await count('{ tags: { nei: [], ne: [[]] }, views: { gt: 400 } }'), views, 'nor is nei: [], nor a list of empty lists')
  const byId = await gql('query($id: ID) { articles(filters: { id: { eq: $id } }) { data { attributes { title } } } }', { id: seeded.articles[0] })
  t.same(byId.body.data.articles.data, [{ attributes: { title: TITLE } }], 'id filters on the documentId')
  const byDocumentId = await gql('query($id: ID) { articles(filters: { documentId: { in: [$id] } }) { data { attributes { title } } } }', { id: seeded.articles[0] })
  t.same(byDocumentId.body.data.articles.data, [{ attributes: { title: TITLE } }])
  const bigint = await gql('{ usersPermissionsUsers(filters: { id: { null: false } }) { data { id } } }', undefined, FULL_TOKEN)
  t.equal(bigint.status, 200, 'plugin types have filters too')
})

t.test('access: the same permission check as REST, Strapi\'s FORBIDDEN answers', async (t) => {
  const forbidden = await gql('{ secrets { data { id } } }')
  t.equal(forbidden.status, 200)
  t.same(forbidden.body.errors[0], {
    message: 'Forbidden access', path: ['secrets'], extensions: { code: 'FORBIDDEN', error: { name: 'ForbiddenError', message: 'Forbidden access', details: {} } }
  })
  t.same(forbidden.body.data, { secrets: null })
  const token = await gql('{ secrets(sort: "label") { data { attributes { label value } } } }', undefined, FULL_TOKEN)
  t.same(token.body.data.secrets.data.map((d: any) => d.attributes), [{ label: 'alpha', value: 'v1' }, { label: 'beta', value: 'v2' }])
  const read = await gql('mutation { createArticle(data: { title: "nope" }) { data { id } } }', undefined, READ_TOKEN)
  t.equal(read.body.errors[0].extensions.code, 'FORBIDDEN', 'a read-only token cannot create')
  const invalid = await app.inject({ method: 'POST', url: '/graphql', headers: { authorization: 'Bearer nope' }, payload: { query: '{ articles { data { id } } }' } })
  t.equal(invalid.statusCode, 401, 'an invalid token is the REST 401')
  t.same(invalid.json(), { data: null, error: { status: 401, name: 'UnauthorizedError', message: 'Missing or invalid credentials', details: {} } })
  const populate = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ homepage { data { attributes { title } } } }' } })
  t.equal(populate.statusCode, 200)
})

t.test('mutations: create, update, delete, drafts, single types', async (t) => {
  const created = await gql(`mutation($data: ArticleInput!) { createArticle(data: $data) { data { id attributes {
    title views publishedAt category { data { id } } authors(sort: "name") { data { attributes { name } } } seo { metaTitle } blocks { ... on ComponentSharedQuote { text } }
  } } } }`, {
    data: { title: 'GQL E', slug: 'gql-e', views: 3, category: seeded.categories[1], authors: [seeded.authors[0], seeded.authors[2]], seo: { metaTitle: 'm' }, blocks: [{ __typename: 'ComponentSharedQuote', text: 'q' }], publishedAt: null }
  }, FULL_TOKEN)
  t.equal(created.status, 200, JSON.stringify(created.body.errors))
  const doc = created.body.data.createArticle.data
  t.equal(doc.attributes.title, 'GQL E')
  t.ok(doc.attributes.publishedAt !== null, 'created and published (publishedAt in data is ignored)')
  t.equal(doc.attributes.category.data.id, seeded.categories[1])
  t.same(doc.attributes.authors.data.map((a: any) => a.attributes.name), ['Alice Martin', 'Carla Rossi'])
  t.same(doc.attributes.seo, { metaTitle: 'm' })
  t.same(doc.attributes.blocks, [{ text: 'q' }])

  const updated = await gql('mutation($id: ID!) { updateArticle(id: $id, data: { views: 4, category: null }) { data { id attributes { views category { data { id } } } } } }', { id: doc.id }, FULL_TOKEN)
  t.same(updated.body.data.updateArticle.data, { id: doc.id, attributes: { views: 4, category: { data: null } } })
  const missing = await gql('mutation { updateArticle(id: "doesnotexist000000000000", data: { views: 1 }) { data { id } } }', undefined, FULL_TOKEN)
  t.same(missing.body.data.updateArticle, { data: null })

  const draft = await gql('mutation { createArticle(data: { slug: "gql-e-draft" }, status: DRAFT) { data { id attributes { publishedAt } } } }', undefined, FULL_TOKEN)
  t.equal(draft.body.data.createArticle.data.attributes.publishedAt, null, 'status DRAFT creates a draft (drafts may miss required values)')
  const invalid = await gql('mutation { createArticle(data: { slug: "no-title" }) { data { id } } }', undefined, FULL_TOKEN)
  t.equal(invalid.body.errors[0].extensions.code, 'BAD_USER_INPUT')
  t.equal(invalid.body.errors[0].extensions.error.name, 'ValidationError')
  const badEnum = await gql('mutation { createArticle(data: { title: "x", kind: gossip }) { data { id } } }', undefined, FULL_TOKEN)
  t.equal(badEnum.status, 400)
  t.equal(badEnum.body.errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
  const badDz = await gql('mutation { createArticle(data: { title: "x", blocks: [{ __typename: "Nope" }] }) { data { id } } }', undefined, FULL_TOKEN)
  t.equal(badDz.status, 400, 'a dynamic-zone entry must name one of its components')

  const deleted = await gql('mutation($id: ID!) { deleteArticle(id: $id) { data { id attributes { title } } } }', { id: doc.id }, FULL_TOKEN)
  t.same(deleted.body.data.deleteArticle.data, { id: doc.id, attributes: { title: 'GQL E' } }, 'delete answers with the document as it was')
  const again = await gql('mutation($id: ID!) { deleteArticle(id: $id) { data { id } } }', { id: doc.id }, FULL_TOKEN)
  t.same(again.body.data.deleteArticle, { data: null })

  const home = await gql('mutation { updateHomepage(data: { title: "GQL home" }) { data { attributes { title } } } }', undefined, FULL_TOKEN)
  t.same(home.body.data.updateHomepage.data.attributes, { title: 'GQL home' })
  const homeDeleted = await gql('mutation { deleteHomepage { data { attributes { title } } } }', undefined, FULL_TOKEN)
  t.same(homeDeleted.body.data.deleteHomepage.data.attributes, { title: 'GQL home' })
  const gone = await gql('{ homepage { data { id } } }')
  t.same(gone.body.data.homepage, { data: null })
})

t.test('register, login and me', async (t) => {
  const registered = await gql('mutation { register(input: { username: "gql_e", email: "GQL_E@example.com", password: "Password123!" }) { jwt user { username email confirmed blocked } } }')
  t.same(registered.body.data.register.user, { username: 'gql_e', email: 'gql_e@example.com', confirmed: true, blocked: false })
  t.match(registered.body.data.register.jwt, /^eyJ/)
  const duplicate = await gql('mutation { register(input: { username: "gql_e", email: "gql_e@example.com", password: "Password123!" }) { jwt } }')
  t.equal(duplicate.body.errors[0].extensions.code, 'STRAPI_APPLICATION_ERROR')
  const login = await gql('mutation { login(input: { identifier: "seeduser", password: "Password123!" }) { jwt user { username } } }')
  const jwt = login.body.data.login.jwt
  t.same(login.body.data.login.user, { username: 'seeduser' })
  const bad = await gql('mutation { login(input: { identifier: "seeduser", password: "nope" }) { jwt } }')
  t.same(bad.body.errors[0].extensions, { code: 'BAD_USER_INPUT', error: { name: 'ValidationError', message: 'Invalid identifier or password', details: {} } })
  const me = await gql('{ me { id documentId username email role { name type } } }', undefined, jwt)
  t.same({ ...me.body.data.me, id: typeof me.body.data.me.id }, { id: 'string', documentId: me.body.data.me.documentId, username: 'seeduser', email: seed.users[0].email, role: { name: 'Authenticated', type: 'authenticated' } })
  const anonymous = await gql('{ me { id } }')
  t.equal(anonymous.body.errors[0].extensions.code, 'FORBIDDEN')
  const created = await gql('mutation { createCategory(data: { name: "By JWT" }) { data { attributes { name } } } }', undefined, jwt)
  t.same(created.body.data.createCategory.data.attributes, { name: 'By JWT' }, 'a JWT carries the authenticated role')
})

t.test('limits: depth and amount, as GraphQL errors', async (t) => {
  // The data/attributes wrappers add no depth (spec-table.test.ts): 11 relations below the root are needed.
  let hops = 'name'
  for (let i = 10; i >= 0; i--) hops = `${i % 2 === 0 ? 'category' : 'articles(pagination: { limit: 1 })'} { data { attributes { ${hops} } } }`
  const deep = await gql(`{ articles(pagination: { limit: 1 }) { data { attributes { ${hops} } } } }`)
  t.equal(deep.status, 400)
  t.same(deep.body.errors[0].message, "'' exceeds maximum operation depth of 10")
  t.equal(deep.body.errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
  const named = await gql(`query Deep { articles(pagination: { limit: 1 }) { data { attributes { ${hops} } } } }`)
  t.equal(named.body.errors[0].message, "'Deep' exceeds maximum operation depth of 10")
  const wrapped = await gql('{ articles { data { attributes { category { data { attributes { articles { data { attributes { category { data { attributes { name } } } } } } } } } } } } }')
  t.equal(wrapped.status, 200, 'four relations in the entity shape are depth 4, not 13')
})
