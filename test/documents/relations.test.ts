import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ValidationError, type QueryParams } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import {
  ARTICLE, AUTHOR, CATEGORY, LABEL, SIDEBAR, TAG, countRows, openAccess, relationOptions, tableRows
} from '../fixtures/relations.js'

/**
 * Relation writes through the document service (and REST where the answer's shape matters), on
 * every relation kind and from both sides: every write form Strapi v5 accepts, exclusivity,
 * self-relations, stored order, errors that roll the whole write back, draft and published
 * versions, and what happens when the related document is republished or deleted.
 *
 * Design facts these tests pin down (lib/model/associations.ts, lib/documents/versions.ts): a
 * relation is stored in one link table owned by the `inversedBy` side (or the only side); a row
 * links to every version (draft and published) of each related document and reads pick the
 * version matching the request's status; publishing copies the draft's links to the published row.
 */

type Status = 'draft' | 'published'
type Name = string
type ReadParams = QueryParams & { documentId: string }

/** The attribute that names a document of each model in these tests. */
const LABEL_FIELD: Record<string, string> = {
  [ARTICLE]: 'title', [CATEGORY]: 'name', [TAG]: 'name', [AUTHOR]: 'name', [SIDEBAR]: 'heading', [LABEL]: 'text'
}

interface World {
  app: FastifyInstance
  /** documentId by name: C1..C3, T1..T4, U1..U3, S1..S2, A1..A3. */
  id: Record<Name, string>
  create: (uid: string, name: Name, data?: Record<string, unknown>, status?: Status) => Promise<string>
  update: (uid: string, name: Name, data: Record<string, unknown>, status?: Status) => Promise<void>
  /** Names of the documents related through `attribute` (one name, or null, for to-one relations). */
  related: (uid: string, name: Name, attribute: string, status?: Status) => Promise<Name | null | Name[]>
  /** The row id of a document's version. */
  rowId: (uid: string, name: Name, status?: Status) => Promise<number>
}

async function world (t: Parameters<typeof build>[0]): Promise<World> {
  const { app } = await build(t, relationOptions)
  await openAccess(app)
  const id: Record<Name, string> = {}
  const names = new Map<string, Name>()
  const service = (uid: string) => app.contentApi.documents(uid)

  const create: World['create'] = async (uid, name, data = {}, status = 'published') => {
    const doc = await service(uid).create({ data: { [LABEL_FIELD[uid]]: name, ...data }, status })
    id[name] = doc.documentId
    names.set(doc.documentId, name)
    return doc.documentId
  }
  const update: World['update'] = async (uid, name, data, status = 'published') => {
    const doc = await service(uid).update({ documentId: id[name], data, status })
    if (doc === null) throw new Error(`no document ${name}`)
  }
  const related: World['related'] = async (uid, name, attribute, status = 'published') => {
    const association = app.contentApi.registry.get(uid)!.associations.get(attribute)
    if (association?.kind !== 'relation') throw new Error(`${attribute} is not a relation of ${uid}`)
    const field = LABEL_FIELD[association.target]
    const params: ReadParams = { documentId: id[name], status, fields: [LABEL_FIELD[uid]], populate: { [attribute]: { fields: [field] } } }
    const doc = await service(uid).findOne(params)
    if (doc === null) throw new Error(`no ${status} version of ${name}`)
    const value = doc[attribute] as Record<string, unknown> | Array<Record<string, unknown>> | null
    if (Array.isArray(value)) return value.map((v) => v[field] as Name)
    return value === null ? null : value[field] as Name
  }
  const rowId: World['rowId'] = async (uid, name, status = 'published') => {
    const doc = await service(uid).findOne({ documentId: id[name], status, fields: ['id'] })
    if (doc === null) throw new Error(`no ${status} version of ${name}`)
    return doc.id
  }

  for (const name of ['C1', 'C2', 'C3']) await create(CATEGORY, name)
  for (const name of ['T1', 'T2', 'T3', 'T4']) await create(TAG, name)
  for (const name of ['U1', 'U2', 'U3']) await create(AUTHOR, name)
  for (const name of ['S1', 'S2']) await create(SIDEBAR, name)
  for (const name of ['A1', 'A2', 'A3']) await create(ARTICLE, name)
  return { app, id, create, update, related, rowId }
}

/** The ValidationError a promise rejects with. */
async function validationError (promise: Promise<unknown>): Promise<ValidationError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof ValidationError) return err
    throw err
  }
  throw new Error('expected a ValidationError')
}

