import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ValidationError, type Document, type QueryParams } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { ARTICLE, COMPONENT_TABLES, countRows, openAccess, relationOptions, tableRows } from '../fixtures/relations.js'

/**
 * Components and dynamic zones: written with their document, in its transaction; rows in the
 * component tables (`components_<category>_<name>s`) tied to their owner through `<owner>_cmps`
 * (`entity_id, cmp_id, component_type, field, order`), nested components through the component's
 * own `_cmps` table. An update replaces what it names; an item carrying the `id` of one of the
 * owner's components updates that row in place.
 */

type ReadParams = QueryParams & { documentId: string }

/** Everything, two levels deep. */
const DEEP = {
  seo: { populate: { og: true, links: true } },
  sections: { populate: { links: true } },
  blocks: { on: { 'content.quote': true, 'content.cta': { populate: { target: true } } } }
}

const JOIN_TABLES = ['articles_cmps', 'components_shared_seos_cmps', 'components_content_sections_cmps', 'components_content_ctas_cmps']

async function setup (t: Parameters<typeof build>[0]): Promise<{ app: FastifyInstance, read: (documentId: string, status?: 'draft' | 'published') => Promise<Document> }> {
  const { app } = await build(t, relationOptions)
  await openAccess(app)
  const read = async (documentId: string, status: 'draft' | 'published' = 'published'): Promise<Document> => {
    const params: ReadParams = { documentId, status, fields: ['title'], populate: DEEP }
    const doc = await app.contentApi.documents(ARTICLE).findOne(params)
    if (doc === null) throw new Error(`no ${status} version of ${documentId}`)
    return doc
  }
  return { app, read }
}

/** Rows per component table and join table. */
async function counts (app: FastifyInstance): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const table of [...Object.values(COMPONENT_TABLES), ...JOIN_TABLES]) out[table] = await countRows(app, table)
  return out
}

const zero = Object.fromEntries([...Object.values(COMPONENT_TABLES), ...JOIN_TABLES].map((table) => [table, 0]))

async function validationError (promise: Promise<unknown>): Promise<ValidationError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof ValidationError) return err
    throw err
  }
  throw new Error('expected a ValidationError')
}

const full = {
  title: 'Full',
  seo: { metaTitle: 'Meta', metaDescription: 'Desc', og: { ogTitle: 'OG', ogType: 'article' }, links: [{ label: 'one', url: '/1' }, { label: 'two', url: '/2' }] },
  sections: [
    { heading: 'First', position: 1, links: [{ url: '/s1a' }, { url: '/s1b' }] },
    { heading: 'Second', position: 2 }
  ],
  blocks: [
    { __component: 'content.cta', label: 'Go', target: { label: 'there', url: '/go' } },
    { __component: 'content.quote', text: 'Quoted', by: 'Someone' },
    { __component: 'content.quote', text: 'Again' }
  ]
}

t.test('write and read components, nested two deep, and a dynamic zone', async (t) => {
  const { app, read } = await setup(t)
  const created = await app.contentApi.documents(ARTICLE).create({ data: full, status: 'draft' })
  const doc = await read(created.documentId, 'draft')
  t.match(doc, {
    title: 'Full',
    seo: {
      id: Number,
      metaTitle: 'Meta',
      metaDescription: 'Desc',
      og: { id: Number, ogTitle: 'OG', ogType: 'article' },
      links: [{ id: Number, label: 'one', url: '/1' }, { id: Number, label: 'two', url: '/2' }]
    },
    sections: [
      { id: Number, heading: 'First', position: 1, links: [{ url: '/s1a', label: null }, { url: '/s1b' }] },
      { id: Number, heading: 'Second', position: 2, links: [] }
    ],
    blocks: [
      { __component: 'content.cta', id: Number, label: 'Go', target: { id: Number, label: 'there', url: '/go' } },
      { __component: 'content.quote', id: Number, text: 'Quoted', by: 'Someone' },
      { __component: 'content.quote', id: Number, text: 'Again', by: null }
    ]
  })
  t.same(Object.keys(doc.seo as object), ['id', 'metaTitle', 'metaDescription', 'og', 'links'], 'a component: id, attributes, populated components')
  t.notOk('documentId' in (doc.seo as object), 'components have no documentId')
  t.same(Object.keys((doc.blocks as object[])[1]).sort(), ['__component', 'by', 'id', 'text'], 'a dynamic-zone item names its component')

  t.same(await counts(app), {
    ...zero,
    components_shared_seos: 1,
    components_shared_open_graphs: 1,
    components_shared_links: 2 + 2 + 1,
    components_content_sections: 2,
    components_content_quotes: 2,
    components_content_ctas: 1,
    articles_cmps: 1 + 2 + 3,
    components_shared_seos_cmps: 3,
    components_content_sections_cmps: 2,
    components_content_ctas_cmps: 1
  }, 'one row per component, one join row per (owner, component)')
  const join = await tableRows(app, 'articles_cmps')
  t.same(join.filter((r) => r.field === 'blocks').map((r) => [r.component_type, r.order]),
    [['content.cta', 1], ['content.quote', 2], ['content.quote', 3]], 'dynamic-zone items in order, with their type')
})

