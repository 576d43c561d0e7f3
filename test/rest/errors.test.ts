import t, { type Test } from 'tap'
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import contentApi, { contentApiServerOptions, defineContentType } from '../../lib/index.js'
import { createTestDatabase } from '../helpers/database.js'

/**
 * One error format: every refusal under the REST prefix is Strapi's envelope and every one on the
 * GraphQL endpoint Apollo Server's, Fastify's and Node's own included, and none repeats the
 * request. Sent over real HTTP (raw sockets), since inject cannot produce an over-large header,
 * a malformed request line or a timeout. The application's own paths keep Fastify's answers.
 */

/** In every request's URL, body or header; never in an answer. */
const MARKER = 'zzmarkerzz'

const article = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'article', pluralName: 'articles' },
  attributes: { title: { type: 'string' } }
})

interface Served { app: FastifyInstance, port: number, logs: Array<{ level: number, msg: string }> }

/** An app on a real port: `server` options for the factory, the content API, and `/health`, `/things/:id` of its own. */
async function serve (t: Test, server: (options: FastifyServerOptions) => FastifyServerOptions): Promise<Served> {
  const database = await createTestDatabase()
  const logs: Served['logs'] = []
  const stream = new Writable({ write (chunk, _encoding, done) { logs.push(JSON.parse(String(chunk))); done() } })
  const app = Fastify(server({
    logger: { level: 'warn', stream },
    pluginTimeout: 120_000,
    // A request not complete within a second is a 408 (checked every 100 ms).
    requestTimeout: 1000,
    http: { connectionsCheckingInterval: 100 }
  } as FastifyServerOptions))
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  app.get('/health', async () => ({ ok: true }))
  app.get('/things/:id', async () => ({ ok: true }))
  // The content API's bodies are bounded by limits.bodyBytes, not by the server's bodyLimit.
  await app.register(contentApi, { models: [article], db: database.db, limits: { bodyBytes: 4096 }, auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789' } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  await app.contentApi.permissions.grant('public', ['api::article.article.find', 'api::article.article.create'])
  return { app, port: (app.server.address() as { port: number }).port, logs }
}

interface Answer { status: number, headers: Record<string, string>, text: string, json: any }

/** Writes `request` as is and reads the first answer (up to the server closing or 3 s). */
async function send (port: number, request: string, { wait = 3000 } = {}): Promise<Answer> {
  const received = await new Promise<string>((resolve) => {
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => { socket.write(request) })
    const done = (): void => { socket.destroy(); resolve(Buffer.concat(chunks).toString('latin1')) }
    socket.on('data', (chunk) => { chunks.push(chunk) })
    socket.on('close', done)
    socket.on('error', done)
    setTimeout(done, wait)
  })
  const split = received.indexOf('\r\n\r\n')
  const [statusLine, ...lines] = received.slice(0, split).split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  const text = received.slice(split + 4, headers['content-length'] === undefined ? undefined : split + 4 + Number(headers['content-length']))
  let json: any = null
  try { json = JSON.parse(text) } catch {}
  return { status: Number(statusLine.split(' ')[1]), headers, text: received, json }
}

const get = (path: string, headers = ''): string => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}Connection: close\r\n\r\n`
const post = (path: string, type: string, body: string): string =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`

const envelope = (status: number, name: string, message: string): object => ({ data: null, error: { status, name, message, details: {} } })
const syntaxError = (message: string): object => ({ data: null, error: { status: 400, name: 'SyntaxError', message } })
const apollo = (message: string): object => ({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] })

