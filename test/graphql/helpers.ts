import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { defineContentType, type ContentApiOptions } from '../../lib/index.js'
import { createTestDatabase } from '../helpers/database.js'
import { loadOracleSeed } from '../fixtures/oracle/seed.js'
import { oracleOptions } from '../fixtures/oracle/models.js'
import { seedOracle, type OracleSeeded } from '../fixtures/oracle/seed.js'

interface Teardown { teardown (fn: () => Promise<void> | void): void }

export interface GraphqlApp {
  app: FastifyInstance
  seeded: OracleSeeded
  /** POSTs a GraphQL request; `token` goes in `Authorization: Bearer`. */
  gql: (query: string, variables?: Record<string, unknown>, token?: string) => Promise<{ status: number, body: any }>
}

export const seed = loadOracleSeed()
export const FULL_TOKEN = seed.tokens.find((t) => t.type === 'full-access')!.accessKey
export const READ_TOKEN = seed.tokens.find((t) => t.type === 'read-only')!.accessKey

/**
 * The oracle model, seeded with the oracle's data and grants (public: read articles, categories,
 * authors, the homepage and files; secrets: API tokens only), with the given GraphQL options.
 * `setup` runs after registration and before `ready`: where application code configures the
 * extension API; `limits` replaces the plugin's default bounds.
 */
export async function buildGraphql (t: Teardown, graphql: ContentApiOptions['graphql'], setup?: (app: FastifyInstance) => void | Promise<void>,
  wrapDb?: (db: any) => any, limits?: ContentApiOptions['limits']): Promise<GraphqlApp> {
  const database = await createTestDatabase()
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, { ...oracleOptions, graphql, ...(limits === undefined ? {} : { limits }), db: wrapDb === undefined ? database.db : wrapDb(database.db) })
  if (setup !== undefined) await setup(app)
  await app.ready()
  const seeded = await seedOracle(app)
  const gql = async (query: string, variables?: Record<string, unknown>, token?: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      payload: { query, variables }
    })
    return { status: res.statusCode, body: res.json() }
  }
  return { app, seeded, gql }
}

/** A small model with the scalars the oracle model lacks (biginteger, time, datetime) and an enumeration whose values are not GraphQL names. */
export const note = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'note', pluralName: 'notes' },
  attributes: {
    title: { type: 'string' },
    big: { type: 'biginteger' },
    at: { type: 'time' },
    when: { type: 'datetime' },
    state: { type: 'enumeration', enum: ['in-progress', 'done'] },
    hidden: { type: 'string', private: true }
  }
})
