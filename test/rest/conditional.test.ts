import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/build.js'
import { article, homepage } from '../fixtures/models.js'

/**
 * Conditional requests: a weak ETag on every GET answer (one document and lists), 304 on
 * `If-None-Match`, 412 `PreconditionFailedError` on a stale `If-Match` for PUT and DELETE
 * (checked in the write's transaction: of two writers holding one ETag exactly one wins), and
 * `Cache-Control` per content type and caller.
 */

const ARTICLE = 'api::article.article'
const ARTICLES = '/api/articles'
const WEAK = /^W\/"[A-Za-z0-9_-]{11}"$/
const PRECONDITION_FAILED = {
  data: null,
  error: { status: 412, name: 'PreconditionFailedError', message: 'The document has changed since the version the request names (If-Match)', details: {} }
}

async function seed (app: FastifyInstance, title: string): Promise<string> {
  return (await app.contentApi.documents(ARTICLE).create({ data: { title } })).documentId as string
}

t.test('ETag on one document and on lists: weak, stable, changed by a write', async (t) => {
  const { app } = await build(t, { models: [article, homepage] })
  const id = await seed(app, 'First')
  const one = await app.inject({ url: `${ARTICLES}/${id}` })
  t.equal(one.statusCode, 200)
  t.match(one.headers.etag, WEAK)
  t.equal((await app.inject({ url: `${ARTICLES}/${id}` })).headers.etag, one.headers.etag, 'stable while nothing changes')
  const list = await app.inject({ url: ARTICLES })
  t.match(list.headers.etag, WEAK)
  t.not(list.headers.etag, one.headers.etag)
  t.not((await app.inject({ url: `${ARTICLES}?fields[0]=title` })).headers.etag, list.headers.etag, 'per representation')
  t.not((await app.inject({ url: `${ARTICLES}/${id}`, headers: { 'strapi-response-format': 'v4' } })).headers.etag, one.headers.etag, 'per response format')

  await app.inject({ method: 'PUT', url: `${ARTICLES}/${id}`, payload: { data: { title: 'Second' } } })
  t.not((await app.inject({ url: `${ARTICLES}/${id}` })).headers.etag, one.headers.etag, 'a write changes the document ETag')
  t.not((await app.inject({ url: ARTICLES })).headers.etag, list.headers.etag, 'and the list ETag')
  await seed(app, 'Another')
  const grown = await app.inject({ url: ARTICLES })
  t.equal(grown.json().data.length, 2)

  // Errors carry none.
  const missing = await app.inject({ url: `${ARTICLES}/nosuchdocumentid00000000` })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers.etag, undefined)
})

t.test('If-None-Match: 304 without a body for one document and for a list', async (t) => {
  const { app } = await build(t, { models: [article, homepage] })
  const id = await seed(app, 'Cached')
  for (const url of [`${ARTICLES}/${id}`, ARTICLES, `${ARTICLES}?sort=title&pagination[pageSize]=5`]) {
    const first = await app.inject({ url })
    const etag = first.headers.etag as string
    const again = await app.inject({ url, headers: { 'if-none-match': etag } })
    t.equal(again.statusCode, 304, url)
    t.equal(again.body, '')
    t.equal(again.headers.etag, etag)
    t.equal((await app.inject({ url, headers: { 'if-none-match': `"other", ${etag.slice(2)}` } })).statusCode, 304, 'a list, and weak comparison')
    t.equal((await app.inject({ url, headers: { 'if-none-match': '*' } })).statusCode, 304)
    t.equal((await app.inject({ url, headers: { 'if-none-match': 'W/"stale"' } })).statusCode, 200)
  }
  const before = (await app.inject({ url: ARTICLES })).headers.etag as string
  await seed(app, 'New')
  const after = await app.inject({ url: ARTICLES, headers: { 'if-none-match': before } })
  t.equal(after.statusCode, 200, 'a changed list is sent again')
  t.equal(after.json().data.length, 2)
})

