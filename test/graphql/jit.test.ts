import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { GraphQLResolveInfo } from 'graphql'
import { buildGraphql, FULL_TOKEN } from './helpers.js'

/**
 * Mercurius runs a document through graphql-js the first time and compiled (graphql-jit) from
 * its second run on (lib/graphql/index.ts, `JIT_AFTER`). Every query below is answered four
 * times: once under another text (a document of its own, so graphql-js), then three times under
 * its own text (graphql-js, then compiled twice); the four answers must be the same, status and
 * body, errors included. A middleware on the root fields records which engine ran them: graphql-js
 * gives a field's path its parent type's name, graphql-jit does not.
 */

type Engine = 'graphql-js' | 'compiled'

async function build (t: Test, format: 'flat' | 'entity', engineServer?: Record<string, unknown>): Promise<{ app: FastifyInstance, engines: Engine[] }> {
  const engines: Engine[] = []
  const record = async (next: any, parent: unknown, args: unknown, context: unknown, info: GraphQLResolveInfo): Promise<unknown> => {
    engines.push((info.path as { typename?: string }).typename === undefined ? 'compiled' : 'graphql-js')
    return await next(parent, args, context, info)
  }
  const { app } = await buildGraphql(t, { format, ...(engineServer === undefined ? {} : { engineServer }) }, (app) => {
    app.contentApi.graphql!.use({
      typeDefs: 'extend type Query { boom: String!  echo(text: String): String }\nextend type Article { shout: String }',
      resolvers: {
        Query: {
          boom: () => { throw new Error('boom') },
          echo: (_: unknown, { text }: { text?: string }) => text ?? null
        },
        Article: { shout: (article: { title?: string }) => article.title?.toUpperCase() ?? null }
      },
      resolversConfig: {
        'Query.articles': { middlewares: [record], policies: [(ctx) => ctx.http.request.headers['x-block'] !== 'yes'] },
        'Query.article': { middlewares: [record] },
        'Query.boom': { auth: false },
        'Query.echo': { auth: false, middlewares: [record] }
      }
    })
  })
  return { app, engines }
}

interface Case {
  name: string
  query: string
  variables?: Record<string, unknown>
  headers?: Record<string, string>
  operationName?: string
}

async function send (app: FastifyInstance, query: string, c: Case): Promise<{ status: number, body: unknown }> {
  const { variables, headers, operationName } = c
  const res = await app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify({ query, variables, operationName }) })
  return { status: res.statusCode, body: res.json() }
}

/** Answers the case four times; returns the engines its root fields ran on, run by run. */
async function check (t: Test, app: FastifyInstance, engines: Engine[], c: Case): Promise<Engine[]> {
  const reference = await send(app, `${c.query}\n# reference`, c)
  const ran: Engine[] = []
  for (let run = 1; run <= 3; run++) {
    const before = engines.length
    const answer = await send(app, c.query, c)
    ran.push(...engines.slice(before))
    t.equal(answer.status, reference.status, `${c.name}: status, run ${run}`)
    t.strictSame(answer.body, reference.body, `${c.name}: body, run ${run}`)
  }
  return ran
}

