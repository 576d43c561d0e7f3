import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { type ContentApiOptions } from '../../lib/index.js'
import { createTestDatabase, type TestDatabase } from './database.js'

interface Teardown { teardown (fn: () => Promise<void> | void): void }

export interface Built {
  app: FastifyInstance
  database: TestDatabase
}

export interface BuildOptions extends Omit<ContentApiOptions, 'db'> {
  /**
   * Content types are private by default. Suites that test something else than access grant the
   * public role every content action (the default here); access suites pass `false`.
   */
  publicAccess?: boolean
}

/** Every content action of every application content type, as permission strings. */
export function contentActions (app: FastifyInstance): string[] {
  return [...app.contentApi.registry.contentTypes.values()]
    .filter((ct) => ct.uid.startsWith('api::'))
    .flatMap((ct) => ['find', 'findOne', 'create', 'update', 'delete'].map((action) => `${ct.uid}.${action}`))
}

/**
 * An app with the content API registered on its own database (a fresh schema on PGlite, or on
 * PostgreSQL when DATABASE_URL is set), closed and dropped when the test ends.
 */
export async function build (t: Teardown, options: BuildOptions, setup?: (app: FastifyInstance) => Promise<void> | void): Promise<Built> {
  const { publicAccess = true, ...pluginOptions } = options
  const database = await createTestDatabase()
  // Booting embedded PGlite can take longer than Fastify's 10 s plugin timeout on a loaded machine.
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  if (setup !== undefined) await setup(app)
  await app.register(contentApi, {
    ...pluginOptions,
    auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false, ...pluginOptions.auth },
    db: database.db
  })
  await app.ready()
  if (publicAccess) await app.contentApi.permissions.grant('public', contentActions(app))
  return { app, database }
}
