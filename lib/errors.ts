/**
 * Every error this library throws, defined once, each with a stable `code`.
 *
 * Two families:
 * - `ContentApiError` subclasses are the errors a *client* causes. They carry Strapi's error
 *   `name`, an HTTP `status` and `details`, and `toEnvelope()` renders Strapi's body
 *   `{ data: null, error: { status, name, message, details } }`.
 * - `ConfigurationError` is thrown while the plugin registers (bad options, invalid models);
 *   it lists every problem at once so the user fixes them in one pass.
 *
 * All codes are documented in docs/errors.md.
 */

import { STATUS_CODES } from 'node:http'

export type ErrorDetails = Record<string, unknown>

export interface ErrorEnvelope {
  data: null
  error: { status: number, name: string, message: string, details: ErrorDetails }
}

export abstract class ContentApiError extends Error {
  abstract readonly status: number
  abstract readonly code: string
  readonly details: ErrorDetails

  constructor (message: string, details: ErrorDetails = {}) {
    super(message)
    this.details = details
  }

  toEnvelope (): ErrorEnvelope {
    return { data: null, error: { status: this.status, name: this.name, message: this.message, details: this.details } }
  }
}

/** 400 — a generic client mistake (Strapi's `ApplicationError`; note Strapi's spelling of the default). */
export class ApplicationError extends ContentApiError {
  override readonly name: string = 'ApplicationError'
  readonly status: number = 400
  readonly code: string = 'FCA_ERR_APPLICATION'
  constructor (message = 'An application error occured', details?: ErrorDetails) { super(message, details) }
}

export interface FieldError {
  path: Array<string | number>
  message: string
  name: 'ValidationError'
  value?: unknown
}

/** 400 — invalid input: a body that fails the model's rules, or a query key that is not allowed. */
export class ValidationError extends ApplicationError {
  override readonly name = 'ValidationError'
  override readonly code: string = 'FCA_ERR_VALIDATION'

  /** Strapi's shape for body validation: one message, every failing field in `details.errors`. */
  static fromFieldErrors (errors: FieldError[]): ValidationError {
    const message = errors.length === 1 ? errors[0].message : `${errors.length} errors occurred`
    return new ValidationError(message, { errors })
  }

  /** Strapi's "Invalid key" answer for a query or body key that does not exist or is not allowed. */
  static invalidKey (key: string, details: ErrorDetails): ValidationError {
    const path = typeof details.path === 'string' && details.path !== key ? ` at ${details.path}` : ''
    return new ValidationError(`Invalid key ${key}${path}`, { key, ...details })
  }
}

/**
 * 400 — a request over one of the configured bounds on a request's work (`limits.*`, the GraphQL
 * limits): answered before any SQL runs. `details` names the option and its value, so a client
 * knows which bound it met: `{ limit: 'limits.populateDepth', max: 6 }`.
 */
export class LimitError extends ValidationError {
  override readonly code = 'FCA_ERR_LIMIT'
  /** The option the request went past (`limits.populateDepth`, `graphql.maxAliases`...). */
  readonly limit: string
  /** That option's value. */
  readonly max: number
  constructor (message: string, details: { limit: string, max: number } & ErrorDetails) {
    super(message, details)
    this.limit = details.limit
    this.max = details.max
  }
}

/** 400 — bad pagination parameters (page and offset modes mixed, non-integers). */
export class PaginationError extends ApplicationError {
  override readonly name = 'PaginationError'
  override readonly code = 'FCA_ERR_PAGINATION'
}

/** 401 — missing, invalid or expired credentials. */
export class UnauthorizedError extends ContentApiError {
  override readonly name = 'UnauthorizedError'
  readonly status = 401
  readonly code = 'FCA_ERR_UNAUTHORIZED'
  constructor (message = 'Unauthorized', details?: ErrorDetails) { super(message, details) }
}

/** 403 — authenticated (or public) but not allowed. */
export class ForbiddenError extends ContentApiError {
  override readonly name = 'ForbiddenError'
  readonly status = 403
  readonly code = 'FCA_ERR_FORBIDDEN'
  constructor (message = 'Forbidden', details?: ErrorDetails) { super(message, details) }
}

