/**
 * Type tests of the client, typed by the file `generateTypes` writes (./generated, kept equal to
 * the generator's output by test/model/generate-types.test.ts): no server code is imported.
 */
import { createClient, type MediaFile } from 'fastify-content-api/client'
import type { Schemas } from './generated/content-types.js'
import { expectType, use } from './assert.js'

export async function client (): Promise<void> {
  const api = createClient<Schemas>({ baseUrl: 'http://127.0.0.1/api' })
  const articles = api.collection('articles')

  // @ts-expect-error a collection no model defines
  api.collection('nopes')
  // @ts-expect-error a single type is not a collection
  api.collection('homepages')
  // @ts-expect-error a wrong field name fails
  await articles.find({ fields: ['titel'] })
  // @ts-expect-error a wrong filter key fails
  await articles.find({ filters: { titel: 'a' } })
  // @ts-expect-error server-only parameters are not the client's
  await articles.find({ limits: true })
  // @ts-expect-error a private attribute is not in the generated types
  await articles.find({ fields: ['secret'] })
  // @ts-expect-error a misspelt key in data fails beside a right one
  await articles.create({ title: 'x', titel: 'y' })
  // @ts-expect-error a misspelt filter key fails beside a right one
  await articles.find({ filters: { title: 'a', titel: 'b' } })
  // @ts-expect-error wrong data
  await articles.create({ title: 1 })

  const list = await articles.find({ fields: ['title'], populate: { category: { fields: ['name'] } }, pagination: { page: 1, pageSize: 5 } })
  expectType<{ id: number, documentId: string, title: string, category: { id: number, documentId: string, name: string } | null }>()(list.data[0])

  // Cursor pagination: a list's next cursor goes back as `after`.
  const first = await articles.find({ sort: 'title', pagination: { after: '', pageSize: 2 } })
  if ('next' in first.meta.pagination && first.meta.pagination.next !== null) {
    await articles.find({ sort: 'title', pagination: { after: first.meta.pagination.next } })
  }
  // @ts-expect-error a misspelt cursor key fails
  await articles.find({ pagination: { afer: '' } })

  // Without populate the relation is absent.
  const plain = await articles.findOne('doc', { fields: ['title'] })
  expectType<{ id: number, documentId: string, title: string }>()(plain.data)

  const star = await articles.findOne('doc', { populate: '*' })
  const cover: MediaFile | null | undefined = star.data.cover
  const kinds: Array<'shared.quote' | 'shared.gallery'> = star.data.blocks.map((b) => b.__component)
  use(cover, kinds)

  const created = await articles.create({ title: 'x', category: 'doc' }, { populate: ['category'] })
  const name: string | undefined = created.data.category?.name
  use(name)
  await articles.update('doc', { views: 2 })
  await articles.delete('doc')

  const home = await api.single('homepage').find()
  const headline: string | null = home.data.headline
  use(headline)

  // Untyped: any name, loose documents.
  const loose = await createClient({ baseUrl: 'http://127.0.0.1/api' }).collection('anything').find({ fields: ['x'] })
  const value: unknown = loose.data[0].x
  use(value)
}