t.test('populate shapes: not populated by default, one level with *, nested on request', async (t) => {
  const { app } = await setup(t)
  const created = await app.contentApi.documents(ARTICLE).create({ data: full })
  const plain = await app.contentApi.documents(ARTICLE).findOne({ documentId: created.documentId })
  for (const key of ['seo', 'sections', 'blocks']) t.notOk(key in plain!, `${key} is not returned unless populated`)

  const star = await app.inject(`/api/articles/${created.documentId}?populate=*`)
  const data = star.json().data
  t.same(Object.keys(data.seo), ['id', 'metaTitle', 'metaDescription'], 'populate=* is one level: nested components are left out')
  t.same(Object.keys(data.sections[0]), ['id', 'heading', 'position'])
  t.same(Object.keys(data.blocks[0]).sort(), ['__component', 'id', 'label'])

  const nested = await app.inject(`/api/articles/${created.documentId}?populate[seo][populate][links][fields][0]=url&populate[seo][fields][0]=metaTitle`)
  t.same(nested.json().data.seo, {
    id: data.seo.id, metaTitle: 'Meta', links: [{ id: nested.json().data.seo.links[0].id, url: '/1' }, { id: nested.json().data.seo.links[1].id, url: '/2' }]
  }, 'fields and nested populate inside a component')
  const starInside = await app.inject(`/api/articles/${created.documentId}?populate[sections][populate]=*`)
  t.same(starInside.json().data.sections.map((s: { links: Array<{ url: string }> }) => s.links.map((l) => l.url)), [['/s1a', '/s1b'], []], 'populate=* inside a component')
})