t.test('write forms on a to-many relation (article.tags)', async (t) => {
  const w = await world(t)
  const { id } = w
  const tags = async (): Promise<unknown> => await w.related(ARTICLE, 'A1', 'tags')

  await w.update(ARTICLE, 'A1', { tags: [id.T2, id.T1] })
  t.same(await tags(), ['T2', 'T1'], 'an array of documentIds sets the list, in the given order')

  await w.update(ARTICLE, 'A1', { tags: id.T3 })
  t.same(await tags(), ['T3'], 'a bare documentId sets a one-item list')

  const t4 = await w.rowId(TAG, 'T4')
  const t1 = await w.rowId(TAG, 'T1')
  await w.update(ARTICLE, 'A1', { tags: [t4, t1] })
  t.same(await tags(), ['T4', 'T1'], 'numeric row ids are accepted (legacy form)')
  await w.update(ARTICLE, 'A1', { tags: t1 })
  t.same(await tags(), ['T1'], 'a bare numeric id too')

  await w.update(ARTICLE, 'A1', { tags: [{ documentId: id.T2 }, { id: t4 }, { id: String(t1) }] })
  t.same(await tags(), ['T2', 'T4', 'T1'], '{ documentId } and { id } objects (a numeric string id too)')

  await w.update(ARTICLE, 'A1', { tags: { set: [id.T3, { documentId: id.T1 }] } })
  t.same(await tags(), ['T3', 'T1'], '{ set } replaces the list')

  await w.update(ARTICLE, 'A1', { tags: { connect: [id.T2], disconnect: [id.T3] } })
  t.same(await tags(), ['T1', 'T2'], '{ connect, disconnect } edits it: connected documents go at the end')

  await w.update(ARTICLE, 'A1', { tags: { connect: [{ documentId: id.T4, position: { start: true } }] } })
  t.same(await tags(), ['T4', 'T1', 'T2'], 'position { start: true }')
  await w.update(ARTICLE, 'A1', { tags: { connect: [{ documentId: id.T4, position: { end: true } }] } })
  t.same(await tags(), ['T1', 'T2', 'T4'], 'position { end: true } moves an already connected document')
  await w.update(ARTICLE, 'A1', { tags: { connect: [{ documentId: id.T3, position: { before: id.T2 } }] } })
  t.same(await tags(), ['T1', 'T3', 'T2', 'T4'], 'position { before }')
  await w.update(ARTICLE, 'A1', { tags: { connect: [{ documentId: id.T1, position: { after: id.T2 } }] } })
  t.same(await tags(), ['T3', 'T2', 'T1', 'T4'], 'position { after }')
  await w.update(ARTICLE, 'A1', {
    tags: {
      disconnect: [id.T1, id.T2, id.T3],
      connect: [
        { documentId: id.T1, position: { before: id.T4 } },
        { documentId: id.T2, position: { after: id.T1 } },
        { documentId: id.T3, position: { start: true } }
      ]
    }
  })
  t.same(await tags(), ['T3', 'T1', 'T2', 'T4'], 'positions apply in order, each against the list the previous ones left')
  await w.update(ARTICLE, 'A1', { tags: { connect: [{ documentId: id.T3, position: { after: { documentId: id.T4 } } }] } })
  t.same(await tags(), ['T1', 'T2', 'T4', 'T3'], 'an anchor given as { documentId }')

  await w.update(ARTICLE, 'A1', { tags: { disconnect: [{ documentId: id.T2 }, await w.rowId(TAG, 'T4')] } })
  t.same(await tags(), ['T1', 'T3'], 'disconnect by { documentId } and by row id')
  await w.update(ARTICLE, 'A1', { tags: { disconnect: [id.T4] } })
  t.same(await tags(), ['T1', 'T3'], 'disconnecting a document that is not connected changes nothing')
  await w.update(ARTICLE, 'A1', { tags: { connect: [] } })
  t.same(await tags(), ['T1', 'T3'], 'an empty connect changes nothing')
  await w.update(ARTICLE, 'A1', { title: 'A1' })
  t.same(await tags(), ['T1', 'T3'], 'leaving the attribute out keeps the list')

  await w.update(ARTICLE, 'A1', { tags: { set: [] } })
  t.same(await tags(), [], '{ set: [] } clears')
  await w.update(ARTICLE, 'A1', { tags: [id.T1] })
  await w.update(ARTICLE, 'A1', { tags: [] })
  t.same(await tags(), [], '[] clears')
  await w.update(ARTICLE, 'A1', { tags: [id.T1] })
  await w.update(ARTICLE, 'A1', { tags: null })
  t.same(await tags(), [], 'null clears')
  await w.update(ARTICLE, 'A1', { tags: [id.T1, id.T1, { documentId: id.T1 }] })
  t.same(await tags(), ['T1'], 'a document named twice is linked once')
})

