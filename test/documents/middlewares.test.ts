import t from 'tap'
import { sql } from 'kysely'
import { UsageError, ValidationError, defineContentType, type Document, type DocumentMiddlewareContext } from '../../lib/index.js'
import { build } from '../helpers/build.js'

/**
 * Document-service middlewares (`app.contentApi.documents.use`): run around every call, from
 * REST, GraphQL and application code alike; they may change params, answer without calling
 * `next`, or change the result.
 */

const ARTICLE = 'api::article.article'

const article = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'article', pluralName: 'articles' },
  options: { draftAndPublish: true },
  attributes: { title: { type: 'string' }, views: { type: 'integer' } }
})
const tag = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'tag', pluralName: 'tags' },
  options: { draftAndPublish: false },
  attributes: { name: { type: 'string' } }
})

const calls: string[] = []
/** What the middlewares below do, switched per test. */
const mode = { trace: false, views: false, alias: null as string | null, shortCircuit: false, shout: false, refuse: false }

const { app } = await build(t, { models: [article, tag], graphql: { format: 'flat' } })
app.contentApi.documents
  .use(async (context, next) => {
    if (mode.trace) calls.push(`a> ${context.action} ${context.uid}`)
    const result = await next()
    if (mode.trace) calls.push(`a< ${context.action}`)
    return result
  })
  .use(async (context: DocumentMiddlewareContext, next) => {
    if (mode.trace) calls.push(`b> ${context.action}`)
    if (context.uid !== ARTICLE) return await next()
    if (mode.refuse && context.action === 'create') throw new ValidationError('No new articles today')
    if (mode.views && context.action === 'create') context.params.data.views = 42
    if (mode.alias !== null && context.action === 'findOne' && context.params.documentId === 'latest') context.params.documentId = mode.alias
    if (mode.shortCircuit && context.action === 'findOne' && context.params.documentId === 'canned') {
      return { id: 0, documentId: 'canned', title: 'From the middleware', views: null }
    }
    const result = await next()
    if (mode.trace) calls.push(`b< ${context.action}`)
    if (mode.shout && context.action === 'findMany') return (result as Document[]).map((d) => ({ ...d, title: String(d.title).toUpperCase() }))
    if (mode.shout && context.action === 'findOne' && result !== null) return { ...(result as Document), title: String((result as Document).title).toUpperCase() }
    return result
  })

const articles = app.contentApi.documents(ARTICLE)
const gql = async (query: string, variables?: Record<string, unknown>): Promise<any> =>
  (await app.inject({ method: 'POST', url: '/graphql', payload: { query, variables } })).json()

t.beforeEach(() => {
  calls.length = 0
  Object.assign(mode, { trace: false, views: false, alias: null, shortCircuit: false, shout: false, refuse: false })
})

t.test('every call, every surface, in the order the middlewares were added', async (t) => {
  mode.trace = true
  const doc = await articles.create({ data: { title: 'one' }, status: 'draft' })
  await articles.update({ documentId: doc.documentId, data: { title: 'two' }, status: 'draft' })
  await articles.publish({ documentId: doc.documentId })
  await articles.findOne({ documentId: doc.documentId })
  await articles.findFirst({})
  await articles.findMany({})
  await articles.count({})
  await articles.unpublish({ documentId: doc.documentId })
  await articles.discardDraft({ documentId: doc.documentId }).catch(() => {})
  await articles.delete({ documentId: doc.documentId })
  t.same(calls.filter((c) => c.startsWith('a>')).map((c) => c.split(' ')[1]),
    ['create', 'update', 'publish', 'findOne', 'findFirst', 'findMany', 'count', 'unpublish', 'discardDraft', 'delete'], 'application code: every action, Strapi\'s names')
  t.same(calls.slice(0, 4), [`a> create ${ARTICLE}`, 'b> create', 'b< create', 'a< create'], 'the first added runs outermost')

  calls.length = 0
  const created = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'rest' } } })
  const id = created.json().data.documentId as string
  await app.inject(`/api/articles/${id}`)
  await app.inject('/api/articles')
  await app.inject({ method: 'PUT', url: `/api/articles/${id}`, payload: { data: { title: 'rest 2' } } })
  await app.inject({ method: 'DELETE', url: `/api/articles/${id}` })
  t.same(calls.filter((c) => c.startsWith('a>')).map((c) => c.split(' ')[1]), ['create', 'findOne', 'findMany', 'update', 'delete'], 'REST')

  calls.length = 0
  const made = await gql('mutation { createArticle(data: { title: "gql" }) { documentId } }')
  const gid = made.data.createArticle.documentId as string
  await gql('query ($id: ID!) { article(documentId: $id) { title } }', { id: gid })
  await gql('{ articles { title } }')
  await gql('mutation ($id: ID!) { deleteArticle(documentId: $id) { documentId } }', { id: gid })
  t.same(calls.filter((c) => c.startsWith('a>')).map((c) => c.split(' ')[1]),
    ['create', 'findOne', 'findOne', 'findMany', 'delete'], 'GraphQL (a mutation reads its answer with a findOne)')
})

