import t from 'tap'
import { GraphQLObjectType, GraphQLString, isObjectType, isInputObjectType, type GraphQLSchema } from 'graphql'
import { ContentTypeConfig, FieldConfig } from '../../lib/graphql/shadow-crud.js'
import { buildGraphql, FULL_TOKEN } from './helpers.js'

/** The extension API of the spec's "GraphQL customization" section, function by function. */

let factoryTools = ''
const { app, gql } = await buildGraphql(t, { format: 'flat' }, (app) => {
  const graphql = app.contentApi.graphql!
  graphql.shadowCRUD('api::secret.secret').disable()
  graphql.shadowCRUD('api::author.author').disableMutations().disableAction('findOne')
  graphql.shadowCRUD('api::category.category').disableQueries()
  graphql.shadowCRUD('api::article.article').field('views').disableFilters()
  graphql.shadowCRUD('api::article.article').field('summary').disableOutput()
  graphql.shadowCRUD('api::article.article').field('slug').disableInput()
  graphql.shadowCRUD('api::article.article').field('tags').disable()
  graphql.policy('is-token', (ctx) => ctx.state.auth?.principal.kind === 'token')
  graphql.policy('header', (ctx, config) => ctx.http.request.headers['x-pass'] === (config as { value: string }).value)
  graphql.middleware('suffix', (options) => async (next, parent, args, context, info) => `${String(await next(parent, args, context, info))}${String(options)}`)
  graphql.use({
    typeDefs: 'extend type Query { hello(name: String): String  open: String  closed: String  scoped: String  guarded: String  named: String  configured: String  wrapped: String  wordCount(documentId: ID!): Int }',
    resolvers: {
      Query: {
        hello: (_: unknown, { name }: { name?: string }) => `hello ${name ?? 'world'}`,
        open: () => 'open',
        closed: () => 'closed',
        scoped: () => 'scoped',
        guarded: () => 'guarded',
        named: () => 'named',
        configured: () => 'configured',
        wrapped: () => 'wrapped',
        wordCount: async (_: unknown, { documentId }: { documentId: string }) => {
          const doc = await app.contentApi.documents('api::article.article').findOne({ documentId, fields: ['title'] })
          return doc === null ? null : String(doc.title).split(' ').length
        }
      }
    },
    resolversConfig: {
      'Query.open': { auth: false },
      'Query.hello': { auth: false, middlewares: [async (next, ...rest) => (await next(...rest) as string).toUpperCase()] },
      'Query.scoped': { auth: { scope: ['api::secret.secret.find'] } },
      'Query.guarded': { auth: false, policies: [(ctx) => ctx.args !== undefined && ctx.http.request.headers['x-pass'] === 'yes'] },
      'Query.named': { auth: false, policies: ['is-token'] },
      'Query.configured': { auth: false, policies: [{ name: 'header', config: { value: 'secret' } }] },
      'Query.wrapped': { auth: false, middlewares: ['suffix', { name: 'suffix', options: '!' }] },
      'Query.wordCount': { auth: false },
      'Query.articles': { policies: [(ctx) => ctx.http.request.headers['x-block'] !== 'yes'] }
    }
  })
  graphql.use(({ graphql: libs, tools }) => {
    factoryTools = typeof tools.makeExecutableSchema
    const Stats = new libs.GraphQLObjectType({
      name: 'Stats',
      fields: { articles: { type: libs.GraphQLInt, resolve: async () => await app.contentApi.documents('api::article.article').count() } }
    })
    const Query = new GraphQLObjectType({ name: 'Query', fields: { stats: { type: Stats, resolve: () => ({}) }, typed: { type: GraphQLString, resolve: () => 'typed' } } })
    return {
      types: [Stats, Query],
      typeDefs: 'type Extra { value: String }\nextend type Article { shout: String }',
      resolvers: { Article: { shout: (article: { title: string }) => article.title.toUpperCase() } },
      resolversConfig: { 'Query.stats': { auth: false }, 'Query.typed': { auth: false }, 'Query.open': { auth: { scope: ['never.granted'] } } },
      plugins: [(schema: GraphQLSchema) => {
        const type = schema.getType('Extra')
        if (type !== undefined) (type as any).description = 'set by a plugin'
        return schema
      }]
    }
  })
})
const schema = app.contentApi.graphql!.schema!

