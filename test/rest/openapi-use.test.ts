import t from 'tap'
import swagger from '@fastify/swagger'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { FastifyInstance } from 'fastify'
import { defineComponent, defineContentType } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { everything } from '../fixtures/models.js'
import { createFile, openAccess, relationOptions } from '../fixtures/relations.js'

/**
 * The OpenAPI document used as a client would: request bodies checked against its schemas (as
 * JSON Schema 2020-12, the OpenAPI 3.1 document), examples built from them sent to the server,
 * and the document's verdict (valid or not) compared with the server's (200 or 400) on the
 * rules validate-input.ts applies: required on create, partial updates, null, unknown keys,
 * relation, component, dynamic-zone and media forms.
 */

type Schema = Record<string, any>

const refResolver = { buildLocalReference: (json: Schema, _base: unknown, _fragment: unknown, i: number) => (json.$id as string | undefined) ?? `def-${i}` }

interface Document {
  spec: Schema
  /** Whether a value matches a schema of the document (its `$ref`s resolved in it). */
  accepts: (schema: Schema, value: unknown) => boolean
}

function documentOf (app: FastifyInstance): Document {
  const spec = app.swagger() as Schema
  // `discriminator` and the OpenAPI formats (`binary`) are annotations here: oneOf decides.
  const ajv = new Ajv2020({ strict: false, validateFormats: false })
  const cache = new Map<Schema, ReturnType<typeof ajv.compile>>()
  return {
    spec,
    accepts (schema, value) {
      let validate = cache.get(schema)
      if (validate === undefined) {
        validate = ajv.compile({ ...schema, components: spec.components })
        cache.set(schema, validate)
      }
      return validate(value) === true
    }
  }
}

const bodyOf = (spec: Schema, path: string, method: string): Schema => spec.paths[path][method].requestBody.content['application/json'].schema

/**
 * A minimal value of a schema: the required properties of objects, the first form of a union
 * that is not null, the first enum value, the smallest number: the example a generated client
 * would offer.
 */
function sample (spec: Schema, schema: Schema): unknown {
  const resolve = (s: Schema): Schema => typeof s.$ref === 'string' ? resolve(spec.components.schemas[s.$ref.replace('#/components/schemas/', '')]) : s
  schema = resolve(schema)
  if (schema.allOf !== undefined) {
    // `{ allOf: [Input, { required }] }`: the members' properties, every member's required.
    const members = schema.allOf.map(resolve)
    const required = members.flatMap((s: Schema) => s.required ?? [])
    return Object.assign({}, ...members.map((s: Schema) => sample(spec, { ...s, required })))
  }
  const union = schema.anyOf ?? schema.oneOf
  if (union !== undefined) return sample(spec, union.find((s: Schema) => s.type !== 'null'))
  if (schema.enum !== undefined) return schema.enum[0]
  switch (schema.type) {
    case 'object': return Object.fromEntries((schema.required ?? []).filter((name: string) => schema.properties?.[name] !== undefined).map((name: string) => [name, sample(spec, schema.properties[name])]))
    case 'array': return Array.from({ length: schema.minItems ?? 0 }, () => sample(spec, schema.items))
    case 'integer':
    case 'number': return schema.minimum ?? 1
    case 'boolean': return true
    case 'string': return schema.format === 'email' ? 'someone@example.com' : 'x'.repeat(Math.max(schema.minLength ?? 1, 3))
    default: return null
  }
}

