import t from 'tap'
import { ValidationError } from '../../lib/errors.js'
import { defineComponent, defineContentType } from '../../lib/index.js'
import { createRegistry, type Component, type ContentType } from '../../lib/model/registry.js'
import { parseFields } from '../../lib/query/fields.js'
import { everything } from '../fixtures/models.js'

/** `fields` in every form Strapi v5 accepts, and its 400s (oracle cases fields-*). */

const post = defineContentType({
  kind: 'collectionType',
  collectionName: 'posts',
  info: { singularName: 'post', pluralName: 'posts', displayName: 'Post' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: {
    title: { type: 'string' },
    slug: { type: 'uid', targetField: 'title' },
    views: { type: 'integer' },
    topic: { type: 'relation', relation: 'manyToOne', target: 'api::topic.topic' },
    seo: { type: 'component', component: 'shared.seo' }
  }
})
const topic = defineContentType({
  kind: 'collectionType',
  collectionName: 'topics',
  info: { singularName: 'topic', pluralName: 'topics', displayName: 'Topic' },
  attributes: { name: { type: 'string' } }
})
const seo = defineComponent({
  collectionName: 'components_shared_seos',
  info: { displayName: 'Seo' },
  attributes: { metaTitle: { type: 'string' }, metaDescription: { type: 'text' } }
})

const registry = createRegistry([everything, post, topic], { 'shared.seo': seo })
const everythings = registry.get('api::everything.everything')!
const posts = registry.get('api::post.post')!
const seoComponent = registry.components.get('shared.seo')!

/** The selected field names, or null for "the default fields". */
const names = (model: ContentType | Component, raw: unknown): string[] | null => parseFields(model, raw)?.map((f) => f.name) ?? null

function rejection (model: ContentType | Component, raw: unknown): { status: number, name: string, message: string, details: unknown } {
  try {
    parseFields(model, raw)
  } catch (err) {
    if (err instanceof ValidationError) return err.toEnvelope().error
    throw err
  }
  throw new Error(`expected fields ${JSON.stringify(raw)} to be rejected`)
}

const invalidKey = (key: string, path: string | null) => ({
  status: 400, name: 'ValidationError', message: `Invalid key ${key}`, details: { key, path, source: 'query', param: 'fields' }
})

t.test('no selection: the default fields', async (t) => {
  t.equal(names(posts, undefined), null)
  t.equal(names(posts, null), null)
  t.equal(names(posts, ''), null)
  t.equal(names(posts, '*'), null, 'fields=* (fields-star)')
  t.equal(names(posts, ['*']), null)
  t.equal(names(posts, 'title,*'), null, '* anywhere selects everything')
  t.equal(names(posts, ','), null, 'only empty segments')
})

t.test('the default fields: readable scalars and system fields, never private or password ones', async (t) => {
  t.same(posts.defaultFields.map((f) => f.name),
    ['id', 'documentId', 'title', 'slug', 'views', 'createdAt', 'updatedAt', 'publishedAt', 'locale'], 'list-default keys')
  const defaults = everythings.defaultFields.map((f) => f.name)
  t.notOk(defaults.includes('note'), 'private')
  t.notOk(defaults.includes('secret'), 'password')
})

t.test('string, comma list and array forms; id and documentId always first', async (t) => {
  t.same(names(posts, 'title'), ['id', 'documentId', 'title'], 'fields=title (fields-string)')
  t.same(names(posts, 'title,slug'), ['id', 'documentId', 'title', 'slug'], 'fields=title,slug (fields-comma)')
  t.same(names(posts, ' title , slug ,'), ['id', 'documentId', 'title', 'slug'], 'trimmed, empty segments dropped')
  t.same(names(posts, ['title', 'views']), ['id', 'documentId', 'title', 'views'], 'fields[0]=title&fields[1]=views (fields-array)')
  t.same(names(posts, ['title,slug', 'views']), ['id', 'documentId', 'title', 'slug', 'views'])
  t.same(names(posts, ['views', 'title']), ['id', 'documentId', 'views', 'title'], 'in the order asked')
  t.same(names(posts, 'title,title,views,title'), ['id', 'documentId', 'title', 'views'], 'each field once')
  t.same(names(posts, ['id', 'documentId']), ['id', 'documentId'], 'fields-id-documentId')
  t.same(names(posts, 'documentId,title,id'), ['id', 'documentId', 'title'])
  t.same(names(posts, ['locale', 'publishedAt']), ['id', 'documentId', 'locale', 'publishedAt'], 'locale and publishedAt are not added unasked (fields-locale-publishedAt)')
  t.same(names(posts, 'createdAt'), ['id', 'documentId', 'createdAt'])
})

t.test('a component selects id, never documentId', async (t) => {
  t.same(names(seoComponent, 'metaTitle'), ['id', 'metaTitle'])
})

t.test('selected fields are registry fields', async (t) => {
  const fields = parseFields(everythings, 'bodyMd')!
  t.equal(fields[2], everythings.fields.get('bodyMd'))
  t.equal(fields[2].column, 'body_md')
})

t.test('unknown, private, password and non-scalar names are 400s', async (t) => {
  t.same(rejection(posts, ['nope']), invalidKey('nope', null), 'unknown: path null (fields-unknown)')
  t.same(rejection(posts, 'title,nope'), invalidKey('nope', null))
  t.same(rejection(posts, 'Title'), invalidKey('Title', null), 'names are case-sensitive')
  t.same(rejection(posts, ['topic']), invalidKey('topic', 'topic'), 'a relation is named (fields-relation)')
  t.same(rejection(posts, ['seo']), invalidKey('seo', 'seo'), 'a component (fields-component)')
  t.same(rejection(everythings, 'note'), invalidKey('note', 'note'), 'private')
  t.same(rejection(everythings, ['title', 'secret']), invalidKey('secret', 'secret'), 'password')
})

t.test('fields that are neither a string nor an array of strings', async (t) => {
  const message = { status: 400, name: 'ValidationError', message: 'Invalid fields parameter. Expected a string or an array of strings', details: {} }
  t.same(rejection(posts, { 0: 'title', 150: 'slug' }), message, 'fields[150]=slug: qs makes an object past arrayLimit')
  t.same(rejection(posts, { title: true }), message)
  t.same(rejection(posts, [['title']]), message)
  t.same(rejection(posts, ['title', { a: 'b' }]), message)
})
