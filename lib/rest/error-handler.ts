import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import {
  ContentApiError, InternalServerError, NotFoundError, PayloadTooLargeError, ValidationError
} from '../errors.js'

/** PostgreSQL error classes that only a client's value can cause: 22 data exception, 23 integrity. */
const CLIENT_SQLSTATE = /^2[23]/

/**
 * Maps anything thrown while serving a request to Strapi's error envelope. Known errors keep their
 * status and message; the few database errors a value can still cause (a number out of range)
 * become a 400 without the database's text; everything else is logged and answered with a bare
 * 500, never SQL or a stack trace.
 */
export function toContentApiError (err: unknown): ContentApiError {
  if (err instanceof ContentApiError) return err
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

export function errorHandler (this: unknown, err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const error = toContentApiError(err)
  if (error.status >= 500) request.log.error({ err }, 'content API request failed')
  reply.code(error.status).type('application/json; charset=utf-8').send(envelopeJson(error))
}
