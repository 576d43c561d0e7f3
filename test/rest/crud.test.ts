import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/build.js'
import { article, everything, homepage } from '../fixtures/models.js'

/**
 * The REST surface end to end: every scalar type of `everything` written, read back and cleared;
 * the collection-type and single-type routes; draft & publish; uid generation; the v4 response
 * format; and the plugin leaving the application's own routes alone.
 */

const models = [everything, article, homepage]
const EVERYTHINGS = '/api/everythings'
const ARTICLES = '/api/articles'
const HOMEPAGE = '/api/homepage'

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const TIME = /^\d{2}:\d{2}:\d{2}\.\d{3}$/
const DOCUMENT_ID = /^[a-z][a-z0-9]{23}$/
const SCRYPT = /^\$scrypt\$n=32768,r=8,p=1\$/

const NOT_FOUND = { data: null, error: { status: 404, name: 'NotFoundError', message: 'Not Found', details: {} } }

type Doc = Record<string, any>

interface Answer {
  status: number
  type: string | undefined
  text: string
  json: any
  headers: Record<string, unknown>
}

async function call (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
  let json: unknown
  try { json = res.body === '' ? undefined : JSON.parse(res.body) } catch { json = undefined }
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, text: res.body, json, headers: res.headers }
}

async function create (app: FastifyInstance, data: Record<string, unknown>, url = EVERYTHINGS): Promise<Doc> {
  const res = await call(app, 'POST', url, { data })
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`)
  return res.json.data
}

/** The attributes `everything` returns, in model order, framed by the system fields. */
const EVERYTHING_KEYS = [
  'id', 'documentId', 'title', 'slug', 'summary', 'bodyMd', 'body', 'email', 'count', 'big', 'ratio', 'price',
  'day', 'clock', 'at', 'stamp', 'flag', 'kind', 'meta', 'code', 'createdAt', 'updatedAt', 'publishedAt'
]

interface RoundTrip {
  name: string
  sent: unknown
  returned: unknown
  /** `typeof` of the returned value (`array` for arrays). */
  type: string
  /** A format the returned string must have, for temporal types. */
  format?: RegExp
  next: unknown
  nextReturned: unknown
}

const ROUND_TRIPS: RoundTrip[] = [
  { name: 'title', sent: 'Crème brûlée', returned: 'Crème brûlée', type: 'string', next: 'Renamed', nextReturned: 'Renamed' },
  { name: 'slug', sent: 'my-slug', returned: 'my-slug', type: 'string', next: 'Other_slug.~1', nextReturned: 'Other_slug.~1' },
  { name: 'summary', sent: 'Line 1\nLine 2 ✓', returned: 'Line 1\nLine 2 ✓', type: 'string', next: 'x'.repeat(1000), nextReturned: 'x'.repeat(1000) },
  { name: 'bodyMd', sent: '# Title\n\n**bold**', returned: '# Title\n\n**bold**', type: 'string', next: '', nextReturned: '' },
  {
    name: 'body',
    sent: [{ type: 'paragraph', children: [{ type: 'text', text: 'Hi', bold: true }] }],
    returned: [{ type: 'paragraph', children: [{ type: 'text', text: 'Hi', bold: true }] }],
    type: 'array',
    next: [{ type: 'heading', level: 2, children: [{ type: 'text', text: 'H' }] }, { type: 'code', children: [] }],
    nextReturned: [{ type: 'heading', level: 2, children: [{ type: 'text', text: 'H' }] }, { type: 'code', children: [] }]
  },
  { name: 'email', sent: 'jane@example.com', returned: 'jane@example.com', type: 'string', next: 'john.doe+tag@example.org', nextReturned: 'john.doe+tag@example.org' },
  { name: 'count', sent: 42, returned: 42, type: 'number', next: '7', nextReturned: 7 },
  { name: 'big', sent: '9007199254740993', returned: '9007199254740993', type: 'string', next: -42, nextReturned: '-42' },
  { name: 'ratio', sent: 0.125, returned: 0.125, type: 'number', next: -1.5e-7, nextReturned: -1.5e-7 },
  { name: 'price', sent: 12.34, returned: 12.34, type: 'number', next: '99.95', nextReturned: 99.95 },
  { name: 'day', sent: '2024-02-29', returned: '2024-02-29', type: 'string', format: DATE, next: '2025-12-31T23:30:00-05:00', nextReturned: '2025-12-31' },
  { name: 'clock', sent: '09:30', returned: '09:30:00.000', type: 'string', format: TIME, next: '23:59:59.5', nextReturned: '23:59:59.500' },
  {
    name: 'at',
    sent: '2025-01-01T10:00:00+02:00',
    returned: '2025-01-01T08:00:00.000Z',
    type: 'string',
    format: ISO_DATETIME,
    next: '2025-06-30T12:34:56.789Z',
    nextReturned: '2025-06-30T12:34:56.789Z'
  },
  { name: 'stamp', sent: 1700000000000, returned: '2023-11-14T22:13:20.000Z', type: 'string', format: ISO_DATETIME, next: '2000-01-01', nextReturned: '2000-01-01T00:00:00.000Z' },
  { name: 'flag', sent: true, returned: true, type: 'boolean', next: false, nextReturned: false },
  { name: 'kind', sent: 'news', returned: 'news', type: 'string', next: 'review', nextReturned: 'review' },
  {
    name: 'meta',
    sent: { nested: { list: [1, 'two', null, true] }, n: 1.5, s: 'é' },
    returned: { nested: { list: [1, 'two', null, true] }, n: 1.5, s: 'é' },
    type: 'object',
    next: ['a', 2],
    nextReturned: ['a', 2]
  },
  { name: 'code', sent: 'C-1', returned: 'C-1', type: 'string', next: 'C-2', nextReturned: 'C-2' }
]

const jsonType = (value: unknown): string => Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value

t.test('every scalar type round-trips through create, read, update and clear', async (t) => {
  const { app } = await build(t, { models })

  for (const c of ROUND_TRIPS) {
    t.test(c.name, async (t) => {
      const data = c.name === 'title' ? { title: c.sent } : { title: `Round trip ${c.name}`, [c.name]: c.sent }
      const check = (doc: Doc, expected: unknown, where: string): void => {
        t.same(doc[c.name], expected, `${where}: value`)
        t.equal(jsonType(doc[c.name]), jsonType(expected), `${where}: JSON type`)
        if (c.format !== undefined && typeof doc[c.name] === 'string') t.match(doc[c.name], c.format, `${where}: format`)
      }
      const created = await call(app, 'POST', EVERYTHINGS, { data })
      t.equal(created.status, 200)
      t.equal(jsonType(created.json.data[c.name]), c.type)
      check(created.json.data, c.returned, 'create')
      const { documentId } = created.json.data

      const one = await call(app, 'GET', `${EVERYTHINGS}/${documentId}`)
      t.equal(one.status, 200)
      check(one.json.data, c.returned, 'GET one')
      const list = await call(app, 'GET', `${EVERYTHINGS}?filters[documentId][$eq]=${documentId}`)
      t.equal(list.json.data.length, 1)
      check(list.json.data[0], c.returned, 'list')

      const updated = await call(app, 'PUT', `${EVERYTHINGS}/${documentId}`, { data: { [c.name]: c.next } })
      t.equal(updated.status, 200)
      check(updated.json.data, c.nextReturned, 'update')
      check((await call(app, 'GET', `${EVERYTHINGS}/${documentId}`)).json.data, c.nextReturned, 'GET after update')

      const cleared = await call(app, 'PUT', `${EVERYTHINGS}/${documentId}`, { data: { [c.name]: null } })
      if (c.name === 'title') {
        t.equal(cleared.status, 400, 'a required attribute refuses null')
        t.equal(cleared.json.error.message, 'title must be a `string` type, but the final value was: `null`.')
        check((await call(app, 'GET', `${EVERYTHINGS}/${documentId}`)).json.data, c.nextReturned, 'unchanged after the refused null')
        return
      }
      t.equal(cleared.status, 200)
      t.equal(cleared.json.data[c.name], null, 'update to null')
      t.equal((await call(app, 'GET', `${EVERYTHINGS}/${documentId}`)).json.data[c.name], null, 'GET after clearing')
      t.equal((await call(app, 'GET', `${EVERYTHINGS}?filters[documentId][$eq]=${documentId}`)).json.data[0][c.name], null, 'list after clearing')
    })
  }

  t.test('biginteger keeps the full int8 range as strings', async (t) => {
    for (const big of ['-9223372036854775808', '9223372036854775807', '0']) {
      const doc = await create(app, { title: `Big ${big}`, big })
      t.equal(doc.big, big)
      t.equal((await call(app, 'GET', `${EVERYTHINGS}/${doc.documentId}`)).json.data.big, big)
    }
  })

  t.test('a document has exactly the visible fields, system fields in Strapi format', async (t) => {
    const doc = await create(app, { title: 'Shape', secret: 'S3cret!', note: 'internal' })
    t.same(Object.keys(doc), EVERYTHING_KEYS)
    t.equal(typeof doc.id, 'number')
    t.match(doc.documentId, DOCUMENT_ID)
    for (const key of ['createdAt', 'updatedAt', 'publishedAt']) t.match(doc[key], ISO_DATETIME, key)
    t.equal(doc.flag, false, 'the default of flag is applied')
    t.equal(doc.slug, 'shape', 'the uid is generated from its target field')
    for (const key of ['summary', 'body', 'count', 'big', 'day', 'at', 'kind', 'meta', 'code']) t.equal(doc[key], null, `${key} is null when not sent`)
  })

  t.test('password: stored as a hash, never returned', async (t) => {
    const doc = await create(app, { title: 'With password', secret: 'S3cret!' })
    const stored = async (): Promise<unknown> => (await app.contentApi.db.selectFrom('everythings').select('secret').where('document_id', '=', doc.documentId).executeTakeFirstOrThrow()).secret
    t.notOk('secret' in doc, 'not in the create answer')
    const first = await stored()
    t.match(first, SCRYPT, 'the column holds a scrypt hash')
    t.not(first, 'S3cret!')
    t.notOk('secret' in (await call(app, 'GET', `${EVERYTHINGS}/${doc.documentId}`)).json.data, 'not in GET one')
    const list = await call(app, 'GET', EVERYTHINGS)
    t.notOk(list.json.data.some((d: Doc) => 'secret' in d), 'not in the list')
    t.notOk(list.text.includes('scrypt'), 'no hash anywhere in the list')

    const updated = await call(app, 'PUT', `${EVERYTHINGS}/${doc.documentId}`, { data: { secret: 'Other!' } })
    t.notOk('secret' in updated.json.data, 'not in the update answer')
    const second = await stored()
    t.match(second, SCRYPT)
    t.not(second, first, 'a new password gives a new hash')
    await call(app, 'PUT', `${EVERYTHINGS}/${doc.documentId}`, { data: { secret: null } })
    t.equal(await stored(), null, 'null clears it')
  })

  t.test('private attribute: written, never returned', async (t) => {
    const doc = await create(app, { title: 'With note', note: 'internal' })
    const stored = async (): Promise<unknown> => (await app.contentApi.db.selectFrom('everythings').select('note').where('document_id', '=', doc.documentId).executeTakeFirstOrThrow()).note
    t.notOk('note' in doc)
    t.equal(await stored(), 'internal')
    t.notOk('note' in (await call(app, 'GET', `${EVERYTHINGS}/${doc.documentId}`)).json.data)
    t.notOk((await call(app, 'GET', EVERYTHINGS)).json.data.some((d: Doc) => 'note' in d))
    const updated = await call(app, 'PUT', `${EVERYTHINGS}/${doc.documentId}`, { data: { note: 'changed' } })
    t.notOk('note' in updated.json.data)
    t.equal(await stored(), 'changed')
    await call(app, 'PUT', `${EVERYTHINGS}/${doc.documentId}`, { data: { note: null } })
    t.equal(await stored(), null)
  })

  t.test('required attributes refuse null on create', async (t) => {
    const res = await call(app, 'POST', EVERYTHINGS, { data: { title: null } })
    t.equal(res.status, 400)
    t.same(res.json.error.details.errors, [{ path: ['title'], message: 'title must be a `string` type, but the final value was: `null`.', name: 'ValidationError', value: null }])
  })
})

t.test('collection type routes', async (t) => {
  const { app } = await build(t, { models })

  t.test('an empty list', async (t) => {
    const res = await call(app, 'GET', EVERYTHINGS)
    t.equal(res.status, 200)
    t.equal(res.type, 'application/json; charset=utf-8')
    t.same(res.json, { data: [], meta: { pagination: { page: 1, pageSize: 25, pageCount: 0, total: 0 } } })
  })

  t.test('POST answers 200 with { data, meta: {} }', async (t) => {
    const res = await call(app, 'POST', EVERYTHINGS, { data: { title: 'First', count: 1 } })
    t.equal(res.status, 200)
    t.equal(res.type, 'application/json; charset=utf-8')
    t.same(Object.keys(res.json), ['data', 'meta'])
    t.same(res.json.meta, {})
    t.match(res.json.data, { title: 'First', count: 1 })
  })

  t.test('list: default meta, then pagination[page] and pagination[pageSize]', async (t) => {
    await create(app, { title: 'Second', count: 2 })
    await create(app, { title: 'Third', count: 3 })
    const all = await call(app, 'GET', EVERYTHINGS)
    t.same(all.json.meta, { pagination: { page: 1, pageSize: 25, pageCount: 1, total: 3 } })
    t.same(all.json.data.map((d: Doc) => d.title), ['First', 'Second', 'Third'], 'in creation (id) order')

    const page2 = await call(app, 'GET', `${EVERYTHINGS}?pagination[page]=2&pagination[pageSize]=2`)
    t.same(page2.json.meta, { pagination: { page: 2, pageSize: 2, pageCount: 2, total: 3 } })
    t.same(page2.json.data.map((d: Doc) => d.title), ['Third'])
    const page1 = await call(app, 'GET', `${EVERYTHINGS}?pagination[pageSize]=2`)
    t.same(page1.json.meta, { pagination: { page: 1, pageSize: 2, pageCount: 2, total: 3 } })
    t.same(page1.json.data.map((d: Doc) => d.title), ['First', 'Second'])
    const beyond = await call(app, 'GET', `${EVERYTHINGS}?pagination[page]=5&pagination[pageSize]=2`)
    t.same(beyond.json, { data: [], meta: { pagination: { page: 5, pageSize: 2, pageCount: 2, total: 3 } } })
  })

  t.test('PUT is a partial update: other fields keep their values', async (t) => {
    const doc = await create(app, { title: 'Partial', count: 5, kind: 'news', meta: { a: 1 } })
    const res = await call(app, 'PUT', `${EVERYTHINGS}/${doc.documentId}`, { data: { count: 6 } })
    t.equal(res.status, 200)
    t.same(Object.keys(res.json), ['data', 'meta'])
    t.same(res.json.meta, {})
    t.match(res.json.data, { documentId: doc.documentId, id: doc.id, title: 'Partial', slug: 'partial', count: 6, kind: 'news', meta: { a: 1 } })
    t.equal(res.json.data.createdAt, doc.createdAt, 'createdAt is kept')
    t.ok(res.json.data.updatedAt >= doc.updatedAt, 'updatedAt moves forward')
    const read = await call(app, 'GET', `${EVERYTHINGS}/${doc.documentId}`)
    t.same(read.json.data, res.json.data)
  })

  t.test('DELETE answers 204 with an empty body, also for an unknown documentId', async (t) => {
    const doc = await create(app, { title: 'Doomed' })
    const res = await call(app, 'DELETE', `${EVERYTHINGS}/${doc.documentId}`)
    t.equal(res.status, 204)
    t.equal(res.text, '')
    t.same(await call(app, 'GET', `${EVERYTHINGS}/${doc.documentId}`).then((r) => [r.status, r.json]), [404, NOT_FOUND])
    const again = await call(app, 'DELETE', `${EVERYTHINGS}/${doc.documentId}`)
    t.equal(again.status, 204)
    t.equal(again.text, '')
    const unknown = await call(app, 'DELETE', `${EVERYTHINGS}/doesnotexist0000000000000`)
    t.equal(unknown.status, 204)
    t.equal(unknown.text, '')
  })

  t.test('GET and PUT of an unknown documentId: 404 with Strapi\'s envelope', async (t) => {
    const get = await call(app, 'GET', `${EVERYTHINGS}/doesnotexist0000000000000`)
    t.equal(get.status, 404)
    t.equal(get.type, 'application/json; charset=utf-8')
    t.same(get.json, NOT_FOUND)
    const put = await call(app, 'PUT', `${EVERYTHINGS}/doesnotexist0000000000000`, { data: { title: 'Nobody' } })
    t.equal(put.status, 404)
    t.same(put.json, NOT_FOUND)
    t.equal((await call(app, 'GET', `${EVERYTHINGS}?filters[title][$eq]=Nobody`)).json.data.length, 0, 'the PUT created nothing')
  })

  t.test('unknown routes under /api: 404 envelope', async (t) => {
    for (const [method, url] of [['GET', '/api'], ['GET', '/api/'], ['GET', '/api/nope'], ['POST', '/api/nope'], ['GET', `${EVERYTHINGS}/a/b`], ['DELETE', '/api/nope/x']] as const) {
      const res = await call(app, method, url)
      t.equal(res.status, 404, `${method} ${url}`)
      t.equal(res.type, 'application/json; charset=utf-8')
      t.same(res.json, NOT_FOUND, `${method} ${url}`)
    }
  })

  t.test('methods a route does not have: 405 text/plain "Method Not Allowed"', async (t) => {
    const doc = await create(app, { title: 'Patched?' })
    const patch = await call(app, 'PATCH', `${EVERYTHINGS}/${doc.documentId}`, { data: { title: 'x' } })
    t.equal(patch.status, 405)
    t.equal(patch.type, 'text/plain; charset=utf-8')
    t.equal(patch.text, 'Method Not Allowed')
    t.equal(patch.headers.allow, 'GET, PUT, DELETE')
    t.equal((await call(app, 'GET', `${EVERYTHINGS}/${doc.documentId}`)).json.data.title, 'Patched?', 'nothing changed')

    const put = await call(app, 'PUT', EVERYTHINGS, { data: { title: 'x' } })
    t.equal(put.status, 405)
    t.equal(put.headers.allow, 'GET, POST')

    const post = await call(app, 'POST', HOMEPAGE, { data: { title: 'x' } })
    t.equal(post.status, 405)
    t.equal(post.type, 'text/plain; charset=utf-8')
    t.equal(post.text, 'Method Not Allowed')
    t.equal(post.headers.allow, 'GET, PUT, DELETE')
    t.equal((await call(app, 'GET', HOMEPAGE)).status, 404, 'the POST created nothing')
  })
})

t.test('the application\'s own routes keep Fastify\'s defaults', async (t) => {
  const { app } = await build(t, { models }, async (app) => {
    app.get('/hello', async () => ({ hello: 'world' }))
    app.post('/echo', async (request) => ({ body: request.body }))
    app.get('/boom', async () => { throw new Error('boom') })
  })

  const hello = await call(app, 'GET', '/hello')
  t.same([hello.status, hello.json], [200, { hello: 'world' }])

  const missing = await call(app, 'GET', '/nope')
  t.equal(missing.status, 404)
  t.same(missing.json, { message: 'Route GET:/nope not found', error: 'Not Found', statusCode: 404 }, 'Fastify\'s default 404, not the content API envelope')

  const echo = await call(app, 'POST', '/echo', { a: [1, 2] })
  t.same([echo.status, echo.json], [200, { body: { a: [1, 2] } }], 'JSON bodies are parsed by Fastify')

  const badJson = await app.inject({ method: 'POST', url: '/echo', payload: '{bad', headers: { 'content-type': 'application/json' } })
  t.equal(badJson.statusCode, 400)
  t.match(badJson.json(), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY', error: 'Bad Request' }, 'Fastify\'s own JSON parse error')

  const emptyJson = await app.inject({ method: 'POST', url: '/echo', payload: '', headers: { 'content-type': 'application/json' } })
  t.equal(emptyJson.statusCode, 400)
  t.match(emptyJson.json(), { code: 'FST_ERR_CTP_EMPTY_JSON_BODY' }, 'an empty JSON body is still an error for the application')

  const form = await app.inject({ method: 'POST', url: '/echo', payload: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(form.statusCode, 415, 'no form parser leaks into the application')

  const boom = await call(app, 'GET', '/boom')
  t.equal(boom.status, 500)
  t.same(boom.json, { statusCode: 500, error: 'Internal Server Error', message: 'boom' }, 'Fastify\'s default error handler')
})

t.test('single type', async (t) => {
  const { app } = await build(t, { models })

  t.same(await call(app, 'GET', HOMEPAGE).then((r) => [r.status, r.json]), [404, NOT_FOUND], 'GET before any PUT is 404')

  const created = await call(app, 'PUT', HOMEPAGE, { data: { title: 'Welcome' } })
  t.equal(created.status, 200)
  t.same(Object.keys(created.json), ['data', 'meta'])
  t.same(Object.keys(created.json.data), ['id', 'documentId', 'title', 'createdAt', 'updatedAt', 'publishedAt'])
  t.match(created.json.data, { title: 'Welcome', documentId: DOCUMENT_ID, publishedAt: ISO_DATETIME })
  const { documentId } = created.json.data

  const read = await call(app, 'GET', HOMEPAGE)
  t.equal(read.status, 200)
  t.same(read.json, created.json)

  const updated = await call(app, 'PUT', HOMEPAGE, { data: { title: 'Welcome back' } })
  t.equal(updated.status, 200)
  t.equal(updated.json.data.documentId, documentId, 'the second PUT updates the same document')
  t.equal(updated.json.data.title, 'Welcome back')
  t.equal((await call(app, 'GET', HOMEPAGE)).json.data.title, 'Welcome back')
  const { count } = await app.contentApi.db.selectFrom('homepages').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()
  t.equal(Number(count), 1, 'one row')

  const deleted = await call(app, 'DELETE', HOMEPAGE)
  t.equal(deleted.status, 204)
  t.equal(deleted.text, '')
  t.same(await call(app, 'GET', HOMEPAGE).then((r) => [r.status, r.json]), [404, NOT_FOUND], 'GET after DELETE is 404')
  t.equal((await call(app, 'DELETE', HOMEPAGE)).status, 204, 'DELETE of nothing is 204')

  const recreated = await call(app, 'PUT', HOMEPAGE, { data: { title: 'Again' } })
  t.equal(recreated.status, 200)
  t.not(recreated.json.data.documentId, documentId, 'a PUT after DELETE creates a new document')
})

t.test('single type: concurrent first PUTs create one document', async (t) => {
  const { app } = await build(t, { models })
  const answers = await Promise.all(['a', 'b', 'c'].map((title) => call(app, 'PUT', HOMEPAGE, { data: { title } })))
  t.same(answers.map((a) => a.status), [200, 200, 200])
  const ids = new Set(answers.map((a) => a.json.data.documentId))
  t.equal(ids.size, 1, 'every PUT addressed the same document')
  const rows = await app.contentApi.db.selectFrom('homepages').select('document_id').execute()
  t.equal(rows.length, 1, 'one row in the table')
})

t.test('draft & publish (article)', async (t) => {
  const { app } = await build(t, { models })
  const titles = async (query = ''): Promise<string[]> => (await call(app, 'GET', `${ARTICLES}${query}`)).json.data.map((d: Doc) => d.title)

  t.test('POST publishes at once', async (t) => {
    const doc = await create(app, { title: 'Published' }, ARTICLES)
    t.match(doc.publishedAt, ISO_DATETIME)
    t.same(await titles(), ['Published'])
    t.same(await titles('?status=draft'), ['Published'], 'the draft version exists too')
    const draft = await call(app, 'GET', `${ARTICLES}/${doc.documentId}?status=draft`)
    t.equal(draft.json.data.publishedAt, null, 'the draft version has no publishedAt')
    t.not(draft.json.data.id, doc.id, 'draft and published versions are different rows')
    t.equal(draft.json.data.documentId, doc.documentId)
  })

  t.test('POST ?status=draft creates a draft only', async (t) => {
    const doc = await create(app, { title: 'Draft only' }, `${ARTICLES}?status=draft`)
    t.equal(doc.publishedAt, null)
    t.notOk((await titles()).includes('Draft only'), 'not in the default (published) list')
    t.ok((await titles('?status=draft')).includes('Draft only'), 'in the draft list')
    t.same(await call(app, 'GET', `${ARTICLES}/${doc.documentId}`).then((r) => [r.status, r.json]), [404, NOT_FOUND], 'no published version')
    t.equal((await call(app, 'GET', `${ARTICLES}/${doc.documentId}?status=draft`)).json.data.title, 'Draft only')

    const published = await call(app, 'PUT', `${ARTICLES}/${doc.documentId}`, { data: {} })
    t.equal(published.status, 200)
    t.match(published.json.data.publishedAt, ISO_DATETIME, 'a PUT without status publishes the draft')
    t.ok((await titles()).includes('Draft only'))
  })

  t.test('a draft follows Strapi\'s draft rules: required attributes may be missing until it is published', async (t) => {
    const res = await call(app, 'POST', `${ARTICLES}?status=draft`, { data: { views: 1 } })
    t.equal(res.status, 200, 'docs/validation.md: required, minLength, min and regex are not checked for a draft written with status=draft')
    t.equal(res.json.data?.title, null)
    t.equal(res.json.data?.publishedAt, null)
    const documentId: string | undefined = res.json.data?.documentId
    if (documentId === undefined) return
    const publish = await call(app, 'PUT', `${ARTICLES}/${documentId}`, { data: {} })
    t.equal(publish.status, 400, 'publishing validates the whole document')
    t.equal(publish.json.error.message, 'title must be a `string` type, but the final value was: `null`.')
    t.same(await call(app, 'GET', `${ARTICLES}/${documentId}`).then((r) => r.status), 404, 'still unpublished')
  })

  t.test('PUT edits the draft and republishes', async (t) => {
    const doc = await create(app, { title: 'Before', views: 1 }, ARTICLES)
    const res = await call(app, 'PUT', `${ARTICLES}/${doc.documentId}`, { data: { title: 'After' } })
    t.equal(res.status, 200)
    t.match(res.json.data, { documentId: doc.documentId, title: 'After', views: 1, publishedAt: ISO_DATETIME })
    t.equal((await call(app, 'GET', `${ARTICLES}/${doc.documentId}`)).json.data.title, 'After', 'published version updated')
    t.equal((await call(app, 'GET', `${ARTICLES}/${doc.documentId}?status=draft`)).json.data.title, 'After', 'draft version updated')
    const rows = await app.contentApi.db.selectFrom('articles').select('published_at').where('document_id', '=', doc.documentId).execute()
    t.equal(rows.length, 2, 'still one draft and one published row')
  })

  t.test('PUT ?status=draft edits only the draft', async (t) => {
    const doc = await create(app, { title: 'Live', views: 10 }, ARTICLES)
    const res = await call(app, 'PUT', `${ARTICLES}/${doc.documentId}?status=draft`, { data: { title: 'Work in progress' } })
    t.equal(res.status, 200)
    t.match(res.json.data, { documentId: doc.documentId, title: 'Work in progress', views: 10, publishedAt: null })
    const published = await call(app, 'GET', `${ARTICLES}/${doc.documentId}`)
    t.match(published.json.data, { title: 'Live', publishedAt: doc.publishedAt }, 'the published version is unchanged')
    t.ok((await titles()).includes('Live'))
    t.notOk((await titles()).includes('Work in progress'), 'the published list is unchanged')
    t.ok((await titles('?status=draft')).includes('Work in progress'))
  })
})

t.test('uid generation', async (t) => {
  const { app } = await build(t, { models })
  const first = await create(app, { title: 'Hello World!' }, ARTICLES)
  t.equal(first.slug, 'hello-world', 'slug filled from title')
  const second = await create(app, { title: 'Hello, world' }, ARTICLES)
  t.equal(second.slug, 'hello-world-1', '-1 suffix on collision')
  const third = await create(app, { title: 'hello world' }, ARTICLES)
  t.equal(third.slug, 'hello-world-2', 'next free suffix')
  const explicit = await create(app, { title: 'Hello World', slug: 'custom' }, ARTICLES)
  t.equal(explicit.slug, 'custom', 'a sent slug is kept')
  const accented = await create(app, { title: 'Crème Brûlée: 10 façons!' }, ARTICLES)
  t.equal(accented.slug, 'creme-brulee-10-facons')
  const updated = await call(app, 'PUT', `${ARTICLES}/${first.documentId}`, { data: { title: 'Changed' } })
  t.equal(updated.json.data.slug, 'hello-world', 'an update does not regenerate the slug')

  t.test('a generated slug with a suffix still fits its column', async (t) => {
    const long = 'a'.repeat(255)
    const one = await call(app, 'POST', ARTICLES, { data: { title: long } })
    t.equal(one.status, 200)
    t.equal(one.json.data.slug, long)
    const two = await call(app, 'POST', ARTICLES, { data: { title: long } })
    t.equal(two.status, 200, 'a valid title never fails because of the slug derived from it')
    t.ok(typeof two.json.data?.slug === 'string' && two.json.data.slug.length <= 255 && two.json.data.slug !== long, 'a distinct slug of at most 255 characters')
  })
})

t.test('Strapi-Response-Format: v4', async (t) => {
  const { app } = await build(t, { models })
  const v4 = { 'strapi-response-format': 'v4' }
  const doc = await create(app, { title: 'Old shape', count: 3 })
  await call(app, 'PUT', HOMEPAGE, { data: { title: 'Home' } })
  const { id, documentId, ...attributes } = doc

  const list = await call(app, 'GET', EVERYTHINGS, undefined, v4)
  t.equal(list.status, 200)
  t.same(list.json, { data: [{ id, documentId, attributes }], meta: { pagination: { page: 1, pageSize: 25, pageCount: 1, total: 1 } } })

  const one = await call(app, 'GET', `${EVERYTHINGS}/${documentId}`, undefined, v4)
  t.same(one.json, { data: { id, documentId, attributes }, meta: {} })

  const fields = await call(app, 'GET', `${EVERYTHINGS}?fields=title`, undefined, v4)
  t.same(fields.json.data, [{ id, documentId, attributes: { title: 'Old shape' } }])

  const created = await call(app, 'POST', EVERYTHINGS, { data: { title: 'New' } }, v4)
  t.same(Object.keys(created.json.data), ['id', 'documentId', 'attributes'])
  t.equal(created.json.data.attributes.title, 'New')
  const updated = await call(app, 'PUT', `${EVERYTHINGS}/${documentId}`, { data: { count: 4 } }, v4)
  t.match(updated.json, { data: { id, documentId, attributes: { title: 'Old shape', count: 4 } }, meta: {} })

  const single = await call(app, 'GET', HOMEPAGE, undefined, v4)
  t.match(single.json, { data: { id: Number, documentId: DOCUMENT_ID, attributes: { title: 'Home' } }, meta: {} })
  t.notOk('title' in single.json.data)

  const v5 = await call(app, 'GET', `${EVERYTHINGS}/${documentId}`, undefined, { 'strapi-response-format': 'v5' })
  t.equal(v5.json.data.title, 'Old shape', 'any other value keeps the v5 shape')

  const missing = await call(app, 'GET', `${EVERYTHINGS}/doesnotexist0000000000000`, undefined, v4)
  t.same([missing.status, missing.json], [404, NOT_FOUND], 'errors keep their envelope')
  const invalid = await call(app, 'POST', EVERYTHINGS, { data: { title: 5 } }, v4)
  t.equal(invalid.status, 400)
  t.same(Object.keys(invalid.json), ['data', 'error'])
  t.equal(invalid.json.error.name, 'ValidationError')
})
