/**
 * Every error this library throws, defined once, each with a stable `code`.
 *
 * `errorCodes` is the one table: per code, the error's `name` (Strapi's error name for what a
 * client is answered), its HTTP `status` when a client can be answered with it, and its message
 * (a default, or a `%s` template of the factory's arguments). The classes read their row, so
 * each is one line and stays `instanceof`-checkable. docs/errors.md lists every code, and
 * test/errors.test.ts holds it to this table.
 *
 * Three families:
 * - `ContentApiError` subclasses are the errors a *client* causes. They carry Strapi's error
 *   `name`, an HTTP `status` and `details`, and `toEnvelope()` renders Strapi's body
 *   `{ data: null, error: { status, name, message, details } }` (lib/error-handler.ts maps
 *   anything else thrown to one of them).
 * - `ConfigurationError` and `SchemaSyncError` are thrown while the plugin registers (bad
 *   options, invalid models, a plan that cannot be applied); a ConfigurationError lists every
 *   problem at once so the user fixes them in one pass.
 * - `UsageError` (and `UnknownContentTypeError`): the application or the CLI called something
 *   wrongly. Like the registration errors, never sent to a client.
 */

import { STATUS_CODES } from 'node:http'
import { format } from 'node:util'

interface ErrorSpec {
  /** `err.name`; for a client error, the `error.name` of Strapi's envelope. */
  readonly name: string
  /** The HTTP status a client is answered with; none for an error never sent to a client. */
  readonly status?: number
  /** The default message, or a `%s` template of the factory's arguments; none when always given. */
  readonly message?: string
}

