import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import contentApi, { contentApiServerOptions, type ContentApiOptions } from '../../lib/index.js'
import { oracleOptions, oraclePermissions } from '../fixtures/oracle/models.js'
import { createTestDatabase } from '../helpers/database.js'

/**
 * The bounds on a GraphQL request (docs/operations.md, "GraphQL bounds"): tokens and nesting
 * before parsing, variables' nesting before coercion, aliases and selections in validation, and
 * the rows a request may read before it runs, with its variables. Every bomb is a 400 in
 * GraphQL's format naming its bound, answered quickly, and leaves nothing in the log.
 *
 * The oracle model, unseeded (the bounds never read the database), the public role granted
 * its reads; `TIME_BOUND` is generous for a loaded CI machine, where a bomb took seconds to
 * minutes before these bounds.
 */

const TIME_BOUND = 3000

interface Built {
  app: FastifyInstance
  /** Log lines at warn level or above. */
  logs: Array<{ level: number, msg?: string, err?: { message?: string } }>
  post: (payload: unknown) => Promise<Answer>
  get: (query: Record<string, string>) => Promise<Answer>
}

interface Answer { status: number, body: any, ms: number }

async function build (t: Test, options: Pick<ContentApiOptions, 'graphql' | 'limits'> = {}): Promise<Built> {
  const database = await createTestDatabase()
  const logs: Built['logs'] = []
  const stream = { write: (line: string) => { logs.push(JSON.parse(line)) } }
  const app = Fastify(contentApiServerOptions({ logger: { level: 'warn', stream }, pluginTimeout: 120_000 }))
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, { ...oracleOptions, graphql: { format: 'flat' }, ...options, db: database.db })
  await app.ready()
  await app.contentApi.permissions.grant('public', oraclePermissions.public)
  const timed = async (run: () => Promise<{ statusCode: number, json: () => any }>): Promise<Answer> => {
    const started = performance.now()
    const res = await run()
    return { status: res.statusCode, body: res.json(), ms: performance.now() - started }
  }
  return {
    app,
    logs,
    post: async (payload) => await timed(async () => await app.inject({
      method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload)
    })),
    get: async (query) => await timed(async () => await app.inject({ method: 'GET', url: '/graphql', query, headers: { 'apollo-require-preflight': '1' } }))
  }
}

/** A 400 in GraphQL's format naming its bound, quickly, without `data`. */
function refused (t: Test, answer: Answer, code: string, limit: string, max: number, message: RegExp, what: string): void {
  t.equal(answer.status, 400, `${what}: 400`)
  t.notOk('data' in answer.body, `${what}: no data`)
  t.equal(answer.body.errors?.length, 1, `${what}: one error`)
  t.match(answer.body.errors?.[0], { message, extensions: { code, error: { name: 'ValidationError', details: { limit, max } } } }, `${what}: names ${limit}`)
  t.notMatch(JSON.stringify(answer.body), /call stack|INTERNAL_SERVER_ERROR/, `${what}: no internal error`)
  t.ok(answer.ms < TIME_BOUND, `${what}: answered in ${Math.round(answer.ms)} ms`)
}

