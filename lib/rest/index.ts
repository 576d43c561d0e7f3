import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../errors.js'
import { isApiContentType } from '../model/built-ins.js'
import type { ResolvedOptions } from '../options/index.js'
import { addBodyParsers, namingBodyLimit } from '../http/body-parsers.js'
import { modelSchemasOf } from '../http/openapi-models.js'
import { errorHandler } from '../error-handler.js'
import { i18nLocalesRoute } from './i18n-locales.js'
import { createEtagOf } from './conditional.js'
import { registerContentTypeRoutes } from './routes.js'
import { registerBatchRoute, type BatchRouteContext } from './batch-route.js'

export interface RestPluginOptions extends BatchRouteContext {
  /** The configured locales, listed by `GET /i18n/locales`. */
  i18n: ResolvedOptions['i18n']
}

/**
 * The REST surface, registered as an encapsulated child (under the `rest.prefix`, `/api` by
 * default) so that its body parsers, error handler and 404 handler apply to the content API only,
 * never to the application's own routes. The auth routes (lib/auth/index.ts) are a sibling
 * context under the same prefix; this one's 404 handler answers for both.
 */
export async function restPlugin (app: FastifyInstance, options: RestPluginOptions): Promise<void> {
  const { limits } = options
  addBodyParsers(app, limits)

  // Route schemas document the API (OpenAPI); validation is the document service's, which
  // answers with Strapi's messages. Responses are serialised as written.
  app.setValidatorCompiler(() => () => true)
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  app.setErrorHandler(namingBodyLimit(errorHandler, limits))
  app.setNotFoundHandler(async (_request, reply) => {
    const error = new NotFoundError()
    return reply.code(404).type('application/json; charset=utf-8').send(JSON.stringify(error.toEnvelope()))
  })

  app.decorateRequest('contentApiGrant', null)
  // The models' named schemas, referenced by this context's routes and by the auth and upload
  // routes: @fastify/swagger gathers every context's schemas into `components.schemas`.
  const schemas = modelSchemasOf(options.registry, (id) => app.getSchema(id) !== undefined)
  for (const schema of schemas.schemas) app.addSchema(schema)
  i18nLocalesRoute(app, options.access, options.i18n)
  const etagOf = await createEtagOf()
  for (const model of options.registry.contentTypes.values()) {
    if (isApiContentType(model.uid)) registerContentTypeRoutes(app, model, { ...options, schemas, etagOf })
  }
  if (options.batch.enabled) registerBatchRoute(app, options)
}