export const errorCodes = {
  // Client errors (ContentApiError): the envelope's name and status.
  FCA_ERR_APPLICATION: { name: 'ApplicationError', status: 400, message: 'An application error occured' },
  FCA_ERR_VALIDATION: { name: 'ValidationError', status: 400, message: 'An application error occured' },
  FCA_ERR_LIMIT: { name: 'ValidationError', status: 400 },
  FCA_ERR_PAGINATION: { name: 'PaginationError', status: 400, message: 'An application error occured' },
  FCA_ERR_BODY_SYNTAX: { name: 'SyntaxError', status: 400 },
  FCA_ERR_UNAUTHORIZED: { name: 'UnauthorizedError', status: 401, message: 'Unauthorized' },
  FCA_ERR_FORBIDDEN: { name: 'ForbiddenError', status: 403, message: 'Forbidden' },
  FCA_ERR_POLICY: { name: 'PolicyError', status: 403, message: 'Policy Failed' },
  FCA_ERR_NOT_FOUND: { name: 'NotFoundError', status: 404, message: 'Not Found' },
  FCA_ERR_PRECONDITION_FAILED: { name: 'PreconditionFailedError', status: 412, message: 'The document has changed since the version the request names (If-Match)' },
  FCA_ERR_PAYLOAD_TOO_LARGE: { name: 'PayloadTooLargeError', status: 413, message: 'Entity too large' },
  FCA_ERR_RATE_LIMIT: { name: 'RateLimitError', status: 429, message: 'Too many requests, please try again later.' },
  FCA_ERR_INTERNAL: { name: 'InternalServerError', status: 500, message: 'Internal Server Error' },
  FCA_ERR_SERVICE_UNAVAILABLE: { name: 'ServiceUnavailableError', status: 503, message: 'Service Unavailable' },
  // An HttpError takes the status of the refusal it answers, and its status text as name and message.
  FCA_ERR_HTTP: { name: 'BadRequestError', status: 400, message: 'Bad Request' },
  // The upload API's refusals (UploadError, FileTooLargeError); their messages are given where thrown.
  FCA_ERR_UPLOAD_EMPTY_FILE: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_CONTENT_MISMATCH: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_INVALID_IMAGE: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_INVALID_NAME: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_TYPE_NOT_ALLOWED: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_UNEXPECTED_FIELD: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_TOO_MANY_FILES: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_MALFORMED: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_INVALID_REFERENCE: { name: 'ValidationError', status: 400 },
  FCA_ERR_UPLOAD_FILE_TOO_LARGE: { name: 'PayloadTooLargeError', status: 413, message: '%s exceeds the size limit of %s bytes' },
  // Registration errors.
  FCA_ERR_CONFIGURATION: { name: 'ConfigurationError', message: 'Invalid %s:\n%s' },
  FCA_ERR_SCHEMA_SYNC: { name: 'SchemaSyncError' },
  FCA_ERR_MISSING_DEPENDENCY: { name: 'MissingDependencyError', message: '%s needs %s, not installed (optional peer dependencies of fastify-content-api): npm install %s' },
  FCA_ERR_DB_CONNECTION: { name: 'DatabaseConnectionError' },
  // Usage errors: an API called wrongly by the application, or the CLI by its user.
  FCA_ERR_UNKNOWN_CONTENT_TYPE: { name: 'UnknownContentTypeError', message: 'Unknown content type "%s"' },
  FCA_ERR_UNKNOWN_ROLE: { name: 'UsageError', message: 'Unknown role "%s"' },
  FCA_ERR_DOCUMENT_MIDDLEWARE: { name: 'UsageError', message: 'documents.use() expects a function (context, next) => ...' },
  FCA_ERR_LIFECYCLE_SUBSCRIBER: { name: 'UsageError', message: 'lifecycles.subscribe() %s' },
  FCA_ERR_GRAPHQL_SCHEMA_BUILT: { name: 'UsageError', message: 'graphql.%s() must be called before the application is ready: the schema is built by then' },
  FCA_ERR_GRAPHQL_SCHEMA_NOT_BUILT: { name: 'UsageError', message: 'The GraphQL schema is built when the application is ready' },
  FCA_ERR_GRAPHQL_INVALID_EXTENSION: { name: 'UsageError', message: 'graphql.use() expects an extension object or a function returning one' },
  FCA_ERR_GRAPHQL_UNKNOWN_ACTION: { name: 'UsageError', message: 'Unknown Shadow CRUD action "%s": expected one of %s or "*"' },
  FCA_ERR_GRAPHQL_UNKNOWN_POLICY: { name: 'UsageError', message: 'Unknown GraphQL policy "%s" (register it with app.contentApi.graphql.policy())' },
  FCA_ERR_UNKNOWN_POLICY: { name: 'UsageError', message: 'Unknown policy "%s" (name it in the `policies` option)' },
  FCA_ERR_GRAPHQL_UNKNOWN_MIDDLEWARE: { name: 'UsageError', message: 'Unknown GraphQL middleware "%s" (register it with app.contentApi.graphql.middleware())' },
  FCA_ERR_GRAPHQL_UNKNOWN_FIELD: { name: 'UsageError', message: 'resolversConfig: no field %s in the GraphQL schema' },
  FCA_ERR_CLI_CONFIG: { name: 'UsageError', message: '%s must export the plugin options (or a function returning them) as default' },
  FCA_ERR_CLI_NO_SALT: { name: 'UsageError', message: 'token %s needs auth.apiTokenSalt in %s: without the application\'s salt the key would not work against it' },
  FCA_ERR_CLI_NO_TARGET: { name: 'UsageError', message: 'token %s needs an id or a name' },
  FCA_ERR_CLI_CREATE_ARGUMENTS: { name: 'UsageError', message: 'token create needs --name and --type' },
  FCA_ERR_CLI_TYPES_OUT: { name: 'UsageError', message: 'types needs --out FILE' }
} as const satisfies Record<`FCA_ERR_${string}`, ErrorSpec>

export type ErrorCode = keyof typeof errorCodes
type CodesWhere<Row> = { [C in ErrorCode]: (typeof errorCodes)[C] extends Row ? C : never }[ErrorCode]
/** The codes of errors a client is answered with. */
export type ClientErrorCode = CodesWhere<{ status: number }>
export type UploadErrorCode = Extract<CodesWhere<{ name: 'ValidationError' }>, `FCA_ERR_UPLOAD_${string}`>
export type UsageErrorCode = CodesWhere<{ name: 'UsageError' }>

const spec = (code: ErrorCode): ErrorSpec => errorCodes[code]
const render = (code: ErrorCode, args: unknown[]): string => format(spec(code).message ?? '', ...args)

export type ErrorDetails = Record<string, unknown>

export interface ErrorEnvelope {
  data: null
  error: { status: number, name: string, message: string, details: ErrorDetails }
}

/** An error a client causes: its name, status and default message are its class's row of `errorCodes`. */
export abstract class ContentApiError extends Error {
  /** The row of `errorCodes` instances of the class take, unless the constructor is given another. */
  static readonly code: ClientErrorCode
  override readonly name: string
  readonly status: number
  readonly code: ClientErrorCode
  readonly details: ErrorDetails

