import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { UsageError } from '../../lib/errors.js'
import type { PolicyExtras } from '../../lib/policies.js'
import { buildGraphql } from './helpers.js'

/**
 * The spec's GraphQL table to the letter (docs/graphql.md): `publicationState` on every list,
 * policies called `(context, { instance })`, Shadow CRUD closed once the schema is built, and a
 * depth limit that counts relations and fields, not the entity shape's wrappers.
 */

const seen: Array<{ second: unknown, third: unknown }> = []
let appRef: FastifyInstance | null = null
const { app, gql } = await buildGraphql(t, {}, (app) => {
  appRef = app
  const graphql = app.contentApi.graphql!
  graphql.policy('configured', (_ctx, config, extra) => { seen.push({ second: config, third: extra }); return true })
  graphql.use({
    resolversConfig: {
      'Query.categories': {
        policies: [
          (_ctx, { instance }) => { seen.push({ second: instance, third: undefined }); return true },
          (_ctx, second, third) => { seen.push({ second, third }); return true },
          { name: 'configured', config: { role: 'editor' } },
          'configured'
        ]
      }
    }
  })
})

const args = (type: 'Query' | 'Mutation', field: string): Record<string, string> => Object.fromEntries(
  app.contentApi.graphql!.schema!.getType(type) === undefined ? [] : (app.contentApi.graphql!.schema!.getType(type) as any).getFields()[field].args.map((a: any) => [a.name, String(a.type)])
)

t.test('publicationState on every list, with or without draft & publish', async (t) => {
  t.equal(args('Query', 'categories').publicationState, 'PublicationState', 'a type without draft & publish (categories)')
  t.equal(args('Query', 'articles').publicationState, 'PublicationState', 'a type with draft & publish (articles)')
  t.equal(args('Query', 'uploadFiles').publicationState, 'PublicationState', 'files')
  t.equal(args('Query', 'homepage').publicationState, 'PublicationState', 'a single type without draft & publish')
  t.equal(args('Query', 'category').publicationState, undefined, 'not on the one-document query (the spec gives it `id` only)')
  const query = (state: string): string => `{ categories(publicationState: ${state}, sort: "name") { data { attributes { name } } meta { pagination { total } } } }`
  const live = await gql(query('LIVE'))
  const preview = await gql(query('PREVIEW'))
  const none = await gql('{ categories(sort: "name") { data { attributes { name } } meta { pagination { total } } } }')
  t.equal(live.status, 200)
  t.ok(live.body.data.categories.meta.pagination.total > 0)
  t.same(preview.body, live.body, 'PREVIEW reads what LIVE reads where there are no drafts')
  t.same(none.body, live.body, 'LIVE is the default')
  const home = await gql('{ homepage(publicationState: PREVIEW) { data { attributes { title } } } }')
  t.equal(home.status, 200)
  t.same(home.body, (await gql('{ homepage { data { attributes { title } } } }')).body)
  const wrong = await gql('{ categories(publicationState: DRAFT) { data { id } } }')
  t.equal(wrong.status, 400, 'the enum is LIVE | PREVIEW')
  t.match(wrong.body.errors[0].message, /Value "DRAFT" does not exist in "PublicationState" enum/)
})

t.test('policies: a function is called (context, { instance }), a registered one (context, config, { instance })', async (t) => {
  seen.length = 0
  const answer = await gql('{ categories(pagination: { pageSize: 1 }) { data { id } } }')
  t.equal(answer.status, 200)
  t.notOk(answer.body.errors)
  t.equal(seen.length, 4)
  t.equal(seen[0].second, appRef, 'destructured `instance` is the Fastify app')
  const extras = seen[1].second as PolicyExtras
  t.equal(extras.instance, app)
  t.equal(extras.app, app)
  t.equal(extras.strapi, app, "Strapi's name for it too")
  t.equal(seen[1].third, extras, 'and the same object third, where Strapi code reads { strapi }')
  t.same(seen[2].second, { role: 'editor' }, 'a registered policy gets its config second')
  t.equal((seen[2].third as PolicyExtras).instance, app, 'and the extras third')
  t.same(seen[3].second, {}, 'named without a config: an empty one, as Strapi gives')
})

