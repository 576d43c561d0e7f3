import t from 'tap'
import { ConfigurationError } from '../../lib/errors.js'
import { resolveGraphqlOptions } from '../../lib/options/graphql.js'
import { build } from '../helpers/build.js'
import { note } from './helpers.js'

/** Every option of the spec's "GraphQL plugin configuration" table, and ours. */

const post = async (app: any, query: string, url = '/graphql', headers: Record<string, string> = {}) => {
  const res = await app.inject({ method: 'POST', url, headers, payload: { query } })
  return { status: res.statusCode as number, body: res.headers['content-type']?.includes('json') === true ? res.json() : res.body }
}

t.test('defaults, validation and every problem at once', async (t) => {
  t.same(resolveGraphqlOptions(undefined, false), {
    endpoint: '/graphql',
    shadowCRUD: true,
    depthLimit: 10,
    amountLimit: 100,
    maxAliases: 15,
    maxSelections: 1000,
    maxTokens: 1000,
    maxRows: 2500,
    defaultLimit: 10,
    format: 'entity',
    v4CompatibilityMode: false,
    landingPage: true,
    introspection: true,
    engineServer: {}
  })
  const production = resolveGraphqlOptions({}, true)!
  t.equal(production.landingPage, false, 'no sandbox in production')
  t.equal(production.introspection, false, 'no introspection in production')
  t.equal(resolveGraphqlOptions({ playgroundAlways: true }, true)!.landingPage, true, 'playgroundAlways (deprecated) turns the sandbox on')
  t.equal(resolveGraphqlOptions({ landingPage: () => true }, true)!.landingPage, true, 'landingPage as a function')
  t.equal(resolveGraphqlOptions({ landingPage: false }, false)!.landingPage, false)
  t.equal(resolveGraphqlOptions(false), null, 'false turns GraphQL off')
  let error: unknown = null
  try {
    resolveGraphqlOptions({
      endpoint: 'graphql', depthLimit: 0, amountLimit: 'x', format: 'v4', v4CompatibilityMode: 1, engineServer: { schema: 1 }, nope: 1, landingPage: () => 'yes'
    } as any, false)
  } catch (err) { error = err }
  t.ok(error instanceof ConfigurationError, 'a ConfigurationError')
  t.equal((error as ConfigurationError).problems.length, 8, (error as ConfigurationError).problems.join('\n'))
  t.throws(() => resolveGraphqlOptions({ v4CompatibilityMode: true }, false), /only applies to format "flat"/)
  t.throws(() => resolveGraphqlOptions({ defaultLimit: 200 }, false), /defaultLimit must not be greater than graphql.amountLimit/)
})

