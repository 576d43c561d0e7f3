import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import contentApi from '../../lib/index.js'
import { createTestDatabase } from '../helpers/database.js'
import { oracleOptions } from '../fixtures/oracle/models.js'

/**
 * A resolver's unexpected failure: the client gets Strapi's `INTERNAL_SERVER_ERROR` without the
 * cause, and the cause goes to the log at the error level, once per request, as REST's 500s do
 * (lib/graphql/errors.ts). A null for a non-null field keeps graphql-js's message, as Apollo's.
 */

interface LogLine { level: number, msg: string, err?: { message: string }, path?: Array<string | number>, failures?: number }
const logs: LogLine[] = []
const stream = new Writable({ write (chunk: Buffer, _encoding, done) { logs.push(JSON.parse(chunk.toString())); done() } })

const database = await createTestDatabase()
const app = Fastify({ logger: { level: 'warn', stream } })
t.teardown(async () => {
  await app.close()
  await database.drop()
})
await app.register(contentApi, { ...oracleOptions, graphql: { format: 'flat' }, db: database.db })
app.contentApi.graphql!.use({
  typeDefs: 'type Item { name: String! }\nextend type Query { broken: String  fine: String  promised: String!  items: [Item] }',
  resolvers: { Query: { broken: () => { throw new Error('a detail for the operator only') }, fine: () => 'fine', promised: () => null, items: () => [{ name: null }, { name: null }, { name: null }] } },
  resolversConfig: { 'Query.broken': { auth: false }, 'Query.fine': { auth: false }, 'Query.promised': { auth: false }, 'Query.items': { auth: false } }
})
await app.ready()

t.test('the cause is logged, not sent', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ fine broken }' } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    data: { fine: 'fine', broken: null },
    errors: [{ message: 'Internal Server Error', path: ['broken'], extensions: { code: 'INTERNAL_SERVER_ERROR', error: { name: 'InternalServerError', message: 'Internal Server Error', details: {} } } }]
  })
  t.notMatch(res.body, /detail for the operator/, 'the cause is not in the answer')
  const logged = logs.filter((line) => line.msg === 'GraphQL request failed')
  t.equal(logged.length, 1, 'one line for the one failure')
  t.match(logged[0], { level: 50, err: { message: 'a detail for the operator only' }, path: ['broken'], failures: 1 }, 'at the error level, with the cause and the field')
})

t.test('a null for a non-null field names the field, as Apollo does (Strapi: a draft missing a required value)', async (t) => {
  // Several times: the first runs through graphql-js, the later ones through graphql-jit's compiled query.
  for (let run = 1; run <= 3; run++) {
    logs.length = 0
    const res = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ fine promised }' } })
    t.same([res.statusCode, res.json()], [200, {
      data: null,
      errors: [{ message: 'Cannot return null for non-nullable field Query.promised.', path: ['promised'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }]
    }], `run ${run}`)
    t.equal(logs.filter((line) => line.msg === 'GraphQL request failed').length, 1, `run ${run}: logged`)
  }
})

t.test('a list failing once per item is one log line', async (t) => {
  logs.length = 0
  const res = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ items { name } }' } })
  t.equal(res.json().errors.length, 3, 'one error per item')
  t.match(logs.filter((line) => line.msg === 'GraphQL request failed'), [{ level: 50, path: ['items', 0, 'name'], failures: 3 }], 'one line, with the number of failures')
})

t.test('client errors are not logged as failures', async (t) => {
  logs.length = 0
  // The public role may not read articles: a resolver's refusal, answered as Strapi does.
  const res = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ articles { title } }' } })
  t.equal(res.json().errors[0].extensions.code, 'FORBIDDEN')
  t.same(logs.filter((line) => line.level >= 50), [], 'nothing at the error level')
})
