import { Ajv } from 'ajv'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import { ContentApiError, type LimitError } from '../errors.js'
import { documented } from '../route-schema.js'
import { limitError, NO_BODY_MESSAGE } from './errors.js'
import { httpErrorBody } from './http-error-body.js'
import { nestedDeeperThan } from '../query/limits.js'
import { scanDocument, tooDeep, tooManyTokens, type DocumentScan } from './input-bounds.js'
import { LruCache } from '../lru-cache.js'
import type { ResolvedGraphqlOptions } from '../options/graphql.js'
import { sendSandbox } from './sandbox.js'

/** Apollo's CSRF prevention, with Apollo's answer: a browser cannot send these without a preflight. */
const CSRF_MESSAGE = "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header (with a type that is not one of application/x-www-form-urlencoded, multipart/form-data, text/plain) or provide a non-empty value for one of the following headers: x-apollo-operation-name, apollo-require-preflight\n"
const SIMPLE_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'])
const NO_QUERY = 'GraphQL operations must contain a non-empty `query` or a `persistedQuery` extension.'
/**
 * Apollo Server's answer to a POST whose JSON body is an array (a batch) while batching is off
 * (Strapi leaves Apollo's `allowBatchedHttpRequests` at false): refused as a whole, whatever the
 * array holds, before any operation of it is looked at.
 */
const NO_BATCH = 'Operation batching disabled.'

function badRequest (reply: FastifyReply, message: string): FastifyReply {
  return reply.code(400).type('application/json; charset=utf-8').send(httpErrorBody(message))
}

function refused (reply: FastifyReply, error: LimitError, code: string): FastifyReply {
  return reply.code(400).type('application/json; charset=utf-8').send({ errors: [limitError(error, code)] })
}

function csrfSafe (request: FastifyRequest): boolean {
  const header = request.headers['content-type']
  // What clients send, settled without splitting the header.
  if (header === 'application/json') return true
  const type = header?.split(';')[0].trim().toLowerCase()
  if (type !== undefined && type !== '' && !SIMPLE_TYPES.has(type)) return true
  const preflight = (name: string): boolean => typeof request.headers[name] === 'string' && request.headers[name] !== ''
  return preflight('x-apollo-operation-name') || preflight('apollo-require-preflight')
}

/** The methods the endpoint serves; Apollo answers any other with a 405. */
const ENDPOINT_METHODS = new Set(['GET', 'HEAD', 'POST'])
const BAD_METHOD = 'Apollo Server supports only GET/POST requests.'

const wantsHtml = (request: FastifyRequest): boolean => (request.headers.accept ?? '').includes('text/html')

const isObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What is wrong with one operation of a POST body, in Apollo Server's words, or null. Checked on
 * the body as sent: Fastify's schema validation would coerce `operationName: 1` into `"1"` and
 * Mercurius would hand a non-string `query` to the parser.
 */