t.test('endpoint, CSRF prevention, empty queries, GET queries, scalars', async (t) => {
  const { app } = await build(t, { models: [note], graphql: { endpoint: '/api/graphql', format: 'flat' } })
  t.equal((await post(app, '{ notes { title } }')).status, 404, 'nothing at /graphql')
  const created = await post(app, 'mutation { createNote(data: { title: "a", big: "9007199254740993", at: "10:30:00.000", when: "2025-01-31T10:00:00.000Z", state: "in-progress", hidden: "h" }) { title big at when state } }', '/api/graphql')
  t.same(created.body, { data: { createNote: { title: 'a', big: '9007199254740993', at: '10:30:00.000', when: '2025-01-31T10:00:00.000Z', state: 'in-progress' } } },
    'Long, Time, DateTime; an enumeration whose values are not GraphQL names is a String')
  const badTime = await post(app, 'mutation { createNote(data: { at: "25:00" }) { title } }', '/api/graphql')
  t.equal(badTime.status, 400, 'malformed scalars fail validation')
  t.match(badTime.body.errors[0].message, /Time cannot represent/)
  const badLong = await post(app, 'mutation { createNote(data: { big: "1.5" }) { title } }', '/api/graphql')
  t.equal(badLong.status, 400)
  const get = await app.inject({ method: 'GET', url: '/api/graphql?query={notes{title}}', headers: { accept: 'application/json' } })
  t.equal(get.statusCode, 400, 'a GET without a preflight header is refused (CSRF)')
  t.match(get.json().errors[0].message, /Cross-Site Request Forgery/)
  const preflight = await app.inject({ method: 'GET', url: '/api/graphql?query={notes{title}}', headers: { 'apollo-require-preflight': 'true' } })
  t.same(preflight.json(), { data: { notes: [{ title: 'a' }] } }, 'with apollo-require-preflight it runs')
  const form = await app.inject({ method: 'POST', url: '/api/graphql', headers: { 'content-type': 'text/plain' }, payload: '{"query":"{ notes { title } }"}' })
  t.equal(form.statusCode, 400, 'a text/plain POST is refused (CSRF)')
  const empty = await post(app, '', '/api/graphql')
  t.same(empty, { status: 400, body: { errors: [{ message: 'GraphQL operations must contain a non-empty `query` or a `persistedQuery` extension.', extensions: { code: 'BAD_REQUEST' } }] } })
  const syntax = await post(app, '{ notes { title ', '/api/graphql')
  t.equal(syntax.status, 400)
  t.equal(syntax.body.errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED')
  const mutationOverGet = await app.inject({ method: 'GET', url: '/api/graphql?query=mutation{deleteNote(documentId:"x"){documentId}}', headers: { 'apollo-require-preflight': 'true' } })
  t.ok(mutationOverGet.statusCode >= 400 && mutationOverGet.statusCode < 500, 'no mutation over GET')
  const privateField = await post(app, '{ notes { hidden } }', '/api/graphql')
  t.equal(privateField.body.errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED', 'private attributes are not in the schema')
  const variables = await app.inject({ method: 'POST', url: '/api/graphql', payload: { query: 'query($p: PaginationArg) { notes(pagination: $p) { title } }', variables: { p: { page: 'x' } } } })
  t.equal(variables.statusCode, 400, 'variables that do not fit are a 400')
  t.equal(variables.json().errors[0].extensions.code, 'BAD_USER_INPUT')
})

t.test('a request with no operation to run is a 400 in Apollo Server\'s words, never an internal error', async (t) => {
  const { app } = await build(t, { models: [note], graphql: { format: 'flat' } })
  const send = async (payload: unknown) => {
    const res = await app.inject({ method: 'POST', url: '/graphql', payload: payload as any })
    return { status: res.statusCode, error: res.json().errors?.[0], data: res.json().data }
  }
  const cases: Array<[unknown, string, string | RegExp]> = [
    [{ query: 1 }, 'BAD_REQUEST', 'GraphQL queries must be strings.'],
    [{ query: { kind: 'Document', definitions: [] } }, 'BAD_REQUEST', 'GraphQL queries must be strings.'],
    [{}, 'BAD_REQUEST', 'POST body missing, invalid Content-Type, or JSON object has no keys.'],
    [{ query: '{ notes { title } }', operationName: 1 }, 'BAD_REQUEST', '`operationName` in a POST body must be a string if provided.'],
    [{ query: '{ notes { title } }', variables: '{}' }, 'BAD_REQUEST', '`variables` in a POST body should be provided as an object, not a recursively JSON-encoded string.'],
    [{ query: '{ notes { title } }', variables: [1] }, 'BAD_REQUEST', '`variables` in a POST body must be an object if provided.'],
    [{ query: '{ notes { title } }', extensions: 3 }, 'BAD_REQUEST', '`extensions` in a POST body must be an object if provided.'],
    [{ query: '{ notes { title } }', operationName: 'Nope' }, 'OPERATION_RESOLUTION_FAILURE', 'Unknown operation named "Nope".'],
    [{ query: 'query A { notes { title } } query B { notes { title } }' }, 'OPERATION_RESOLUTION_FAILURE', 'Must provide operation name if query contains multiple operations.'],
    [{ query: 'query($id: ID!) { note(documentId: $id) { title } }' }, 'BAD_USER_INPUT', 'Variable "$id" of required type "ID!" was not provided.'],
    [{ query: 'subscription { notes { title } }' }, 'GRAPHQL_VALIDATION_FAILED', /not configured to execute subscription/]
  ]
  for (const [payload, code, message] of cases) {
    const { status, error } = await send(payload)
    t.equal(status, 400, JSON.stringify(payload))
    t.equal(error.extensions.code, code, JSON.stringify(payload))
    t.match(error.message, message)
  }
  const chosen = await send({ query: 'query A { a: notes { title } } query B { b: notes { title } }', operationName: 'B' })
  t.equal(chosen.status, 200, 'a named operation that exists runs')
  t.same(chosen.data, { b: [] })
})

t.test('defaultLimit and amountLimit', async (t) => {
  const { app } = await build(t, { models: [note], graphql: { format: 'flat', defaultLimit: 2, amountLimit: 3 } })
  for (let i = 0; i < 5; i++) await app.contentApi.documents('api::note.note').create({ data: { title: `n${i}` } })
  t.same((await post(app, '{ notes { title } }')).body, { data: { notes: [{ title: 'n0' }, { title: 'n1' }] } }, 'defaultLimit')
  t.same((await post(app, '{ notes(pagination: { limit: 3 }) { title } }')).body.data.notes.length, 3, 'up to the amount limit')
  const over = await post(app, '{ notes_connection(pagination: { limit: 10 }) { nodes { title } pageInfo { total } } }')
  t.equal(over.status, 200, 'over the amount limit: a GraphQL error, not a 500')
  t.same(over.body.data, { notes_connection: null })
  t.match(over.body.errors[0], { path: ['notes_connection'], extensions: { code: 'BAD_USER_INPUT' } })
  t.match(over.body.errors[0].message, /more than 3 items, the amountLimit/)
  const all = await post(app, '{ notes(pagination: { limit: -1 }) { title } }')
  t.match(all.body.errors[0].message, /amountLimit/, 'limit -1 is bounded by the amount limit too')
})

t.test('graphql: false, shadowCRUD: false, introspection and the landing page', async (t) => {
  const off = await build(t, { models: [note], graphql: false })
  t.equal(off.app.contentApi.graphql, null, 'no extension API')
  t.equal((await post(off.app, '{ __typename }')).status, 404, 'no endpoint')

  const bare = await build(t, { models: [note], graphql: { shadowCRUD: false, introspection: false, landingPage: false, depthLimit: 1 } })
  const fields = Object.keys(bare.app.contentApi.graphql!.schema!.getQueryType()!.getFields())
  t.same(fields.sort(), ['i18NLocales', 'me'], 'shadowCRUD: false generates no content-type operation')
  const deep = await post(bare.app, '{ me { role { name } } }')
  t.equal(deep.status, 400, 'depthLimit 1')
  t.equal(deep.body.errors[0].message, "'' exceeds maximum operation depth of 1")
  const introspection = await post(bare.app, '{ __schema { types { name } } }')
  t.equal(introspection.status, 400, 'introspection off')
  const html = await bare.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } })
  t.not(html.headers['content-type'], 'text/html; charset=utf-8', 'no sandbox page')
  t.equal((await bare.app.inject('/graphql/sandbox/graphiql.js')).statusCode, 404, 'nor its assets')

  const sandbox = await build(t, { models: [note], graphql: { landingPage: true, engineServer: { allowBatchedQueries: true } } })
  const page = await sandbox.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  t.match(page.headers['content-security-policy'], /script-src 'self' 'nonce-[a-f0-9]+'/, 'its own CSP, no other host')
  t.match(page.body, /GraphiQL/)
  for (const asset of ['react.js', 'react-dom.js', 'graphiql.js', 'graphiql.css']) {
    t.equal((await sandbox.app.inject(`/graphql/sandbox/${asset}`)).statusCode, 200, `${asset} is served locally`)
  }
  const batch = await sandbox.app.inject({ method: 'POST', url: '/graphql', payload: [{ query: '{ notes { title } }' }, { query: '{ me { id } }' }] })
  t.equal(batch.statusCode, 200, 'engineServer options reach Mercurius (allowBatchedQueries)')
  t.equal(batch.json().length, 2)
})
