import t from 'tap'
import { build } from '../helpers/build.js'
import { oracleOptions } from '../fixtures/oracle/models.js'
import { loadOracleSeed, seedOracle } from '../fixtures/oracle/seed.js'

/**
 * Where Strapi 5.54 is lenient, and where its 400s carry details of their own source, on the
 * oracle fixture: each rule derived from Strapi's source (@strapi/utils pagination and
 * convert-query-params, @strapi/core's document service and entity validator, @strapi/database's
 * field parsers, koa-body), tested beyond the recorded cases. The recorded ones are in
 * test/rest/query.test.ts and the replay.
 */

const { app } = await build(t, oracleOptions)
const seed = loadOracleSeed()
const seeded = await seedOracle(app, seed)
const fullToken = seed.tokens.find((token) => token.type === 'full-access')?.accessKey ?? ''
const auth = { authorization: `Bearer ${fullToken}` }

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
async function send (method: Method, url: string, payload?: unknown, raw?: string): Promise<{ status: number, json: any, text: string }> {
  const headers: Record<string, string> = { ...auth }
  if (payload !== undefined || raw !== undefined) headers['content-type'] = 'application/json'
  const body = raw ?? (payload === undefined ? undefined : JSON.stringify(payload))
  const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body }) })
  let json: unknown
  try { json = JSON.parse(res.body) } catch { json = undefined }
  return { status: res.statusCode, json, text: res.body }
}
const list = async (url: string): Promise<{ meta: any, titles: string[] }> => {
  const res = await send('GET', url)
  t.equal(res.status, 200, url)
  return { meta: res.json.meta, titles: res.json.data.map((d: { title?: string, name?: string }) => d.title ?? d.name) }
}
const envelope = (message: string, details: Record<string, unknown> = {}) => ({ data: null, error: { status: 400, name: 'ValidationError', message, details } })

t.test('pagination: a size that is not a number is maxLimit (withMaxLimit: NaN < 100 is false)', async (t) => {
  t.same((await list('/api/articles?pagination[pageSize]=abc&fields[0]=title')).meta.pagination, { page: 1, pageSize: 100, pageCount: 1, total: 50 })
  t.same((await list('/api/articles?pagination[page]=2&pagination[pageSize]=lots&fields[0]=title')).meta.pagination, { page: 2, pageSize: 100, pageCount: 1, total: 50 },
    'page 2 of 100: start 100, nothing on it')
  t.same((await list('/api/articles?pagination[limit]=abc&fields[0]=title')).meta.pagination, { start: 0, limit: 100, total: 50 })
  t.same((await list('/api/articles?pagination[start]=48&pagination[limit]=x&fields[0]=title')).titles.length, 2)
  t.same((await list('/api/articles?pagination[pageSize][0]=3&fields[0]=title')).meta.pagination.pageSize, 3, 'a repeated key of one value')
  t.same((await send('GET', '/api/articles?pagination[page]=x&pagination[pageSize]=x')).json,
    envelope('convertStartQueryParams expected a positive integer got NaN'), 'a page that is not a number is still a 400')
})

t.test('pagination keys outside pagination[...]: what Strapi\'s document service makes of them', async (t) => {
  const mixed = envelope('Invalid pagination attributes. The page parameters are incorrect and must be in the pagination object')
  t.same((await send('GET', '/api/articles?page=2')).json, { ...mixed, error: { ...mixed.error, name: 'PaginationError' } }, 'a list: 400')
  t.same((await send('GET', '/api/articles?pageSize=2&fields[0]=title')).json.error.name, 'PaginationError')
  t.same((await list('/api/articles?start=5&limit=2&fields[0]=title')).meta.pagination, { page: 1, pageSize: 25, pageCount: 2, total: 50 }, 'start and limit: ignored')
  const one = `/api/articles/${seeded.articles[0]}`
  t.equal((await send('GET', `${one}?page=2&pageSize=3`)).status, 200, 'one document: valid ones ignored')
  t.same((await send('GET', `${one}?page=abc`)).json.error, { status: 400, name: 'PaginationError', message: "Invalid 'page' parameter. Expected an integer > 0, received: abc", details: {} })
  t.same((await send('GET', `${one}?limit=x`)).json, envelope('convertLimitQueryParams expected a positive integer got NaN'))
  t.equal((await send('GET', '/api/homepage?pageSize=0')).json.error.message, "Invalid 'pageSize' parameter. Expected an integer > 0, received: 0", 'a single type too')
  t.equal((await send('GET', '/api/articles?page=2')).status, 400, 'not kept as a tree: refused again')
})