t.test('write forms on a to-one relation (article.category)', async (t) => {
  const w = await world(t)
  const { id } = w
  const category = async (): Promise<unknown> => await w.related(ARTICLE, 'A1', 'category')

  t.equal(await category(), null, 'no category yet')
  await w.update(ARTICLE, 'A1', { category: id.C1 })
  t.equal(await category(), 'C1', 'a bare documentId')
  await w.update(ARTICLE, 'A1', { category: await w.rowId(CATEGORY, 'C2') })
  t.equal(await category(), 'C2', 'a numeric row id')
  await w.update(ARTICLE, 'A1', { category: { documentId: id.C3 } })
  t.equal(await category(), 'C3', '{ documentId }')
  await w.update(ARTICLE, 'A1', { category: [id.C1] })
  t.equal(await category(), 'C1', 'a one-item array')
  await w.update(ARTICLE, 'A1', { category: { connect: [id.C2] } })
  t.equal(await category(), 'C2', '{ connect } replaces the related document')
  await w.update(ARTICLE, 'A1', { category: { set: [id.C3] } })
  t.equal(await category(), 'C3', '{ set }')
  await w.update(ARTICLE, 'A1', { category: { disconnect: [id.C1] } })
  t.equal(await category(), 'C3', 'disconnecting another document keeps it')
  await w.update(ARTICLE, 'A1', { category: { disconnect: [id.C3] } })
  t.equal(await category(), null, '{ disconnect } of the related document clears it')
  await w.update(ARTICLE, 'A1', { category: id.C1 })
  await w.update(ARTICLE, 'A1', { category: null })
  t.equal(await category(), null, 'null clears')
  await w.update(ARTICLE, 'A1', { category: id.C1 })
  await w.update(ARTICLE, 'A1', { category: { set: [] } })
  t.equal(await category(), null, '{ set: [] } clears')
})

t.test('set cannot be combined with connect or disconnect; malformed values are 400s', async (t) => {
  const w = await world(t)
  const { id, app } = w
  const articles = app.contentApi.documents(ARTICLE)
  const write = async (data: Record<string, unknown>) => await validationError(articles.update({ documentId: id.A1, data }))

  for (const value of [{ set: [id.T1], connect: [id.T2] }, { set: [id.T1], disconnect: [id.T2] }, { set: [], connect: [] }]) {
    const err = await write({ tags: value })
    t.equal(err.status, 400)
    t.match(err.message, /set cannot be combined with connect or disconnect/, JSON.stringify(value))
    t.same((err.details.errors as Array<{ path: unknown }>)[0].path, ['tags'])
  }

  const unknownKey = await write({ tags: { connect: [id.T1], nope: [] } })
  t.equal(unknownKey.message, 'Invalid key nope at tags', 'unknown keys next to connect')
  t.match(unknownKey.details, { key: 'nope', path: 'tags', source: 'body' })

  for (const value of [[true], [{}], [{ documentId: '' }], [{ id: -1 }], { connect: [{ name: 'T1' }] }, [0]]) {
    const err = await write({ tags: value })
    t.equal(err.status, 400, `tags: ${JSON.stringify(value)}`)
  }
  const badPosition = await write({ tags: { connect: [{ documentId: id.T1, position: { middle: true } }] } })
  t.same((badPosition.details.errors as Array<{ path: unknown }>)[0].path, ['tags', 'connect', 0, 'position'])
  const positionInSet = await write({ tags: { set: [{ documentId: id.T1, position: { start: true } }] } })
  t.match(positionInSet.message, /position is only allowed in connect/)

  t.same(await w.related(ARTICLE, 'A1', 'tags'), [], 'nothing was written')
})

t.test('unknown related documents: a 400 naming them, and nothing written', async (t) => {
  const w = await world(t)
  const { id, app } = w
  await w.update(ARTICLE, 'A1', { title: 'A1', views: 1, tags: [id.T1], category: id.C1 })

  const put = await app.inject({
    method: 'PUT',
    url: `/api/articles/${id.A1}`,
    payload: { data: { title: 'Changed', views: 2, category: id.C2, tags: [id.T2, 'doesnotexist00000000000'] } }
  })
  t.equal(put.statusCode, 400)
  const error = put.json().error
  t.same(error, { status: 400, name: 'ValidationError', message: 'Document with id "doesnotexist00000000000", locale "null" not found', details: {} },
    'Strapi\'s documentId transform: no details')

  for (const status of ['draft', 'published'] as const) {
    const doc = await app.contentApi.documents(ARTICLE).findOne({ documentId: id.A1, status })
    t.match(doc, { title: 'A1', views: 1 }, `${status}: the scalar changes were rolled back`)
    t.same(await w.related(ARTICLE, 'A1', 'tags', status), ['T1'], `${status}: the tags are untouched`)
    t.equal(await w.related(ARTICLE, 'A1', 'category', status), 'C1', `${status}: the category written before the failing one was rolled back too`)
  }

  const numeric = await validationError(app.contentApi.documents(ARTICLE).update({ documentId: id.A1, data: { category: 987654 } }))
  const counted = '1 relation(s) of type api::category.category associated with this entity do not exist'
  t.equal(numeric.message, counted, 'row ids that name nothing: Strapi\'s entity-validator message, counting them')
  t.same(numeric.details.errors, [{ path: [], message: counted, name: 'ValidationError' }], 'at the payload\'s root')

  const disconnect = await validationError(app.contentApi.documents(ARTICLE).update({ documentId: id.A1, data: { tags: { disconnect: ['nope'] } } }))
  t.match(disconnect.message, /nope/, 'disconnecting an unknown document is a 400 too')
  const anchor = await validationError(app.contentApi.documents(ARTICLE).update({
    documentId: id.A1, data: { tags: { connect: [{ documentId: id.T2, position: { before: 'nope' } }] } }
  }))
  t.match(anchor.message, /nope/, 'so is an unknown position anchor')

  const before = await countRows(app, 'articles')
  const links = await countRows(app, 'articles_tags_lnk')
  const post = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'New', tags: [id.T1, 'nope'] } } })
  t.equal(post.statusCode, 400)
  t.match(post.json().error.message, /nope/)
  t.equal(await countRows(app, 'articles'), before, 'a failing create leaves no row behind')
  t.equal(await countRows(app, 'articles_tags_lnk'), links, 'and no link')

  const draftOnly = await validationError(app.contentApi.documents(ARTICLE).update({ documentId: id.A1, data: { sidebar: id.A2 } }))
  t.match(draftOnly.message, new RegExp(id.A2), 'a documentId of another model is unknown to this relation')
})

