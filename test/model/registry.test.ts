import t from 'tap'
import Fastify from 'fastify'
import contentApi, {
  ConfigurationError, defineComponent, defineContentType,
  type ContentTypeSchema, type ComponentSchema, type DocumentOf
} from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { article, everything, homepage, seo } from '../fixtures/models.js'

/**
 * Models are validated when the plugin registers: every mistake in every model is reported in one
 * `ConfigurationError`. Valid models become the registry on `app.contentApi.registry`.
 */

/** Registers the plugin with these models; returns the problems of the ConfigurationError it fails with. */
async function modelProblems (t: { teardown (fn: () => Promise<void>): void }, models: unknown[], components: Record<string, unknown> = {}): Promise<string[]> {
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => { await app.close().catch(() => {}) })
  app.register(contentApi, { models: models as ContentTypeSchema[], components: components as Record<string, ComponentSchema>, schemaSync: { mode: 'off' } })
  const err = await app.ready().then(() => null, (e: unknown) => e)
  if (!(err instanceof ConfigurationError)) throw new Error(`expected a ConfigurationError, got ${String(err)}`)
  if (!err.message.startsWith('Invalid content-type models:\n')) throw new Error(`unexpected message ${err.message}`)
  if (app.hasDecorator('contentApi')) throw new Error('the app was decorated although its models are invalid')
  return err.problems
}

const collection = (singularName: string, pluralName: string, attributes: unknown, extra: Record<string, unknown> = {}) =>
  ({ kind: 'collectionType', info: { singularName, pluralName }, attributes, ...extra })

