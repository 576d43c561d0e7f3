import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../errors.js'
import { isApiContentType } from '../model/built-ins.js'
import { addJsonParser, addUrlencodedParser, namingBodyLimit } from './body-parsers.js'
import { errorHandler } from '../error-handler.js'
import fastifyJwt from '@fastify/jwt'
import { authRoutes, type AuthRoutesOptions } from '../auth/routes.js'
import { registerContentTypeRoutes, type RouteContext } from './routes.js'

export interface RestPluginOptions extends RouteContext {
  auth: Omit<AuthRoutesOptions, 'access' | 'documents' | 'limits'> & { jwtSecret: string, jwtExpiresIn: string | number }
}

/**
 * The REST surface, registered as an encapsulated child (under the `rest.prefix`, `/api` by
 * default) so that its body parsers, error handler and 404 handler apply to the content API only,
 * never to the application's own routes.
 */
export async function restPlugin (app: FastifyInstance, options: RestPluginOptions): Promise<void> {
  const { limits } = options
  addJsonParser(app, limits)
  addUrlencodedParser(app, limits)
  // Fastify's own text/plain parser reads up to the server's bodyLimit: the catch-all below takes it.
  app.removeContentTypeParser('text/plain')
  // Other bodies reach the handler as text and fail its `data` check with Strapi's message.
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: limits.bodyBytes }, (_request, body, done) => { done(null, body) })

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
  // HS256 only: a token naming another algorithm (or `none`) is refused, whatever it claims.
  await app.register(fastifyJwt, {
    secret: options.auth.jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: options.auth.jwtExpiresIn },
    // fast-jwt caches verified tokens (bounded, and never past their expiry): a client's JWT is
    // checked once, not on every request.
    verify: { algorithms: ['HS256'], cache: 1000 }
  })
  options.auth.authenticator.useJwt(app.jwt)
  await authRoutes(app, { ...options.auth, access: options.access, documents: options.documents, limits })

  for (const model of options.registry.contentTypes.values()) {
    if (isApiContentType(model.uid)) registerContentTypeRoutes(app, model, options)
  }
}