t.test('an update replaces components; an existing id updates in place', async (t) => {
  const { app, read } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: full, status: 'draft' })
  const before = await read(created.documentId, 'draft')
  const seo = before.seo as { id: number, og: { id: number }, links: Array<{ id: number }> }
  const sections = before.sections as Array<{ id: number, links: Array<{ id: number }> }>
  const blocks = before.blocks as Array<{ id: number, __component: string }>

  await articles.update({
    documentId: created.documentId,
    status: 'draft',
    data: { seo: { id: seo.id, metaTitle: 'Meta 2', og: { id: seo.og.id, ogTitle: 'OG 2' }, links: [{ id: seo.links[1].id, url: '/2b' }] } }
  })
  const kept = await read(created.documentId, 'draft')
  t.same(kept.seo, {
    id: seo.id, metaTitle: 'Meta 2', metaDescription: 'Desc', og: { id: seo.og.id, ogTitle: 'OG 2', ogType: 'article' }, links: [{ id: seo.links[1].id, label: 'two', url: '/2b' }]
  }, 'ids kept, attributes updated in place; attributes left out of an item keep their values, as in Strapi')
  t.equal(await countRows(app, 'components_shared_links'), 4, 'the link left out was deleted')
  t.same(kept.sections, before.sections, 'components not named in the update are untouched')
  t.same(kept.blocks, before.blocks)

  await articles.update({ documentId: created.documentId, status: 'draft', data: { seo: { metaTitle: 'Fresh' } } })
  const replaced = await read(created.documentId, 'draft')
  t.not((replaced.seo as { id: number }).id, seo.id, 'without an id, a new component replaces the old one')
  t.same(replaced.seo, { id: (replaced.seo as { id: number }).id, metaTitle: 'Fresh', metaDescription: null, og: null, links: [] })
  t.equal(await countRows(app, 'components_shared_seos'), 1, 'the old component row is deleted')
  t.equal(await countRows(app, 'components_shared_open_graphs'), 0, 'with the components nested in it')
  t.equal(await countRows(app, 'components_shared_links'), 3, 'all of them')

  await articles.update({
    documentId: created.documentId,
    status: 'draft',
    data: { sections: [{ id: sections[1].id, heading: 'Second, first now' }, { heading: 'Third' }, { id: sections[0].id, heading: 'First, last now', links: [{ id: sections[0].links[1].id, url: '/kept' }] }] }
  })
  const reordered = await read(created.documentId, 'draft')
  t.match(reordered.sections, [
    { id: sections[1].id, heading: 'Second, first now', links: [] },
    { id: Number, heading: 'Third', links: [] },
    { id: sections[0].id, heading: 'First, last now', links: [{ id: sections[0].links[1].id, url: '/kept' }] }
  ], 'a repeatable component keeps the order written, ids updating in place')

  await articles.update({
    documentId: created.documentId,
    status: 'draft',
    data: { blocks: [{ __component: 'content.quote', id: blocks[2].id, text: 'Again, edited' }, { __component: 'content.quote', text: 'New' }] }
  })
  const zone = await read(created.documentId, 'draft')
  t.match(zone.blocks, [
    { __component: 'content.quote', id: blocks[2].id, text: 'Again, edited' },
    { __component: 'content.quote', text: 'New' }
  ], 'dynamic-zone items: replaced, reordered, updated in place by id')
  t.equal(await countRows(app, 'components_content_ctas'), 0, 'the cta left out is deleted')
  t.equal(await countRows(app, 'components_content_quotes'), 2)

  const other = await articles.create({ data: full, status: 'draft' })
  const otherSeo = (await read(other.documentId, 'draft')).seo as { id: number }
  await articles.update({ documentId: created.documentId, status: 'draft', data: { seo: { id: otherSeo.id, metaTitle: 'Stolen?' } } })
  t.equal(((await read(other.documentId, 'draft')).seo as { metaTitle: string }).metaTitle, 'Meta', 'the id of another document\'s component is not updated')
  t.not(((await read(created.documentId, 'draft')).seo as { id: number }).id, otherSeo.id, 'a new component is created instead')

  const quoteId = ((await read(created.documentId, 'draft')).blocks as Array<{ id: number }>)[0].id
  await articles.update({ documentId: created.documentId, status: 'draft', data: { blocks: [{ __component: 'content.cta', id: quoteId, label: 'Other type' }] } })
  const retyped = (await read(created.documentId, 'draft')).blocks as Array<{ __component: string, label: string }>
  t.match(retyped, [{ __component: 'content.cta', label: 'Other type' }], 'an id of another component type creates a new item')
})

t.test('null and [] clear; leaving an attribute out keeps it', async (t) => {
  const { app, read } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: full, status: 'draft' })
  await articles.update({ documentId: created.documentId, status: 'draft', data: { title: 'Renamed' } })
  t.match(await read(created.documentId, 'draft'), { title: 'Renamed', seo: { metaTitle: 'Meta' }, sections: [{}, {}], blocks: [{}, {}, {}] })

  await articles.update({ documentId: created.documentId, status: 'draft', data: { seo: null, sections: [], blocks: null } })
  t.match(await read(created.documentId, 'draft'), { seo: null, sections: [], blocks: [] })
  t.same(await counts(app), zero, 'every component row and join row is gone, nested ones included')
})