t.test('the document and the server agree', async (t) => {
  const { app } = await build(t, { ...relationOptions, models: [...relationOptions.models, everything] }, async (app) => {
    await app.register(swagger, { openapi: { openapi: '3.1.0' }, refResolver })
  })
  await openAccess(app)
  const { spec, accepts } = documentOf(app)
  const createArticle = bodyOf(spec, '/api/articles', 'post')
  const updateArticle = bodyOf(spec, '/api/articles/{documentId}', 'put')

  const post = async (url: string, payload: unknown): Promise<number> => (await app.inject({ method: 'POST', url, payload: payload as object })).statusCode
  const category = (await app.inject({ method: 'POST', url: '/api/categories', payload: { data: { name: 'Tech' } } })).json().data
  const tags = await Promise.all(['a', 'b'].map(async (name) => (await app.inject({ method: 'POST', url: '/api/tags', payload: { data: { name } } })).json().data))
  const author = (await app.inject({ method: 'POST', url: '/api/authors', payload: { data: { name: 'Ada' } } })).json().data
  const cover = await createFile(app, 'cover.png')
  const other = (await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'Other' } } })).json().data

  t.test('a create with relations in every form, components, a dynamic zone and media', async (t) => {
    const body = {
      data: {
        title: 'Everything at once',
        views: 3,
        category: category.documentId,
        tags: { connect: [{ documentId: tags[0].documentId, position: { start: true } }, tags[1].documentId] },
        author: { documentId: author.documentId },
        related: [other.documentId],
        parent: { set: [other.documentId] },
        cover: cover.id,
        seo: { metaTitle: 'Meta', og: { ogTitle: 'OG', ogType: 'article' }, links: [{ url: 'https://example.com', label: 'ex' }] },
        sections: [{ heading: 'One', position: 1, links: [{ url: '/one' }] }],
        blocks: [
          { __component: 'content.quote', text: 'To be', by: 'W.' },
          { __component: 'content.cta', label: 'Go', target: { url: '/go' } }
        ]
      }
    }
    t.ok(accepts(createArticle, body), 'the document accepts it')
    const res = await app.inject({ method: 'POST', url: '/api/articles?populate=*', payload: body })
    t.equal(res.statusCode, 200, 'the server too')
    const created = res.json().data
    t.equal(created.category.documentId, category.documentId)
    t.same(created.blocks.map((b: Schema) => b.__component), ['content.quote', 'content.cta'])
    t.ok(accepts(spec.paths['/api/articles'].post.responses['200'].content['application/json'].schema, res.json()), 'the answer matches the documented response')
    const list = await app.inject({ method: 'GET', url: '/api/articles?populate=*&status=draft' })
    t.ok(accepts(spec.paths['/api/articles'].get.responses['200'].content['application/json'].schema, list.json()), 'a populated list matches the documented response')
  })

  t.test('the examples sampled from each create body are accepted', async (t) => {
    for (const path of ['/api/articles', '/api/categories', '/api/tags', '/api/authors', '/api/sidebars', '/api/labels', '/api/everythings']) {
      const schema = bodyOf(spec, path, 'post')
      const example = sample(spec, schema)
      t.ok(accepts(schema, example), `${path}: the sample fits its schema`)
      t.equal(await post(path, example), 200, `${path}: the server accepts ${JSON.stringify(example)}`)
    }
  })

  t.test('required and nullable: the same verdict as the validator', async (t) => {
    const cases: Array<[string, 'post' | 'put', unknown]> = [
      ['a create without the required title', 'post', { data: { views: 1 } }],
      ['a create with a null required title', 'post', { data: { title: null } }],
      ['a create with only the title', 'post', { data: { title: 'T' } }],
      ['a create with an unknown key', 'post', { data: { title: 'T', nope: 1 } }],
      ['a create with id', 'post', { data: { title: 'T', id: 3 } }],
      ['a create with a null optional attribute', 'post', { data: { title: 'T', views: null } }],
      ['a create with a dynamic-zone item without __component', 'post', { data: { title: 'T', blocks: [{ text: 'x' }] } }],
      ['a create with a dynamic-zone item of another component', 'post', { data: { title: 'T', blocks: [{ __component: 'shared.link', url: '/x' }] } }],
      ['a create whose component misses its required url', 'post', { data: { title: 'T', seo: { links: [{ label: 'no url' }] } } }],
      ['a create with an unknown key in a component', 'post', { data: { title: 'T', seo: { nope: 1 } } }],
      ['a create with a relation set and connect at once', 'post', { data: { title: 'T', tags: { set: [], connect: [] } } }],
      ['a create with an unknown relation key', 'post', { data: { title: 'T', tags: { add: [] } } }],
      ['a create with a relation cleared', 'post', { data: { title: 'T', category: null } }],
      ['an update without the title', 'put', { data: { views: 2 } }],
      ['an update with a null title', 'put', { data: { title: null } }],
      ['an update with a null optional attribute', 'put', { data: { views: null } }],
      ['an update with a media cleared', 'put', { data: { cover: null, gallery: [] } }],
      ['a body without data', 'post', { title: 'T' }]
    ]
    for (const [what, method, body] of cases) {
      const expected = accepts(method === 'post' ? createArticle : updateArticle, body)
      const res = method === 'post'
        ? await app.inject({ method: 'POST', url: '/api/articles', payload: body as object })
        : await app.inject({ method: 'PUT', url: `/api/articles/${other.documentId as string}`, payload: body as object })
      t.equal(res.statusCode, expected ? 200 : 400, `${what}: the document says ${expected ? 'valid' : 'invalid'}, the server answers ${res.statusCode} ${res.statusCode === 400 ? res.json().error.message as string : ''}`)
    }
  })

  t.test('the auth and upload answers match their documented schemas', async (t) => {
    const answer = (path: string, method: string, status: string): Schema => spec.paths[path][method].responses[status].content['application/json'].schema
    const register = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'ada', email: 'ada@example.com', password: 'secret123' } })
    t.equal(register.statusCode, 200)
    t.ok(accepts(bodyOf(spec, '/api/auth/local/register', 'post'), { username: 'ada', email: 'ada@example.com', password: 'secret123' }))
    t.ok(accepts(answer('/api/auth/local/register', 'post', '200'), register.json()), 'register')
    const login = await app.inject({ method: 'POST', url: '/api/auth/local', payload: { identifier: 'ada', password: 'secret123' } })
    t.ok(accepts(answer('/api/auth/local', 'post', '200'), login.json()), 'login')
    const me = await app.inject({ method: 'GET', url: '/api/users/me?populate=role', headers: { authorization: `Bearer ${login.json().jwt as string}` } })
    t.equal(me.statusCode, 200)
    t.ok(accepts(answer('/api/users/me', 'get', '200'), me.json()), '/users/me with its role')
    const refused = await app.inject({ method: 'GET', url: '/api/users' })
    t.ok(accepts(answer('/api/users', 'get', '403'), refused.json()), 'a refusal is the error envelope')
    const files = await app.inject({ method: 'GET', url: '/api/upload/files' })
    t.equal(files.statusCode, 200)
    t.ok(files.json().length > 0)
    t.ok(accepts(answer('/api/upload/files', 'get', '200'), files.json()), 'the file records')
  })

  t.test('the draft rules, which the document tells in words', async (t) => {
    t.match(spec.components.schemas.ArticleInput.description, /status=draft/)
    t.notOk(accepts(createArticle, { data: { views: 1 } }))
    t.equal(await post('/api/articles?status=draft', { data: { views: 1 } }), 200, 'a draft may leave the required title out')
  })
})

