import t, { type Test } from 'tap'
import swagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import { build } from '../helpers/build.js'
import { article, everything, homepage } from '../fixtures/models.js'

/**
 * The route schemas the plugin attaches are there for @fastify/swagger: an application that
 * registers it gets an OpenAPI document of the content API, checked here with an OpenAPI
 * validator. The document's use (bodies built from it, verdicts compared with the server's) is
 * openapi-use.test.ts.
 */

type Schema = Record<string, any>

/** Keeps the schemas' `$id` as their name in `components.schemas`, as docs/openapi.md shows. */
const refResolver = { buildLocalReference: (json: Schema, _base: unknown, _fragment: unknown, i: number) => (json.$id as string | undefined) ?? `def-${i}` }

/** The paths of the content-type routes. */
const contentPaths = (spec: Schema, prefix = '/api'): string[] =>
  Object.keys(spec.paths)
    .filter((p) => p !== '/graphql' && !p.startsWith(`${prefix}/auth/`) && !p.startsWith(`${prefix}/users`) && !p.startsWith(`${prefix}/upload`) && p !== `${prefix}/i18n/locales`)
    .sort()

const methodsOf = (item: Schema): string[] => Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(k)).sort()
const json = (content: Schema | undefined): Schema => content?.['application/json']?.schema

/** A schema with its `$ref` followed (one level). */
const deref = (spec: Schema, schema: Schema): Schema =>
  typeof schema?.$ref === 'string' ? spec.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema

async function validate (t: Test, spec: Schema, what: string): Promise<void> {
  const result = await new Validator().validate(structuredClone(spec))
  t.ok(result.valid, `${what}: a valid OpenAPI ${spec.openapi as string} document`)
  if (!result.valid) t.comment(JSON.stringify(result.errors, null, 1).slice(0, 3000))
}