t.test('validation: 400s with the item path, and nothing written', async (t) => {
  const { app, read } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: full, status: 'draft' })
  const before = await read(created.documentId, 'draft')
  const rows = await counts(app)
  const update = async (data: Record<string, unknown>) => await validationError(articles.update({ documentId: created.documentId, status: 'draft', data: { title: 'Changed', ...data } }))

  const missing = await update({ blocks: [{ text: 'no component' }] })
  t.same(missing.details.errors, [{ path: ['blocks', '0', '__component'], message: 'blocks[0].__component is a required field', name: 'ValidationError' }],
    'a dynamic-zone item without __component')
  const unknown = await update({ blocks: [{ __component: 'content.quote', text: 'ok' }, { __component: 'shared.link', url: '/x' }] })
  t.match(unknown.details.errors, [{ path: ['blocks', '1', '__component'], value: 'shared.link', message: /blocks\[1\]\.__component must be one of/ }],
    'a component the zone does not allow')
  const nope = await update({ blocks: [{ __component: 'content.nope' }] })
  t.match(nope.details.errors, [{ path: ['blocks', '0', '__component'], value: 'content.nope' }], 'a component that does not exist')
  const both = await update({ blocks: [{}, { __component: 'x' }] })
  t.equal(both.message, '2 errors occurred', 'every bad item is listed')
  t.same((both.details.errors as Array<{ path: unknown }>).map((e) => e.path), [['blocks', '0', '__component'], ['blocks', '1', '__component']])
  const notArray = await update({ blocks: { __component: 'content.quote' } })
  t.match(notArray.details.errors, [{ path: ['blocks'] }], 'a dynamic zone must be an array')

  const key = await update({ seo: { metaTitle: 'a', nope: 1 } })
  t.equal(key.message, 'Invalid key nope at seo', 'an unknown key in a component, as Strapi words it')
  t.same(key.details, { key: 'nope', path: 'seo', source: 'body' })
  const repeatableKey = await update({ sections: [{ heading: 'ok' }, { nope: 1 }] })
  t.equal(repeatableKey.message, 'Invalid key nope at sections', 'in a repeatable component (indexes are not part of the path)')
  const zoneKey = await update({ blocks: [{ __component: 'content.quote', nope: 1 }] })
  t.equal(zoneKey.message, 'Invalid key nope at blocks')
  const type = await update({ sections: [{ position: 'first' }] })
  t.match(type.details.errors, [{ path: ['sections', '0', 'position'] }], 'a value of the wrong type, with its path')
  const required = await update({ seo: { links: [{ label: 'no url' }] } })
  t.equal(required.status, 400, 'a required attribute missing in a nested component')
  const notObject = await update({ seo: 'text' })
  t.equal(notObject.status, 400, 'a component that is not an object')
  const notList = await update({ sections: { heading: 'one' } })
  t.match(notList.details.errors, [{ path: ['sections'] }], 'a repeatable component must be an array')

  t.same(await read(created.documentId, 'draft'), before, 'the document is unchanged, title included')
  t.same(await counts(app), rows, 'no component row was written or deleted')

  const post = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'DZ no component', blocks: [{ text: 'q' }] } } })
  t.equal(post.statusCode, 400)
  t.match(post.json().error, { name: 'ValidationError', details: { errors: [{ path: ['blocks', '0', '__component'] }] } }, 'through REST too')
  t.equal(await countRows(app, 'articles'), 1, 'no document was created')
})

t.test('errors inside nested components name the full path', async (t) => {
  const { app } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: { title: 'Nested' }, status: 'draft' })
  const update = async (data: Record<string, unknown>) => await validationError(articles.update({ documentId: created.documentId, status: 'draft', data }))

  const key = await update({ seo: { og: { nope: 1 } } })
  t.equal(key.message, 'Invalid key nope at seo.og', 'an unknown key two levels deep')
  t.equal(key.details.path, 'seo.og', 'details.path too')
  const zone = await update({ blocks: [{ __component: 'content.cta', target: { url: '/x', nope: 1 } }] })
  t.equal(zone.message, 'Invalid key nope at blocks.target', 'in a component of a dynamic-zone item')
  const required = await update({ sections: [{ heading: 'ok' }, { links: [{ label: 'no url' }] }] })
  t.same((required.details.errors as Array<{ path: unknown }>)[0].path, ['sections', '1', 'links', '0', 'url'], 'a missing required attribute two levels deep')
  t.match(required.message, /^sections\[1\]\.links\[0\]\.url /, 'named in the message too')
})