const aliases = (n: number, field: string): string => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`
/** `{ and: [{ and: [ ... { title: { eq: "x" } } ... ] }] }`: two brackets a level. */
const nestedFilter = (levels: number): string => `${'{ and: ['.repeat(levels)}{ title: { eq: "x" } }${' ] }'.repeat(levels)}`
/** `{ not: { not: ... } }` as JSON text (JSON.stringify itself recurses): one object a level. */
const nestedNotJson = (levels: number): string => `${'{"not":'.repeat(levels)}{"title":{"eq":"x"}}${'}'.repeat(levels)}`
const FILTERED = 'query ($f: ArticleFiltersInput) { articles(filters: $f) { title } }'

// One application with the default bounds for the first suites.
const { post, get, logs } = await build(t)

t.test('the document: tokens and nesting, counted before parsing', async (t) => {
  refused(t, await post({ query: aliases(2000, 'articles(pagination: { pageSize: 100 }) { documentId title }') }),
    'GRAPHQL_PARSE_FAILED', 'graphql.maxTokens', 1000, /more than 1000 tokens, the most graphql\.maxTokens allows/, 'the alias bomb of 2,000 lists')
  refused(t, await post({ query: `{ articles { ${'title '.repeat(100_000)} } }` }),
    'GRAPHQL_PARSE_FAILED', 'graphql.maxTokens', 1000, /graphql\.maxTokens/, 'one field 100,000 times')
  const commented = await post({ query: `# ${'x '.repeat(20_000)}\n{ articles { title } }` })
  t.same(commented.body, { data: { articles: [] } }, 'comments are not tokens')

  for (const levels of [1000, 5000, 100_000]) {
    // 100,000 levels of `{ and: [ ... ] }` would pass the body limit: `not` is shorter.
    const filter = levels < 100_000 ? nestedFilter(levels) : `${'{not:'.repeat(levels)}{title:{eq:"x"}}${'}'.repeat(levels)}`
    refused(t, await post({ query: `{ articles(filters: ${filter}) { title } }` }),
      'GRAPHQL_PARSE_FAILED', 'limits.inputDepth', 64, /The GraphQL document nests deeper than 64 levels, the most limits\.inputDepth allows/, `a filter nested ${levels} levels`)
  }
  refused(t, await post({ query: `{ articles(filters: { title: { in: ${'['.repeat(100_000)}"x"${']'.repeat(100_000)} } }) { title } }` }),
    'GRAPHQL_PARSE_FAILED', 'limits.inputDepth', 64, /limits\.inputDepth/, 'a list nested 100,000 levels')
  refused(t, await post({ query: `{ ${'articles { category { '.repeat(5000)}name${' } }'.repeat(5000)} }` }),
    'GRAPHQL_PARSE_FAILED', 'limits.inputDepth', 64, /limits\.inputDepth/, 'a selection nested 10,000 levels')
  // Over GET, 1,000 levels is about as deep as a URL can carry (a few KiB of brackets).
  refused(t, await get({ query: `{ articles(filters: { title: { in: ${'['.repeat(1000)}"x"${']'.repeat(1000)} } }) { title } }` }),
    'GRAPHQL_PARSE_FAILED', 'limits.inputDepth', 64, /limits\.inputDepth/, 'a list nested 1,000 levels over GET')
  const brackets = await post({ query: '{ articles(filters: { title: { eq: "{{{{[[[[((((" } }) { title } }' })
  t.same(brackets.body, { data: { articles: [] } }, 'brackets inside strings do not nest')
  const blockString = await post({ query: `{ articles(filters: { title: { eq: """${'{['.repeat(100)}""" } }) { title } }` })
  t.same(blockString.body, { data: { articles: [] } }, 'nor inside block strings')
  const nested = await post({ query: `{ articles(filters: ${nestedFilter(25)}) { title } }` })
  t.same(nested.body, { data: { articles: [] } }, 'a filter nested 25 levels (52 brackets deep) runs')
  t.same(logs, [], 'nothing logged at warn or above')
})

t.test('variables: their nesting is checked before GraphQL coerces them, over POST and GET', async (t) => {
  for (const levels of [1000, 5000, 100_000]) {
    refused(t, await post(`{"query":${JSON.stringify(FILTERED)},"variables":{"f":${nestedNotJson(levels)}}}`),
      'BAD_USER_INPUT', 'limits.inputDepth', 64, /The GraphQL variables nest deeper than 64 levels, the most limits\.inputDepth allows/, `variables nested ${levels} levels`)
  }
  refused(t, await post(`{"query":${JSON.stringify(FILTERED)},"variables":{"f":{"title":{"in":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}}`),
    'BAD_USER_INPUT', 'limits.inputDepth', 64, /limits\.inputDepth/, 'a list variable nested 100,000 levels')
  refused(t, await get({ query: FILTERED, variables: `{"f":{"title":{"in":${'['.repeat(1000)}${']'.repeat(1000)}}}}` }),
    'BAD_USER_INPUT', 'limits.inputDepth', 64, /limits\.inputDepth/, 'variables nested 1,000 levels over GET')
  const fits = await post(`{"query":${JSON.stringify(FILTERED)},"variables":{"f":${nestedNotJson(60)}}}`)
  t.same(fits.body, { data: { articles: [] } }, 'variables nested 62 levels run')
  const malformed = await get({ query: FILTERED, variables: '{"f":' })
  t.equal(malformed.status, 400, 'variables that are not JSON are Mercurius\'s 400, as before')
  t.same(logs, [], 'nothing logged at warn or above')
})