  constructor (message?: string, details: ErrorDetails = {}, code: ClientErrorCode = (new.target as typeof ContentApiError).code) {
    // A subclass of the application's own that names no code is a 400 ApplicationError.
    const row = spec(code ?? 'FCA_ERR_APPLICATION') as Required<ErrorSpec>
    super(message ?? row.message ?? '')
    this.name = row.name
    this.status = row.status
    this.code = code ?? 'FCA_ERR_APPLICATION'
    this.details = details
  }

  toEnvelope (): ErrorEnvelope {
    return { data: null, error: { status: this.status, name: this.name, message: this.message, details: this.details } }
  }
}

/** 400 — a generic client mistake (Strapi's `ApplicationError`; note Strapi's spelling of the default). */
export class ApplicationError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_APPLICATION' }

export interface FieldError {
  path: Array<string | number>
  message: string
  name: 'ValidationError'
  value?: unknown
}

/** 400 — invalid input: a body that fails the model's rules, or a query key that is not allowed. */
export class ValidationError extends ApplicationError {
  static override readonly code: ClientErrorCode = 'FCA_ERR_VALIDATION'

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
  static override readonly code: ClientErrorCode = 'FCA_ERR_LIMIT'
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
export class PaginationError extends ApplicationError { static override readonly code: ClientErrorCode = 'FCA_ERR_PAGINATION' }

/**
 * 400 — a JSON body that does not parse, or whose top level is not an object or an array.
 * Strapi's body parser (koa-body, strict) throws a `SyntaxError` its error middleware sends
 * as it is: named `SyntaxError`, with the parser's message and no `details` key at all.
 */
export class BodySyntaxError extends ContentApiError {
  static override readonly code: ClientErrorCode = 'FCA_ERR_BODY_SYNTAX'
  override toEnvelope (): ErrorEnvelope {
    const { status, name, message } = this
    return { data: null, error: { status, name, message } as ErrorEnvelope['error'] }
  }
}

/** 400 — an upload refused before anything was stored; the code says why (docs/upload.md). */
export class UploadError extends ContentApiError {
  declare readonly code: UploadErrorCode
  constructor (code: UploadErrorCode, message: string, details?: ErrorDetails) { super(message, details, code) }
}

/** 401 — missing, invalid or expired credentials. */
export class UnauthorizedError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_UNAUTHORIZED' }

/** 403 — authenticated (or public) but not allowed. */
export class ForbiddenError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_FORBIDDEN' }

/** 403 — a route or GraphQL resolver policy returned false (Strapi's `PolicyError`); GraphQL answers it as FORBIDDEN. */
export class PolicyError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_POLICY' }

/** 404 — no such document or route. Strapi's HTTP-level message is "Not Found". */
export class NotFoundError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_NOT_FOUND' }

/**
 * 412 — a `PUT` or `DELETE` with `If-Match` naming a version the document no longer has (or a
 * document that does not exist): checked in the write's transaction, once the write holds the
 * document's rows, so that of two writers holding one ETag exactly one succeeds.
 */
export class PreconditionFailedError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_PRECONDITION_FAILED' }

/** 413 — a request body or an uploaded file over the configured limit. */
export class PayloadTooLargeError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_PAYLOAD_TOO_LARGE' }

/** 413 — an uploaded file larger than `upload.sizeLimit`. */
export class FileTooLargeError extends ContentApiError {
  static override readonly code: ClientErrorCode = 'FCA_ERR_UPLOAD_FILE_TOO_LARGE'
  constructor (file: string, limit: number) { super(render('FCA_ERR_UPLOAD_FILE_TOO_LARGE', [file, limit]), { file, sizeLimit: limit }) }
}

/** 429 — too many requests on a rate-limited route (the auth routes). */
export class RateLimitError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_RATE_LIMIT' }

/** 500 — our own failure. The message never carries SQL or a stack; the cause is logged. */
export class InternalServerError extends ContentApiError { static override readonly code: ClientErrorCode = 'FCA_ERR_INTERNAL' }

/**
 * 503 — the database cannot serve the request now: a lost or refused connection, a pool with no
 * free connection in time, a statement over its timeout, a database shutting down. Answered with
 * `Retry-After`; the cause is logged, never sent. Nothing was half-written: every write is one
 * transaction.
 */
export class ServiceUnavailableError extends ContentApiError {
  static override readonly code: ClientErrorCode = 'FCA_ERR_SERVICE_UNAVAILABLE'
  /** Seconds a client should wait before trying again (the `Retry-After` header). */
  readonly retryAfter: number
  constructor (message?: string, retryAfter = 1) {
    super(message)
    this.retryAfter = retryAfter
  }
}

/**
 * 4xx — a request refused by HTTP itself rather than by the content API: a malformed URL (400),
 * a header block over Node's limit (431), a request not received in time (408), and the other
 * refusals of Fastify and Node before any route runs (see docs/operations.md#one-error-format).
 * `name` is the status text in Strapi's (Koa's http-errors) form, `RequestHeaderFieldsTooLargeError`;
 * the message never repeats the request.
 */
export class HttpError extends ContentApiError {
  static override readonly code: ClientErrorCode = 'FCA_ERR_HTTP'
  override readonly name: string
  override readonly status: number
  constructor (status: number, message = STATUS_CODES[status] ?? 'Error') {
    super(message)
    this.status = status
    this.name = `${(STATUS_CODES[status] ?? '').replace(/[^A-Za-z0-9 ]/g, '').split(' ').map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')}Error`
  }
}

/**
 * The refusal of one operation of a batch (`POST /api/batch`, docs/batches.md): the operation's
 * own error, its status, name and message, with `details` led by the operation's index,
 * `{ operation: 2, ...its details }`. Nothing of the batch was written.
 */
export class BatchOperationError extends ContentApiError {
  override readonly name: string
  override readonly status: number
  /** The index of the failing operation in the batch. */
  readonly operation: number
  constructor (error: ContentApiError, operation: number) {
    super(error.message, { operation, ...error.details }, error.code)
    this.name = error.name
    this.status = error.status
    this.operation = operation
    this.cause = error
  }
}

export function isContentApiError (err: unknown): err is ContentApiError {
  return err instanceof ContentApiError
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
    super(render('FCA_ERR_CONFIGURATION', [subject, problems.map((p) => `  - ${p}`).join('\n')]))
    this.problems = problems
  }
}