t.test('with contentApiServerOptions()', async (t) => {
  const { port, logs } = await serve(t, (options) => contentApiServerOptions(options))

  const check = async (t: Test, label: string, request: string, status: number, body: object): Promise<Answer> => {
    const answer = await send(port, request)
    t.equal(answer.status, status, `${label}: ${status}`)
    t.match(answer.headers['content-type'], /^application\/json/, `${label}: JSON`)
    t.strictSame(answer.json, body, `${label}: the body`)
    t.notMatch(answer.text, MARKER, `${label}: nothing of the request repeated`)
    return answer
  }

  t.test('under the REST prefix: Strapi\'s envelope', async (t) => {
    await check(t, 'an unknown path', get(`/api/${MARKER}`), 404, envelope(404, 'NotFoundError', 'Not Found'))
    await check(t, 'a document id longer than maxParamLength (Fastify: 414)', get(`/api/articles/${MARKER.repeat(30)}`), 404, envelope(404, 'NotFoundError', 'Not Found'))
    await check(t, 'a bad percent-escape (Fastify: FST_ERR_BAD_URL)', get(`/api/articles/%zz${MARKER}`), 400, envelope(400, 'BadRequestError', 'Malformed URL'))
    // Strapi's koa-body SyntaxError, without details, and without V8's quote of the body.
    await check(t, 'a body that is not JSON', post('/api/articles', 'application/json', `{"${MARKER}": x`), 400, syntaxError('Unexpected token \'x\' is not valid JSON'))
    await check(t, 'a body over limits.bodyBytes', post('/api/articles', 'application/json', `{"data":{"title":"${MARKER.repeat(500)}"}}`), 413,
      { data: null, error: { status: 413, name: 'PayloadTooLargeError', message: 'The request body is larger than 4096 bytes (limits.bodyBytes is 4096)', details: { limit: 'limits.bodyBytes', max: 4096 } } })
    await check(t, 'a malformed Content-Type (Fastify: 415)', post('/api/articles', MARKER, '{}'), 400, envelope(400, 'ValidationError', 'Unsupported Content-Type'))
    await check(t, 'a query string over Node\'s header limit', get(`/api/articles?q=${MARKER.repeat(2000)}`), 431, envelope(431, 'RequestHeaderFieldsTooLargeError', 'Request Header Fields Too Large'))
    await check(t, 'a header over Node\'s header limit', get('/api/articles', `X-Big: ${MARKER.repeat(2000)}\r\n`), 431, envelope(431, 'RequestHeaderFieldsTooLargeError', 'Request Header Fields Too Large'))
    await check(t, 'a malformed header line', get('/api/articles', `${MARKER} no colon\r\n`), 400, envelope(400, 'BadRequestError', 'Bad Request'))
    await check(t, 'the upload routes too', post('/api/upload', 'application/json', `{"${MARKER}`), 400, syntaxError(`Unterminated string in JSON at position ${MARKER.length + 2}`))
    await check(t, 'and the auth routes', post('/api/auth/local', 'application/json', `["${MARKER}",]`), 400, syntaxError('Unexpected token \']\' is not valid JSON'))
    const slow = await send(port, `GET /api/articles?${MARKER} HTTP/1.1\r\nHost: localhost\r\n`)
    t.equal(slow.status, 408, 'a request not complete in time: 408')
    t.strictSame(slow.json, envelope(408, 'RequestTimeoutError', 'Request Timeout'))
    t.notMatch(slow.text, MARKER)
    const ok = await send(port, get('/api/articles'))
    t.equal(ok.status, 200, 'and requests that are fine are served')
  })

  t.test('on the GraphQL endpoint: Apollo Server\'s format', async (t) => {
    const put = await check(t, 'a PUT', `PUT /graphql?${MARKER} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      405, apollo('Apollo Server supports only GET/POST requests.'))
    t.equal(put.headers.allow, 'GET, POST')
    await check(t, 'a body that is not JSON', post('/graphql', 'application/json', `{"query": "${MARKER}`), 400, apollo('Invalid JSON in the request body'))
    await check(t, 'a body over limits.bodyBytes', post('/graphql', 'application/json', `{"query":"${MARKER.repeat(500)}"}`), 413, apollo('Entity too large'))
    await check(t, 'a type no parser reads (Fastify: 415)', post('/graphql', 'application/xml', `<${MARKER}/>`), 400, apollo('POST body missing, invalid Content-Type, or JSON object has no keys.'))
    await check(t, 'an empty JSON body', `POST /graphql?${MARKER} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      400, apollo('POST body missing, invalid Content-Type, or JSON object has no keys.'))
    await check(t, 'a query string over Node\'s header limit', get(`/graphql?query=${MARKER.repeat(2000)}`), 431, apollo('Request Header Fields Too Large'))
  })

  t.test('the application\'s own paths keep Fastify\'s answers', async (t) => {
    const badUrl = await send(port, get('/health/%zz'))
    t.equal(badUrl.status, 400)
    t.match(badUrl.json, { code: 'FST_ERR_BAD_URL', statusCode: 400, error: 'Bad Request' })
    const long = await send(port, get(`/things/${'a'.repeat(200)}`))
    t.equal(long.status, 414)
    t.match(long.json, { code: 'FST_ERR_MAX_PARAM_LENGTH', statusCode: 414 })
    const big = await send(port, get(`/health?q=${'b'.repeat(20000)}`))
    t.equal(big.status, 431)
    t.strictSame(big.json, { error: 'Request Header Fields Too Large', message: 'Exceeded maximum allowed HTTP header size', statusCode: 431 })
    const missing = await send(port, get('/nope'))
    t.strictSame(missing.json, { message: 'Route GET:/nope not found', error: 'Not Found', statusCode: 404 })
    t.equal((await send(port, get('/health'))).status, 200)
  })

  t.test('no warning when the server has the options', async (t) => {
    t.strictSame(logs.filter((line) => line.msg.includes('contentApiServerOptions')), [])
  })
})

t.test('the application\'s own frameworkErrors and clientErrorHandler still answer for its paths', async (t) => {
  const { port } = await serve(t, (options) => contentApiServerOptions({
    ...options,
    frameworkErrors: ((error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => { reply.code(418).send({ mine: error.code }) }) as FastifyServerOptions['frameworkErrors'],
    clientErrorHandler: (_error, socket) => { socket.end('HTTP/1.1 499 Mine\r\nContent-Length: 0\r\nConnection: close\r\n\r\n') }
  }))
  t.strictSame((await send(port, get('/health/%zz'))).json, { mine: 'FST_ERR_BAD_URL' })
  t.equal((await send(port, get(`/health?q=${'b'.repeat(20000)}`))).status, 499)
  t.equal((await send(port, get('/api/articles/%zz'))).status, 400, 'the content API\'s paths are the content API\'s')
  t.equal((await send(port, get(`/api/articles?q=${'b'.repeat(20000)}`))).status, 431)
})

t.test('without contentApiServerOptions(): one warning, and Fastify\'s answers where a plugin cannot reach', async (t) => {
  const { port, logs } = await serve(t, (options) => options)
  const warnings = logs.filter((line) => line.msg.includes('contentApiServerOptions'))
  t.equal(warnings.length, 1, 'one warning at start-up')
  t.equal(warnings[0]?.level, 40)
  const badUrl = await send(port, get('/api/articles/%zz'))
  t.match(badUrl.json, { code: 'FST_ERR_BAD_URL' }, 'Fastify\'s own answer, which the options replace')
  t.match(badUrl.text, '/api/articles/%zz', 'quoting the request')
  t.strictSame((await send(port, get(`/api/${MARKER}`))).json, envelope(404, 'NotFoundError', 'Not Found'), 'what the plugin handles itself is the envelope still')
  t.strictSame((await send(port, post('/graphql', 'application/json', '{'))).json, apollo('Invalid JSON in the request body'))
})
