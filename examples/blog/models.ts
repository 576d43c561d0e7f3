import { defineContentType } from '../../lib/index.js'

/**
 * The blog's content types, in Strapi's schema format: an article belongs to one category and has
 * many authors; both relations are readable from either side with `populate`.
 */
export const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string', required: true },
    slug: { type: 'uid', targetField: 'title' },
    body: { type: 'blocks' },
    summary: { type: 'text' },
    views: { type: 'integer' },
    featured: { type: 'boolean', default: false },
    publishDate: { type: 'date' },
    kind: { type: 'enumeration', enum: ['news', 'opinion', 'review'] },
    category: { type: 'relation', relation: 'manyToOne', target: 'api::category.category', inversedBy: 'articles' },
    authors: { type: 'relation', relation: 'manyToMany', target: 'api::author.author', inversedBy: 'articles' }
  }
})

export const category = defineContentType({
  kind: 'collectionType',
  collectionName: 'categories',
  info: { singularName: 'category', pluralName: 'categories', displayName: 'Category' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', required: true, unique: true },
    description: { type: 'text' },
    articles: { type: 'relation', relation: 'oneToMany', target: 'api::article.article', mappedBy: 'category' }
  }
})

export const author = defineContentType({
  kind: 'collectionType',
  collectionName: 'authors',
  info: { singularName: 'author', pluralName: 'authors', displayName: 'Author' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', required: true },
    email: { type: 'email' },
    /** Private: stored, but never returned by the API nor usable in filters, sort or fields. */
    bio: { type: 'text', private: true },
    articles: { type: 'relation', relation: 'manyToMany', target: 'api::article.article', mappedBy: 'authors' }
  }
})

export const homepage = defineContentType({
  kind: 'singleType',
  collectionName: 'homepages',
  info: { singularName: 'homepage', pluralName: 'homepages', displayName: 'Homepage' },
  options: { draftAndPublish: false },
  attributes: {
    title: { type: 'string' },
    tagline: { type: 'string' }
  }
})

export const models = [article, category, author, homepage]