t.test('aliases and field selections, fragments counted where they are spread', async (t) => {
  t.same((await post({ query: aliases(15, 'articles { title }') })).status, 200, '15 aliases run')
  refused(t, await post({ query: aliases(16, 'articles { title }') }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxAliases', 15, /^The operation has more than 15 aliases \(fragments counted where they are spread\), the most graphql\.maxAliases allows$/, '16 aliases')
  refused(t, await post({ query: 'query Page { articles { ...A ...A } } fragment A on Article { ...B } fragment B on Article { a1: title a2: title a3: title a4: title a5: title a6: title a7: title a8: title }' }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxAliases', 15, /^Operation 'Page' has more than 15 aliases/, '8 aliases in a fragment spread twice')

  // Each fragment spreads the next twice: 2^40 selections in 600 bytes, measured in linear time.
  let fanOut = '{ articles(pagination: { pageSize: 1 }) { ...F0 } } '
  for (let i = 0; i < 40; i++) fanOut += `fragment F${i} on Article { ...F${i + 1} ...F${i + 1} title } `
  fanOut += 'fragment F40 on Article { title }'
  refused(t, await post({ query: fanOut }), 'GRAPHQL_VALIDATION_FAILED', 'graphql.maxSelections', 1000,
    /more than 1000 field selections \(fragments counted where they are spread\), the most graphql\.maxSelections allows/, 'a fragment fan-out of 2^40 selections')
  let deepFanOut = '{ articles { ...G0 } } '
  for (let i = 0; i < 40; i++) deepFanOut += `fragment G${i} on Article { category { articles { ...G${i + 1} } } category { articles { ...G${i + 1} } } } `
  deepFanOut += 'fragment G40 on Article { title }'
  const deep = await post({ query: deepFanOut })
  t.equal(deep.status, 400, 'a fan-out that is also too deep')
  t.ok(deep.ms < TIME_BOUND, `answered in ${Math.round(deep.ms)} ms: the depth limit measures fragments once too`)
  // One depth error per selection past the limit and per path, as graphql-depth-limit reports them
  // (the spreads of G5, at depth 11, on 2^5 paths), before graphql-js's rules and ours.
  const messages: string[] = deep.body.errors.map((e: { message: string }) => e.message)
  t.equal(messages.length, 33)
  t.same(new Set(messages.slice(0, 32)), new Set(["'' exceeds maximum operation depth of 10"]))
  t.match(messages[32], /graphql\.maxSelections/)
  let wider = '{ articles { ...W0 } } '
  for (let i = 0; i < 7; i++) wider += `fragment W${i} on Article { category { articles { ...W${i + 1} } } category { articles { ...W${i + 1} } } category { articles { ...W${i + 1} } } } `
  wider += 'fragment W7 on Article { title }'
  const capped = await post({ query: wider })
  t.equal(capped.body.errors.filter((e: { message: string }) => e.message.includes('maximum operation depth')).length, 50, '3^5 paths: at most 50 depth errors')
  t.same(logs, [], 'nothing logged at warn or above')
})

t.test('the rows a request may read, with its variables, before it runs', async (t) => {
  const rows = (answer: Answer): number | null => answer.status === 200
    ? -1
    : Number(/up to (\d+) rows/.exec(answer.body.errors?.[0]?.message ?? '')?.[1] ?? NaN)
  // The default bound is graphql.maxRows, 2,500 (limits.maxRows is 10,000).
  const nested = 'articles(pagination: { pageSize: 100 }) { title authors(pagination: { limit: 24 }) { name } }'
  t.equal((await post({ query: `{ ${nested} }` })).status, 200, '100 + 100 x 24 = 2,500 rows run')
  const over = await post({ query: '{ articles(pagination: { pageSize: 100 }) { title authors(pagination: { limit: 25 }) { name } } }' })
  refused(t, over, 'GRAPHQL_VALIDATION_FAILED', 'graphql.maxRows', 2500,
    /^The operation may read up to 2600 rows, more than the 2500 graphql\.maxRows allows: ask for smaller pages or fewer lists$/, '100 + 100 x 25 rows')
  refused(t, await post({ query: aliases(2, 'articles(pagination: { pageSize: 100 }) { authors(pagination: { limit: 12 }) { name } }') }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxRows', 2500, /up to 2600 rows/, 'aliases each count')

  const query = 'query ($size: Int, $page: PaginationArg) { articles(pagination: $page) { authors(pagination: { limit: $size }) { name } } }'
  t.equal((await post({ query, variables: { size: 24, page: { pageSize: 100 } } })).status, 200, 'through variables, within the bound')
  refused(t, await post({ query, variables: { size: 25, page: { pageSize: 100 } } }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxRows', 2500, /up to 2600 rows/, 'the same document with larger variables (its validation cached)')
  refused(t, await get({ query, variables: JSON.stringify({ size: 99, page: { pageSize: 100 } }) }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxRows', 2500, /up to 10000 rows/, 'variables over GET')
  refused(t, await post({ query: 'query ($size: Int = 25) { articles(pagination: { limit: 100 }) { authors(pagination: { limit: $size }) { name } } }' }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxRows', 2500, /up to 2600 rows/, 'a variable\'s default')
  refused(t, await post({ query: '{ articles(pagination: { limit: -1 }) { authors(pagination: { limit: -1 }) { name } } }' }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxRows', 2500, /up to 10100 rows/, 'limit -1 reads the amount limit')
  refused(t, await post({ query: '{ articles(pagination: { pageSize: 1000 }) { authors(pagination: { limit: 1000 }) { articles(pagination: { limit: 1000 }) { title } } } }' }),
    'GRAPHQL_VALIDATION_FAILED', 'graphql.maxRows', 2500, /up to 1010100 rows/, 'page sizes are capped by the amount limit, nested lists multiply')

  // Fragments, connections, to-one relations, components and dynamic zones.
  const cases: Array<[string, number]> = [
    ['{ articles { title } }', 10],
    ['{ articles { category { name } } }', 20],
    ['{ articles { authors { name } } }', 110],
    ['{ articles(pagination: { pageSize: 100 }) { ...A } } fragment A on Article { authors(pagination: { limit: 25 }) { name } ...B } fragment B on Article { category { name } }', 2700],
    ['{ articles_connection(pagination: { pageSize: 100 }) { nodes { authors_connection(pagination: { limit: 25 }) { nodes { name } } } pageInfo { total } } }', 2601],
    ['{ articles(pagination: { pageSize: 100 }) { seo { metaTitle } blocks { __typename ... on ComponentSharedQuote { text } } cover { url } localizations { title } } }', 2300],
    ['{ article(documentId: "x") { authors(pagination: { limit: 100 }) { articles(pagination: { limit: 100 }) { title } } } }', 10101]
  ]
  for (const [text, expected] of cases) {
    const answer = await post({ query: text })
    if (expected <= 2500) t.equal(answer.status, 200, `${text}: ${expected} rows run`)
    else t.equal(rows(answer), expected, `${text}: ${expected} rows`)
  }
  t.same(logs, [], 'nothing logged at warn or above')
})

t.test('the entity shape counts the same documents as the flat one', async (t) => {
  const { post } = await build(t, { graphql: { format: 'entity', maxRows: 11 } })
  const answer = async (query: string): Promise<string> => (await post({ query })).body.errors?.[0]?.message ?? 'ran'
  t.equal(await answer('{ articles(pagination: { pageSize: 5 }) { data { id attributes { title category { data { attributes { name } } } } } meta { pagination { total } } } }'), 'ran',
    '5 documents, their 5 categories and the count: 11 rows')
  t.match(await answer('{ articles(pagination: { pageSize: 5 }) { data { attributes { category { data { id } } } } meta { pagination { total } } } b: articles(pagination: { pageSize: 1 }) { data { id } } }'),
    /^The operation may read up to 12 rows, more than the 11 graphql\.maxRows allows/, 'one more document')
  t.match(await answer('{ articles(pagination: { pageSize: 4 }) { data { attributes { authors(pagination: { limit: 2 }) { data { id } } } } } }'), /up to 12 rows/,
    'a to-many relation is a collection: its data reads the page')
})

t.test('the bounds are options; limits.maxRows bounds GraphQL too', async (t) => {
  const loose = await build(t, { graphql: { format: 'flat', maxTokens: 50_000, maxAliases: 2000, maxSelections: 10_000, maxRows: 1_000_000 } })
  const manyAliases = await loose.post({ query: aliases(100, 'articles(pagination: { pageSize: 1 }) { title }') })
  t.equal(manyAliases.status, 200, 'raised bounds let a large document run')
  refused(t, await loose.post({ query: '{ articles(pagination: { pageSize: 100 }) { authors(pagination: { limit: 100 }) { name } } }' }),
    'GRAPHQL_VALIDATION_FAILED', 'limits.maxRows', 10_000, /more than the 10000 limits\.maxRows allows/, 'limits.maxRows, the smaller bound')
  const strict = await build(t, { limits: { inputDepth: 8, maxRows: 30, bodyBytes: 2000 } })
  const large = await strict.post({ query: `{ articles(filters: { title: { eq: "${'x'.repeat(2000)}" } }) { title } }` })
  t.equal(large.status, 413, 'a body over limits.bodyBytes is not run: 413')
  t.strictSame(large.body, { errors: [{ message: 'Entity too large', extensions: { code: 'BAD_REQUEST' } }] }, 'in Apollo Server\'s format')
  refused(t, await strict.post({ query: '{ articles(filters: { and: [{ and: [{ and: [{ title: { eq: "x" } }] }] }] }) { title } }' }),
    'GRAPHQL_PARSE_FAILED', 'limits.inputDepth', 8, /deeper than 8 levels/, 'limits.inputDepth 8')
  refused(t, await strict.post({ query: '{ articles { category { name } } b: articles(pagination: { pageSize: 11 }) { title } }' }),
    'GRAPHQL_VALIDATION_FAILED', 'limits.maxRows', 30, /up to 31 rows/, 'limits.maxRows 30')
})

t.test('a batch is one request: its operations share the token and row budgets', async (t) => {
  const { post } = await build(t, { graphql: { format: 'flat', maxRows: 200, engineServer: { allowBatchedQueries: true } } })
  const ok = await post([{ query: '{ articles(pagination: { pageSize: 100 }) { title } }' }, { query: '{ articles(pagination: { pageSize: 100 }) { title } }' }])
  t.same(ok.body, [{ data: { articles: [] } }, { data: { articles: [] } }], 'two operations of 100 rows')
  const over = await post([{ query: '{ articles(pagination: { pageSize: 100 }) { title } }' }, { query: '{ articles(pagination: { pageSize: 100 }) { title } }' },
    { query: '{ articles(pagination: { pageSize: 100 }) { title } }' }])
  t.equal(over.body.filter((answer: any) => answer.data !== undefined).length, 2, 'the operations within the budget run')
  t.match(over.body.find((answer: any) => answer.errors !== undefined), {
    errors: [{ message: /up to 300 rows with the other operations of its batch, more than the 200 graphql\.maxRows allows/, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]
  }, 'the one past it is refused')
  const half = `{ ${'articles { title } '.repeat(130)} }`
  refused(t, await post([{ query: half }, { query: half }]), 'GRAPHQL_PARSE_FAILED', 'graphql.maxTokens', 1000, /graphql\.maxTokens/, 'two documents of 522 tokens')
  refused(t, await post([{ query: '{ articles { title } }' }, { query: `{ articles(filters: ${nestedFilter(5000)}) { title } }` }]),
    'GRAPHQL_PARSE_FAILED', 'limits.inputDepth', 64, /limits\.inputDepth/, 'a deep document in a batch')
  refused(t, await post(`[{"query":"{ articles { title } }"},{"query":${JSON.stringify(FILTERED)},"variables":{"f":${nestedNotJson(5000)}}}]`),
    'BAD_USER_INPUT', 'limits.inputDepth', 64, /limits\.inputDepth/, 'deep variables in a batch')
})

t.test('graphql options: the new bounds are validated with the others', async (t) => {
  const { resolveGraphqlOptions } = await import('../../lib/options/graphql.js')
  for (const key of ['maxAliases', 'maxSelections', 'maxTokens', 'maxRows']) {
    t.throws(() => resolveGraphqlOptions({ [key]: 0 }, false), new RegExp(`graphql\\.${key}: expected an integer of at least 1`))
  }
  t.match(resolveGraphqlOptions({}, false), { maxAliases: 15, maxSelections: 1000, maxTokens: 1000, maxRows: 2500 }, 'defaults')
})