t.test('Shadow CRUD changes throw once the schema is built; its getters still answer', async (t) => {
  const graphql = app.contentApi.graphql!
  const config = graphql.shadowCRUD('api::category.category')
  const late: Array<[string, () => unknown]> = [
    ['disable', () => config.disable()],
    ['disableQueries', () => config.disableQueries()],
    ['disableMutations', () => config.disableMutations()],
    ['disableAction', () => config.disableAction('find')],
    ['disableActions', () => config.disableActions(['find'])],
    ["field('name').disable", () => config.field('name').disable()],
    ["field('name').disableOutput", () => config.field('name').disableOutput()],
    ["field('name').disableInput", () => config.field('name').disableInput()],
    ["field('name').disableFilters", () => config.field('name').disableFilters()]
  ]
  for (const [what, change] of late) {
    t.throws(change, {
      name: 'UsageError',
      code: 'FCA_ERR_GRAPHQL_SCHEMA_BUILT',
      message: `graphql.shadowCRUD('api::category.category').${what}() must be called before the application is ready: the schema is built by then`
    }, what)
  }
  t.throws(() => graphql.shadowCRUD('api::never-seen.never-seen').disable(), UsageError, 'a type first named after ready too')
  t.ok(config.isEnabled() && config.isActionEnabled('find') && config.areQueriesEnabled(), 'nothing changed')
  t.ok(config.field('name').isEnabled() && config.field('name').hasFiltersEnabled())
  t.ok(graphql.shadowCRUD('api::secret.secret').isEnabled(), 'getters of any type answer')
  const served = await gql('{ categories(pagination: { pageSize: 1 }) { data { id } } }')
  t.equal(served.status, 200, 'and the query is still served, as the getters say')
})

const DEEP_ENTITY = '{ articles { data { attributes { category { data { attributes { articles { data { attributes { authors { data { attributes { name } } } } } } } } } } } } }'

t.test('depth limit in the entity shape: relations and fields count, data/attributes do not', async (t) => {
  const natural = await gql(DEEP_ENTITY)
  t.equal(natural.status, 200, 'articles > category > articles > authors > name: depth 4')
  t.notOk(natural.body.errors)
  // `n` relations below the root list, category and articles in turn (one article each: the
  // row bound is not what is tested), and a scalar of the last.
  const chain = (n: number): string => {
    let selection = n % 2 === 1 ? 'name' : 'title'
    for (let i = n - 1; i >= 0; i--) selection = `${i % 2 === 0 ? 'category' : 'articles(pagination: { limit: 1 })'} { data { attributes { ${selection} } } }`
    return `{ articles(pagination: { limit: 1 }) { data { attributes { ${selection} } } } }`
  }
  const atLimit = await gql(chain(9))
  t.same(atLimit.body.errors, undefined)
  t.equal(atLimit.status, 200, 'a scalar at depth 10 (9 relations below the root list) is within the default limit')
  const tooDeep = chain(10)
  const deep = await gql(tooDeep)
  t.equal(deep.status, 400, 'one relation more is not')
  t.same(deep.body.errors, [{
    message: "'' exceeds maximum operation depth of 10",
    extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    locations: [{ line: 1, column: tooDeep.indexOf('title') + 1 }]
  }], 'located at the selection past the limit')
})

t.test('unknown arguments and fields keep graphql-js\'s "Did you mean" suggestions', async (t) => {
  const arg = await gql('{ articles(publicationStat: LIVE) { data { id } } }')
  t.equal(arg.status, 400)
  t.equal(arg.body.errors[0].message, 'Unknown argument "publicationStat" on field "Query.articles". Did you mean "publicationState"?')
  t.same(arg.body.errors[0].locations, [{ line: 1, column: 12 }])
  const field = await gql('{ articles { data { attribute { title } } } }')
  t.equal(field.body.errors[0].message, 'Cannot query field "attribute" on type "ArticleEntity". Did you mean "attributes"?')
  const several = await gql('{ articles(sorts: "title", filter: {}) { data { id } } }')
  t.same(several.body.errors.map((e: { message: string }) => e.message), [
    'Unknown argument "sorts" on field "Query.articles". Did you mean "sort" or "status"?',
    'Unknown argument "filter" on field "Query.articles". Did you mean "filters"?'
  ])
})
