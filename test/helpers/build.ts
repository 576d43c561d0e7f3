import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { type ContentApiOptions } from '../../lib/index.js'
import { createTestDatabase, type TestDatabase } from './database.js'

interface Teardown { teardown (fn: () => Promise<void> | void): void }

export interface Built {
  app: FastifyInstance
  database: TestDatabase
}

/**
 * An app with the content API registered on its own database (a fresh schema on PGlite, or on
 * PostgreSQL when DATABASE_URL is set), closed and dropped when the test ends.
 */
export async function build (t: Teardown, options: Omit<ContentApiOptions, 'db'>, setup?: (app: FastifyInstance) => Promise<void> | void): Promise<Built> {
  const database = await createTestDatabase()
  const app = Fastify({ logger: false })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  if (setup !== undefined) await setup(app)
  await app.register(contentApi, { ...options, db: database.db })
  await app.ready()
  return { app, database }
}
