import t from 'tap'
import { readFileSync } from 'node:fs'
import * as errors from '../lib/errors.js'
import {
  ApplicationError, BatchOperationError, BodySyntaxError, ConfigurationError, ContentApiError, DatabaseConnectionError, FileTooLargeError, MissingDependencyError, ForbiddenError, HttpError, InternalServerError,
  LimitError, NotFoundError, PaginationError, PayloadTooLargeError, PolicyError, PreconditionFailedError, RateLimitError, SchemaSyncError,
  ServiceUnavailableError, UnauthorizedError, UnknownContentTypeError, UploadError, UsageError, ValidationError, errorCodes
} from '../lib/errors.js'
import { build } from './helpers/build.js'
import { article } from './fixtures/models.js'

/**
 * Every error code is documented: the table of lib/errors.ts and the tables of docs/errors.md
 * say the same thing (code, class, HTTP status, Strapi name, default message), and every error
 * class, built, takes its row.
 */

interface DocRow { cells: Map<string, string> }

/** The rows of every table of a Markdown page, each cell keyed by its column's header. */
function markdownTables (text: string): DocRow[] {
  const rows: DocRow[] = []
  const cellsOf = (line: string): string[] => line.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((cell) => cell.trim())
  const lines = text.split('\n')
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i].startsWith('|') || !/^\|[-| ]+\|$/.test(lines[i + 1].trim())) continue
    const header = cellsOf(lines[i]).map((h) => h.replace(/`/g, '').toLowerCase())
    for (i += 2; i < lines.length && lines[i].startsWith('|'); i++) {
      const cells = cellsOf(lines[i])
      rows.push({ cells: new Map(header.map((h, k) => [h, cells[k] ?? ''])) })
    }
  }
  return rows
}

const docs = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8')
const rows = markdownTables(docs)
/** The docs' row of a code: the one whose `code` column names it. */
const rowOf = (code: string): DocRow | undefined => rows.find((row) => row.cells.get('code') === `\`${code}\``)
/** A cell holding one backticked value and nothing else, unwrapped. */
const single = (cell: string | undefined): string | undefined => /^`([^`]*)`$/.exec(cell ?? '')?.[1]

t.test('every code of the table is documented, with the status and name the docs give', async (t) => {
  for (const [code, spec] of Object.entries(errorCodes) as Array<[string, { name: string, status?: number, message?: string }]>) {
    const row = rowOf(code)
    if (row === undefined) {
      t.fail(`${code} is not in docs/errors.md`)
      continue
    }
    const status = row.cells.get('status')
    if (status !== undefined && /^\d{3}$/.test(status)) t.equal(spec.status, Number(status), `${code}: status ${status}`)
    const name = single(row.cells.get('name (in the envelope)'))
    if (name !== undefined) t.equal(spec.name, name, `${code}: name ${name}`)
    const message = single(row.cells.get('default message'))
    if (message !== undefined) t.equal(spec.message, message, `${code}: default message`)
    if (spec.status === undefined) t.notOk(row.cells.has('status'), `${code} is never sent to a client, and documented so`)
  }
})

t.test('every code the docs name is one of the table', async (t) => {
  const named = new Set(docs.match(/FCA_ERR_[A-Z_]+/g))
  t.same([...named].filter((code) => !(code in errorCodes)), [], 'no code documented that the library does not have')
})

t.test('every error class takes its row, and its docs row names it', async (t) => {
  const built: Error[] = [
    new ApplicationError(), new ValidationError(), new LimitError('over', { limit: 'limits.maxRows', max: 1 }), new PaginationError(), new BodySyntaxError('Unexpected end of JSON input'),
    new UnauthorizedError(), new ForbiddenError(), new PolicyError(), new NotFoundError(), new PreconditionFailedError(), new PayloadTooLargeError(),
    new RateLimitError(), new InternalServerError(), new ServiceUnavailableError(), new HttpError(400),
    new UploadError('FCA_ERR_UPLOAD_EMPTY_FILE', 'empty.txt is empty'), new FileTooLargeError('big.bin', 1000),
    new ConfigurationError(['a problem']), new SchemaSyncError('failed'), new UsageError('FCA_ERR_UNKNOWN_ROLE', 'editor'),
    new UnknownContentTypeError('api::nope.nope'), new MissingDependencyError('upload.provider: \'s3\'', ['@aws-sdk/client-s3']),
    new DatabaseConnectionError('db: could not connect to 127.0.0.1:5499 (ECONNREFUSED)')
  ]
  const classes = (Object.values(errors) as unknown[]).filter((value): value is new (...args: any[]) => Error =>
    typeof value === 'function' && value.prototype instanceof Error && value !== ContentApiError)
  // A batch's refusal takes the row of the operation's own error (its code, name and status).
  const batch = new BatchOperationError(new NotFoundError(), 2)
  t.same([batch.code, batch.toEnvelope().error], ['FCA_ERR_NOT_FOUND', { status: 404, name: 'NotFoundError', message: 'Not Found', details: { operation: 2 } }], 'a batch operation\'s refusal is its own error, at its index')
  t.same(classes.filter((c) => ![...built, batch].some((err) => err.constructor === c)).map((c) => c.name), [], 'every exported class is built here')

  for (const err of built) {
    const { code } = err as Error & { code: keyof typeof errorCodes }
    const spec: { name: string, status?: number, message?: string } = errorCodes[code]
    t.ok(spec, `${err.constructor.name}: its code ${code} is in the table`)
    t.equal(err.name, spec.name, `${code}: name`)
    if (err instanceof ContentApiError) t.equal(err.status, spec.status, `${code}: status`)
    t.equal(single(rowOf(code)?.cells.get('class')), err.constructor.name, `${code}: docs/errors.md names its class`)
  }
  t.equal(new NotFoundError().message, 'Not Found', 'the default message is the row\'s')
  t.equal(new FileTooLargeError('big.bin', 1000).message, 'big.bin exceeds the size limit of 1000 bytes', 'a template filled in')
  t.equal(new UsageError('FCA_ERR_GRAPHQL_UNKNOWN_POLICY', 'nope').message, 'Unknown GraphQL policy "nope" (register it with app.contentApi.graphql.policy())')
  t.strictSame(new BodySyntaxError('Unexpected end of JSON input').toEnvelope(), { data: null, error: { status: 400, name: 'SyntaxError', message: 'Unexpected end of JSON input' } },
    'a BodySyntaxError\'s envelope has no details key, as Strapi\'s')
  t.same(new HttpError(431).toEnvelope().error, { status: 431, name: 'RequestHeaderFieldsTooLargeError', message: 'Request Header Fields Too Large', details: {} }, 'an HttpError takes the refusal\'s status')
})

t.test('errors stay instanceof-checkable through their families', async (t) => {
  const limit = new LimitError('over', { limit: 'limits.maxRows', max: 1 })
  t.ok(limit instanceof ValidationError && limit instanceof ApplicationError && limit instanceof ContentApiError, 'LimitError is a ValidationError')
  t.same([limit.code, limit.limit, limit.max, limit.details], ['FCA_ERR_LIMIT', 'limits.maxRows', 1, { limit: 'limits.maxRows', max: 1 }])
  t.equal(NotFoundError.code, 'FCA_ERR_NOT_FOUND', 'a class has its code')
  t.ok(new UsageError('FCA_ERR_UNKNOWN_ROLE', 'editor') instanceof TypeError, 'a UsageError is a TypeError')

  class GoneError extends NotFoundError {}
  const gone = new GoneError('Gone for good')
  t.same([gone instanceof NotFoundError, gone.code, gone.status, gone.name, gone.message], [true, 'FCA_ERR_NOT_FOUND', 404, 'NotFoundError', 'Gone for good'],
    'an application\'s subclass keeps its parent\'s row')
})

t.test('a misused API throws a coded UsageError', async (t) => {
  const { app } = await build(t, { models: [article], graphql: false, upload: { enabled: false } })
  await t.rejects(app.contentApi.permissions.grant('editor', ['api::article.article.find']),
    { name: 'UsageError', code: 'FCA_ERR_UNKNOWN_ROLE', message: 'Unknown role "editor"' }, 'a role that does not exist')
  t.throws(() => app.contentApi.documents('api::nope.nope'), { name: 'UnknownContentTypeError', code: 'FCA_ERR_UNKNOWN_CONTENT_TYPE' })
})