t.test('every relation kind, written from either side, is seen from the other', async (t) => {
  const w = await world(t)
  const { id } = w

  t.test('oneToOne (article.sidebar inversedBy sidebar.article)', async (t) => {
    await w.update(ARTICLE, 'A1', { sidebar: id.S1 })
    t.equal(await w.related(ARTICLE, 'A1', 'sidebar'), 'S1')
    t.equal(await w.related(SIDEBAR, 'S1', 'article'), 'A1', 'written from the owner, seen from the inverse side')
    await w.update(SIDEBAR, 'S2', { article: id.A2 })
    t.equal(await w.related(ARTICLE, 'A2', 'sidebar'), 'S2', 'written from the inverse side, seen from the owner')
    await w.update(SIDEBAR, 'S2', { article: null })
    t.equal(await w.related(ARTICLE, 'A2', 'sidebar'), null, 'cleared from the inverse side')
  })

  t.test('manyToOne / oneToMany (article.category inversedBy category.articles)', async (t) => {
    await w.update(ARTICLE, 'A1', { category: id.C1 })
    await w.update(ARTICLE, 'A2', { category: id.C1 })
    t.same(await w.related(CATEGORY, 'C1', 'articles'), ['A1', 'A2'], 'written from the owner, seen from the inverse side')
    await w.update(CATEGORY, 'C2', { articles: [id.A3, id.A2] })
    t.equal(await w.related(ARTICLE, 'A3', 'category'), 'C2', 'written from the inverse side, seen from the owner')
    t.equal(await w.related(ARTICLE, 'A2', 'category'), 'C2')
    t.same(await w.related(CATEGORY, 'C2', 'articles'), ['A3', 'A2'], 'in the order written')
    await w.update(CATEGORY, 'C2', { articles: { disconnect: [id.A3] } })
    t.equal(await w.related(ARTICLE, 'A3', 'category'), null, 'disconnected from the inverse side')
  })

  t.test('manyToMany (article.tags inversedBy tag.articles)', async (t) => {
    await w.update(ARTICLE, 'A1', { tags: [id.T1, id.T2] })
    await w.update(ARTICLE, 'A2', { tags: [id.T2] })
    t.same(await w.related(TAG, 'T1', 'articles'), ['A1'], 'written from the owner, seen from the inverse side')
    t.same(await w.related(TAG, 'T2', 'articles'), ['A1', 'A2'])
    await w.update(TAG, 'T3', { articles: [id.A2, id.A1] })
    t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T1', 'T2', 'T3'], 'written from the inverse side, seen from the owner (at the end)')
    t.same(await w.related(ARTICLE, 'A2', 'tags'), ['T2', 'T3'])
    t.same(await w.related(TAG, 'T3', 'articles'), ['A2', 'A1'], 'the inverse side keeps its own order')
    await w.update(TAG, 'T2', { articles: { set: [id.A2] } })
    t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T1', 'T3'], 'set from the inverse side removes the others')
  })

  t.test('self manyToOne / oneToMany (article.parent inversedBy article.children)', async (t) => {
    await w.update(ARTICLE, 'A2', { parent: id.A1 })
    await w.update(ARTICLE, 'A3', { parent: id.A1 })
    t.same(await w.related(ARTICLE, 'A1', 'children'), ['A2', 'A3'], 'children seen from the parent')
    await w.update(ARTICLE, 'A1', { children: { disconnect: [id.A2] } })
    t.equal(await w.related(ARTICLE, 'A2', 'parent'), null, 'disconnected from the inverse side')
    await w.update(ARTICLE, 'A2', { children: [id.A1] })
    t.equal(await w.related(ARTICLE, 'A1', 'parent'), 'A2', 'written from the inverse side')
    t.same(await w.related(ARTICLE, 'A1', 'children'), ['A3'])
  })

  t.test('unidirectional relations (no attribute on the target)', async (t) => {
    await w.update(ARTICLE, 'A1', { spotlight: id.U1, author: id.U2, reviewers: [id.U3, id.U1] })
    t.equal(await w.related(ARTICLE, 'A1', 'spotlight'), 'U1', 'oneToOne')
    t.equal(await w.related(ARTICLE, 'A1', 'author'), 'U2', 'manyToOne')
    t.same(await w.related(ARTICLE, 'A1', 'reviewers'), ['U3', 'U1'], 'oneToMany')
    await w.update(ARTICLE, 'A1', { related: [id.A3, id.A2] })
    t.same(await w.related(ARTICLE, 'A1', 'related'), ['A3', 'A2'], 'self manyToMany')
    t.same(await w.related(ARTICLE, 'A3', 'related'), [], 'a unidirectional self-relation is not symmetric')
  })
})