t.test('an OpenAPI document of every content-type route', async (t) => {
  const { app } = await build(t, { models: [everything, article, homepage] }, async (app) => {
    await app.register(swagger, { openapi: {}, refResolver })
  })
  const spec = app.swagger() as Schema
  t.match(spec.openapi, /^3\./)
  await validate(t, spec, 'openapi 3.0')

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
    const params = Object.fromEntries(list.parameters.map((p: Schema) => [p.name, p]))
    t.same(Object.keys(params).sort(), ['fields', 'filters', 'hasPublishedVersion', 'pagination', 'populate', 'publicationFilter', 'sort', 'status'], 'a list\'s parameters (no locale: article is not localized)')
    for (const p of list.parameters) t.match(p, { in: 'query', required: false, style: 'deepObject', explode: true }, `${p.name as string} in bracket form`)
    t.same(params.filters.schema, { $ref: '#/components/schemas/ArticleFilters' })
    t.same(params.populate.schema, { $ref: '#/components/schemas/ArticlePopulate' })
    t.same(Object.keys(params.pagination.schema.properties), ['page', 'pageSize', 'start', 'limit', 'withCount', 'after', 'before'])
    t.same(params.status.schema.enum, ['published', 'draft'])
    t.same(params.fields.schema.anyOf[1].items.enum, ['id', 'documentId', 'title', 'slug', 'views', 'createdAt', 'updatedAt', 'publishedAt'])
    const noDraft = spec.paths['/api/everythings'].get.parameters.map((p: Schema) => p.name)
    t.notOk(noDraft.includes('status'), 'no status on a type without draft & publish')
    const one = spec.paths['/api/articles/{documentId}'].get
    t.match(one.parameters.find((p: Schema) => p.in === 'path'), { name: 'documentId', required: true, schema: { type: 'string' } })
    t.same(one.parameters.filter((p: Schema) => p.in === 'query').map((p: Schema) => p.name), ['fields', 'populate', 'status', 'publicationFilter', 'hasPublishedVersion'])
    t.same(spec.paths['/api/homepage'].get.tags, ['Homepage'])
    t.same(spec.paths['/api/everythings'].post.tags, ['Everything'])

    const filters = spec.components.schemas.ArticleFilters
    t.same(filters.properties.title, { $ref: '#/components/schemas/ContentApiFieldFilter' })
    t.same(filters.properties.$or, { type: 'array', items: { $ref: '#/components/schemas/ArticleFilters' } })
    t.equal(filters.additionalProperties, false, 'an unknown filter key is a 400')
    const operators = spec.components.schemas.ContentApiFieldFilter.anyOf.find((s: Schema) => s.type === 'object')
    for (const op of ['$eq', '$containsi', '$in', '$between', '$null', '$not']) t.ok(operators.properties[op], `operator ${op}`)
  })

  t.test('the document schema per attribute type', async (t) => {
    const list = json(spec.paths['/api/everythings'].get.responses['200'].content)
    t.equal(list.type, 'object')
    t.same(list.properties.data, { type: 'array', items: { $ref: '#/components/schemas/Everything' } })
    t.ok(list.properties.meta.properties.pagination, 'meta.pagination is documented')
    const doc = spec.components.schemas.Everything
    t.same(doc.required, ['id', 'documentId'], 'only id and documentId are always there: fields narrows the rest')
    const props = doc.properties as Record<string, Schema>
    t.same(Object.keys(props), [
      'id', 'documentId', 'title', 'slug', 'summary', 'bodyMd', 'body', 'email', 'count', 'big', 'ratio', 'price',
      'day', 'clock', 'at', 'stamp', 'flag', 'kind', 'meta', 'code', 'createdAt', 'updatedAt', 'publishedAt'
    ], 'every returned field, and neither the password nor the private attribute')
    t.match(props.id, { type: 'integer' })
    t.notOk(props.id.nullable, 'id is never null')
    t.match(props.documentId, { type: 'string' })
    t.notOk(props.documentId.nullable)
    t.same(props.title, { type: 'string', maxLength: 40 }, 'a required attribute of a type without drafts is never null')
    t.match(props.slug, { type: 'string', nullable: true })
    t.match(props.summary, { type: 'string' })
    t.match(props.bodyMd, { type: 'string' })
    t.match(props.body, { type: 'array', items: { type: 'object' } })
    t.match(props.email, { type: 'string', format: 'email' })
    t.match(props.count, { type: 'integer', nullable: true, minimum: 0, maximum: 1000 })
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
    t.same(props.createdAt, { type: 'string', format: 'date-time' })
    t.match(props.publishedAt, { type: 'string', format: 'date-time', nullable: true })

    const one = json(spec.paths['/api/everythings/{documentId}'].get.responses['200'].content)
    t.same(Object.keys(one.properties), ['data', 'meta'])
    t.same(one.properties.data, { $ref: '#/components/schemas/Everything' }, 'GET one returns the same document')
    t.same(Object.keys(spec.components.schemas.Homepage.properties), ['id', 'documentId', 'title', 'createdAt', 'updatedAt', 'publishedAt'])
    const articleDoc = spec.components.schemas.Article
    t.same(Object.keys(articleDoc.properties), ['id', 'documentId', 'title', 'slug', 'views', 'createdAt', 'updatedAt', 'publishedAt'])
    t.match(articleDoc.properties.title, { type: 'string', nullable: true }, 'a draft may hold a required attribute empty')
  })

  t.test('request bodies of POST and PUT', async (t) => {
    const post = spec.paths['/api/everythings'].post
    const put = spec.paths['/api/everythings/{documentId}'].put
    for (const operation of [post, put]) {
      t.equal(operation.requestBody.required, true)
      t.same(json(operation.requestBody.content).required, ['data'])
    }
    t.same(json(post.requestBody.content).properties.data, { allOf: [{ $ref: '#/components/schemas/EverythingInput' }, { required: ['title'] }] },
      'a create must send the required attribute without a default (the uid is generated from title)')
    t.same(json(put.requestBody.content).properties.data, { $ref: '#/components/schemas/EverythingInput' }, 'an update sends what it changes')
    const data = spec.components.schemas.EverythingInput
    t.equal(data.type, 'object')
    t.equal(data.additionalProperties, false)
    t.same(Object.keys(data.properties), [
      'title', 'slug', 'summary', 'bodyMd', 'body', 'email', 'secret', 'count', 'big', 'ratio', 'price',
      'day', 'clock', 'at', 'stamp', 'flag', 'kind', 'meta', 'note', 'code', 'locale', 'publishedAt'
    ], 'every writable attribute, including the password and the private one; locale and publishedAt are taken and ignored')
    t.same(data.properties.title, { type: 'string', maxLength: 40 }, 'required: never null')
    t.match(data.properties.count, { type: 'integer', nullable: true })
    t.match(data.properties.big, { type: 'string' })
    t.match(data.properties.flag, { type: 'boolean' })
    t.match(data.properties.kind, { enum: ['news', 'opinion', 'review'] })
    t.match(data.properties.secret, { type: 'string' })
    t.same(json(spec.paths['/api/articles'].post.requestBody.content).properties.data.allOf[1], { required: ['title'] })
    t.match(spec.components.schemas.ArticleInput.description, /status=draft/, 'the draft rules are told')
    const homepageBody = spec.components.schemas.HomepageInput
    t.same(Object.keys(homepageBody.properties), ['title', 'locale', 'publishedAt'])
    t.notOk(spec.paths['/api/articles'].get.requestBody, 'GET has no body')
    t.notOk(spec.paths['/api/articles/{documentId}'].delete.requestBody, 'DELETE has no body')
  })

  t.test('responses and security', async (t) => {
    const del = spec.paths['/api/articles/{documentId}'].delete.responses
    t.ok(del['204'], 'DELETE documents its 204')
    t.notOk(del['200'])
    for (const [path, method] of [['/api/articles', 'post'], ['/api/articles/{documentId}', 'get'], ['/api/articles/{documentId}', 'put']] as const) {
      const operation = spec.paths[path][method]
      t.ok(operation.responses['200'], `${method} ${path}: 200`)
      const error = deref(spec, json(operation.responses['400'].content))
      t.same(Object.keys(error.properties), ['data', 'error'], `${method} ${path}: the error envelope`)
      t.same(Object.keys(error.properties.error.properties), ['status', 'name', 'message', 'details'])
      for (const status of ['401', '403', '404']) t.ok(operation.responses[status], `${method} ${path}: ${status}`)
      t.same(operation.security, [{ jwt: [] }, { apiToken: [] }, {}], 'a user, an API token, or the public role')
    }
    const created = json(spec.paths['/api/articles'].post.responses['200'].content)
    t.same(Object.keys(created.properties), ['data', 'meta'], 'POST answers 200 with { data, meta }')
    t.match(spec.components.securitySchemes, {
      jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiToken: { type: 'http', scheme: 'bearer' }
    })
  })

  t.test('documenting the routes does not make them validate: messages stay Strapi\'s', async (t) => {
    const res = await app.inject({ method: 'POST', url: '/api/everythings', payload: { data: { title: 'x', count: '7', nope: 1 } } })
    t.equal(res.statusCode, 400)
    t.equal(res.json().error.message, 'Invalid key nope')
    const ok = await app.inject({ method: 'POST', url: '/api/everythings', payload: { data: { title: 'x', count: '7' } } })
    t.equal(ok.statusCode, 200, 'a numeric string is accepted for an integer, as Strapi does')
    t.equal(ok.json().data.count, 7)
    const login = await app.inject({ method: 'POST', url: '/api/auth/local', payload: {} })
    t.equal(login.statusCode, 400)
    t.equal(login.json().error.message, '2 errors occurred', 'the auth routes answer their own validation')
    const files = await app.inject({ method: 'GET', url: '/api/upload/files?pagination[page]=x' })
    t.not(files.statusCode, 500)
  })
})