/** 404 — no such document or route. Strapi's HTTP-level message is "Not Found". */
export class NotFoundError extends ContentApiError {
  override readonly name = 'NotFoundError'
  readonly status = 404
  readonly code = 'FCA_ERR_NOT_FOUND'
  constructor (message = 'Not Found', details?: ErrorDetails) { super(message, details) }
}

/** 413 — a request body or an uploaded file over the configured limit. */
export class PayloadTooLargeError extends ContentApiError {
  override readonly name = 'PayloadTooLargeError'
  readonly status = 413
  readonly code = 'FCA_ERR_PAYLOAD_TOO_LARGE'
  constructor (message = 'Entity too large', details?: ErrorDetails) { super(message, details) }
}

/** 429 — too many requests on a rate-limited route (the auth routes). */
export class RateLimitError extends ContentApiError {
  override readonly name = 'RateLimitError'
  readonly status = 429
  readonly code = 'FCA_ERR_RATE_LIMIT'
  constructor (message = 'Too many requests, please try again later.', details?: ErrorDetails) { super(message, details) }
}

/**
 * 503 — the database cannot serve the request now: a lost or refused connection, a pool with no
 * free connection in time, a statement over its timeout, a database shutting down. Answered with
 * `Retry-After`; the cause is logged, never sent. Nothing was half-written: every write is one
 * transaction.
 */
export class ServiceUnavailableError extends ContentApiError {
  override readonly name = 'ServiceUnavailableError'
  readonly status = 503
  readonly code = 'FCA_ERR_SERVICE_UNAVAILABLE'
  /** Seconds a client should wait before trying again (the `Retry-After` header). */
  readonly retryAfter: number
  constructor (message = 'Service Unavailable', retryAfter = 1) {
    super(message)
    this.retryAfter = retryAfter
  }
}

/** 500 — our own failure. The message never carries SQL or a stack; the cause is logged. */
export class InternalServerError extends ContentApiError {
  override readonly name = 'InternalServerError'
  readonly status = 500
  readonly code = 'FCA_ERR_INTERNAL'
  constructor (message = 'Internal Server Error') { super(message) }
}

/**
 * 4xx — a request refused by HTTP itself rather than by the content API: a malformed URL (400),
 * a header block over Node's limit (431), a request not received in time (408), and the other
 * refusals of Fastify and Node before any route runs (see docs/operations.md#one-error-format).
 * `name` is the status text in Strapi's (Koa's http-errors) form, `RequestHeaderFieldsTooLargeError`;
 * the message never repeats the request.
 */
export class HttpError extends ContentApiError {
  override readonly name: string
  readonly status: number
  readonly code = 'FCA_ERR_HTTP'
  constructor (status: number, message = STATUS_CODES[status] ?? 'Error') {
    super(message)
    this.status = status
    this.name = `${(STATUS_CODES[status] ?? '').replace(/[^A-Za-z0-9 ]/g, '').split(' ').map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')}Error`
  }
}

/**
 * Thrown at registration time. `problems` lists every issue found, so that a model with three
 * mistakes fails once with three lines rather than three times.
 */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError'
  readonly code = 'FCA_ERR_CONFIGURATION'
  readonly problems: string[]

  constructor (problems: string[], subject = 'fastify-content-api options') {
    super(`Invalid ${subject}:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.problems = problems
  }
}

/** Thrown by `app.contentApi.documents(uid)` for a uid no model defines: a programming error. */
export class UnknownContentTypeError extends Error {
  override readonly name = 'UnknownContentTypeError'
  readonly code = 'FCA_ERR_UNKNOWN_CONTENT_TYPE'
  constructor (uid: string) { super(`Unknown content type "${uid}"`) }
}

/** Thrown when schema sync cannot apply its plan; nothing is applied (see docs/schema-sync.md). */
export class SchemaSyncError extends Error {
  override readonly name = 'SchemaSyncError'
  readonly code = 'FCA_ERR_SCHEMA_SYNC'
}

export function isContentApiError (err: unknown): err is ContentApiError {
  return err instanceof ContentApiError
}
