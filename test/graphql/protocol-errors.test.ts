import t from 'tap'
import { buildGraphql } from './helpers.js'

/**
 * GraphQL protocol errors as Strapi 5 answers them (Apollo Server 4 with graphql-depth-limit), in
 * the flat shape: a batched body, where a depth error is located, and graphql-js's suggestions.
 */

const { app, gql } = await buildGraphql(t, { format: 'flat' })

const post = async (payload: string): Promise<{ status: number, body: any }> => {
  const res = await app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload })
  return { status: res.statusCode, body: res.json() }
}

/** The 1-based line and column of the `nth` occurrence of `text` in a one-line query. */
const at = (query: string, text: string, nth = 1): { line: number, column: number } => {
  let index = -1
  for (let i = 0; i < nth; i++) index = query.indexOf(text, index + 1)
  return { line: 1, column: index + 1 }
}

const DEPTH = "'' exceeds maximum operation depth of 10"
const validation = { code: 'GRAPHQL_VALIDATION_FAILED' }

t.test('an array body: Apollo refuses it whole while batching is off', async (t) => {
  const expected = { errors: [{ message: 'Operation batching disabled.', extensions: { code: 'BAD_REQUEST' } }] }
  for (const body of [
    '[{"query":"{ articles(pagination: { limit: 1 }) { title } }"},{"query":"{ categories(pagination: { limit: 1 }) { name } }"}]',
    '[{"query":"{ articles { title } }"}]',
    '[]',
    '[1, "x", null]'
  ]) {
    const answer = await post(body)
    t.equal(answer.status, 400, body)
    t.same(answer.body, expected, body)
  }
  const single = await post('{"query":"{ articles(pagination: { limit: 1 }) { title } }"}')
  t.equal(single.status, 200, 'an object body is served')
})

t.test('a depth error is located at each selection past the limit, as graphql-depth-limit does', async (t) => {
  // The recorded case's query: `title` is at depth 11.
  const chain = 'query { articles { category { articles { category { articles { category { articles { category { articles { category { articles { title } } } } } } } } } } } }'
  const one = await gql(chain)
  t.equal(one.status, 400)
  t.same(one.body, { errors: [{ message: DEPTH, locations: [at(chain, 'title')], extensions: validation }] })

  // Two selections at depth 11: two errors, in document order; nothing below them is walked.
  const two = chain.replace('{ title }', '{ title slug category { name } }')
  t.same((await gql(two)).body.errors, [
    { message: DEPTH, locations: [at(two, 'title')], extensions: validation },
    { message: DEPTH, locations: [at(two, 'slug')], extensions: validation },
    { message: DEPTH, locations: [at(two, 'category', 6)], extensions: validation }
  ])

  // __typename counts where it stands (only an introspection field's selections are not walked).
  const typename = chain.replace('{ title }', '{ __typename }')
  t.same((await gql(typename)).body.errors, [{ message: DEPTH, locations: [at(typename, '__typename')], extensions: validation }])

  // A fragment spread or an inline fragment past the limit is the location itself.
  const spread = `${chain.replace('{ title }', '{ ...T }')} fragment T on Article { title }`
  t.same((await gql(spread)).body.errors, [{ message: DEPTH, locations: [at(spread, '...T')], extensions: validation }])
  const inline = chain.replace('{ title }', '{ ... on Article { title } }')
  t.same((await gql(inline)).body.errors, [{ message: DEPTH, locations: [at(inline, '... on')], extensions: validation }])

  // Through a fragment: the field inside it, wherever the spread put it past the limit.
  const fragment = 'query Deep { articles { ...A } } fragment A on Article { category { articles { category { articles { category { articles { category { articles { category { articles { title } } } } } } } } } } }'
  t.same((await gql(fragment)).body.errors, [{ message: "'Deep' exceeds maximum operation depth of 10", locations: [at(fragment, 'title')], extensions: validation }])
})

t.test('depth errors come before the errors of graphql-js\'s rules', async (t) => {
  const query = 'query { nope articles { category { articles { category { articles { category { articles { category { articles { category { articles { title } } } } } } } } } } } }'
  const answer = await gql(query)
  t.equal(answer.status, 400)
  t.same(answer.body.errors.map((e: { message: string }) => e.message), [DEPTH, 'Cannot query field "nope" on type "Query".'])
})

t.test('unknown arguments and fields keep graphql-js\'s suggestions', async (t) => {
  const arg = await gql('{ articles(sorts: "title") { title } }')
  t.equal(arg.status, 400)
  t.same(arg.body.errors, [{
    message: 'Unknown argument "sorts" on field "Query.articles". Did you mean "sort" or "status"?',
    locations: [{ line: 1, column: 12 }],
    extensions: validation
  }])
  const field = await gql('{ articles { titel } }')
  t.equal(field.body.errors[0].message, 'Cannot query field "titel" on type "Article". Did you mean "title"?')
  const input = await gql('{ articles(filters: { titel: { eq: "x" } }) { title } }')
  t.equal(input.body.errors[0].message, 'Field "titel" is not defined by type "ArticleFiltersInput". Did you mean "title"?')
  const value = await gql('{ articles(status: PUBLISH) { title } }')
  t.equal(value.body.errors[0].message, 'Value "PUBLISH" does not exist in "PublicationStatus" enum. Did you mean the enum value "PUBLISHED"?')
})

t.test('suggestions stay when introspection is off (production), as in Strapi (Apollo does not hide them by default)', async (t) => {
  const closed = await buildGraphql(t, { format: 'flat', introspection: false, landingPage: false })
  const arg = await closed.gql('{ articles(sorts: "title") { title } }')
  t.equal(arg.body.errors[0].message, 'Unknown argument "sorts" on field "Query.articles". Did you mean "sort" or "status"?')
  const introspection = await closed.gql('{ __schema { queryType { name } } }')
  t.equal(introspection.status, 400, 'while introspection is refused')
})