t.test('the link table: one link per version pair, both versions of both documents', async (t) => {
  const w = await world(t)
  const { id, app } = w
  await w.update(ARTICLE, 'A1', { author: id.U1 })
  const [a1Draft, a1Published, u1Draft, u1Published] = [
    await w.rowId(ARTICLE, 'A1', 'draft'), await w.rowId(ARTICLE, 'A1'), await w.rowId(AUTHOR, 'U1', 'draft'), await w.rowId(AUTHOR, 'U1')
  ]
  const links = (await tableRows(app, 'articles_author_lnk')).map((r) => [r.article_id, r.author_id])
  t.same(links.sort(), [[a1Draft, u1Draft], [a1Draft, u1Published], [a1Published, u1Draft], [a1Published, u1Published]].sort(),
    'each version of the article links to each version of the author')

  await w.update(CATEGORY, 'C1', { articles: [id.A1] })
  const categoryLinks = (await tableRows(app, 'articles_category_lnk')).map((r) => r.article_id).sort()
  t.same(categoryLinks, [a1Draft, a1Published].sort(), 'a write from the non-D&P inverse side links both versions of the article')
})

t.test('exclusivity: oneToOne and oneToMany unlink a document from its previous source', async (t) => {
  const w = await world(t)
  const { id } = w

  await w.update(ARTICLE, 'A1', { sidebar: id.S1 })
  await w.update(ARTICLE, 'A2', { sidebar: id.S1 })
  t.equal(await w.related(ARTICLE, 'A1', 'sidebar'), null, 'oneToOne owner side: S1 left A1')
  t.equal(await w.related(ARTICLE, 'A2', 'sidebar'), 'S1')
  t.equal(await w.related(SIDEBAR, 'S1', 'article'), 'A2')
  await w.update(SIDEBAR, 'S2', { article: id.A2 })
  t.equal(await w.related(SIDEBAR, 'S1', 'article'), null, 'oneToOne inverse side: A2 left S1')
  t.equal(await w.related(ARTICLE, 'A2', 'sidebar'), 'S2')

  await w.update(ARTICLE, 'A1', { spotlight: id.U1 })
  await w.update(ARTICLE, 'A2', { spotlight: { connect: [id.U1] } })
  t.equal(await w.related(ARTICLE, 'A1', 'spotlight'), null, 'unidirectional oneToOne')
  t.equal(await w.related(ARTICLE, 'A2', 'spotlight'), 'U1')

  await w.update(ARTICLE, 'A1', { reviewers: [id.U1, id.U2, id.U3] })
  await w.update(ARTICLE, 'A2', { reviewers: { connect: [id.U2] } })
  t.same(await w.related(ARTICLE, 'A1', 'reviewers'), ['U1', 'U3'], 'unidirectional oneToMany: U2 left A1')
  await w.update(ARTICLE, 'A3', { reviewers: [id.U1, id.U3] })
  t.same(await w.related(ARTICLE, 'A1', 'reviewers'), [], 'set takes them all')
  t.same(await w.related(ARTICLE, 'A2', 'reviewers'), ['U2'])

  await w.update(CATEGORY, 'C1', { articles: [id.A1, id.A2] })
  await w.update(CATEGORY, 'C2', { articles: { connect: [id.A2] } })
  t.same(await w.related(CATEGORY, 'C1', 'articles'), ['A1'], 'oneToMany inverse side: A2 left C1')
  t.equal(await w.related(ARTICLE, 'A2', 'category'), 'C2')

  await w.update(ARTICLE, 'A1', { children: [id.A3] })
  await w.update(ARTICLE, 'A2', { children: { connect: [id.A3] } })
  t.same(await w.related(ARTICLE, 'A1', 'children'), [], 'self oneToMany: A3 left A1')
  t.equal(await w.related(ARTICLE, 'A3', 'parent'), 'A2')

  await w.update(ARTICLE, 'A1', { author: id.U3, tags: [id.T1] })
  await w.update(ARTICLE, 'A2', { author: id.U3, tags: [id.T1] })
  t.equal(await w.related(ARTICLE, 'A1', 'author'), 'U3', 'manyToOne is not exclusive')
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T1'], 'nor is manyToMany')
  await w.update(ARTICLE, 'A2', { category: id.C1 })
  t.same(await w.related(CATEGORY, 'C1', 'articles'), ['A1', 'A2'], 'nor the manyToOne owner side of a oneToMany')

  await w.update(ARTICLE, 'A3', { sidebar: id.S1 })
  await w.update(ARTICLE, 'A3', { views: 3 }, 'draft')
  await w.update(ARTICLE, 'A3', { sidebar: id.S1 }, 'draft')
  t.equal(await w.related(ARTICLE, 'A3', 'sidebar', 'published'), 'S1', 'relinking the draft does not unlink the document\'s own published version')
  t.equal(await w.related(ARTICLE, 'A3', 'sidebar', 'draft'), 'S1')
})

