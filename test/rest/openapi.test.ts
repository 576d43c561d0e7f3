import t from 'tap'
import swagger from '@fastify/swagger'
import { build } from '../helpers/build.js'
import { article, everything, homepage } from '../fixtures/models.js'

/**
 * The route schemas the plugin attaches are there for @fastify/swagger: an application that
 * registers it gets an OpenAPI document of the content API.
 */

type Schema = Record<string, any>

/** The paths of the content-type routes (the auth routes are documented too, and tested elsewhere). */
const contentPaths = (spec: Schema, prefix = '/api'): string[] =>
  Object.keys(spec.paths)
    .filter((p) => p !== '/graphql' && !p.startsWith(`${prefix}/auth/`) && !p.startsWith(`${prefix}/users`) && !p.startsWith(`${prefix}/upload`))
    .sort()

const methodsOf = (item: Schema): string[] => Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(k)).sort()
const json = (content: Schema | undefined): Schema => content?.['application/json']?.schema

t.test('an OpenAPI document of every content-type route', async (t) => {
  const { app } = await build(t, { models: [everything, article, homepage] }, async (app) => {
    await app.register(swagger, { openapi: {} })
  })
  const spec = app.swagger() as Schema
  t.match(spec.openapi, /^3\./)

  t.test('paths and methods', async (t) => {
    t.same(methodsOf(spec.paths['/api/articles']), ['get', 'post'])
    t.same(methodsOf(spec.paths['/api/articles/{documentId}']), ['delete', 'get', 'put'])
    t.same(methodsOf(spec.paths['/api/everythings']), ['get', 'post'])
    t.same(methodsOf(spec.paths['/api/everythings/{documentId}']), ['delete', 'get', 'put'])
    t.same(methodsOf(spec.paths['/api/homepage']), ['delete', 'get', 'put'])
    t.same(methodsOf(spec.paths['/api/articles/aggregate']), ['get'], 'our aggregate extension')
    t.same(contentPaths(spec), [
      '/api/articles', '/api/articles/aggregate', '/api/articles/{documentId}', '/api/everythings', '/api/everythings/aggregate',
      '/api/everythings/{documentId}', '/api/homepage'
    ], 'no other content path: the single type has no /{documentId} route, no plural route')
  })

  t.test('the 405 helper routes are not documented', async (t) => {
    for (const [path, item] of Object.entries(spec.paths as Record<string, Schema>)) {
      t.notOk('patch' in item, `${path} has no PATCH`)
    }
    t.notOk('post' in spec.paths['/api/homepage'], 'a single type documents no POST')
    t.notOk('put' in spec.paths['/api/articles'], 'a collection documents no PUT on its list route')
    t.notOk('delete' in spec.paths['/api/articles'])
  })

  t.test('tags, summaries, parameters', async (t) => {
    const list = spec.paths['/api/articles'].get
    t.same(list.tags, ['Article'])
    t.equal(list.summary, 'List articles')
    const names = list.parameters.map((p: Schema) => `${p.in as string}:${p.name as string}`)
    for (const name of ['sort', 'fields', 'pagination[page]', 'pagination[pageSize]', 'pagination[start]', 'pagination[limit]', 'pagination[withCount]', 'status', 'locale']) {
      t.ok(names.includes(`query:${name}`), `list documents the ${name} parameter`)
    }
    const one = spec.paths['/api/articles/{documentId}'].get
    t.match(one.parameters.find((p: Schema) => p.in === 'path'), { name: 'documentId', required: true, schema: { type: 'string' } })
    t.same(spec.paths['/api/homepage'].get.tags, ['Homepage'])
    t.same(spec.paths['/api/everythings'].post.tags, ['Everything'])
  })

  t.test('the document schema per attribute type', async (t) => {
    const list = json(spec.paths['/api/everythings'].get.responses['200'].content)
    t.equal(list.type, 'object')
    t.equal(list.properties.data.type, 'array')
    t.ok(list.properties.meta.properties.pagination, 'meta.pagination is documented')
    const doc = list.properties.data.items
    const props = doc.properties as Record<string, Schema>
    t.same(Object.keys(props), [
      'id', 'documentId', 'title', 'slug', 'summary', 'bodyMd', 'body', 'email', 'count', 'big', 'ratio', 'price',
      'day', 'clock', 'at', 'stamp', 'flag', 'kind', 'meta', 'code', 'createdAt', 'updatedAt', 'publishedAt'
    ], 'every returned field, and neither the password nor the private attribute')
    t.match(props.id, { type: 'integer' })
    t.notOk(props.id.nullable, 'id is never null')
    t.match(props.documentId, { type: 'string' })
    t.notOk(props.documentId.nullable)
    t.match(props.title, { type: 'string', nullable: true })
    t.match(props.slug, { type: 'string' })
    t.match(props.summary, { type: 'string' })
    t.match(props.bodyMd, { type: 'string' })
    t.match(props.body, { type: 'array', items: { type: 'object' } })
    t.match(props.email, { type: 'string', format: 'email' })
    t.match(props.count, { type: 'integer', nullable: true })
    t.match(props.big, { type: 'string', pattern: '^-?\\d+$' }, 'biginteger is a string of digits')
    t.match(props.ratio, { type: 'number' })
    t.match(props.price, { type: 'number' }, 'decimal is a number')
    t.match(props.day, { type: 'string', format: 'date' })
    t.match(props.clock, { type: 'string', pattern: String })
    t.match(props.at, { type: 'string', format: 'date-time' })
    t.match(props.stamp, { type: 'string', format: 'date-time' })
    t.match(props.flag, { type: 'boolean', nullable: true })
    t.match(props.kind, { type: 'string', enum: ['news', 'opinion', 'review'] })
    t.ok(props.meta, 'json is documented (any value)')
    t.match(props.createdAt, { type: 'string', format: 'date-time' })
    t.match(props.publishedAt, { type: 'string', format: 'date-time', nullable: true })

    const one = json(spec.paths['/api/everythings/{documentId}'].get.responses['200'].content)
    t.same(Object.keys(one.properties), ['data', 'meta'])
    t.same(Object.keys(one.properties.data.properties), Object.keys(props), 'GET one returns the same document')
    const single = json(spec.paths['/api/homepage'].get.responses['200'].content)
    t.same(Object.keys(single.properties.data.properties), ['id', 'documentId', 'title', 'createdAt', 'updatedAt', 'publishedAt'])
    const articleDoc = json(spec.paths['/api/articles'].get.responses['200'].content).properties.data.items
    t.same(Object.keys(articleDoc.properties), ['id', 'documentId', 'title', 'slug', 'views', 'createdAt', 'updatedAt', 'publishedAt'])
    t.match(articleDoc.properties.views, { type: 'integer' })
  })

  t.test('request bodies of POST and PUT', async (t) => {
    for (const [path, method] of [['/api/everythings', 'post'], ['/api/everythings/{documentId}', 'put']] as const) {
      const operation = spec.paths[path][method]
      t.equal(operation.requestBody.required, true, `${method} ${path} requires a body`)
      const body = json(operation.requestBody.content)
      t.same(body.required, ['data'])
      const data = body.properties.data
      t.equal(data.type, 'object')
      t.equal(data.additionalProperties, false)
      t.same(Object.keys(data.properties), [
        'title', 'slug', 'summary', 'bodyMd', 'body', 'email', 'secret', 'count', 'big', 'ratio', 'price',
        'day', 'clock', 'at', 'stamp', 'flag', 'kind', 'meta', 'note', 'code'
      ], 'every writable attribute, including the password and the private one; no system field')
      t.match(data.properties.count, { type: 'integer' })
      t.match(data.properties.big, { type: 'string' })
      t.match(data.properties.flag, { type: 'boolean' })
      t.match(data.properties.kind, { enum: ['news', 'opinion', 'review'] })
      t.match(data.properties.secret, { type: 'string' })
    }
    const homepageBody = json(spec.paths['/api/homepage'].put.requestBody.content)
    t.same(Object.keys(homepageBody.properties.data.properties), ['title'])
    t.notOk(spec.paths['/api/articles'].get.requestBody, 'GET has no body')
    t.notOk(spec.paths['/api/articles/{documentId}'].delete.requestBody, 'DELETE has no body')
  })

  t.test('responses', async (t) => {
    const del = spec.paths['/api/articles/{documentId}'].delete.responses
    t.ok(del['204'], 'DELETE documents its 204')
    t.notOk(del['200'])
    for (const [path, method] of [['/api/articles', 'post'], ['/api/articles/{documentId}', 'get'], ['/api/articles/{documentId}', 'put']] as const) {
      const responses = spec.paths[path][method].responses
      t.ok(responses['200'], `${method} ${path}: 200`)
      const error = json(responses['400'].content)
      t.same(Object.keys(error.properties), ['data', 'error'], `${method} ${path}: the error envelope`)
      t.same(Object.keys(error.properties.error.properties), ['status', 'name', 'message', 'details'])
      t.ok(responses['404'], `${method} ${path}: 404`)
    }
    const created = json(spec.paths['/api/articles'].post.responses['200'].content)
    t.same(Object.keys(created.properties), ['data', 'meta'], 'POST answers 200 with { data, meta }')
  })

  t.test('documenting the routes does not make them validate: messages stay Strapi\'s', async (t) => {
    const res = await app.inject({ method: 'POST', url: '/api/everythings', payload: { data: { title: 'x', count: '7', nope: 1 } } })
    t.equal(res.statusCode, 400)
    t.equal(res.json().error.message, 'Invalid key nope')
    const ok = await app.inject({ method: 'POST', url: '/api/everythings', payload: { data: { title: 'x', count: '7' } } })
    t.equal(ok.statusCode, 200, 'a numeric string is accepted for an integer, as Strapi does')
    t.equal(ok.json().data.count, 7)
  })
})

t.test('the documented paths follow rest.prefix', async (t) => {
  const { app } = await build(t, { models: [article, homepage], rest: { prefix: '/content' } }, async (app) => {
    await app.register(swagger, { openapi: {} })
  })
  const spec = app.swagger() as Schema
  t.same(contentPaths(spec, '/content'), ['/content/articles', '/content/articles/aggregate', '/content/articles/{documentId}', '/content/homepage'])
  t.notOk(Object.keys(spec.paths).some((p) => p.startsWith('/api/')), 'nothing is documented under /api')
})