t.test('every problem of every model in one error', async (t) => {
  const problems = await modelProblems(t, [
    collection('post', 'posts', {
      title: { type: 'strin' },
      id: { type: 'string' },
      documentId: { type: 'string' },
      createdAt: { type: 'datetime' },
      locale: { type: 'string' },
      state: { type: 'enumeration', enum: [] },
      slug: { type: 'uid', targetField: 'views' },
      views: { type: 'integer' },
      publishDate: { type: 'date' },
      publish_date: { type: 'date' },
      author: { type: 'relation', relation: 'manyToOne', target: 'api::nobody.nobody' },
      seo: { type: 'component', component: 'shared.nope' }
    }),
    { kind: 'collectionType', info: { singularName: 'story' }, attributes: {} },
    collection('BlogPost', 'blog_posts', {}),
    collection('page', 'posts', {})
  ])
  t.ok(problems.length >= 14, `${problems.length} problems in one throw`)
  const expected: Array<string | RegExp> = [
    /^api::post\.post: attribute "title" has unknown type "strin" \(expected one of string, text, /,
    'api::post.post: attribute "id" uses a reserved name',
    'api::post.post: attribute "documentId" uses a reserved name',
    'api::post.post: attribute "createdAt" uses a reserved name',
    'api::post.post: attribute "locale" uses a reserved name',
    'api::post.post: attribute "state": enumeration needs a non-empty "enum" array of strings',
    'api::post.post: attribute "slug" has targetField "views", which is not a string attribute of the model',
    'api::post.post: attributes "publishDate" and "publish_date" map to the same column "publish_date"',
    'api::post.post: attribute "author": relation to unknown target "api::nobody.nobody"',
    'api::post.post: attribute "seo": unknown component "shared.nope"',
    'api::story.story: info.pluralName is required',
    'api::BlogPost.BlogPost: info.singularName "BlogPost" must be kebab-case (a-z, 0-9, -)',
    'api::BlogPost.BlogPost: info.pluralName "blog_posts" must be kebab-case (a-z, 0-9, -)',
    'api::page.page: API id "posts" is already used by api::post.post'
  ]
  for (const problem of expected) {
    t.ok(problems.some((p) => typeof problem === 'string' ? p === problem : problem.test(p)), String(problem))
  }
})

t.test('relations: unknown targets and inverse sides that do not point back', async (t) => {
  const problems = await modelProblems(t, [
    collection('writer', 'writers', {
      books: { type: 'relation', relation: 'oneToMany', target: 'api::book.book', mappedBy: 'author' },
      prizes: { type: 'relation', relation: 'manyToMany', target: 'api::prize.prize', inversedBy: 'nothing' },
      agent: { type: 'relation', relation: 'oneToOne', target: 'api::agent.agent' }
    }),
    collection('book', 'books', {
      author: { type: 'relation', relation: 'manyToOne', target: 'api::prize.prize', inversedBy: 'books' }
    }),
    collection('prize', 'prizes', { name: { type: 'string' } })
  ])
  t.same(problems.sort(), [
    'api::book.book: relation "author" names "books" on api::prize.prize, which is not a relation back to api::book.book',
    'api::writer.writer: attribute "agent": relation to unknown target "api::agent.agent"',
    'api::writer.writer: relation "books" names "author" on api::book.book, which is not a relation back to api::writer.writer',
    'api::writer.writer: relation "prizes" names "nothing" on api::prize.prize, which is not a relation back to api::writer.writer'
  ])
})

t.test('reserved attribute names', async (t) => {
  const names = ['id', 'documentId', 'document_id', 'createdAt', 'updatedAt', 'publishedAt', 'createdBy', 'updatedBy', 'locale', 'localizations']
  const problems = await modelProblems(t, [collection('thing', 'things', Object.fromEntries(names.map((n) => [n, { type: 'string' }])))])
  for (const name of names) t.ok(problems.includes(`api::thing.thing: attribute "${name}" uses a reserved name`), name)
})

t.test('uid targetField must name a string attribute', async (t) => {
  const problems = await modelProblems(t, [collection('thing', 'things', {
    flag: { type: 'boolean' },
    a: { type: 'uid', targetField: 'missing' },
    b: { type: 'uid', targetField: 'flag' },
    ok1: { type: 'uid', targetField: 'name' },
    name: { type: 'text' }
  })])
  t.same(problems, [
    'api::thing.thing: attribute "a" has targetField "missing", which is not a string attribute of the model',
    'api::thing.thing: attribute "b" has targetField "flag", which is not a string attribute of the model'
  ])
})

t.test('attribute options', async (t) => {
  const problems = await modelProblems(t, [collection('thing', 'things', {
    a: { type: 'string', minLength: 5, maxLength: 2 },
    b: { type: 'integer', min: 10, max: 1 },
    c: { type: 'string', maxLength: '10' },
    d: { type: 'string', regex: '([' },
    e: { type: 'enumeration', enum: ['x', 'y'], default: 'z' },
    f: { type: 'enumeration' },
    'bad-name': { type: 'string' },
    g: 'string'
  })])
  t.same(problems, [
    'api::thing.thing: attribute "a": minLength is greater than maxLength',
    'api::thing.thing: attribute "b": min is greater than max',
    'api::thing.thing: attribute "c": maxLength must be a number',
    'api::thing.thing: attribute "d": regex is not a valid regular expression',
    'api::thing.thing: attribute "e": default "z" is not one of its enum values',
    'api::thing.thing: attribute "f": enumeration needs a non-empty "enum" array of strings',
    'api::thing.thing: attribute "bad-name" has an invalid name (letters, digits and _ only, starting with a letter)',
    'api::thing.thing: attribute "g" must be an object'
  ])
})

t.test('content types: kind, info, uids and tables', async (t) => {
  const problems = await modelProblems(t, [
    { kind: 'collection', info: { singularName: 'a', pluralName: 'as' }, attributes: {} },
    { kind: 'collectionType', attributes: {} },
    collection('same', 'same', {}),
    collection('b', 'bs', {}, { collectionName: 'shared_table' }),
    collection('c', 'cs', {}, { collectionName: 'shared_table' }),
    collection('b', 'b-list', {}),
    collection('d', 'ds', 'nope')
  ])
  t.same(problems, [
    'api::a.a: kind must be "collectionType" or "singleType"',
    'models[1]: "info" with singularName and pluralName is required',
    'api::same.same: singularName and pluralName must differ',
    'api::c.c: table "shared_table" is already used by api::b.b',
    'api::b.b: duplicate content type uid "api::b.b"',
    'api::d.d: "attributes" must be an object'
  ], JSON.stringify(problems))
})

t.test('a model may not take the uid of a built-in content type', async (t) => {
  const problems = await modelProblems(t, [
    collection('user', 'users', { username: { type: 'string' } }, { uid: 'plugin::users-permissions.user' }),
    collection('file', 'files', {}, { uid: 'plugin::upload.file' })
  ])
  t.same(problems, [
    'plugin::users-permissions.user: the uid of a built-in content type (a model may relate to it, not redefine it)',
    'plugin::upload.file: the uid of a built-in content type (a model may relate to it, not redefine it)'
  ], JSON.stringify(problems))
})

t.test('components: uid form, unknown components, dynamic zones', async (t) => {
  const problems = await modelProblems(t, [collection('page', 'pages', {
    blocks: { type: 'dynamiczone', components: ['shared.seo', 'shared.missing'] },
    empty: { type: 'dynamiczone', components: [] },
    seo: { type: 'component', component: 'shared.seo' }
  })], {
    'shared.seo': seo,
    Bad: { attributes: {} },
    'shared.nested': { attributes: { zone: { type: 'dynamiczone', components: ['shared.seo'] }, x: { type: 'strin' } } }
  })
  t.same(problems, [
    'api::page.page: attribute "blocks": unknown component "shared.missing"',
    'api::page.page: attribute "empty": a dynamic zone needs a non-empty "components" array',
    'component "Bad": uid must have the form <category>.<name>',
    'component "shared.nested": attribute "zone": dynamic zones are not allowed inside components',
    'component "shared.nested": attribute "x" has unknown type "strin" (expected one of string, text, richtext, blocks, email, password, uid, integer, biginteger, float, decimal, date, time, datetime, timestamp, boolean, enumeration, json, relation, media, component, dynamiczone)'
  ])
})

t.test('models and components must have the right shape', async (t) => {
  t.same(await modelProblems(t, [null, 'article']), ['models[0] must be an object', 'models[1] must be an object'])
})

t.test('valid models produce the registry', async (t) => {
  const { app } = await build(t, { models: [everything, article, homepage], components: { 'shared.seo': seo } })
  const { registry } = app.contentApi

  const a = registry.get('api::article.article')
  t.ok(a, 'uid api::<singularName>.<singularName>')
  t.equal(a?.modelType, 'contentType')
  t.equal(a?.kind, 'collectionType')
  t.equal(a?.singularName, 'article')
  t.equal(a?.pluralName, 'articles')
  t.equal(a?.displayName, 'Article')
  t.equal(a?.tableName, 'articles')
  t.equal(a?.draftAndPublish, true)
  t.equal(a?.localized, false)
  t.same([...a!.fields.keys()], ['id', 'documentId', 'title', 'slug', 'views', 'createdAt', 'updatedAt', 'publishedAt'], 'system fields framing the attributes')
  t.match(a!.fields.get('documentId'), { column: 'document_id', type: 'string', system: true, writable: false })
  t.match(a!.fields.get('title'), { column: 'title', type: 'string', system: false, hidden: false, writable: true })
  t.match(a!.fields.get('createdAt'), { column: 'created_at', type: 'datetime', system: true })
  t.same([...a!.writableFields.keys()], ['title', 'slug', 'views'])
  t.ok(Object.isFrozen(a), 'content types are immutable')

  const e = registry.get('api::everything.everything')!
  t.equal(e.tableName, 'everythings', 'collectionName names the table')
  t.match(e.fields.get('bodyMd'), { column: 'body_md', type: 'richtext' }, 'camelCase attributes get snake_case columns')
  t.match(e.fields.get('secret'), { type: 'password', hidden: true })
  t.match(e.fields.get('note'), { type: 'string', hidden: true })
  const defaults = e.defaultFields.map((f) => f.name)
  t.notOk(defaults.includes('secret'), 'defaultFields exclude passwords')
  t.notOk(defaults.includes('note'), 'defaultFields exclude private attributes')
  t.same(defaults, ['id', 'documentId', 'title', 'slug', 'summary', 'bodyMd', 'body', 'email', 'count', 'big', 'ratio', 'price',
    'day', 'clock', 'at', 'stamp', 'flag', 'kind', 'meta', 'code', 'createdAt', 'updatedAt', 'publishedAt'])
  t.ok(e.writableFields.has('secret') && e.writableFields.has('note'), 'hidden attributes are still writable')

  const h = registry.get('api::homepage.homepage')!
  t.equal(h.kind, 'singleType')
  t.equal(registry.byRouteId('articles'), a, 'a collection type is routed by its plural API id')
  t.equal(registry.byRouteId('homepage'), h, 'a single type is routed by its singular API id')
  t.equal(registry.byRouteId('article'), undefined)
  t.equal(registry.byRouteId('homepages'), undefined)
  t.equal(registry.byRouteId('files'), undefined, 'built-in types have no REST route')
  t.equal(registry.get('api::nope.nope'), undefined)

  const s = registry.components.get('shared.seo')
  t.equal(s?.modelType, 'component')
  t.equal(s?.category, 'shared')
  t.equal(s?.tableName, 'components_shared_seos')
  t.same([...s!.fields.keys()], ['id', 'metaTitle', 'metaDescription'])

  t.ok([...registry.contentTypes.keys()].includes('api::article.article'))
})

t.test('an explicit uid and defaults of the names', async (t) => {
  const custom = defineContentType({
    kind: 'collectionType',
    uid: 'api::blog.post',
    info: { singularName: 'blog-post', pluralName: 'blog-posts' },
    attributes: { publishDate: { type: 'date' } }
  })
  const { app } = await build(t, { models: [custom] })
  const model = app.contentApi.registry.get('api::blog.post')
  t.ok(model, 'the uid given is kept')
  t.equal(model?.tableName, 'blog_posts', 'no collectionName: the snake_cased pluralName')
  t.equal(model?.displayName, 'blog-post', 'no displayName: the singularName')
  t.equal(model?.draftAndPublish, false, 'draft & publish is off unless options.draftAndPublish is true')
  t.equal(model?.fields.get('publishDate')?.column, 'publish_date')
  t.equal(app.contentApi.registry.byRouteId('blog-posts'), model)
  t.equal((await app.inject('/api/blog-posts')).statusCode, 200)
})

t.test('defineContentType keeps literal types for DocumentOf', async (t) => {
  const typed = defineContentType({
    kind: 'collectionType',
    info: { singularName: 'typed', pluralName: 'typeds' },
    attributes: {
      title: { type: 'string', required: true },
      views: { type: 'integer' },
      big: { type: 'biginteger' },
      kind: { type: 'enumeration', enum: ['a', 'b'] },
      flag: { type: 'boolean', required: true },
      meta: { type: 'json' },
      secret: { type: 'password' },
      hidden: { type: 'string', private: true }
    }
  })
  const component = defineComponent({ attributes: { label: { type: 'string' } } })
  t.equal(component.attributes.label.type, 'string')
  t.equal(typed.attributes.kind.enum[1], 'b', 'literal enum values survive')

  const { app } = await build(t, { models: [typed] })
  const created = await app.contentApi.documents('api::typed.typed').create({ data: { title: 'T', views: 3, big: '12', kind: 'a', flag: true, meta: { x: 1 }, secret: 'pw', hidden: 'h' } })
  type Typed = DocumentOf<typeof typed>
  const doc = created as unknown as Typed
  const title: string = doc.title
  const views: number | null = doc.views
  const big: string | null = doc.big
  const kind: 'a' | 'b' | null = doc.kind
  const flag: boolean = doc.flag
  const documentId: string = doc.documentId
  const id: number = doc.id
  const publishedAt: string | null = doc.publishedAt
  // @ts-expect-error a required attribute is never null
  doc.title = null
  // @ts-expect-error an optional attribute may be null
  const notNull: number = doc.views
  // @ts-expect-error enumeration values are literal: 'c' is not one of them
  const wrongKind: typeof doc.kind = 'c'
  // @ts-expect-error passwords are never returned
  t.equal(doc.secret, undefined)
  // @ts-expect-error private attributes are never returned
  t.equal(doc.hidden, undefined)
  doc.title = title
  t.equal(wrongKind, 'c')
  t.same({ title, views, big, kind, flag, documentId, id, publishedAt, notNull }, {
    title: 'T', views: 3, big: '12', kind: 'a', flag: true, documentId: created.documentId, id: created.id, publishedAt: created.publishedAt, notNull: 3
  }, 'the runtime document matches its type')
})