t.test('self-relations', async (t) => {
  const w = await world(t)
  const { id } = w
  await w.update(ARTICLE, 'A1', { related: [id.A1, id.A2] })
  t.same(await w.related(ARTICLE, 'A1', 'related'), ['A1', 'A2'], 'a document may relate to itself')
  await w.update(ARTICLE, 'A1', { parent: id.A1 })
  t.equal(await w.related(ARTICLE, 'A1', 'parent'), 'A1', 'and be its own parent')
  t.same(await w.related(ARTICLE, 'A1', 'children'), ['A1'], 'and then its own child')
  await w.update(ARTICLE, 'A1', { views: 9 })
  t.same(await w.related(ARTICLE, 'A1', 'related'), ['A1', 'A2'], 'republishing keeps a self-link')
  await w.update(ARTICLE, 'A2', { parent: id.A1 })
  await w.update(ARTICLE, 'A3', { parent: id.A2 })
  t.same(await w.related(ARTICLE, 'A1', 'children'), ['A1', 'A2'])
  t.same(await w.related(ARTICLE, 'A2', 'children'), ['A3'], 'a chain')
})

t.test('stored order is kept across updates, publishing and writes from the other side', async (t) => {
  const w = await world(t)
  const { id } = w
  await w.update(ARTICLE, 'A1', { tags: [id.T3, id.T1, id.T4, id.T2] })
  await w.update(ARTICLE, 'A1', { title: 'A1', views: 5 })
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T3', 'T1', 'T4', 'T2'], 'an update of other attributes keeps the order')
  t.same(await w.related(ARTICLE, 'A1', 'tags', 'draft'), ['T3', 'T1', 'T4', 'T2'], 'in both versions')
  await w.update(ARTICLE, 'A1', { tags: { connect: [{ documentId: id.T2, position: { start: true } }] } }, 'draft')
  await w.app.contentApi.documents(ARTICLE).publish({ documentId: id.A1 })
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T2', 'T3', 'T1', 'T4'], 'publishing carries the draft\'s order')

  await w.update(TAG, 'T1', { name: 'T1' })
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T2', 'T3', 'T1', 'T4'], 'updating a related document keeps the order')
  await w.update(TAG, 'T1', { articles: { connect: [id.A2] } })
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T2', 'T3', 'T1', 'T4'], 'a write from the inverse side keeps the owner\'s order')

  await w.update(CATEGORY, 'C1', { articles: [id.A3, id.A1, id.A2] })
  await w.update(ARTICLE, 'A1', { views: 6 })
  await w.update(ARTICLE, 'A1', { category: id.C1 })
  t.same(await w.related(CATEGORY, 'C1', 'articles'), ['A3', 'A1', 'A2'], 'the inverse side\'s order survives republishing and rewriting from the owner')
  const a4 = await w.create(ARTICLE, 'A4', { category: id.C1 })
  t.ok(a4)
  t.same(await w.related(CATEGORY, 'C1', 'articles'), ['A3', 'A1', 'A2', 'A4'], 'a document linked from the owner side goes last on the inverse side')
})

t.test('draft and published versions hold their own relations', async (t) => {
  const w = await world(t)
  const { id, app } = w
  const articles = app.contentApi.documents(ARTICLE)
  await w.update(ARTICLE, 'A1', { tags: [id.T1], category: id.C1, author: id.U1 })

  await w.update(ARTICLE, 'A1', { tags: [id.T2, id.T3], category: id.C2, author: null }, 'draft')
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T1'], 'a draft-only edit leaves the published version\'s relations alone')
  t.equal(await w.related(ARTICLE, 'A1', 'category'), 'C1')
  t.equal(await w.related(ARTICLE, 'A1', 'author'), 'U1')
  t.same(await w.related(ARTICLE, 'A1', 'tags', 'draft'), ['T2', 'T3'], 'the draft has the new ones')
  t.equal(await w.related(ARTICLE, 'A1', 'category', 'draft'), 'C2')
  t.equal(await w.related(ARTICLE, 'A1', 'author', 'draft'), null)
  t.same(await w.related(TAG, 'T1', 'articles', 'published'), ['A1'], 'the inverse side sees the published version when asked for it')
  t.same(await w.related(TAG, 'T1', 'articles', 'draft'), [], 'and the draft when asked for drafts')

  await articles.publish({ documentId: id.A1 })
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T2', 'T3'], 'publishing carries the draft\'s relations')
  t.equal(await w.related(ARTICLE, 'A1', 'category'), 'C2')
  t.equal(await w.related(ARTICLE, 'A1', 'author'), null)
  t.same(await w.related(CATEGORY, 'C1', 'articles'), [])
  t.same(await w.related(CATEGORY, 'C2', 'articles'), ['A1'])

  await w.update(ARTICLE, 'A1', { tags: [id.T4] }, 'draft')
  await articles.discardDraft({ documentId: id.A1 })
  t.same(await w.related(ARTICLE, 'A1', 'tags', 'draft'), ['T2', 'T3'], 'discarding the draft restores the published relations')

  const draftOnly = await w.create(ARTICLE, 'D1', { tags: [id.T1], category: id.C3 }, 'draft')
  t.same(await w.related(ARTICLE, 'D1', 'tags', 'draft'), ['T1'], 'a draft created with relations')
  t.same(await w.related(CATEGORY, 'C3', 'articles'), [], 'is not among the published articles of its category')
  t.same(await w.related(CATEGORY, 'C3', 'articles', 'draft'), ['D1'], 'but among the drafts')
  await articles.publish({ documentId: draftOnly })
  t.same(await w.related(ARTICLE, 'D1', 'tags'), ['T1'], 'its first publication carries them')
  t.same(await w.related(CATEGORY, 'C3', 'articles'), ['D1'])

  await articles.unpublish({ documentId: id.A1 })
  t.same(await w.related(TAG, 'T2', 'articles'), [], 'unpublishing removes the published version\'s links')
  t.same(await w.related(ARTICLE, 'A1', 'tags', 'draft'), ['T2', 'T3'], 'the draft keeps its own')
})