t.test('publishing gives the published version its own component copies', async (t) => {
  const { app, read } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: full })
  const published = await read(created.documentId)
  const draft = await read(created.documentId, 'draft')
  const { id: _p, title: _pt, documentId: _pd, ...publishedContent } = published
  const { id: _d, title: _dt, documentId: _dd, ...draftContent } = draft
  const withoutIds = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, v) => key === 'id' ? undefined : v))
  t.same(withoutIds(publishedContent), withoutIds(draftContent), 'the same content')
  t.not((published.seo as { id: number }).id, (draft.seo as { id: number }).id, 'in different rows')
  t.not((published.seo as { og: { id: number } }).og.id, (draft.seo as { og: { id: number } }).og.id, 'nested components too')

  const draftSeo = draft.seo as { id: number, og: { id: number } }
  await articles.update({ documentId: created.documentId, status: 'draft', data: { seo: { id: draftSeo.id, metaTitle: 'Draft only', og: { id: draftSeo.og.id, ogTitle: 'Draft OG' } } } })
  t.match(await read(created.documentId), { seo: { metaTitle: 'Meta', og: { ogTitle: 'OG' } } }, 'editing the draft\'s component leaves the published one alone')
  t.match(await read(created.documentId, 'draft'), { seo: { metaTitle: 'Draft only', og: { ogTitle: 'Draft OG' } } })

  await articles.publish({ documentId: created.documentId })
  t.match(await read(created.documentId), { seo: { metaTitle: 'Draft only', og: { ogTitle: 'Draft OG' }, links: [] } }, 'publishing carries the edit')
  t.not((await read(created.documentId)).seo, null)
  const rows = await counts(app)
  t.equal(rows.components_shared_seos, 2, 'one seo per version, the previous published copy replaced')
  t.equal(rows.components_shared_open_graphs, 2)

  await articles.update({ documentId: created.documentId, status: 'draft', data: { blocks: [] } })
  await articles.discardDraft({ documentId: created.documentId })
  t.equal(((await read(created.documentId, 'draft')).blocks as unknown[]).length, 3, 'discarding the draft copies the published components back')

  await articles.unpublish({ documentId: created.documentId })
  const afterUnpublish = await counts(app)
  t.equal(afterUnpublish.components_shared_seos, 1, 'unpublishing deletes the published version\'s components')
  t.equal(afterUnpublish.components_content_quotes, 2)
})

t.test('deleting a document deletes its component rows', async (t) => {
  const { app } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const kept = await articles.create({ data: { ...full, title: 'Kept' } })
  const keptRows = await counts(app)
  const doomed = await articles.create({ data: { ...full, title: 'Doomed' } })
  await articles.update({ documentId: doomed.documentId, status: 'draft', data: { sections: [{ heading: 'draft only' }] } })
  t.same(await articles.delete({ documentId: doomed.documentId }), { documentId: doomed.documentId, entries: 2 })
  t.same(await counts(app), keptRows, 'both versions\' components, nested ones included, are gone; the other document\'s stay')
  await articles.delete({ documentId: kept.documentId })
  t.same(await counts(app), zero, 'no component row left')
})

t.test('components through REST, Strapi\'s answers', async (t) => {
  const { app } = await setup(t)
  const post = await app.inject({
    method: 'POST',
    url: '/api/articles?populate=*',
    payload: { data: { title: 'Oracle like', seo: { metaTitle: 'mt', metaDescription: 'md' }, blocks: [{ __component: 'content.quote', text: 'q', by: 'a' }] } }
  })
  t.equal(post.statusCode, 200)
  const created = post.json().data
  t.match(created, { seo: { id: Number, metaTitle: 'mt', metaDescription: 'md' }, blocks: [{ id: Number, __component: 'content.quote', text: 'q', by: 'a' }], sections: [] })

  const put = await app.inject({
    method: 'PUT',
    url: `/api/articles/${created.documentId as string}?populate[blocks]=true`,
    payload: { data: { blocks: [{ __component: 'content.cta', label: 'new' }] } }
  })
  t.equal(put.statusCode, 200)
  t.match(put.json().data.blocks, [{ __component: 'content.cta', label: 'new' }], 'a dynamic zone is replaced (update-dz-replace)')
  t.equal(put.json().data.blocks.length, 1)

  const unknownKey = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'Comp unknown key', seo: { metaTitle: 'a', nope: 1 } } } })
  t.equal(unknownKey.statusCode, 400)
  t.same(unknownKey.json(), {
    data: null,
    error: { status: 400, name: 'ValidationError', message: 'Invalid key nope at seo', details: { key: 'nope', path: 'seo', source: 'body' } }
  }, 'create-component-unknown-key')
})