t.test('the auth, users, roles and upload routes', async (t) => {
  const { app } = await build(t, { models: [article] }, async (app) => {
    await app.register(swagger, { openapi: {}, refResolver })
  })
  const spec = app.swagger() as Schema
  await validate(t, spec, 'with the auth routes')
  const body = (path: string, method = 'post'): Schema => json(spec.paths[path][method].requestBody.content)

  t.same(methodsOf(spec.paths['/api/auth/local']), ['post'])
  t.same(body('/api/auth/local').required, ['identifier', 'password'])
  t.same(json(spec.paths['/api/auth/local'].post.responses['200'].content), {
    type: 'object', properties: { jwt: { type: 'string' }, user: { $ref: '#/components/schemas/UsersPermissionsUser' } }, required: ['jwt', 'user']
  })
  t.same(body('/api/auth/local/register').required, ['username', 'email', 'password'])
  t.equal(body('/api/auth/local/register').additionalProperties, false, 'other keys are refused without auth.register.allowedFields')
  for (const path of ['/api/auth/change-password', '/api/auth/forgot-password', '/api/auth/reset-password', '/api/auth/send-email-confirmation']) {
    t.ok(spec.paths[path].post, `${path} is documented`)
  }
  t.same(spec.paths['/api/auth/change-password'].post.security, [{ jwt: [] }], 'only a signed-in user changes a password')
  t.same(spec.paths['/api/users/me'].get.security, [{ jwt: [] }])
  t.match(spec.paths['/api/auth/email-confirmation'].get.parameters, [{ name: 'confirmation', in: 'query', required: true }])

  t.same(methodsOf(spec.paths['/api/users']), ['get', 'post'])
  t.same(methodsOf(spec.paths['/api/users/{id}']), ['delete', 'get', 'put'])
  t.same(json(spec.paths['/api/users'].get.responses['200'].content), { type: 'array', items: { $ref: '#/components/schemas/UsersPermissionsUser' } })
  t.same(json(spec.paths['/api/users/count'].get.responses['200'].content), { type: 'integer' })
  const createUser = body('/api/users')
  t.same(createUser.required, ['username', 'email', 'password'])
  t.notOk('resetPasswordToken' in createUser.properties, 'private attributes are not writable through /users')
  t.ok(createUser.properties.role, 'the role relation is')
  t.same(spec.paths['/api/users'].post.security, [{ jwt: [] }, { apiToken: [] }])
  t.ok(spec.paths['/api/users'].post.responses['201'], 'POST /users answers 201')
  const user = spec.components.schemas.UsersPermissionsUser
  t.notOk('password' in user.properties, 'the password is never returned')
  t.ok(user.properties.role, 'the role, when populated')

  t.same(methodsOf(spec.paths['/api/users-permissions/roles']), ['get', 'post'])
  t.same(methodsOf(spec.paths['/api/users-permissions/roles/{id}']), ['get'])
  t.same(methodsOf(spec.paths['/api/users-permissions/roles/{role}']), ['delete', 'put'])
  t.ok(spec.paths['/api/users-permissions/permissions'].get)

  t.same(methodsOf(spec.paths['/api/upload']), ['post'], 'the upload route, without its trailing slash')
  const upload = spec.paths['/api/upload'].post.requestBody.content['multipart/form-data'].schema
  t.same(Object.keys(upload.properties), ['files', 'fileInfo', 'ref', 'refId', 'field'])
  t.same(json(spec.paths['/api/upload'].post.responses['201'].content), { type: 'array', items: { $ref: '#/components/schemas/UploadFile' } })
  t.same(methodsOf(spec.paths['/api/upload/files']), ['get'])
  t.same(methodsOf(spec.paths['/api/upload/files/{id}']), ['delete', 'get'])
  t.ok(spec.components.schemas.UploadFile.properties.url, 'a file record')
  t.match(json(spec.paths['/api/i18n/locales'].get.responses['200'].content), { type: 'array', items: { required: ['id', 'name', 'code', 'isDefault'] } }, 'the i18n locales route')
})