t.test('a draft & publish target: reads follow the status; republishing the target keeps the links', async (t) => {
  const w = await world(t)
  const { id, app } = w
  const authors = app.contentApi.documents(AUTHOR)
  await w.update(ARTICLE, 'A1', { author: id.U1, reviewers: [id.U2, id.U3], related: [id.A2] })

  await w.update(AUTHOR, 'U1', { name: 'U1 again' })
  t.equal(await w.related(ARTICLE, 'A1', 'author'), 'U1 again', 'republishing the target (its published row updated in place) keeps the link')
  await w.update(AUTHOR, 'U1', { name: 'U1 draft' }, 'draft')
  t.equal(await w.related(ARTICLE, 'A1', 'author'), 'U1 again', 'a published read shows the target\'s published version')
  t.equal(await w.related(ARTICLE, 'A1', 'author', 'draft'), 'U1 draft', 'a draft read its draft')

  await authors.unpublish({ documentId: id.U2 })
  t.same(await w.related(ARTICLE, 'A1', 'reviewers'), ['U3'], 'an unpublished target disappears from published reads')
  t.same(await w.related(ARTICLE, 'A1', 'reviewers', 'draft'), ['U2', 'U3'], 'but stays linked to the draft')
  await authors.publish({ documentId: id.U2 })
  t.same(await w.related(ARTICLE, 'A1', 'reviewers'), ['U2', 'U3'], 'publishing it again brings it back, in its place')

  await w.create(AUTHOR, 'U9', {}, 'draft')
  await w.update(ARTICLE, 'A1', { spotlight: id.U9 })
  t.equal(await w.related(ARTICLE, 'A1', 'spotlight'), null, 'a never-published target is not in published reads')
  t.equal(await w.related(ARTICLE, 'A1', 'spotlight', 'draft'), 'U9')
  await authors.publish({ documentId: id.U9 })
  t.equal(await w.related(ARTICLE, 'A1', 'spotlight'), 'U9', 'its first publication links its new published row')

  await w.update(ARTICLE, 'A2', { views: 2 })
  await app.contentApi.documents(ARTICLE).publish({ documentId: id.A2 })
  t.same(await w.related(ARTICLE, 'A1', 'related'), ['A2'], 'a self-relation target republished')
  await w.update(ARTICLE, 'A1', { category: id.C1 })
  await w.update(ARTICLE, 'A1', { title: 'A1 v2' })
  t.same(await w.related(CATEGORY, 'C1', 'articles'), ['A1 v2'], 'the inverse side follows the republished owner')
})

t.test('deleting a document removes its links', async (t) => {
  const w = await world(t)
  const { id, app } = w
  await w.update(ARTICLE, 'A1', { tags: [id.T1, id.T2], author: id.U1, reviewers: [id.U2], sidebar: id.S1, related: [id.A2] })
  await w.update(ARTICLE, 'A2', { tags: [id.T2], author: id.U1, related: [id.A1] })

  await app.contentApi.documents(TAG).delete({ documentId: id.T2 })
  t.same(await w.related(ARTICLE, 'A1', 'tags'), ['T1'], 'a deleted target leaves the list')
  t.same(await w.related(ARTICLE, 'A2', 'tags'), [])
  t.notOk((await tableRows(app, 'articles_tags_lnk')).some((r) => r.tag_id === null), 'no dangling link rows')
  t.equal(await countRows(app, 'articles_tags_lnk'), 2, 'A1\'s two versions to T1')

  await app.contentApi.documents(AUTHOR).delete({ documentId: id.U1 })
  t.equal(await w.related(ARTICLE, 'A1', 'author'), null, 'a deleted D&P target is gone from published reads')
  t.equal(await w.related(ARTICLE, 'A1', 'author', 'draft'), null, 'and from draft reads')
  t.equal(await countRows(app, 'articles_author_lnk'), 0)

  await app.contentApi.documents(SIDEBAR).delete({ documentId: id.S1 })
  t.equal(await w.related(ARTICLE, 'A1', 'sidebar'), null, 'an inverse-side document deleted')

  await app.contentApi.documents(ARTICLE).delete({ documentId: id.A1 })
  t.same(await w.related(ARTICLE, 'A2', 'related'), [], 'a deleted self-relation target')
  t.same(await w.related(TAG, 'T1', 'articles'), [], 'a deleted source is gone from the inverse side')
  for (const table of ['articles_tags_lnk', 'articles_reviewers_lnk', 'articles_sidebar_lnk', 'articles_related_lnk']) {
    t.equal(await countRows(app, table), 0, `${table}: the deleted source's links are gone`)
  }
})