t.test('status: only published (or none) is the published version; any other value reads drafts', async (t) => {
  const drafts = await list('/api/articles?status=draft&fields[0]=title&sort=title&pagination[pageSize]=100')
  for (const status of ['archived', '', 'DRAFT', 'Published']) {
    t.same(await list(`/api/articles?status=${status}&fields[0]=title&sort=title&pagination[pageSize]=100`), drafts, `status=${status}`)
  }
  t.same(await list('/api/articles?status[0]=published&fields[0]=title&sort=title&pagination[pageSize]=100'), drafts, 'a list')
  const art5 = seeded.articles[5]
  t.equal((await send('GET', `/api/articles/${art5}?status=anything`)).status, 200, 'a draft-only document, read as a draft')
  t.same(await list('/api/categories?status=archived&sort=name'), await list('/api/categories?sort=name'), 'no draft & publish: ignored')
})

t.test('locale: * is every locale; any other string is a code, matched literally', async (t) => {
  const every = await list('/api/articles?locale=*&fields[0]=title&pagination[pageSize]=100')
  t.equal(every.meta.pagination.total, 65, 'en and fr')
  for (const locale of ['all', 'de', 'EN', 'en-US', 'x%2Fy', '..', '%20']) {
    t.same((await list(`/api/articles?locale=${locale}&fields[0]=title`)).meta.pagination.total, 0, `locale=${locale}`)
  }
  t.same(await list('/api/articles?locale=&fields[0]=title&sort=title'), await list('/api/articles?fields[0]=title&sort=title'), 'locale= is the default locale')
  t.equal((await send('GET', `/api/articles/${seeded.articles[0]}?locale=all`)).status, 404)
  t.same(await list('/api/categories?locale=all&sort=name'), await list('/api/categories?sort=name'), 'a type that is not localized ignores it')
})

