import { Writable } from 'node:stream'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { type ContentApiOptions } from '../../lib/index.js'
import { createTestDatabase } from '../helpers/database.js'
import { oracleOptions } from '../fixtures/oracle/models.js'
import { multipart, pngPart } from '../upload/helpers.js'

/**
 * The requests that held the event loop for seconds or overflowed the stack on earlier versions
 * (issue 13), through the REST API with the default `limits` (and a small `maxRows`, so that a
 * bomb of small data reaches it): each is answered 400 (413 for a large body) in Strapi's
 * envelope, names the limit it met, comes back fast, and leaves no error in the log. No answer
 * and no log line ever says "Maximum call stack size exceeded".
 *
 * The data: 2 categories of 10 articles each, every article with 3 of 5 authors.
 */

const FAST_MS = 2000
const ARTICLE = 'api::article.article'

interface Bombed { app: FastifyInstance, log: string[] }

async function setup (t: Test, options: Partial<ContentApiOptions> = {}, seed = true): Promise<Bombed> {
  const database = await createTestDatabase()
  const uploads = await mkdtemp(join(tmpdir(), 'fca-bombs-'))
  const log: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { log.push(String(chunk)); done() } })
  const app = Fastify({ logger: { level: 'warn', stream }, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
    await rm(uploads, { recursive: true, force: true })
  })
  await app.register(contentApi, {
    ...oracleOptions,
    graphql: false,
    upload: { local: { directory: uploads } },
    auth: { ...oracleOptions.auth, rateLimit: false },
    limits: { maxRows: 100 },
    ...options,
    db: database.db
  })
  await app.ready()
  await app.contentApi.permissions.grant('public', [
    ...['api::article.article', 'api::category.category', 'api::author.author'].flatMap((uid) => [`${uid}.find`, `${uid}.findOne`]),
    `${ARTICLE}.create`, 'plugin::upload.content-api.upload', 'plugin::upload.content-api.find'
  ])
  if (seed) {
    const docs = (uid: string) => app.contentApi.documents(uid)
    const categories = [await docs('api::category.category').create({ data: { name: 'C1' } }), await docs('api::category.category').create({ data: { name: 'C2' } })]
    const authors: Array<{ documentId: string }> = []
    for (let i = 0; i < 5; i++) authors.push(await docs('api::author.author').create({ data: { name: `U${i}` } }))
    for (let i = 0; i < 20; i++) {
      await docs(ARTICLE).create({ data: { title: `A${i}`, category: categories[i % 2].documentId, authors: [0, 1, 2].map((k) => authors[(i + k) % 5].documentId) } })
    }
  }
  return { app, log }
}

interface Answer { status: number, body: any, ms: number, text: string }

async function send (app: FastifyInstance, options: { method?: 'GET' | 'POST', url: string, payload?: string | Buffer, headers?: Record<string, string> }): Promise<Answer> {
  const began = performance.now()
  const response = await app.inject({
    method: options.method ?? 'GET',
    url: options.url,
    payload: options.payload,
    headers: options.headers ?? (options.payload === undefined ? {} : { 'content-type': 'application/json' })
  })
  return { status: response.statusCode, body: response.json(), ms: performance.now() - began, text: response.body }
}

/** Refused fast, in the envelope, naming the limit; nothing about the stack anywhere. */
function refused (t: Test, answer: Answer, limit: string, what: string, status = 400): void {
  t.equal(answer.status, status, `${what}: ${status}`)
  t.equal(answer.body.data, null, `${what}: the envelope`)
  t.equal(answer.body.error?.status, status)
  t.equal(answer.body.error?.details?.limit, limit, `${what}: names ${limit}`)
  t.ok(answer.ms < FAST_MS, `${what}: answered in ${answer.ms.toFixed(0)} ms`)
  t.notMatch(answer.text, /call stack/i)
}

function quietLog (t: Test, { log }: Bombed): void {
  t.notMatch(log.join(''), /call stack/i, 'the log never mentions the stack')
  t.same(log.filter((line) => JSON.parse(line).level >= 50), [], 'no error was logged')
}

const chain = (levels: number): string[] => Array.from({ length: levels }, (_, i) => i % 2 === 0 ? 'category' : 'articles')
const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n)
const deepObject = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n)

// The default limits (maxRows 100): one app and data set for the tests that only read or refuse.
const bombed = await setup(t)
const { app } = bombed