t.test('an OpenAPI 3.1 document, and swagger\'s default names', async (t) => {
  const { app } = await build(t, { models: [article, homepage] }, async (app) => {
    await app.register(swagger, { openapi: { openapi: '3.1.0' } })
  })
  const spec = app.swagger() as Schema
  t.equal(spec.openapi, '3.1.0')
  await validate(t, spec, 'openapi 3.1')
  const title = (name: string): string | undefined => Object.values(spec.components.schemas as Record<string, Schema>).find((s) => s.title === name)?.title
  t.equal(title('Article'), 'Article', 'without a refResolver, swagger names the schemas def-N and titles them with their $id')
  const doc = Object.values(spec.components.schemas as Record<string, Schema>).find((s) => s.title === 'Article')!
  t.same(doc.properties.title, { anyOf: [{ type: 'string' }, { type: 'null' }] }, '3.1 keeps JSON Schema\'s null type')
})

t.test('the documented paths follow rest.prefix', async (t) => {
  const { app } = await build(t, { models: [article, homepage], rest: { prefix: '/content' } }, async (app) => {
    await app.register(swagger, { openapi: {} })
  })
  const spec = app.swagger() as Schema
  t.same(contentPaths(spec, '/content'), ['/content/articles', '/content/articles/aggregate', '/content/articles/{documentId}', '/content/homepage'])
  t.notOk(Object.keys(spec.paths).some((p) => p.startsWith('/api/')), 'nothing is documented under /api')
  t.ok(spec.paths['/content/auth/local'], 'the auth routes too')
})

t.test('swagger 2 mode: no bearer scheme there, the routes are documented without security', async (t) => {
  const { app } = await build(t, { models: [article] }, async (app) => {
    await app.register(swagger, { swagger: {} })
  })
  const spec = app.swagger() as Schema
  t.equal(spec.swagger, '2.0')
  t.notOk(spec.paths['/api/articles'].get.security)
})