t.test('the details of a 400 follow its source', async (t) => {
  const create = async (data: Record<string, unknown>) => await send('POST', '/api/articles', { data: { title: 'Parity', ...data } })

  // Strapi's throwUnrecognizedFields names the attribute path holding the key: null at the root.
  t.same((await create({ nope: 1 })).json, envelope('Invalid key nope', { key: 'nope', path: null, source: 'body' }))
  t.same((await create({ seo: { metaTitle: 'x', nope: 1 } })).json, envelope('Invalid key nope at seo', { key: 'nope', path: 'seo', source: 'body' }))
  t.same((await create({ blocks: [{ __component: 'shared.quote', text: 'q', nope: 1 }] })).json,
    envelope('Invalid key nope at blocks', { key: 'nope', path: 'blocks', source: 'body' }), 'in a dynamic zone: the zone, no index')

  // Strapi checks the keys of the whole body before any value, each check over the whole body
  // in turn, depth first in key order.
  t.same((await create({ views: 'many', seo: { nope: 1 } })).json, envelope('Invalid key nope at seo', { key: 'nope', path: 'seo', source: 'body' }),
    'a bad key in a component comes before a bad value at the root')
  t.same((await create({ publishDate: 'soon', blocks: [{ __component: 'shared.rich-text', body: 'b' }, { __component: 'shared.quote', nope: 1 }] })).json,
    envelope('Invalid key nope at blocks', { key: 'nope', path: 'blocks', source: 'body' }), 'in the second item of a zone')
  t.equal((await create({ seo: { nope: 1 }, other: 1 })).json.error.message, 'Invalid key nope at seo', 'depth first, in key order')
  t.equal((await create({ other: 1, seo: { nope: 1 } })).json.error.message, 'Invalid key other')
  t.same((await create({ seo: { nope: 1 }, createdAt: 'x' })).json, envelope('Invalid key createdAt', { key: 'createdAt', path: 'createdAt', source: 'body' }),
    'a key that may not be written, anywhere, before an unknown one')
  t.equal((await send('PUT', `/api/articles/${seeded.articles[0]}?locale=de`, { data: { seo: { nope: 1 } } })).json.error.message, 'Invalid key nope at seo',
    'before the write\'s locale is checked')

  // The document service's documentId-to-id transform: a plain ValidationError.
  t.same((await create({ category: 'doesnotexist000000000000' })).json, envelope('Document with id "doesnotexist000000000000", locale "null" not found'))
  t.same((await create({ authors: { connect: ['nosuchauthor000000000000'] } })).json, envelope('Document with id "nosuchauthor000000000000", locale "null" not found'))
  // The entity validator's relations test: ids that name no row, counted, at the payload's root.
  const rootError = (message: string) => envelope(message, { errors: [{ path: [], message, name: 'ValidationError' }] })
  t.same((await create({ category: 99999 })).json, rootError('1 relation(s) of type api::category.category associated with this entity do not exist'))
  t.same((await create({ authors: [99998, 99999, 99999] })).json, rootError('2 relation(s) of type api::author.author associated with this entity do not exist'))
  t.same((await create({ cover: 99999 })).json, rootError('1 relation(s) of type plugin::upload.file associated with this entity do not exist'))

  // yup's oneOf lists every component of the application for a name that is no component.
  const unknown = (await create({ blocks: [{ __component: 'shared.nope', text: 'q' }] })).json
  t.equal(unknown.error.message, 'blocks[0].__component must be one of the following values: shared.quote, shared.rich-text, shared.seo')
  t.same(unknown.error.details.errors[0].path, ['blocks', '0', '__component'])
  // A component the zone does not allow: Strapi would store it; here a 400 with the zone's list.
  t.equal((await create({ blocks: [{ __component: 'shared.seo', metaTitle: 'm' }] })).json.error.message,
    'blocks[0].__component must be one of the following values: shared.quote, shared.rich-text')

  // Dates: yup lets them through, Strapi's database field refuses them, without details.
  t.same((await create({ publishDate: 'not-a-date' })).json, envelope('Invalid format, expected yyyy-MM-dd'), 'create-wrong-type-date')
  t.same((await create({ publishDate: '2024-02-30' })).json, envelope('Invalid date'))
  t.equal((await create({ publishDate: 'soon', views: 'many' })).json.error.message,
    'views must be a `number` type, but the final value was: `NaN` (cast from the value `"many"`).', 'a yup error comes first')
  t.equal((await create({ publishDate: '2024-02-01', slug: 'parity-dated' })).status, 200, 'create answers 200, as the spec says')

  // A body that is not JSON: koa-body's SyntaxError, without a details key.
  const malformed = await send('POST', '/api/articles', undefined, '{"data": {')
  t.same(malformed.json, { data: null, error: { status: 400, name: 'SyntaxError', message: 'Expected property name or \'}\' in JSON at position 10' } })
  t.same((await send('POST', '/api/articles', undefined, '"data"')).json, { data: null, error: { status: 400, name: 'SyntaxError', message: 'invalid JSON, only supports object and array' } })
})

t.test('filters Strapi cannot run are 400s; the ones it runs answer', async (t) => {
  t.same((await send('GET', '/api/articles?filters[tags][$eq]=odd')).json,
    envelope('$eq on tags, a json attribute, expects JSON text (such as "text", 42 or ["a","b"])', { key: '$eq', path: 'tags', source: 'query', param: 'filters' }),
    'filter-json-field-eq')
  t.equal((await send('GET', '/api/articles?filters[tags][$eq]=%22odd%22')).status, 200, 'JSON text compares as jsonb')
  t.ok((await list('/api/articles?filters[tags][$containsi]=odd&fields[0]=title')).titles.length > 0, 'a case-insensitive pattern searches the JSON text')
  t.equal((await send('GET', '/api/articles?filters[tags][$null]=true')).status, 200)
  t.same((await send('GET', '/api/articles?filters[views][$contains]=1')).json,
    envelope('$contains cannot be used on views, a integer attribute: it applies to text (use $containsi to match the value\'s text)', { key: '$contains', path: 'views', source: 'query', param: 'filters' }))
  t.equal((await send('GET', '/api/articles?filters[category][articles][publishDate][$startsWith]=2024')).status, 400, 'through relations too')
  t.ok((await list('/api/articles?filters[views][$containsi]=1&fields[0]=title')).titles.length > 0, '$containsi on a number: its text')
  t.same((await send('GET', '/api/articles?filters[publishDate][$lt]=soon')).json, envelope('Invalid format, expected yyyy-MM-dd'))
  t.same((await send('GET', '/api/articles?filters[createdAt][$gt]=yesterday')).json, envelope('Invalid format, expected a timestamp or an ISO date'))
})