t.test('populate bombs', async (t) => {
  const object = `populate${chain(8).map((n, i) => `${i === 0 ? '' : '[populate]'}[${n}]`).join('')}=true`
  refused(t, await send(app, { url: `/api/articles?${object}&pagination[pageSize]=100` }), 'limits.populateDepth', 'eight levels, object form')
  refused(t, await send(app, { url: `/api/articles?populate=${chain(8).join('.')}&pagination[pageSize]=100` }), 'limits.populateDepth', 'eight levels, dotted form')
  refused(t, await send(app, { url: `/api/articles?populate=${chain(1000).join('.')}` }), 'limits.populateDepth', 'a thousand levels, dotted form')
  // Within the depth, the rows: 20 + 20 + 200 + 200 + 2,000 + 2,000 of them.
  refused(t, await send(app, { url: `/api/articles?populate=${chain(6).join('.')}&pagination[pageSize]=100` }), 'limits.maxRows', 'six levels of 10 articles per category')
  refused(t, await send(app, { url: '/api/articles?populate=authors.articles.authors.articles&pagination[pageSize]=100' }), 'limits.maxRows', 'through authors')
  const fine = await send(app, { url: '/api/articles?populate=*&pagination[pageSize]=100' })
  t.equal(fine.status, 200, 'populate=* on every article: 20 + 20 + 60 + 20 + ... rows, within the budget')
  quietLog(t, bombed)
})

t.test('deep and large JSON bodies', async (t) => {
  const articles = await app.contentApi.documents(ARTICLE).count()
  const post = async (url: string, payload: string): Promise<Answer> => await send(app, { method: 'POST', url, payload })
  refused(t, await post('/api/articles', `{"data":{"title":"x","tags":${deepArray(10_000)}}}`), 'limits.inputDepth', 'a JSON attribute 10,000 levels deep')
  refused(t, await post('/api/articles', `{"data":{"title":${deepArray(10_000)}}}`), 'limits.inputDepth', 'a string attribute given 10,000 levels')
  refused(t, await post('/api/articles', `{"data":{"title":"x","category":${deepObject(10_000)}}}`), 'limits.inputDepth', 'a relation given 10,000 levels')
  refused(t, await post('/api/articles', `{"data":{"title":"x","seo":${deepObject(10_000)}}}`), 'limits.inputDepth', 'a component given 10,000 levels')
  refused(t, await post('/api/articles', `{"x":${deepArray(100_000)},"data":{"title":"x"}}`), 'limits.inputDepth', 'a field no route reads, 100,000 levels')
  for (const url of ['/api/auth/local', '/api/auth/local/register', '/api/auth/forgot-password', '/api/auth/reset-password']) {
    refused(t, await post(url, `{"identifier":${deepObject(10_000)},"email":${deepArray(10_000)}}`), 'limits.inputDepth', url)
  }
  refused(t, await send(app, { method: 'POST', url: '/api/upload?id=1', payload: `{"fileInfo":${deepObject(10_000)}}` }), 'limits.inputDepth', 'an upload\'s JSON fileInfo')
  const form = multipart([{ name: 'fileInfo', value: deepArray(50_000) }, pngPart('a.png')])
  refused(t, await send(app, { method: 'POST', url: '/api/upload', payload: form.payload, headers: form.headers }), 'limits.inputDepth', 'a multipart fileInfo field')
  refused(t, await post('/api/articles', `{"data":{"title":"${'x'.repeat(2 * 1024 * 1024)}"}}`), 'limits.bodyBytes', 'a 2 MiB body', 413)
  const forms = await send(app, { method: 'POST', url: '/api/auth/local', payload: `identifier${'[a]'.repeat(5000)}=x`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(forms.status, 400, 'a form nests only as deep as qs parses it (20 levels): an ordinary 400')
  t.equal(forms.body.error.name, 'ValidationError')
  t.equal(await app.contentApi.documents(ARTICLE).count(), articles, 'nothing was written')
  quietLog(t, bombed)
})

t.test('long and many-parameter query strings', async (t) => {
  refused(t, await send(app, { url: `/api/articles?filters[title][$containsi]=${'x'.repeat(20_000)}` }), 'limits.queryLength', '20,000 characters')
  refused(t, await send(app, { url: `/api/articles?${Array.from({ length: 3000 }, () => 'a=1').join('&')}` }), 'limits.queryParameters', '3,000 parameters')
  const deep = await send(app, { url: `/api/articles?filters${'[$not]'.repeat(5000)}[title]=x` })
  t.equal(deep.status, 400, 'brackets past qs depth 20 are a literal key: an ordinary 400')
  t.equal(deep.body.error.name, 'ValidationError')
  quietLog(t, bombed)
})

t.test('with inputDepth set past what JSON.stringify can write, deep values still answer in the envelope', async (t) => {
  const unbounded = await setup(t, { limits: { inputDepth: 1_000_000 } }, false)
  const { app } = unbounded
  for (const [what, payload] of [
    ['a relation', `{"data":{"title":"x","category":${deepObject(10_000)}}}`],
    ['a string attribute', `{"data":{"title":${deepArray(10_000)}}}`],
    ['a JSON attribute', `{"data":{"title":"x","tags":${deepArray(10_000)}}}`]
  ]) {
    const answer = await send(app, { method: 'POST', url: '/api/articles', payload })
    t.equal(answer.status, 400, `${what}: 400`)
    t.equal(answer.body.error.name, 'ValidationError', `${what}: a ValidationError in the envelope`)
    t.notMatch(answer.text, /call stack/i)
  }
  quietLog(t, unbounded)
})
