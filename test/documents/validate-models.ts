import { createRegistry, type Component, type ContentType } from '../../lib/model/registry.js'
import type { ComponentSchema, ContentTypeSchema } from '../../lib/model/types.js'

/** Models for the write-validation tests: the oracle's article model plus one model per concern. */

const article: ContentTypeSchema = {
  kind: 'collectionType',
  info: { singularName: 'article', pluralName: 'articles' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: {
    title: { type: 'string', required: true },
    slug: { type: 'uid', targetField: 'title' },
    body: { type: 'blocks' },
    summary: { type: 'text' },
    views: { type: 'integer' },
    rating: { type: 'decimal' },
    featured: { type: 'boolean', default: false },
    publishDate: { type: 'date' },
    tags: { type: 'json' },
    kind: { type: 'enumeration', enum: ['news', 'opinion', 'review'] },
    category: { type: 'relation', relation: 'manyToOne', target: 'api::category.category', inversedBy: 'articles' },
    cover: { type: 'media', allowedTypes: ['images', 'files'] },
    seo: { type: 'component', component: 'shared.seo' },
    blocks: { type: 'dynamiczone', components: ['shared.quote'] }
  }
}

const category: ContentTypeSchema = {
  kind: 'collectionType',
  info: { singularName: 'category', pluralName: 'categories' },
  attributes: {
    name: { type: 'string', unique: true },
    articles: { type: 'relation', relation: 'oneToMany', target: 'api::article.article', mappedBy: 'category' }
  }
}

const author: ContentTypeSchema = {
  kind: 'collectionType',
  info: { singularName: 'author', pluralName: 'authors' },
  attributes: {
    name: { type: 'string' },
    email: { type: 'email' },
    internalNote: { type: 'string', private: true }
  }
}

/** Every scalar type with its options. */
const sample: ContentTypeSchema = {
  kind: 'collectionType',
  info: { singularName: 'sample', pluralName: 'samples' },
  attributes: {
    short: { type: 'string', minLength: 2, maxLength: 10, regex: '^[a-z]+$' },
    plain: { type: 'string' },
    long: { type: 'string', maxLength: 300 },
    text: { type: 'text' },
    rich: { type: 'richtext' },
    mail: { type: 'email' },
    secret: { type: 'password' },
    code: { type: 'uid', regex: '^[a-z-]+$' },
    level: { type: 'enumeration', enum: ['low', 'high'] },
    count: { type: 'integer', min: 1, max: 10 },
    free: { type: 'integer' },
    big: { type: 'biginteger', min: '-5', max: '9000000000000000000' },
    huge: { type: 'biginteger' },
    ratio: { type: 'float', min: 0.5, max: 2.5 },
    price: { type: 'decimal' },
    day: { type: 'date' },
    at: { type: 'time' },
    when: { type: 'datetime' },
    stamp: { type: 'timestamp' },
    flag: { type: 'boolean' },
    info: { type: 'json' },
    doc: { type: 'blocks' },
    frozen: { type: 'string', writable: false },
    hidden: { type: 'string', private: true }
  }
}

/** One required attribute of each schema family. */
const strict: ContentTypeSchema = {
  kind: 'collectionType',
  info: { singularName: 'strict', pluralName: 'stricts' },
  attributes: {
    rs: { type: 'string', required: true },
    ri: { type: 'integer', required: true },
    rb: { type: 'boolean', required: true },
    rbig: { type: 'biginteger', required: true },
    rdate: { type: 'date', required: true },
    rjson: { type: 'json', required: true },
    rblocks: { type: 'blocks', required: true },
    renum: { type: 'enumeration', enum: ['a'], required: true }
  }
}

const defaults: ContentTypeSchema = {
  kind: 'collectionType',
  info: { singularName: 'default-holder', pluralName: 'default-holders' },
  attributes: {
    label: { type: 'string', default: 'untitled', required: true },
    size: { type: 'integer', default: 3 },
    on: { type: 'boolean', default: true },
    tone: { type: 'enumeration', enum: ['warm', 'cold'], default: 'cold' },
    since: { type: 'date', default: '2025-01-01' },
    from: { type: 'datetime', default: '2025-01-01T10:00:00+02:00' },
    extra: { type: 'json', default: { a: 1 } },
    none: { type: 'string' }
  }
}

const components: Record<string, ComponentSchema> = {
  'shared.seo': { attributes: { metaTitle: { type: 'string' }, metaDescription: { type: 'text' } } },
  'shared.quote': { attributes: { text: { type: 'text' }, author: { type: 'string' } } }
}

export const registry = createRegistry([article, category, author, sample, strict, defaults], components)

function contentType (uid: string): ContentType {
  const model = registry.get(uid)
  if (model === undefined) throw new Error(`no model ${uid}`)
  return model
}

function component (uid: string): Component {
  const model = registry.components.get(uid)
  if (model === undefined) throw new Error(`no component ${uid}`)
  return model
}

export const models = {
  article: contentType('api::article.article'),
  author: contentType('api::author.author'),
  sample: contentType('api::sample.sample'),
  strict: contentType('api::strict.strict'),
  defaults: contentType('api::default-holder.default-holder'),
  seo: component('shared.seo'),
  quote: component('shared.quote')
}
