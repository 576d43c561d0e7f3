import t from 'tap'
import { LruCache } from '../../lib/lru-cache.js'
import { DocumentService, type CachedRead } from '../../lib/documents/service.js'
import { ChangeEvents } from '../../lib/documents/change-events.js'
import { Lifecycles } from '../../lib/documents/lifecycles.js'
import { DocumentMiddlewares } from '../../lib/documents/middlewares.js'
import { defineContentType } from '../../lib/index.js'
import { CursorCodec, parseQuery, parseQueryString } from '../../lib/query/index.js'
import { build } from '../helpers/build.js'

/**
 * One statement cache for every surface: the document service keys a compiled read by the shape
 * of its query tree (lib/query/tree-key.ts), not by the text it was parsed from. A tree parsed
 * from a REST query string and one built from objects (as GraphQL builds its trees from its
 * arguments) meet on one entry when they are the same query. The service is made here over the
 * app's database with a cache of its own, so the entries can be counted.
 */

const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
  options: { draftAndPublish: false },
  attributes: { title: { type: 'string' }, rank: { type: 'integer' } }
})

const { app } = await build(t, { models: [note] })
const { registry, db } = app.contentApi
const model = registry.get('api::note.note')!
const bounds = { populateDepth: 6, maxRows: 10000, queryLength: 16384, queryParameters: 1000, bodyBytes: 1048576, inputDepth: 64 }
const limits = { defaultLimit: 25, maxLimit: 100, withCount: true }
const i18n = { locales: ['en'], defaultLocale: 'en' }
const queries = new LruCache<string, CachedRead>(100)
const notes = new DocumentService(model, { db, reads: db, primaryReads: db, registry, limits, bounds, i18n, compile: { escapeLikeWildcards: false }, cursors: new CursorCodec('reader-test-secret'), queries, prepared: null, changes: new ChangeEvents(null, console), lifecycles: new Lifecycles([]), middlewares: new DocumentMiddlewares() })
for (const [title, rank] of [['a', 2], ['b', 1], ['a', 3]] as const) await notes.create({ data: { title, rank } })

t.test('the same query from two surfaces: one compiled statement', async (t) => {
  const fromQueryString = notes.queryTree(parseQueryString('?filters[title][$eq]=a&sort=rank:desc', bounds), { list: true })
  const fromObjects = parseQuery(model, { filters: { title: { $eq: 'a' } }, sort: ['rank:desc'] }, { registry, limits, i18n, allowAllLocales: true, bounds })
  t.not(fromQueryString, fromObjects, 'two tree objects')

  const first = await notes.findPageJson(fromQueryString)
  t.same(JSON.parse(first.json).map((n: { rank: number }) => n.rank), [3, 2])
  t.equal(first.total, 2)
  t.equal(queries.size, 1, 'compiled and cached')
  const second = await notes.findPageJson(fromObjects)
  t.same(second, first, 'the same answer')
  t.equal(queries.size, 1, 'from the same statement')

  await notes.findPageJson(fromObjects, { limits: true })
  t.equal(queries.size, 2, 'under limits.maxRows: another statement (it counts its rows)')
  await notes.findPageJson(parseQuery(model, { filters: { title: { $eq: 'b' } } }, { registry, limits, i18n, allowAllLocales: true }))
  t.equal(queries.size, 3, 'another filter value: another statement')

  const [b, a1, a2] = await notes.findMany({ sort: 'title:desc' })
  t.equal(await notes.findOneJson(b.documentId, fromObjects), null, 'one document, filtered out')
  t.equal(queries.size, 4, 'a one-document read: a statement of its own')
  t.equal(JSON.parse((await notes.findOneJson(a1.documentId, fromObjects))!).documentId, a1.documentId)
  t.equal(JSON.parse((await notes.findOneJson(a2.documentId, fromQueryString))!).documentId, a2.documentId)
  t.equal(queries.size, 4, 'the same statement for every document: the documentId is a parameter bound when it runs')
  const any = notes.queryTree({}, { list: false })
  t.equal(JSON.parse((await notes.findOneJson(b.documentId, any))!).title, 'b')
  t.equal(await notes.findOneJson('no-such-document', any), null, 'no such document')
  t.equal(queries.size, 5)
})

t.test('application-code reads run through the same reader, uncached', async (t) => {
  const before = queries.size
  t.same((await notes.findMany({ filters: { title: 'a' }, sort: 'rank' })).map((n) => n.rank), [2, 3])
  t.equal((await notes.findFirst({ sort: 'rank' }))?.title, 'b')
  t.equal(await notes.count({ filters: { title: 'a' } }), 2)
  t.equal(queries.size, before, 'their trees are the caller\'s: nothing kept')
})

t.test('cursor pages: one statement per sort and NULL pattern, the position bound when it runs', async (t) => {
  const page = (cursor: string) => notes.queryTree(parseQueryString(`?sort=rank&pagination[after]=${cursor}&pagination[pageSize]=1`, bounds), { list: true })
  const before = queries.size
  const first = await notes.findPageJson(page(''))
  t.equal(queries.size, before + 1, 'the first page')
  const second = await notes.findPageJson(page(first.links!.next!))
  t.equal(queries.size, before + 2, 'a page after a cursor')
  const third = await notes.findPageJson(page(second.links!.next!))
  t.equal(queries.size, before + 2, 'the next one: the same statement, another position')
  t.same([first, second, third].map((p) => JSON.parse(p.json)[0].rank), [1, 2, 3], 'each page its own rows')
  t.equal(third.links!.next, null, 'the end')
  t.throws(() => notes.queryTree(parseQueryString('?sort=title&pagination[after]=' + first.links!.next!, bounds), { list: true }), { name: 'ValidationError' }, 'another sort')
  await t.rejects(notes.findMany({ pagination: { after: '' } } as any), { name: 'ValidationError', message: 'Cursor pagination is not available for this read' }, 'not in findMany')
})