/** Required associations, a default, a generated uid and a read-only attribute. */
const shelf = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'shelf', pluralName: 'shelves', displayName: 'Shelf' },
  options: { draftAndPublish: false },
  attributes: { name: { type: 'string' } }
})
const book = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'book', pluralName: 'books', displayName: 'Book' },
  options: { draftAndPublish: false },
  attributes: {
    title: { type: 'string', required: true },
    code: { type: 'uid', targetField: 'title', required: true },
    pages: { type: 'integer', required: true, default: 1 },
    locked: { type: 'string', writable: false },
    shelf: { type: 'relation', relation: 'manyToOne', target: 'api::shelf.shelf', required: true },
    scans: { type: 'media', multiple: true, required: true },
    spec: { type: 'component', component: 'book.spec', required: true },
    parts: { type: 'dynamiczone', components: ['book.spec'], required: true, min: 1 }
  }
})
const spec = defineComponent({ info: { displayName: 'Spec' }, attributes: { isbn: { type: 'string', required: true } } })

t.test('required associations: the document and the server agree', async (t) => {
  const { app } = await build(t, { models: [shelf, book], components: { 'book.spec': spec } }, async (app) => {
    await app.register(swagger, { openapi: { openapi: '3.1.0' }, refResolver })
  })
  const { spec: document, accepts } = documentOf(app)
  const create = bodyOf(document, '/api/books', 'post')
  t.same(create.properties.data.allOf[1].required, ['title', 'shelf', 'scans', 'spec', 'parts'],
    'neither the uid generated from title, nor the attribute with a default, nor the read-only one')
  t.notOk('locked' in document.components.schemas.BookInput.properties)
  const shelfId = (await app.inject({ method: 'POST', url: '/api/shelves', payload: { data: { name: 'A' } } })).json().data.documentId as string
  const scan = await createFile(app, 'scan.png')
  const valid = { title: 'T', shelf: shelfId, scans: [scan.id], spec: { isbn: '1' }, parts: [{ __component: 'book.spec', isbn: '2' }] }
  const cases: Array<[string, Record<string, unknown>]> = [
    ['every required association', valid],
    ['a required relation as an empty list', { ...valid, shelf: [] }],
    ['a required relation as an empty set', { ...valid, shelf: { set: [] } }],
    ['a required relation null', { ...valid, shelf: null }],
    ['a required relation by { set }', { ...valid, shelf: { set: [shelfId] } }],
    ['required media as an empty list', { ...valid, scans: [] }],
    ['a required component null', { ...valid, spec: null }],
    ['a dynamic zone under its min', { ...valid, parts: [] }]
  ]
  for (const [what, data] of cases) {
    const expected = accepts(create, { data })
    const res = await app.inject({ method: 'POST', url: '/api/books', payload: { data } })
    t.equal(res.statusCode, expected ? 200 : 400, `${what}: the document says ${expected ? 'valid' : 'invalid'}, the server answers ${res.statusCode}`)
  }
})
