import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { publicAccess } from './auth/access.js'
import { connect } from './db/connect.js'
import { DocumentService } from './documents/service.js'
import { UnknownContentTypeError } from './errors.js'
import { createRegistry, type Registry } from './model/registry.js'
import { resolveOptions, type ContentApiOptions } from './options.js'
import { restPlugin } from './rest/index.js'
import { syncSchema, type SchemaSyncResult } from './schema/index.js'

export interface ContentApi {
  /** The validated, immutable content-type and component registry. */
  readonly registry: Registry
  /** The Kysely instance documents are stored through. */
  readonly db: Kysely<any>
  /** The schema-sync plan computed at start-up (what was applied, or with `dryRun` what would be). */
  readonly schemaPlan: SchemaSyncResult
  /** The document service of a content type: the one path for reads and writes. */
  documents (uid: string): DocumentService
}

declare module 'fastify' {
  interface FastifyInstance {
    contentApi: ContentApi
  }
}

/**
 * Registers the content API: validates options and models, connects to the database, syncs the
 * schema, decorates `app.contentApi`, and mounts the REST routes under `rest.prefix` (`/api`).
 *
 * @example
 * await app.register(contentApi, { models: [article], db: process.env.DATABASE_URL })
 * // GET /api/articles, POST /api/articles, GET|PUT|DELETE /api/articles/:documentId
 */
async function contentApi (app: FastifyInstance, userOptions: ContentApiOptions): Promise<void> {
  const options = resolveOptions(userOptions)
  const registry = createRegistry(options.models, options.components)
  const handle = connect(options.db)
  app.addHook('onClose', async () => { await handle.close() })

  let schemaPlan: SchemaSyncResult
  try {
    schemaPlan = await syncSchema(handle.db, registry, options.schemaSync, app.log)
  } catch (err) {
    await handle.close()
    throw err
  }

  const context = { db: handle.db, registry, limits: options.rest, i18n: options.i18n, compile: options.query }
  const services = new Map<string, DocumentService>()
  for (const model of registry.contentTypes.values()) services.set(model.uid, new DocumentService(model, context))
  const documents = (uid: string): DocumentService => {
    const service = services.get(uid)
    if (service === undefined) throw new UnknownContentTypeError(uid)
    return service
  }

  app.decorate('contentApi', { registry, db: handle.db, schemaPlan, documents } satisfies ContentApi)
  await app.register(restPlugin, { prefix: options.rest.prefix, registry, documents, access: publicAccess })
}

export default fp(contentApi, { fastify: '5.x', name: 'fastify-content-api' })
export { contentApi }

export type { ContentApiOptions } from './options.js'
export type { DatabaseOption } from './db/connect.js'
export { PGliteDialect, type PGliteDialectConfig } from './db/pglite-dialect.js'
export * from './errors.js'
export * from './model/types.js'
export type { Registry, ContentType, Component, Field } from './model/registry.js'
export { DocumentService, type Document, type QueryParams, type WriteParams } from './documents/service.js'
export type { SchemaPlan, SchemaSyncResult } from './schema/index.js'