t.test('a middleware changes params', async (t) => {
  mode.views = true
  const viaService = await articles.create({ data: { title: 'counted' } })
  t.equal(viaService.views, 42, 'application code')
  const rest = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'counted rest' } } })
  t.equal(rest.json().data.views, 42, 'REST')
  const graphql = await gql('mutation { createArticle(data: { title: "counted gql" }) { views } }')
  t.equal(graphql.data.createArticle.views, 42, 'GraphQL')
  const { rows } = await sql<{ views: number }>`select distinct views from articles where title like 'counted%'`.execute(app.contentApi.db)
  t.same(rows, [{ views: 42 }], 'stored so')

  mode.views = false
  mode.alias = viaService.documentId
  t.equal((await app.inject('/api/articles/latest')).json().data.title, 'counted', 'REST: the documentId of a findOne rewritten')
  t.equal((await gql('{ article(documentId: "latest") { title } }')).data.article.title, 'counted', 'GraphQL')
  t.equal((await articles.findOne({ documentId: 'latest' }))?.title, 'counted', 'application code')
})

t.test('a middleware answers without calling next', async (t) => {
  mode.shortCircuit = true
  t.same((await app.inject('/api/articles/canned')).json().data, { id: 0, documentId: 'canned', title: 'From the middleware', views: null }, 'REST')
  t.equal((await gql('{ article(documentId: "canned") { documentId title } }')).data.article.title, 'From the middleware', 'GraphQL')
  t.equal((await articles.findOne({ documentId: 'canned' }))?.title, 'From the middleware', 'application code')
})

t.test('a middleware changes the result', async (t) => {
  const doc = await articles.create({ data: { title: 'quiet' } })
  mode.shout = true
  const list = (await app.inject('/api/articles?filters[title]=quiet&pagination[withCount]=true')).json()
  t.same(list.data.map((d: Document) => d.title), ['QUIET'], 'REST list, serialized again')
  t.equal(list.meta.pagination.total, 1, 'the page\'s total kept')
  t.equal((await app.inject(`/api/articles/${doc.documentId}`)).json().data.title, 'QUIET', 'REST one')
  t.same((await gql('{ articles(filters: { title: { eq: "quiet" } }) { title } }')).data.articles, [{ title: 'QUIET' }], 'GraphQL list')
  t.equal((await articles.findMany({ filters: { title: 'quiet' } }))[0].title, 'QUIET', 'application code')
})

t.test('a middleware that throws: the call refused, in the envelope', async (t) => {
  mode.refuse = true
  const rest = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'refused' } } })
  t.equal(rest.statusCode, 400)
  t.same(rest.json().error, { status: 400, name: 'ValidationError', message: 'No new articles today', details: {} })
  t.equal((await gql('mutation { createArticle(data: { title: "refused" }) { documentId } }')).errors[0].extensions.code, 'BAD_USER_INPUT')
  t.equal(await articles.count({ filters: { title: 'refused' }, status: 'draft' }), 0)
  t.equal((await app.contentApi.documents('api::tag.tag').create({ data: { name: 'other types' } })).name, 'other types', 'the middleware lets other types through')
})

t.test('documents.use() takes functions only', async (t) => {
  t.throws(() => app.contentApi.documents.use('nope' as any), UsageError)
})