function bodyProblem (body: unknown): string | null {
  if (!isObject(body) || Object.keys(body as object).length === 0) return NO_BODY_MESSAGE
  const { query, variables, extensions, operationName } = body as Record<string, unknown>
  if (query !== undefined && query !== null && query !== '' && typeof query !== 'string') return 'GraphQL queries must be strings.'
  for (const [name, value] of [['variables', variables], ['extensions', extensions]] as const) {
    if (typeof value === 'string') return `\`${name}\` in a POST body should be provided as an object, not a recursively JSON-encoded string.`
    if (value !== undefined && value !== null && !isObject(value)) return `\`${name}\` in a POST body must be an object if provided.`
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return '`operationName` in a POST body must be a string if provided.'
  return null
}

/** The GET variables as Mercurius will read them (JSON text); undefined when they do not parse, which Mercurius reports. */
function parsedVariables (text: unknown): unknown {
  if (typeof text !== 'string') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The bounds on what Mercurius parses and coerces (input-bounds.ts), for the operations of one
 * request: each document's nesting and each operation's variables against `limits.inputDepth`,
 * and the documents' tokens together against `graphql.maxTokens` (a batch is one request).
 * GET variables are JSON text, read here as Mercurius will read them.
 */
function inputProblem (operations: readonly unknown[], queryString: boolean, maxTokens: number, inputDepth: number, scans: LruCache<string, DocumentScan>): { error: LimitError, code: string } | null {
  let tokens = 0
  for (const operation of operations) {
    const { query, variables } = operation as { query?: unknown, variables?: unknown }
    if (typeof query === 'string') {
      // The first document of a request is scanned with the whole budget: the scan of a short one
      // is remembered by its text (clients repeat their documents); a later one of a batch is
      // scanned with what is left.
      const memo = tokens === 0 && query.length <= SCANNED_CHARS
      let scan = memo ? scans.get(query) : undefined
      if (scan === undefined) {
        scan = scanDocument(query, maxTokens - tokens, inputDepth)
        if (memo) scans.set(query, scan)
      }
      if (scan.tooDeep) return { error: tooDeep('document', inputDepth), code: 'GRAPHQL_PARSE_FAILED' }
      tokens += scan.tokens
      if (tokens > maxTokens) return { error: tooManyTokens(maxTokens), code: 'GRAPHQL_PARSE_FAILED' }
    }
    if (nestedDeeperThan(queryString ? parsedVariables(variables) : variables, inputDepth)) return { error: tooDeep('variables', inputDepth), code: 'BAD_USER_INPUT' }
  }
  return null
}

/** Documents whose scan is remembered (as many as Mercurius keeps parsed documents by default), up to this length. */
const SCANS_KEPT = 1024
const SCANNED_CHARS = 8192

function hasQuery (request: FastifyRequest): boolean {
  const source = request.method === 'GET' ? request.query : request.body
  if (Array.isArray(source)) return true
  const { query, extensions } = (source ?? {}) as { query?: unknown, extensions?: { persistedQuery?: unknown } }
  return (typeof query === 'string' && query !== '') || extensions?.persistedQuery !== undefined
}

/**
 * The endpoint's HTTP rules, ahead of Mercurius: browsers get the sandbox on GET, requests a
 * browser could forge cross-site are refused (CSRF), a POST body of the wrong shape and an empty
 * query are Apollo's 400s, a document or variables too large or too deep to parse safely are 400s
 * naming the bound, and credentials are checked once per request (an invalid token is the REST
 * 401, as in Strapi, before any GraphQL runs). `app` is the endpoint's own context: its every
 * route is the endpoint's (Mercurius's GET and POST, the 405s), so the hooks do not check the URL.
 */
export function endpointHooks (app: FastifyInstance, options: ResolvedGraphqlOptions, limits: { inputDepth: number }, access: AccessControl): void {
  const scans = new LruCache<string, DocumentScan>(SCANS_KEPT)
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'GET' && wantsHtml(request) && (request.query as { query?: unknown }).query === undefined && options.landingPage) {
      return sendSandbox(reply, options.endpoint)
    }
    if (!csrfSafe(request)) return badRequest(reply, CSRF_MESSAGE)
  })
  app.addHook('preValidation', async (request, reply) => {
    // GET (and HEAD) carry one operation in the query string; a POST body may be a batch (when
    // engineServer.allowBatchedQueries is on), checked operation by operation.
    const queryString = request.method !== 'POST'
    if (!queryString && Array.isArray(request.body) && options.engineServer.allowBatchedQueries !== true) return badRequest(reply, NO_BATCH)
    const operations: unknown[] = queryString ? [request.query] : Array.isArray(request.body) ? request.body : [request.body]
    if (!queryString) {
      for (const operation of operations) {
        const problem = bodyProblem(operation)
        if (problem !== null) return badRequest(reply, problem)
      }
    }
    const problem = inputProblem(operations, queryString, options.maxTokens, limits.inputDepth, scans)
    if (problem !== null) return refused(reply, problem.error, problem.code)
  })
  app.addHook('preHandler', async (request, reply) => {
    if (!ENDPOINT_METHODS.has(request.method)) return
    if (!hasQuery(request)) return badRequest(reply, NO_QUERY)
    try {
      await access.principal(request)
    } catch (err) {
      if (!(err instanceof ContentApiError)) throw err
      return reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(err.toEnvelope()))
    }
  })
}

/**
 * The validator compiler of the endpoint's context, for the JSON Schemas of Mercurius's GET and
 * POST routes: Ajv with Fastify's default settings, less the check of each schema against the
 * JSON Schema meta-schema. Fastify's compiler compiles the meta-schema's own validator for that
 * check, at the first schema it sees, and the endpoint's routes are the only ones of the plugin
 * that Ajv compiles (REST, auth and upload validate requests themselves): 30-50 ms of a cold start
 * for two schemas that are a dependency's, fixed, and compiled by Ajv in strict mode all the same.
 */
export function endpointValidation (app: FastifyInstance): void {
  const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: true, addUsedSchema: false, allErrors: false, validateSchema: false })
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema))
}

/**
 * Apollo's 405 for the methods clients send that the endpoint does not serve (Fastify alone
 * would answer its own 404). After the CSRF check, as in Apollo: a `PUT` a browser could forge
 * is still the CSRF 400.
 */
export function methodNotAllowed (app: FastifyInstance, endpoint: string): void {
  app.route({
    method: ['PUT', 'PATCH', 'DELETE'],
    url: endpoint,
    schema: documented({ hide: true }),
    handler: async (_request, reply) => reply.code(405).header('allow', 'GET, POST').type('application/json; charset=utf-8').send(httpErrorBody(BAD_METHOD))
  })
}
