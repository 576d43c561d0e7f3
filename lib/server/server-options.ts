import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { HttpError, NotFoundError, type ContentApiError } from '../errors.js'
import { toContentApiError } from '../error-handler.js'
import { errorBody, hasSurfaces, surfaceOf, type Surface } from './surfaces.js'

/**
 * The errors a plugin cannot reach. Fastify answers a malformed URL, a path segment over
 * `maxParamLength` and a failing async constraint before any route or plugin context is
 * chosen, through the server's `frameworkErrors` option only; Node refuses a request whose
 * header block is over `maxHeaderSize` (or malformed, or too slow) before Fastify sees it,
 * through the server's `clientErrorHandler`. Both are options of the Fastify factory, so the
 * content API offers them as one helper:
 *
 * ```ts
 * const app = Fastify(contentApiServerOptions({ logger: true }))
 * await app.register(contentApi, { models })
 * ```
 *
 * Under the REST prefix these answer in Strapi's envelope, on the GraphQL endpoint in Apollo
 * Server's format, never quoting the request; elsewhere the application's own
 * `frameworkErrors`/`clientErrorHandler` given here run, or Fastify's defaults.
 */

type FrameworkErrors = NonNullable<FastifyServerOptions['frameworkErrors']>
type ClientErrorHandler = NonNullable<FastifyServerOptions['clientErrorHandler']>
type ConnectionError = Parameters<ClientErrorHandler>[0]

/** The name the plugin looks for to tell whether the server was made with these options. */
const CLIENT_ERROR_HANDLER_NAME = 'contentApiClientErrorHandler'

const JSON_TYPE = 'application/json; charset=utf-8'

/** What a refusal of the router is for a content API path. */
function frameworkError (error: FastifyError): ContentApiError {
  if (error.code === 'FST_ERR_BAD_URL') return new HttpError(400, 'Malformed URL')
  // A path segment longer than any document id or route names nothing: as any unknown path.
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return new NotFoundError()
  return toContentApiError(error)
}

/** What Node's refusal of a connection's request is (Node's own statuses for each). */
function clientError (error: ConnectionError): HttpError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': return new HttpError(431)
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW': return new HttpError(413)
    case 'ERR_HTTP_REQUEST_TIMEOUT': return new HttpError(408)
    default: return new HttpError(400)
  }
}

/**
 * The path of the request line in the bytes Node was parsing (`GET /api/x?y HTTP/1.1`, or the
 * absolute form `GET http://host/api/x`), or null when they do not start with one: a timeout, or
 * a header block split over several reads.
 */
function requestPath (error: ConnectionError): string | null {
  const raw: unknown = error.rawPacket
  if (!Buffer.isBuffer(raw)) return null
  const target = /^[A-Z]+ (\S+)/.exec(raw.subarray(0, 16384).toString('latin1'))?.[1]
  if (target === undefined) return null
  if (target.startsWith('/')) return target
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/i.exec(target)
  return absolute === null ? null : (absolute[1].startsWith('/') ? absolute[1] : '/')
}

function writeAnswer (socket: Socket, status: number, type: string, body: string): void {
  if (!socket.writable) return
  socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}

/** Fastify's own `clientErrorHandler` (fastify.js, not exported), for the application's paths. */
function fastifyClientError (this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const message = status === 408 ? 'Client Timeout' : status === 431 ? 'Exceeded maximum allowed HTTP header size' : 'Client Error'
  this.log.trace({ err: error }, 'client error')
  writeAnswer(socket, status, 'application/json', JSON.stringify({ error: STATUS_CODES[status], message, statusCode: status }))
  socket.destroy(error)
}

/**
 * Fastify factory options that answer Fastify's and Node's own refusals of content API requests
 * in the content API's formats: `frameworkErrors` and `clientErrorHandler`, merged into the
 * options given (the application's own versions of both still answer for its other paths).
 *
 * @example
 * const app = Fastify(contentApiServerOptions({ logger: true, pluginTimeout: 60_000 }))
 * // GET /api/articles/%zz      -> 400 { data: null, error: { status: 400, name: 'BadRequestError', message: 'Malformed URL', details: {} } }
 * // GET /api/articles/<200 ch> -> 404 NotFoundError (Fastify alone: 414 quoting the path)
 * // 20 KB of query string      -> 431 RequestHeaderFieldsTooLargeError (Node alone: Fastify's 431 body)
 */
export function contentApiServerOptions<T extends FastifyServerOptions> (options?: T): T & { frameworkErrors: FrameworkErrors, clientErrorHandler: ClientErrorHandler } {
  const own = (options ?? {}) as T
  const { frameworkErrors: appFrameworkErrors, clientErrorHandler: appClientErrorHandler } = own

  function contentApiFrameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    const surface = surfaceOf(request.server.server, request.raw.url ?? '')
    if (surface === null) {
      if (appFrameworkErrors !== undefined) { appFrameworkErrors(error, request as never, reply as never); return }
      // The server's default error handler: Fastify's answer, as without this option.
      reply.send(error)
      return
    }
    const answer = frameworkError(error)
    if (answer.status >= 500) request.log.error({ err: error }, 'content API request failed')
    reply.code(answer.status).type(JSON_TYPE).send(errorBody(surface, answer))
  }

  // Named: the plugin recognises it among the server's listeners (see serverOptionsInUse).
  const handlers = {
    [CLIENT_ERROR_HANDLER_NAME] (this: FastifyInstance, error: ConnectionError, socket: Socket): void {
      // A reset connection has no one left to answer.
      if (error.code === 'ECONNRESET' || socket.destroyed) return
      const path = requestPath(error)
      // Without a request line (a timeout), the content API's own server answers in its format.
      const surface: Surface | null = path === null ? (hasSurfaces(this.server) ? 'rest' : null) : surfaceOf(this.server, path)
      if (surface === null) {
        (appClientErrorHandler ?? fastifyClientError).call(this, error, socket)
        return
      }
      this.log.trace({ err: error }, 'client error')
      writeAnswer(socket, clientError(error).status, JSON_TYPE, errorBody(surface, clientError(error)))
      socket.destroy(error)
    }
  }
  return {
    ...own,
    frameworkErrors: contentApiFrameworkErrors as FrameworkErrors,
    clientErrorHandler: handlers[CLIENT_ERROR_HANDLER_NAME] as ClientErrorHandler
  }
}

/**
 * Whether the server was made with `contentApiServerOptions()`: its `clientError` listener is
 * ours (Fastify binds it to the instance, keeping the name). Fastify's `initialConfig` does not
 * show either option.
 */
export function serverOptionsInUse (server: { listeners: (event: string) => Function[] }): boolean {
  return server.listeners('clientError').some((listener) => listener.name === `bound ${CLIENT_ERROR_HANDLER_NAME}`)
}
