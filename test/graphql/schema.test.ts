import t from 'tap'
import Fastify from 'fastify'
import { introspectionFromSchema, printSchema, type GraphQLSchema } from 'graphql'
import contentApi, { type ContentApiOptions } from '../../lib/index.js'
import { oracleOptions } from '../fixtures/oracle/models.js'
import { models as blogModels } from '../../examples/blog/models.js'
import { createTestDatabase } from '../helpers/database.js'
import { note } from './helpers.js'

/**
 * Without an extension the schema is built by graphql-js, with one by @graphql-tools' `mergeSchemas`
 * (lib/graphql/schema.ts): both must give clients the same schema, scalars, enumerations, unions
 * and descriptions included. An empty extension takes the second path and adds nothing.
 */

interface Teardown { teardown (fn: () => Promise<void> | void): void }

async function schemaOf (t: Teardown, options: Partial<ContentApiOptions>, extended: boolean): Promise<GraphQLSchema> {
  const database = await createTestDatabase()
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, { ...options, db: database.db } as ContentApiOptions)
  if (extended) app.contentApi.graphql!.use({})
  await app.ready()
  return app.contentApi.graphql!.schema!
}

const cases: Array<[string, Partial<ContentApiOptions>]> = [
  ['oracle models, flat', { ...oracleOptions, graphql: { format: 'flat' } }],
  ['oracle models, entity', { ...oracleOptions, graphql: { format: 'entity' } }],
  ['oracle models, v4 compatibility', { ...oracleOptions, graphql: { format: 'flat', v4CompatibilityMode: true } }],
  ['a model with biginteger, time, datetime and an enumeration of non-names', { models: [note], graphql: { format: 'flat' } }],
  ['the blog example', { models: blogModels }]
]

for (const [name, options] of cases) {
  t.test(`${name}: the same schema with and without an extension`, async (t) => {
    const plain = await schemaOf(t, options, false)
    const merged = await schemaOf(t, options, true)
    t.equal(printSchema(plain), printSchema(merged), 'printed alike')
    t.same(introspectionFromSchema(plain), introspectionFromSchema(merged), 'introspected alike')
    t.match(printSchema(plain), /"""A date-time in ISO 8601/, 'the scalars carry their own descriptions')
  })
}