t.test('shadowCRUD(uid) and field(name): every setter and getter', async (t) => {
  const config = new ContentTypeConfig('api::article.article')
  t.ok(config.isEnabled() && !config.isDisabled() && config.areQueriesEnabled() && config.areMutationsEnabled())
  t.ok(config.isActionEnabled('find') && config.isActionEnabled('*') && !config.isActionDisabled('create'))
  config.disableAction('create')
  t.ok(config.isActionDisabled('create') && config.areMutationsEnabled() && !config.isActionEnabled('*'), 'disableAction')
  config.disableActions(['update', 'delete'])
  t.ok(config.areMutationsDisabled() && !config.areMutationsEnabled(), 'disableActions')
  config.disableQueries()
  t.ok(config.areQueriesDisabled() && config.isActionDisabled('find') && config.isActionDisabled('findOne'), 'disableQueries')
  t.ok(config.isEnabled(), 'a type without operations still exists')
  const other = new ContentTypeConfig('x').disableMutations()
  t.ok(other.areMutationsDisabled() && other.areQueriesEnabled(), 'disableMutations')
  other.disable()
  t.ok(other.isDisabled() && !other.isEnabled() && other.areQueriesDisabled(), 'disable')
  t.throws(() => other.disableAction('publish' as any), /Unknown Shadow CRUD action/)

  const field = new FieldConfig()
  t.ok(field.isEnabled() && !field.isDisabled() && field.hasOutputEnabled() && field.hasInputEnabled() && field.hasFiltersEnabled() && field.hasFiltersEnabeld())
  field.disableOutput()
  t.ok(!field.hasOutputEnabled() && field.isEnabled(), 'disableOutput')
  field.disableInput()
  t.ok(!field.hasInputEnabled(), 'disableInput')
  field.disableFilters()
  t.ok(!field.hasFiltersEnabled() && field.isDisabled(), 'disableFilters')
  t.ok(new FieldConfig().disable().isDisabled(), 'disable')
})

t.test('Shadow CRUD configuration shapes the schema', async (t) => {
  const query = schema.getQueryType()!.getFields()
  const mutation = schema.getMutationType()!.getFields()
  t.equal(schema.getType('Secret'), undefined, 'a disabled type is gone')
  t.notOk('secrets' in query, 'with its operations')
  t.ok('authors' in query && !('author' in query) && !('createAuthor' in mutation), 'disableMutations and disableAction(findOne)')
  t.ok(!('categories' in query) && 'createCategory' in mutation, 'disableQueries keeps the mutations')
  t.ok(isObjectType(schema.getType('Category')), 'and the type')
  const filters = schema.getType('ArticleFiltersInput')
  const input = schema.getType('ArticleInput')
  const article = schema.getType('Article')
  if (!isInputObjectType(filters) || !isInputObjectType(input) || !isObjectType(article)) throw new Error('missing types')
  t.ok(!('views' in filters.getFields()) && 'views' in article.getFields(), 'field().disableFilters()')
  t.ok(!('summary' in article.getFields()) && 'summary' in input.getFields() && 'summary' in filters.getFields(), 'field().disableOutput()')
  t.ok(!('slug' in input.getFields()) && 'slug' in article.getFields(), 'field().disableInput()')
  t.ok(!('tags' in input.getFields()) && !('tags' in article.getFields()) && !('tags' in filters.getFields()), 'field().disable()')
  t.match(app.contentApi.graphql!.printSchema(), /type Extra/, 'printSchema')
  t.equal((schema.getType('Extra') as any).description, 'set by a plugin', 'plugins transform the built schema')
  t.throws(() => app.contentApi.graphql!.use({}), /before the application is ready/, 'use() after ready is refused')
  t.throws(() => app.contentApi.graphql!.policy('x', () => true), /before the application is ready/)
})

