import t from 'tap'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import {
  ApplicationError, ConfigurationError, UsageError, ValidationError, defineContentType, type LifecycleEvent
} from '../../lib/index.js'
import { build } from '../helpers/build.js'

/**
 * Strapi's lifecycles: a model's own `lifecycles` and `app.contentApi.lifecycles.subscribe()`,
 * run around every document-service call, from REST, GraphQL and application code alike.
 */

const ARTICLE = 'api::article.article'
const TAG = 'api::tag.tag'
const PAGE = 'api::page.page'

interface Seen { action: string, operation: string, uid: string, params: any, result?: any, state: Record<string, any> }
const seen: Seen[] = []
const record = (event: LifecycleEvent): void => {
  seen.push({ action: event.action, operation: event.operation, uid: event.model.uid, params: event.params, result: event.result, state: event.state })
}
const actions = (): string[] => seen.map((e) => e.action)
const slugify = (title: string): string => title.toLowerCase().replace(/[^a-z0-9]+/g, '-')

const article = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'article', pluralName: 'articles' },
  options: { draftAndPublish: false },
  attributes: { title: { type: 'string', required: true }, slug: { type: 'string' }, views: { type: 'integer' } },
  lifecycles: {
    beforeCreate (event) {
      record(event)
      const data = event.params.data as Record<string, unknown>
      if (data.title === 'refused') throw new ValidationError('This title is refused', { field: 'title' })
      data.slug = slugify(String(data.title))
      event.state.began = Date.now()
    },
    afterCreate (event) {
      record(event)
      if (event.params.data.title === 'rolled back') throw new ApplicationError('Refused after the insert')
    },
    beforeUpdate (event) {
      record(event)
      const data = event.params.data as Record<string, unknown>
      if (typeof data.title === 'string') data.slug = slugify(data.title)
      event.state.began = Date.now()
    },
    afterUpdate (event) {
      record(event)
      if (event.result?.title === 'rolled back') throw new ApplicationError('Refused after the update')
    },
    beforeDelete: record,
    afterDelete: record,
    beforeFindOne: record,
    afterFindOne: record,
    beforeFindMany: record,
    afterFindMany: record,
    beforeCount: record,
    afterCount: record
  }
})

const tag = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'tag', pluralName: 'tags' },
  options: { draftAndPublish: false },
  attributes: { name: { type: 'string' } }
})

const page = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'page', pluralName: 'pages' },
  options: { draftAndPublish: true },
  attributes: { title: { type: 'string' } }
})

async function stored (app: FastifyInstance, title: string): Promise<Array<{ slug: string | null }>> {
  const { rows } = await sql<{ slug: string | null }>`select slug from articles where title = ${title}`.execute(app.contentApi.db)
  return rows
}

const { app } = await build(t, { models: [article, tag, page], graphql: { format: 'flat' } })
const articles = app.contentApi.documents(ARTICLE)
const gql = async (query: string, variables?: Record<string, unknown>): Promise<any> =>
  (await app.inject({ method: 'POST', url: '/graphql', payload: { query, variables } })).json()

t.beforeEach(() => { seen.length = 0 })

t.test('create: the before hook changes params (the slug), the after hook sees the result and the before hook\'s state', async (t) => {
  const viaService = await articles.create({ data: { title: 'From The Service' } })
  t.equal(viaService.slug, 'from-the-service', 'application code: the slug set by beforeCreate is stored and returned')
  t.same(actions(), ['beforeCreate', 'afterCreate'])
  t.equal(seen[1].result.documentId, viaService.documentId, 'afterCreate\'s result is the document created')
  t.equal(seen[0].state, seen[1].state, 'one state object from before to after')
  t.type(seen[1].state.began, 'number', 'what the before hook kept in state')
  t.equal(seen[0].operation, 'create')

  seen.length = 0
  const rest = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'From REST' } } })
  t.equal(rest.statusCode, 200)
  t.equal(rest.json().data.slug, 'from-rest', 'REST')
  t.same(actions(), ['beforeCreate', 'afterCreate'])

  seen.length = 0
  const graphql = await gql('mutation { createArticle(data: { title: "From GraphQL" }) { documentId slug } }')
  t.equal(graphql.data.createArticle.slug, 'from-graphql', 'GraphQL')
  t.same(actions().slice(0, 2), ['beforeCreate', 'afterCreate'], 'GraphQL (then the findOne that reads the answer)')
  t.same((await stored(app, 'From GraphQL')).map((r) => r.slug), ['from-graphql'])
})