t.test('If-Match on PUT and DELETE: 412 when stale, the write when current', async (t) => {
  const { app } = await build(t, { models: [article, homepage] })
  const id = await seed(app, 'Original')
  const url = `${ARTICLES}/${id}`
  const etag = (await app.inject({ url })).headers.etag as string
  const put = await app.inject({ method: 'PUT', url, headers: { 'if-match': etag }, payload: { data: { title: 'Edited' } } })
  t.equal(put.statusCode, 200)
  t.equal(put.json().data.title, 'Edited')

  const stale = await app.inject({ method: 'PUT', url, headers: { 'if-match': etag }, payload: { data: { title: 'Lost update' } } })
  t.same([stale.statusCode, stale.json()], [412, PRECONDITION_FAILED])
  const staleDelete = await app.inject({ method: 'DELETE', url, headers: { 'if-match': etag } })
  t.same([staleDelete.statusCode, staleDelete.json()], [412, PRECONDITION_FAILED])
  t.equal((await app.inject({ url })).json().data.title, 'Edited', 'nothing written by the refused requests')

  // The current ETag of the same URL (here with status=draft) is what If-Match names.
  const draftEtag = (await app.inject({ url: `${url}?status=draft` })).headers.etag as string
  const draftPut = await app.inject({ method: 'PUT', url: `${url}?status=draft`, headers: { 'if-match': draftEtag }, payload: { data: { title: 'Draft only' } } })
  t.equal(draftPut.statusCode, 200)
  t.equal((await app.inject({ method: 'PUT', url: `${url}?status=draft`, headers: { 'if-match': draftEtag }, payload: { data: { title: 'x' } } })).statusCode, 412)

  t.equal((await app.inject({ method: 'PUT', url, headers: { 'if-match': '*' }, payload: { data: { title: 'Any version' } } })).statusCode, 200)
  const current = (await app.inject({ url })).headers.etag as string
  t.equal((await app.inject({ method: 'DELETE', url, headers: { 'if-match': current } })).statusCode, 204)
  t.equal((await app.inject({ url })).statusCode, 404)
  const gone = await app.inject({ method: 'PUT', url, headers: { 'if-match': '*' }, payload: { data: { title: 'x' } } })
  t.equal(gone.statusCode, 412, 'no current representation: * does not match')

  // The single type: PUT creates on the first write, If-Match fails while there is none.
  t.equal((await app.inject({ method: 'PUT', url: '/api/homepage', headers: { 'if-match': '*' }, payload: { data: { title: 'x' } } })).statusCode, 412)
  t.equal((await app.inject({ method: 'PUT', url: '/api/homepage', payload: { data: { title: 'Home' } } })).statusCode, 200)
  const home = (await app.inject({ url: '/api/homepage' })).headers.etag as string
  t.equal((await app.inject({ method: 'PUT', url: '/api/homepage', headers: { 'if-match': home }, payload: { data: { title: 'Home 2' } } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: '/api/homepage', headers: { 'if-match': home } })).statusCode, 412)
})

t.test('two writers holding the same ETag: exactly one succeeds, the other gets 412', async (t) => {
  const { app } = await build(t, { models: [article, homepage] })
  for (let round = 0; round < 5; round++) {
    const id = await seed(app, `Race ${round}`)
    const url = `${ARTICLES}/${id}`
    const etag = (await app.inject({ url })).headers.etag as string
    const writes = await Promise.all(['A', 'B', 'C'].map(async (who) =>
      await app.inject({ method: 'PUT', url, headers: { 'if-match': etag }, payload: { data: { title: `by ${who}` } } })))
    const statuses = writes.map((w) => w.statusCode).sort()
    t.same(statuses, [200, 412, 412], `round ${round}`)
    const winner = writes.find((w) => w.statusCode === 200)!.json().data.title
    t.equal((await app.inject({ url })).json().data.title, winner, 'the document holds the one accepted write')
  }
  const id = await seed(app, 'Delete race')
  const url = `${ARTICLES}/${id}`
  const etag = (await app.inject({ url })).headers.etag as string
  const [del, put] = await Promise.all([
    app.inject({ method: 'DELETE', url, headers: { 'if-match': etag } }),
    app.inject({ method: 'PUT', url, headers: { 'if-match': etag }, payload: { data: { title: 'edit' } } })
  ])
  const won = [del.statusCode === 204, put.statusCode === 200].filter(Boolean).length
  t.equal(won, 1, `one of DELETE ${del.statusCode} and PUT ${put.statusCode} wins`)
  t.ok(del.statusCode === 412 || put.statusCode === 412, 'the other is refused with 412')
})

t.test('Cache-Control: private for callers with credentials, public otherwise, per content type', async (t) => {
  const { app } = await build(t, {
    models: [article, homepage],
    rest: { routes: { 'api::homepage.homepage': { cacheControl: 'public, max-age=60' }, [ARTICLE]: { cacheControl: { authenticated: false } } } }
  })
  await app.inject({ method: 'PUT', url: '/api/homepage', payload: { data: { title: 'Home' } } })
  await seed(app, 'A')
  const { accessKey } = await app.contentApi.apiTokens.create({ name: 'reader', type: 'read-only' })
  const auth = { authorization: `Bearer ${accessKey}` }

  const home = await app.inject({ url: '/api/homepage' })
  t.equal(home.headers['cache-control'], 'public, max-age=60')
  t.equal((await app.inject({ url: '/api/homepage', headers: auth })).headers['cache-control'], 'public, max-age=60')
  t.match(home.headers.vary, /Authorization/)
  const publicList = await app.inject({ url: ARTICLES })
  t.equal(publicList.headers['cache-control'], 'public, no-cache')
  const tokenList = await app.inject({ url: ARTICLES, headers: auth })
  t.equal(tokenList.statusCode, 200)
  t.equal(tokenList.headers['cache-control'], undefined, 'false: no header')
  const notModified = await app.inject({ url: ARTICLES, headers: { 'if-none-match': publicList.headers.etag as string } })
  t.same([notModified.statusCode, notModified.headers['cache-control']], [304, 'public, no-cache'])
  // Writes carry none.
  t.equal((await app.inject({ method: 'POST', url: ARTICLES, payload: { data: { title: 'B' } } })).headers['cache-control'], undefined)
})

t.test('defaults: private, no-cache for an authenticated caller', async (t) => {
  const { app } = await build(t, { models: [article, homepage] })
  await seed(app, 'A')
  const { accessKey } = await app.contentApi.apiTokens.create({ name: 'reader', type: 'read-only' })
  const res = await app.inject({ url: ARTICLES, headers: { authorization: `Bearer ${accessKey}` } })
  t.same([res.statusCode, res.headers['cache-control']], [200, 'private, no-cache'])
})
