/**
 * Type tests of the typed document service, compiled (never run) by test/types.test.ts: each
 * `@ts-expect-error` line must fail to compile, each assignment must compile. The models are
 * registered the way an application does it, by declaration merging.
 */
import type { FastifyInstance } from 'fastify'
import type { DocumentService, Documents, MediaFile, SchemasOf } from 'fastify-content-api'
import type { components, models } from '../fixtures/typed-models.js'
import { expectType, use } from './assert.js'

declare module 'fastify-content-api' {
  interface Register {
    models: typeof models
    components: typeof components
  }
}

declare const app: FastifyInstance

export async function documents (): Promise<void> {
  const articles = app.contentApi.documents('api::article.article')

  // @ts-expect-error a uid no model defines does not compile once models are registered
  app.contentApi.documents('api::nope.nope')
  // Built-in types stay reachable, untyped.
  const users: DocumentService = app.contentApi.documents('plugin::users-permissions.user')
  use(users)

  // Default read: every returned scalar, no relations; private attributes never.
  const [first] = await articles.findMany()
  const title: string = first.title
  const views: number | null = first.views
  const kind: 'news' | 'opinion' | null = first.kind
  use(title, views, kind)
  // @ts-expect-error a private attribute is never returned
  use(first.secret)
  // @ts-expect-error a relation is absent without populate
  use(first.category)

  // @ts-expect-error a wrong field name fails
  await articles.findMany({ fields: ['titel'] })
  // @ts-expect-error a relation is not a field
  await articles.findMany({ fields: ['category'] })
  // @ts-expect-error a wrong filter key fails
  await articles.findMany({ filters: { titel: { $eq: 'a' } } })
  // @ts-expect-error a wrong operator fails
  await articles.findMany({ filters: { title: { $equals: 'a' } } })
  // @ts-expect-error a wrong key through a relation fails
  await articles.findMany({ filters: { category: { nam: 'a' } } })
  // @ts-expect-error a wrong sort key fails
  await articles.findMany({ sort: 'titel:desc' })
  // @ts-expect-error a scalar cannot be populated
  await articles.findMany({ populate: ['title'] })
  // @ts-expect-error a parameter the service does not take fails
  await articles.findMany({ filter: {} })
  // @ts-expect-error a wrong attribute in data fails
  await articles.create({ data: { titel: 'x' } })
  // @ts-expect-error a misspelt filter key fails beside a right one
  await articles.findMany({ filters: { title: 'a', titel: 'b' } })
  // @ts-expect-error a misspelt key in data fails beside a right one
  await articles.create({ data: { title: 'x', titel: 'y' } })
  // @ts-expect-error a misspelt filter key inside a populate fails
  await articles.findMany({ populate: { category: { filters: { nam: 'x' } } } })
  // @ts-expect-error a misspelt field inside a populate fails
  await articles.findMany({ populate: { category: { fields: ['nam'] } } })
  // @ts-expect-error a dynamic zone's fragment must name one of its components
  await articles.findMany({ populate: { blocks: { on: { 'shared.seo': true } } } })
  // @ts-expect-error a wrong value type in data fails
  await articles.create({ data: { title: 'x', views: 'many' } })
  // @ts-expect-error a dynamic-zone entry must name one of its components
  await articles.create({ data: { title: 'x', blocks: [{ __component: 'shared.seo', metaTitle: 'm' }] } })

  // Filters, sort and pagination in Strapi's forms compile.
  await articles.findMany({
    filters: { $or: [{ views: { $gt: 10 } }, { kind: 'news' }], category: { name: { $containsi: 'a' } }, seo: { metaTitle: { $null: false } } },
    sort: ['views:desc', 'title'],
    pagination: { page: 1, pageSize: 10 }
  })

  // `fields` picks: only the fields asked, id and documentId.
  const [picked] = await articles.findMany({ fields: ['title'] })
  expectType<{ id: number, documentId: string, title: string }>()(picked)

  // A populate changes the result type: a to-one relation is the target's document or null.
  const [withCategory] = await articles.findMany({ fields: ['title'], populate: { category: { fields: ['name'] } } })
  expectType<{ id: number, documentId: string, title: string, category: { id: number, documentId: string, name: string } | null }>()(withCategory)

  // A to-many relation is an array; populate nests.
  const [nested] = await articles.findMany({ fields: ['title'], populate: { category: { fields: ['name'], populate: { articles: { fields: ['views'] } } }, tags: true } })
  const nestedViews: Array<number | null> | undefined = nested.category?.articles.map((a) => a.views)
  const tagLabels: Array<string | null> = nested.tags.map((t) => t.label)
  use(nestedViews, tagLabels)

  // `populate: '*'`: every relation, media, component and dynamic zone, one level.
  const star = await articles.findOne({ documentId: 'x', populate: '*' })
  if (star !== null) {
    const cover: MediaFile | null | undefined = star.cover
    // @ts-expect-error under populate '*' a relation or media may be left out (the caller may not read its target)
    const required: MediaFile | null = star.cover
    const seo: { id: number, metaTitle: string, metaDescription: string | null } | null = star.seo
    use(cover, seo, required)
    for (const block of star.blocks) {
      // A dynamic zone is a union discriminated by `__component`.
      if (block.__component === 'shared.quote') {
        const text: string = block.text
        use(text)
        // @ts-expect-error narrowed to shared.quote: no caption
        use(block.caption)
      } else {
        expectType<'shared.gallery'>()(block.__component)
        const caption: string | null = block.caption
        use(caption)
      }
    }
  }

  // Fragments: only the components named come back.
  const [fragments] = await articles.findMany({ fields: ['title'], populate: { blocks: { on: { 'shared.gallery': { fields: ['caption'], populate: { seo: true } } } } } })
  expectType<'shared.gallery'>()(fragments.blocks[0].__component)
  const gallerySeo: string | undefined = fragments.blocks[0].seo?.metaTitle
  use(gallerySeo)

  // A relation's count.
  const [counted] = await articles.findMany({ fields: ['title'], populate: { tags: { count: true } } })
  expectType<{ count: number }>()(counted.tags)

  // `status`: a draft of a draft & publish type has no publishedAt; a published one has.
  const [draft] = await articles.findMany({ status: 'draft' })
  expectType<null>()(draft.publishedAt)
  const [published] = await articles.findMany({ status: 'published' })
  expectType<string>()(published.publishedAt)

  // Writes return the document their fields and populate ask for.
  const created = await articles.create({
    data: { title: 'Hello', views: 1, category: 'docid', tags: { connect: ['t1'] }, seo: { metaTitle: 'm' }, blocks: [{ __component: 'shared.quote', text: 'q' }], cover: 3 },
    populate: ['category']
  })
  const createdCategory: string | undefined = created.category?.name
  use(createdCategory)
  const updated = await articles.update({ documentId: created.documentId, data: { views: 2 }, fields: ['views'] })
  expectType<{ id: number, documentId: string, views: number | null } | null>()(updated)

  // Deep populate through a cycle stays typed to the bound, then falls back to the default document, without an "excessively deep" error.
  const [deep] = await articles.findMany({
    fields: ['title'],
    populate: { category: { fields: ['name'], populate: { articles: { fields: ['title'], populate: { category: { populate: { articles: { populate: { category: true } } } } } } } } }
  })
  const deepTitle: string | undefined = deep.category?.articles[0].category?.articles[0].title
  use(deepTitle)

  // A component's own fields; a typo in a component filter fails.
  const [withSeo] = await articles.findMany({ fields: ['title'], populate: { seo: { fields: ['metaTitle'] } } })
  expectType<{ id: number, metaTitle: string } | null>()(withSeo.seo)
  // @ts-expect-error no such attribute in shared.seo
  await articles.findMany({ filters: { seo: { metaTitel: 'x' } } })

  // findOne may find nothing; publish answers published documents.
  const maybe = await articles.findOne({ documentId: 'x', fields: ['views'] })
  expectType<{ id: number, documentId: string, views: number | null } | null>()(maybe)
  const { entries } = await articles.publish({ documentId: 'x' })
  expectType<string>()(entries[0].publishedAt)

  // The explicit typed view, for code that must not rely on the registration.
  const explicit = app.contentApi.documents as Documents<SchemasOf<typeof models, typeof components>>
  const [tag] = await explicit('api::tag.tag').findMany({ fields: ['label'] })
  expectType<{ id: number, documentId: string, label: string | null }>()(tag)

  const count: number = await articles.count({ filters: { views: { $gt: 1 } } })
  use(count)
}