t.test('update: the slug kept in sync, through the three surfaces', async (t) => {
  const doc = await articles.create({ data: { title: 'Old' } })
  seen.length = 0
  const updated = await articles.update({ documentId: doc.documentId, data: { title: 'New Title' } })
  t.equal(updated?.slug, 'new-title')
  t.same(actions(), ['beforeUpdate', 'afterUpdate'])
  t.equal(seen[0].state, seen[1].state)
  t.equal(seen[0].params.documentId, doc.documentId, 'params are the call\'s')

  const rest = await app.inject({ method: 'PUT', url: `/api/articles/${doc.documentId}`, payload: { data: { title: 'Rest Title' } } })
  t.equal(rest.json().data.slug, 'rest-title', 'REST')
  const graphql = await gql('mutation ($id: ID!) { updateArticle(documentId: $id, data: { title: "Gql Title" }) { slug } }', { id: doc.documentId })
  t.equal(graphql.data.updateArticle.slug, 'gql-title', 'GraphQL')
  t.same((await stored(app, 'Gql Title')).map((r) => r.slug), ['gql-title'])
})

t.test('delete', async (t) => {
  const a = await articles.create({ data: { title: 'To delete 1' } })
  const b = await articles.create({ data: { title: 'To delete 2' } })
  const c = await articles.create({ data: { title: 'To delete 3' } })
  seen.length = 0
  await articles.delete({ documentId: a.documentId })
  t.same(actions(), ['beforeDelete', 'afterDelete'])
  t.equal(seen[0].params.documentId, a.documentId)
  t.same(seen[1].result, { documentId: a.documentId, entries: 1 }, 'afterDelete\'s result')
  seen.length = 0
  t.equal((await app.inject({ method: 'DELETE', url: `/api/articles/${b.documentId}` })).statusCode, 204)
  t.same(actions(), ['beforeDelete', 'afterDelete'], 'REST')
  seen.length = 0
  await gql('mutation ($id: ID!) { deleteArticle(documentId: $id) { documentId } }', { id: c.documentId })
  t.same(actions(), ['beforeDelete', 'afterDelete'], 'GraphQL')
})

t.test('reads: findOne, findMany, count, through the three surfaces', async (t) => {
  const doc = await articles.create({ data: { title: 'Readable' } })
  seen.length = 0
  await articles.findOne({ documentId: doc.documentId })
  await articles.findFirst({ filters: { title: 'Readable' } })
  await articles.findMany({ filters: { title: 'Readable' } })
  t.equal(await articles.count({ filters: { title: 'Readable' } }), 1)
  t.same(actions(), ['beforeFindOne', 'afterFindOne', 'beforeFindOne', 'afterFindOne', 'beforeFindMany', 'afterFindMany', 'beforeCount', 'afterCount'])
  t.same(seen.map((e) => e.operation), ['findOne', 'findOne', 'findFirst', 'findFirst', 'findMany', 'findMany', 'count', 'count'])
  t.equal(seen[1].result.documentId, doc.documentId, 'afterFindOne\'s result')
  t.equal(seen[7].result, 1, 'afterCount\'s result')

  seen.length = 0
  t.equal((await app.inject(`/api/articles/${doc.documentId}`)).json().data.title, 'Readable')
  t.same(actions(), ['beforeFindOne', 'afterFindOne'], 'REST findOne')
  seen.length = 0
  t.equal((await app.inject('/api/articles?filters[title]=Readable')).json().data.length, 1)
  t.same(actions(), ['beforeFindMany', 'afterFindMany'], 'REST find')
  t.equal(seen[1].result[0].title, 'Readable', 'afterFindMany sees the documents')
  seen.length = 0
  t.equal((await gql('query ($id: ID!) { article(documentId: $id) { title } }', { id: doc.documentId })).data.article.title, 'Readable')
  t.same(actions(), ['beforeFindOne', 'afterFindOne'], 'GraphQL findOne')
  seen.length = 0
  t.equal((await gql('{ articles(filters: { title: { eq: "Readable" } }) { title } }')).data.articles.length, 1)
  t.same(actions(), ['beforeFindMany', 'afterFindMany'], 'GraphQL find')
})

t.test('a before hook that throws a ValidationError: nothing written, a 400 envelope on REST, BAD_USER_INPUT on GraphQL', async (t) => {
  await t.rejects(articles.create({ data: { title: 'refused' } }), ValidationError, 'application code gets the error thrown')
  const rest = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'refused' } } })
  t.equal(rest.statusCode, 400)
  t.same(rest.json(), { data: null, error: { status: 400, name: 'ValidationError', message: 'This title is refused', details: { field: 'title' } } })
  const graphql = await gql('mutation { createArticle(data: { title: "refused" }) { documentId } }')
  t.equal(graphql.errors[0].message, 'This title is refused')
  t.equal(graphql.errors[0].extensions.code, 'BAD_USER_INPUT')
  t.same(graphql.errors[0].extensions.error, { name: 'ValidationError', message: 'This title is refused', details: { field: 'title' } })
  t.same(await stored(app, 'refused'), [], 'nothing stored')
  t.notOk(actions().includes('afterCreate'), 'no after hook for a call refused before')
})