t.test('{ documentId, locale } links one locale of a localized target', async (t) => {
  const w = await world(t)
  const { id, app } = w
  const labels = app.contentApi.documents(LABEL)
  const hello = await labels.create({ data: { text: 'hello' } })
  await labels.update({ documentId: hello.documentId, locale: 'fr', data: { text: 'bonjour' } })
  id.L1 = hello.documentId

  await w.update(ARTICLE, 'A1', { labels: [{ documentId: id.L1, locale: 'fr' }] })
  t.same(await w.related(ARTICLE, 'A1', 'labels'), ['bonjour'], 'the fr version')
  await w.update(ARTICLE, 'A1', { labels: { set: [{ documentId: id.L1, locale: 'en' }] } })
  t.same(await w.related(ARTICLE, 'A1', 'labels'), ['hello'], 'the en version')
  await w.update(ARTICLE, 'A1', { labels: [id.L1] })
  t.same(await w.related(ARTICLE, 'A1', 'labels'), ['hello'], 'without a locale: the default locale (the source is not localized)')

  const missing = await validationError(app.contentApi.documents(ARTICLE).update({ documentId: id.A1, data: { labels: [{ documentId: id.L1, locale: 'de' }] } }))
  t.match(missing.message, /locale "de"/, 'a locale the target does not have is a 400 naming it')
  t.match(missing.message, new RegExp(id.L1))
  const badLocale = await validationError(app.contentApi.documents(ARTICLE).update({ documentId: id.A1, data: { labels: [{ documentId: id.L1, locale: 3 }] } }))
  t.equal(badLocale.status, 400, 'a non-string locale')
  t.same(await w.related(ARTICLE, 'A1', 'labels'), ['hello'], 'nothing changed')
})

t.test('relation writes through REST', async (t) => {
  const w = await world(t)
  const { id, app } = w
  const post = await app.inject({
    method: 'POST',
    url: '/api/articles?populate[tags][fields][0]=name&populate[category][fields][0]=name&populate[author][fields][0]=name',
    payload: {
      data: {
        title: 'Via REST',
        category: { connect: [id.C1] },
        author: { documentId: id.U1 },
        tags: { connect: [{ documentId: id.T1 }, { documentId: id.T2, position: { start: true } }] }
      }
    }
  })
  t.equal(post.statusCode, 200)
  const created = post.json().data
  t.match(created, {
    title: 'Via REST',
    category: { documentId: id.C1, name: 'C1' },
    author: { documentId: id.U1, name: 'U1' },
    tags: [{ documentId: id.T2, name: 'T2' }, { documentId: id.T1, name: 'T1' }]
  }, 'the created document, populated as asked')
  t.same(Object.keys(created.category), ['id', 'documentId', 'name'])

  const put = await app.inject({
    method: 'PUT',
    url: `/api/articles/${created.documentId as string}?populate[tags][fields][0]=name&populate[tags][sort]=name:desc`,
    payload: { data: { tags: { set: [id.T1, id.T3, id.T4] } } }
  })
  t.equal(put.statusCode, 200)
  t.same(put.json().data.tags.map((tag: { name: string }) => tag.name), ['T4', 'T3', 'T1'], 'the response applies the populate sort')
  t.same(await w.related(TAG, 'T3', 'articles'), ['Via REST'])

  const inverse = await app.inject({
    method: 'PUT',
    url: `/api/categories/${id.C2}?populate[articles][fields][0]=title`,
    payload: { data: { articles: [created.documentId, id.A1] } }
  })
  t.equal(inverse.statusCode, 200)
  t.same(inverse.json().data.articles.map((a: { title: string }) => a.title), ['Via REST', 'A1'], 'written from the inverse side through REST')

  const conflict = await app.inject({ method: 'PUT', url: `/api/articles/${id.A1}`, payload: { data: { tags: { set: [id.T1], connect: [id.T2] } } } })
  t.equal(conflict.statusCode, 400)
  t.match(conflict.json().error, { name: 'ValidationError', details: { errors: [{ path: ['tags'] }] } })
})
