import { GraphQLError, type ExecutionResult } from 'graphql'
import type { FastifyReply } from 'fastify'
import { isDatabaseUnavailable } from '../db/faults.js'
import { ForbiddenError, LimitError, PolicyError, ServiceUnavailableError, UnauthorizedError, ValidationError } from '../errors.js'
import { toContentApiError } from '../error-handler.js'
import { httpErrorBody } from './http-error-body.js'

export interface FormattedError {
  message: string
  locations?: ReadonlyArray<{ line: number, column: number }>
  path?: ReadonlyArray<string | number>
  extensions: Record<string, unknown>
}

/** graphql-js's (and graphql-jit's) message for a null where the schema promises a value. */
const NULL_FOR_NON_NULL = 'Cannot return null for non-nullable field '

/** `PaginationError` → `STRAPI_PAGINATION_ERROR`, as Strapi's format-graphql-error names codes. */
const strapiCode = (name: string): string => `STRAPI_${name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`

/**
 * A resolver's error as Strapi answers it: `extensions.code` (`FORBIDDEN` for a denied access,
 * `BAD_USER_INPUT` for invalid input, `STRAPI_<NAME>` for other client errors,
 * `SERVICE_UNAVAILABLE` when the database cannot serve now, `INTERNAL_SERVER_ERROR` otherwise)
 * and `extensions.error` with the REST error's name, message and details. Our own failures never
 * show their message.
 */
export function formatResolverError (error: GraphQLError): FormattedError {
  const original = error.originalError
  if (original === undefined || original instanceof GraphQLError || original.message.startsWith(NULL_FOR_NON_NULL)) {
    // Raised by graphql-js itself during execution, as Apollo answers it: a null for a non-null
    // field (a draft whose required attribute is empty) names the field. graphql-js throws that
    // one as a plain Error, graphql-jit as its own error class.
    return { message: error.message, path: error.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } }
  }
  const known = toContentApiError(original)
  let code: string
  let message = known.message
  if (known instanceof ForbiddenError || known instanceof UnauthorizedError || known instanceof PolicyError) {
    code = 'FORBIDDEN'
    // The REST layer's HTTP wording ("Forbidden") is Strapi's "Forbidden access" in GraphQL.
    if (known instanceof ForbiddenError && message === 'Forbidden') message = 'Forbidden access'
    if (known instanceof UnauthorizedError && message === 'Unauthorized') message = 'Forbidden access'
  } else if (known instanceof ValidationError) {
    code = 'BAD_USER_INPUT'
  } else if (known instanceof ServiceUnavailableError) {
    code = 'SERVICE_UNAVAILABLE'
  } else if (known.status >= 500) {
    code = 'INTERNAL_SERVER_ERROR'
  } else {
    code = strapiCode(known.name)
  }
  const name = code === 'FORBIDDEN' && !(known instanceof PolicyError) ? 'ForbiddenError' : known.name
  return { message, path: error.path, extensions: { code, error: { name, message, details: known.details } } }
}

/**
 * Errors found before any resolver runs: the query does not parse or validate, its variables do
 * not fit, or no operation of the document can be chosen (Apollo's `OPERATION_RESOLUTION_FAILURE`).
 */
function requestErrorCode (error: { message: string }): string {
  const { message } = error
  if (message.startsWith('Syntax Error')) return 'GRAPHQL_PARSE_FAILED'
  if (message.startsWith('Variable "$')) return 'BAD_USER_INPUT'
  if (message.startsWith('Unknown operation named') || message.startsWith('Must provide an operation') ||
    message.startsWith('Must provide operation name')) return 'OPERATION_RESOLUTION_FAILURE'
  // "Schema is not configured to execute subscription operation." is a validation error from graphql 17 on.
  return 'GRAPHQL_VALIDATION_FAILED'
}

/**
 * A bound of the server met before execution (a `LimitError`: tokens, nesting, aliases,
 * selections, rows): Apollo's `code`, and in `extensions.error` the bound, as resolver errors
 * carry theirs (`details: { limit: 'graphql.maxAliases', max: 15 }`).
 */
export function limitError (error: LimitError, code: string): FormattedError {
  return { message: error.message, extensions: { code, error: { name: error.name, message: error.message, details: error.details } } }
}

function requestError (error: GraphQLError | Error & { locations?: Array<{ line: number, column: number }> }): FormattedError {
  const original = error instanceof GraphQLError ? error.originalError : undefined
  const formatted: FormattedError = original instanceof LimitError
    ? limitError(original, requestErrorCode(error))
    : { message: error.message, extensions: { code: requestErrorCode(error) } }
  const locations = error instanceof GraphQLError ? error.locations : error.locations
  if (locations !== undefined) formatted.locations = locations
  return formatted
}

