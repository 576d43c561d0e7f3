/**
 * Strapi's error envelope for anything a request throws, shared by every surface: the REST, auth
 * and upload routes answer with `errorHandler`; GraphQL (lib/graphql/errors.ts) and the server's
 * own refusals (lib/server/server-options.ts) map through `toContentApiError` into their formats.
 */

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isDatabaseUnavailable } from './db/faults.js'
import {
  ContentApiError, HttpError, InternalServerError, NotFoundError, PayloadTooLargeError, ServiceUnavailableError, ValidationError
} from './errors.js'

/** PostgreSQL error classes that only a client's value can cause: 22 data exception, 23 integrity. */
const CLIENT_SQLSTATE = /^2[23]/

/**
 * Maps anything thrown while serving a request to Strapi's error envelope. Known errors keep their
 * status and message; the few database errors a value can still cause (a number out of range)
 * become a 400 without the database's text; a database that cannot serve now (lib/db/faults.ts)
 * a 503; everything else is logged and answered with a bare 500, never SQL or a stack trace.
 */
export function toContentApiError (err: unknown): ContentApiError {
  if (err instanceof ContentApiError) return err
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError()
  const e = err as FastifyError & { code?: string }
  if (e?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e?.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
    return new ValidationError('Invalid JSON in the request body')
  }
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PayloadTooLargeError()
  if (e?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ValidationError('Unsupported Content-Type')
  if (typeof e?.code === 'string' && CLIENT_SQLSTATE.test(e.code) && e.code.length === 5) {
    return e.code === '23505'
      ? new ValidationError('This attribute must be unique')
      : new ValidationError('A value does not fit its attribute (out of range or malformed)')
  }
  if (typeof e?.statusCode === 'number' && e.statusCode === 404) return new NotFoundError()
  // Fastify's other refusals keep their status; their messages may quote the request.
  if (typeof e?.code === 'string' && e.code.startsWith('FST_') && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new HttpError(e.statusCode)
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new ValidationError(e.message)
  return new InternalServerError()
}

/**
 * The envelope as JSON text. Details that cannot be written (a value too deep for
 * JSON.stringify, which recurses) are left out rather than losing the envelope.
 */
function envelopeJson (error: ContentApiError): string {
  const envelope = error.toEnvelope()
  try {
    return JSON.stringify(envelope)
  } catch {
    return JSON.stringify({ ...envelope, error: { ...envelope.error, details: {} } })
  }
}

/**
 * The Fastify error handler of the content API's routes: the error's status and Strapi's
 * envelope `{ data: null, error: { status, name, message, details } }`. A 503 carries
 * `Retry-After` and is logged as a warning; a 500 is logged as an error, its cause never sent.
 */
export function errorHandler (this: unknown, err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const error = toContentApiError(err)
  if (error instanceof ServiceUnavailableError) {
    // Expected while the database restarts or fails over: the cause is logged, never sent.
    request.log.warn({ err }, 'content API request: the database cannot serve it now')
    reply.header('retry-after', String(error.retryAfter))
  } else if (error.status >= 500) {
    request.log.error({ err }, 'content API request failed')
  }
  reply.code(error.status).type('application/json; charset=utf-8').send(envelopeJson(error))
}