const FLAT: Case[] = [
  { name: 'the benchmarked list', query: '{ articles(pagination: { pageSize: 10 }) { title category { name } } }' },
  {
    name: 'aliases, one relation read with two argument sets',
    query: `{
      a: articles(sort: "title:asc", pagination: { pageSize: 2 }) { t: title c: category { n: name } }
      b: articles(sort: "title:desc", pagination: { pageSize: 3 }) { title authors(sort: "name:asc") { name } first: authors(sort: "name:desc", pagination: { limit: 1 }) { name } }
    }`
  },
  {
    name: 'fragments, inline fragments and __typename',
    query: `query Q { __typename articles(pagination: { pageSize: 3 }) { __typename ...F category { __typename ... on Category { name } } } }
      fragment F on Article { documentId title authors { ...A } }
      fragment A on Author { __typename name }`
  },
  { name: 'variables', query: 'query V($size: Int, $sort: [String]) { articles(pagination: { pageSize: $size }, sort: $sort) { title views } }', variables: { size: 2, sort: ['views:desc'] } },
  {
    name: 'variables too large to keep their check',
    query: 'query L($titles: [String]) { articles(filters: { title: { notIn: $titles } }, pagination: { pageSize: 2 }) { title } }',
    variables: { titles: Array.from({ length: 120 }, (_, i) => `no article has this title ${i}`) }
  },
  { name: 'other variables for the same text', query: 'query V($size: Int, $sort: [String]) { articles(pagination: { pageSize: $size }, sort: $sort) { title views } }', variables: { size: 3, sort: ['title:asc'] } },
  {
    name: '@skip and @include',
    query: 'query S($yes: Boolean!, $no: Boolean!) { articles(pagination: { pageSize: 2 }) { title @include(if: $yes) slug @skip(if: $yes) category @include(if: $no) { name } } }',
    variables: { yes: true, no: false }
  },
  {
    name: 'every scalar, a component, a dynamic zone',
    query: `{ articles(sort: "title:asc", pagination: { pageSize: 4 }) {
      documentId title slug body summary views rating featured publishDate tags kind createdAt updatedAt publishedAt locale
      seo { id metaTitle } blocks { __typename ... on ComponentSharedQuote { id } ... on ComponentSharedRichText { id } }
    } }`
  },
  { name: 'an extension field reading its parent', query: '{ articles(pagination: { pageSize: 3 }) { title shout } }' },
  { name: 'a connection', query: '{ articles_connection(pagination: { page: 2, pageSize: 2 }) { nodes { title } pageInfo { page pageSize pageCount total } } }' },
  { name: 'one document, found and not', query: 'query One($id: ID!) { article(documentId: $id) { title } }', variables: { id: 'no-such-document' } },
  { name: 'filters', query: '{ articles(filters: { or: [{ views: { gt: 100 } }, { title: { contains: "a" } }] }, pagination: { pageSize: 5 }) { title views } }' },
  { name: 'a field error: pagination mixed', query: '{ articles(pagination: { page: 1, limit: 2 }) { title } }' },
  { name: 'a forbidden root field next to a permitted one', query: '{ secrets { label } articles(pagination: { pageSize: 1 }) { title } }' },
  { name: 'a refused policy', query: '{ articles(pagination: { pageSize: 1 }) { title } }', headers: { 'x-block': 'yes' } },
  { name: 'a non-null field that throws', query: '{ echo(text: "hi") boom }' },
  { name: 'a bad variable', query: 'query B($size: Int) { articles(pagination: { pageSize: $size }) { title } }', variables: { size: 'ten' } },
  // A compiled query is of one operation and ignores operationName: these stay on graphql-js.
  { name: 'two operations, the first named', query: 'query A { articles(pagination: { pageSize: 1 }) { title } } query B { echo(text: "b") }', operationName: 'A' },
  { name: 'two operations, the other named', query: 'query A { articles(pagination: { pageSize: 1 }) { title } } query B { echo(text: "b") }', operationName: 'B' },
  { name: 'one operation, named', query: 'query One { echo(text: "one") }', operationName: 'One' },
  { name: 'one operation, another name asked', query: 'query One { echo(text: "one") }', operationName: 'Other' },
  { name: 'a large document', query: `{ ${Array.from({ length: 11 }, (_, i) => `a${i}: articles(pagination: { pageSize: 1 }) { documentId title slug views kind category { name } authors { name } }`).join(' ')} }` },
  // graphql-jit 0.8 cannot compile the coercion of a recursive input type (it recursed until the heap was gone).
  {
    name: 'a variable of a recursive input type',
    query: 'query F($f: ArticleFiltersInput, $p: PaginationArg) { articles(filters: $f, pagination: $p, sort: "title") { title views } }',
    variables: { f: { views: { gte: 100 }, or: [{ category: { name: { eq: 'Travel' } } }, { not: { title: { contains: 'x' } } }] }, p: { pageSize: 3 } }
  },
  { name: 'a required variable not sent', query: 'query R($text: String!) { echo(text: $text) }' },
  { name: 'introspection', query: '{ __schema { queryType { name } } __type(name: "Category") { name fields { name type { name kind ofType { name } } } } }' },
  { name: 'with an API token', query: '{ secrets(sort: "label") { label value } }', headers: { authorization: `Bearer ${FULL_TOKEN}` } }
]

t.test('flat: every answer compiled is the answer graphql-js gives', async (t) => {
  const { app, engines } = await build(t, 'flat')
  for (const c of FLAT) {
    const ran = await check(t, app, engines, c)
    if (c.name === 'the benchmarked list') t.strictSame(ran, ['graphql-js', 'compiled', 'compiled'], 'the second and third runs are compiled')
    if (c.name.startsWith('two operations') || c.name === 'a large document' || c.name === 'a variable of a recursive input type') t.notOk(ran.includes('compiled'), `${c.name}: never compiled`)
    if (c.name === 'one operation, named') t.strictSame(ran, ['graphql-js', 'compiled', 'compiled'], `${c.name}: compiled`)
    if (c.name === 'aliases, one relation read with two argument sets') t.strictSame(ran, ['graphql-js', 'graphql-js', 'compiled', 'compiled', 'compiled', 'compiled'], 'both aliased root fields compiled')
  }
})

t.test('entity: every answer compiled is the answer graphql-js gives', async (t) => {
  const { app, engines } = await build(t, 'entity')
  const cases: Case[] = [
    {
      name: 'entity list',
      query: `{ articles(sort: "title:asc", pagination: { pageSize: 3 }) {
        data { __typename id attributes { title category { data { id attributes { name } } } authors { data { attributes { name } } } } }
        meta { pagination { page pageSize pageCount total } }
      } }`
    },
    { name: 'entity one', query: 'query One($id: ID) { article(id: $id) { data { id attributes { title } } } }', variables: { id: 'no-such-document' } },
    { name: 'entity forbidden', query: '{ secrets { data { id } } }' }
  ]
  let compiled = 0
  for (const c of cases) compiled += (await check(t, app, engines, c)).filter((e) => e === 'compiled').length
  t.ok(compiled >= 4, `${compiled} root fields ran compiled`)
})

t.test('engineServer.jit: 0 never compiles', async (t) => {
  const { app, engines } = await build(t, 'flat', { jit: 0 })
  const ran = await check(t, app, engines, FLAT[0])
  t.strictSame(ran, ['graphql-js', 'graphql-js', 'graphql-js'])
})