type MercuriusFailure = Error & { code?: string, statusCode?: number, errors?: Array<GraphQLError | Error> }

/** Apollo's answer to a POST whose body is not JSON (or not an object). */
export const NO_BODY_MESSAGE = 'POST body missing, invalid Content-Type, or JSON object has no keys.'

/**
 * A request Fastify refused before Mercurius saw it (a body that is not JSON, empty, too large,
 * of a type no parser reads): its status, in Apollo's words where Apollo has them, else the REST
 * message, without the parser's text.
 */
function fastifyRefusal (failure: MercuriusFailure): { statusCode: number, response: ReturnType<typeof httpErrorBody> } {
  if (failure.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || failure.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return { statusCode: 400, response: httpErrorBody(NO_BODY_MESSAGE) }
  const known = toContentApiError(failure)
  return { statusCode: known.status, response: httpErrorBody(known.message) }
}

/**
 * Mercurius's `errorFormatter`: a request the server refuses before running it (parse,
 * validation, depth limit, variables) is an HTTP 400 without `data`; errors of resolvers keep
 * HTTP 200 with `data` and each error formatted as Strapi does. When the database cannot serve
 * now (lib/db/faults.ts), the answer is HTTP 503 with `Retry-After`, like the REST routes' and
 * like any HTTP-level failure a GraphQL client meets: the error says `SERVICE_UNAVAILABLE`, the
 * cause is logged, never sent. So is the cause of an `INTERNAL_SERVER_ERROR`, at the error level.
 */
export function errorFormatter (
  execution: ExecutionResult & { errors: readonly GraphQLError[] }, context?: { reply?: FastifyReply }
): { statusCode: number, response: any } {
  const fault = execution.errors.find((error) => error.originalError !== undefined && isDatabaseUnavailable(error.originalError))
  if (fault !== undefined) {
    context?.reply?.log.warn({ err: fault.originalError }, 'GraphQL request: the database cannot serve it now')
    context?.reply?.header('retry-after', String(new ServiceUnavailableError().retryAfter))
    return { statusCode: 503, response: { errors: execution.errors.map(formatResolverError), data: execution.data ?? null } }
  }
  const [first] = execution.errors
  const failure = first?.originalError as MercuriusFailure | undefined
  if (execution.errors.length === 1 && typeof failure?.code === 'string' && failure.code.startsWith('FST_') && typeof failure.statusCode === 'number') {
    return fastifyRefusal(failure)
  }
  if (execution.errors.length === 1 && failure !== undefined && Array.isArray(failure.errors)) {
    return { statusCode: 400, response: { errors: failure.errors.map(requestError) } }
  }
  if (execution.data == null && execution.errors.every((error) => error.originalError === undefined && error.path === undefined)) {
    // graphql-js refused the operation as a whole before running it (no operation to choose,
    // a required variable missing when no variables were sent, a subscription).
    return { statusCode: 400, response: { errors: execution.errors.map(requestError) } }
  }
  if (execution.errors.length === 1 && failure instanceof LimitError && first.path === undefined) {
    // A bound checked before execution, with the request's variables (the maxRows hook).
    return { statusCode: 400, response: { errors: [limitError(failure, 'GRAPHQL_VALIDATION_FAILED')] } }
  }
  if (execution.errors.length === 1 && failure !== undefined && typeof failure.code === 'string' && failure.code.startsWith('MER_ERR')) {
    // Mercurius refused the HTTP request itself (a mutation over GET, a malformed body).
    const status = typeof failure.statusCode === 'number' && failure.statusCode >= 400 ? failure.statusCode : 400
    return { statusCode: status, response: httpErrorBody(failure.message) }
  }
  const errors = execution.errors.map(formatResolverError)
  // A failure of ours (a resolver's unexpected error, or graphql-js refusing what a resolver
  // returned) is answered without its cause, so the cause is logged, as REST logs its 500s: the
  // first one's, with their number, since a list can fail once per item.
  const failed = execution.errors.filter((_, i) => errors[i].extensions.code === 'INTERNAL_SERVER_ERROR')
  if (failed.length > 0) {
    context?.reply?.log.error({ err: failed[0].originalError ?? failed[0], path: failed[0].path, failures: failed.length }, 'GraphQL request failed')
  }
  return { statusCode: 200, response: { errors, data: execution.data ?? null } }
}