t.test('use(): typeDefs, resolvers, types, and a generated field read by a custom one', async (t) => {
  t.equal(factoryTools, 'function', 'an extension factory receives graphql-js and @graphql-tools')
  t.same((await gql('{ hello(name: "you") }')).body, { data: { hello: 'HELLO YOU' } }, 'typeDefs + resolvers + a middleware function')
  t.same((await gql('{ stats { articles } typed }')).body, { data: { stats: { articles: 50 }, typed: 'typed' } }, 'graphql-js types with their resolvers')
  const shout = await gql('{ articles(sort: "title", pagination: { limit: 1 }) { shout } }')
  t.same(shout.body, { data: { articles: [{ shout: 'BRAVE LOOK AT NODE STREAMS 025' }] } }, 'a custom field of a generated type sees the document')
  const id = (await gql('{ articles(sort: "title", pagination: { limit: 1 }) { documentId } }')).body.data.articles[0].documentId
  t.same((await gql(`{ wordCount(documentId: "${id}") }`)).body, { data: { wordCount: 6 } })
})

t.test('resolversConfig: auth, policies, middlewares', async (t) => {
  t.same((await gql('{ open }')).body, { data: { open: 'open' } }, 'auth: false; the first registered config wins over a later one')
  const closed = await gql('{ closed }')
  t.equal(closed.body.errors[0].extensions.code, 'FORBIDDEN', 'no config: authenticated callers only')
  t.same((await gql('{ closed }', undefined, FULL_TOKEN)).body, { data: { closed: 'closed' } })
  t.equal((await gql('{ scoped }')).body.errors[0].extensions.code, 'FORBIDDEN', 'auth.scope: the public role lacks it')
  t.same((await gql('{ scoped }', undefined, FULL_TOKEN)).body, { data: { scoped: 'scoped' } }, 'a full-access token holds it')
  const refused = await gql('{ guarded }')
  t.same(refused.body.errors[0].extensions, { code: 'FORBIDDEN', error: { name: 'PolicyError', message: 'Policy Failed', details: {} } }, 'a policy function returning false')
  const passed = await app.inject({ method: 'POST', url: '/graphql', headers: { 'x-pass': 'yes' }, payload: { query: '{ guarded }' } })
  t.same(passed.json(), { data: { guarded: 'guarded' } })
  t.equal((await gql('{ named }')).body.errors[0].extensions.code, 'FORBIDDEN', 'a registered policy by name')
  t.same((await gql('{ named }', undefined, FULL_TOKEN)).body, { data: { named: 'named' } })
  const configured = await app.inject({ method: 'POST', url: '/graphql', headers: { 'x-pass': 'secret' }, payload: { query: '{ configured }' } })
  t.same(configured.json(), { data: { configured: 'configured' } }, 'a registered policy with { name, config }')
  t.same((await gql('{ wrapped }')).body, { data: { wrapped: 'wrapped!undefined' } }, 'registered middlewares by name and with { name, options }; the first one is the outermost')
  const blocked = await app.inject({ method: 'POST', url: '/graphql', headers: { 'x-block': 'yes' }, payload: { query: '{ articles { title } }' } })
  t.equal(blocked.json().errors[0].extensions.code, 'FORBIDDEN', 'a policy on a generated operation')
  t.equal((await gql('{ articles(pagination: { limit: 1 }) { title } }')).body.data.articles.length, 1, 'which keeps its permission check')
})

t.test('unknown policies, middlewares and resolversConfig keys fail at start-up', async (t) => {
  for (const [config, message] of [
    [{ 'Query.articles': { policies: ['nope'] } }, /Unknown GraphQL policy "nope"/],
    [{ 'Query.articles': { middlewares: ['nope'] } }, /Unknown GraphQL middleware "nope"/],
    [{ 'Query.nope': { auth: false } }, /no field Query.nope/]
  ] as const) {
    await t.rejects(buildGraphql(t, undefined, (app) => { app.contentApi.graphql!.use({ resolversConfig: config as any }) }), message)
  }
})