t.test('an after hook that throws rolls the write back', async (t) => {
  const rest = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'rolled back' } } })
  t.equal(rest.statusCode, 400)
  t.same(rest.json().error, { status: 400, name: 'ApplicationError', message: 'Refused after the insert', details: {} })
  const graphql = await gql('mutation { createArticle(data: { title: "rolled back", views: 3 }) { documentId } }')
  t.equal(graphql.errors[0].extensions.code, 'STRAPI_APPLICATION_ERROR')
  t.same(await stored(app, 'rolled back'), [], 'the row inserted before afterCreate threw is not stored')

  const doc = await articles.create({ data: { title: 'Kept', views: 1 } })
  await t.rejects(articles.update({ documentId: doc.documentId, data: { title: 'rolled back', views: 2 } }), ApplicationError)
  const again = await articles.findOne({ documentId: doc.documentId })
  t.same([again?.title, again?.slug, again?.views], ['Kept', 'kept', 1], 'the update rolled back')
})

t.test('subscribe: a models filter, a function subscriber, unsubscribing, per-subscriber state', async (t) => {
  const tags: string[] = []
  const states: unknown[] = []
  const stop = app.contentApi.lifecycles.subscribe({
    models: [TAG],
    beforeCreate (event) {
      tags.push(`${event.model.uid} ${event.action}`)
      event.params.data.name = String(event.params.data.name).toUpperCase()
      event.state.mine = true
    },
    afterCreate (event) { states.push(event.state) }
  })
  const every: string[] = []
  const stopEvery = app.contentApi.lifecycles.subscribe((event) => { every.push(`${event.model.uid} ${event.action}`) })

  const created = await app.contentApi.documents(TAG).create({ data: { name: 'node' } })
  t.equal(created.name, 'NODE', 'the subscriber\'s change to params')
  await articles.create({ data: { title: 'Not a tag' } })
  t.same(tags, [`${TAG} beforeCreate`], 'only the models listed')
  t.same(states, [{ mine: true }], 'its own state, from its before hook')
  t.same(every, [`${TAG} beforeCreate`, `${TAG} afterCreate`, `${ARTICLE} beforeCreate`, `${ARTICLE} afterCreate`], 'a function subscriber: every event of every model')
  t.equal(seen.find((e) => e.action === 'afterCreate')?.state.mine, undefined, 'the model\'s own hooks have their own state')

  stop()
  stopEvery()
  t.equal((await app.contentApi.documents(TAG).create({ data: { name: 'deno' } })).name, 'deno', 'unsubscribed')
  t.equal(every.length, 4)
  t.throws(() => app.contentApi.lifecycles.subscribe({ beforeCreat () {} } as any), UsageError, 'a misspelt hook is refused')
  t.throws(() => app.contentApi.lifecycles.subscribe({ models: 'api::tag.tag' } as any), UsageError)
})

t.test('publish, unpublish and discardDraft run the update hooks, named by event.operation', async (t) => {
  const events: string[] = []
  const stop = app.contentApi.lifecycles.subscribe({
    models: [PAGE],
    beforeUpdate (event) { events.push(`before ${event.operation} ${String(event.params.documentId === undefined)}`) },
    afterUpdate (event) { events.push(`after ${event.operation}`) }
  })
  const pages = app.contentApi.documents(PAGE)
  const doc = await pages.create({ data: { title: 'Draft' }, status: 'draft' })
  await pages.publish({ documentId: doc.documentId })
  await pages.unpublish({ documentId: doc.documentId })
  await pages.discardDraft({ documentId: doc.documentId }).catch(() => {})
  stop()
  t.same(events.slice(0, 4), ['before publish false', 'after publish', 'before unpublish false', 'after unpublish'])
  t.ok(events.includes('before discardDraft false'), 'discardDraft')
})

t.test('a model\'s lifecycles are checked at registration', async (t) => {
  const bad = defineContentType({ ...tag, info: { singularName: 'bad', pluralName: 'bads' }, lifecycles: { beforeCreat: () => {} } as any })
  const err = await build(t, { models: [bad] }).then(() => null, (e: unknown) => e)
  t.type(err, ConfigurationError)
  t.match((err as Error).message, /lifecycles\.beforeCreat is not a lifecycle hook/)
})