/** Thrown when schema sync cannot apply its plan; nothing is applied (see docs/schema-sync.md). */
export class SchemaSyncError extends Error {
  override readonly name = 'SchemaSyncError'
  readonly code = 'FCA_ERR_SCHEMA_SYNC'
}

/**
 * An optional peer dependency a configured feature needs is not installed (the AWS SDK for
 * `upload.provider: 's3'`, `tsx` for a TypeScript CLI config). Thrown where the feature is set
 * up, so the application fails at start with the command that fixes it.
 *
 * @example
 * new MissingDependencyError("upload.provider: 's3'", ['@aws-sdk/client-s3']).message
 * // "upload.provider: 's3' needs @aws-sdk/client-s3, not installed (optional peer dependencies of fastify-content-api): npm install @aws-sdk/client-s3"
 */
export class MissingDependencyError extends Error {
  override readonly name = 'MissingDependencyError'
  readonly code = 'FCA_ERR_MISSING_DEPENDENCY'
  readonly packages: readonly string[]

  constructor (feature: string, packages: readonly string[], options?: ErrorOptions) {
    super(render('FCA_ERR_MISSING_DEPENDENCY', [feature, packages.join(', '), packages.join(' ')]), options)
    this.packages = packages
  }
}

/**
 * The database named by an option could not be reached at start (refused, unknown host, timed
 * out, or the server refused the login or the database). The message names the option and the
 * target, never a password; `cause` is the driver's error.
 *
 * @example
 * err.message // 'db: could not connect to 127.0.0.1:5499 (ECONNREFUSED)'
 */
export class DatabaseConnectionError extends Error {
  override readonly name = 'DatabaseConnectionError'
  readonly code = 'FCA_ERR_DB_CONNECTION'
}

/**
 * An API called wrongly: an unknown role or GraphQL policy, a GraphQL extension registered once
 * the schema is built, a CLI command without its arguments. A `TypeError`, as JavaScript's own
 * errors for a misused API are; the message is the code's template filled with `args`.
 *
 * @example
 * new UsageError('FCA_ERR_UNKNOWN_ROLE', 'editor').message // 'Unknown role "editor"'
 */
export class UsageError extends TypeError {
  override readonly name: string = 'UsageError'
  readonly code: UsageErrorCode

  constructor (code: UsageErrorCode, ...args: unknown[]) {
    super(render(code, args))
    this.code = code
  }
}

/** Thrown by `app.contentApi.documents(uid)` for a uid no model defines: a programming error. */
export class UnknownContentTypeError extends Error {
  override readonly name = 'UnknownContentTypeError'
  readonly code = 'FCA_ERR_UNKNOWN_CONTENT_TYPE'
  constructor (uid: string) { super(render('FCA_ERR_UNKNOWN_CONTENT_TYPE', [uid])) }
}
