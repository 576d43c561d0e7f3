import t from 'tap'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { defineComponent, defineContentType, ValidationError, type Document } from '../../lib/index.js'
import { build } from '../helpers/build.js'

/**
 * Strapi's rules on the attributes written beside the row: `min`/`max` item counts of repeatable
 * components and dynamic zones, and `required` on components, dynamic zones, relations and media.
 * Checked on create and on the keys an update sends, skipped by drafts, and checked again when a
 * draft is published. Every refused write is checked to have left the database as it was.
 */

const PAGE = 'api::page.page'
const PERSON = 'api::person.person'
const FILE = 'plugin::upload.file'

const quote = defineComponent({
  collectionName: 'components_shared_quotes',
  info: { displayName: 'Quote' },
  attributes: { text: { type: 'string' } }
})

/** A single component holding a bounded repeatable one, for paths below the root. */
const list = defineComponent({
  collectionName: 'components_shared_lists',
  info: { displayName: 'List' },
  attributes: { items: { type: 'component', component: 'shared.quote', repeatable: true, max: 2 } }
})

const page = defineContentType({
  kind: 'collectionType',
  collectionName: 'pages',
  info: { singularName: 'page', pluralName: 'pages', displayName: 'Page' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string' },
    quotes: { type: 'component', component: 'shared.quote', repeatable: true, min: 2, max: 3 },
    highlights: { type: 'component', component: 'shared.quote', repeatable: true, required: true, min: 1 },
    hero: { type: 'component', component: 'shared.quote', required: true },
    extra: { type: 'component', component: 'shared.list' },
    body: { type: 'dynamiczone', components: ['shared.quote'], required: true, max: 2 },
    author: { type: 'relation', relation: 'manyToOne', target: PERSON },
    editors: { type: 'relation', relation: 'manyToMany', target: PERSON, required: true },
    cover: { type: 'media', multiple: false, allowedTypes: ['images'], required: true }
  }
})

/** Without draft & publish: every write is checked in full. */
const person = defineContentType({
  kind: 'collectionType',
  collectionName: 'people',
  info: { singularName: 'person', pluralName: 'people', displayName: 'Person' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string' },
    mentor: { type: 'relation', relation: 'manyToOne', target: PERSON, required: true },
    tips: { type: 'dynamiczone', components: ['shared.quote'], min: 1, max: 2 }
  }
})

const options = { models: [page, person], components: { 'shared.quote': quote, 'shared.list': list } }

const TABLES = ['pages', 'people', 'components_shared_quotes', 'components_shared_lists', 'pages_cmps', 'people_cmps', 'components_shared_lists_cmps', 'files_related_mph']

interface Fixture {
  app: FastifyInstance
  editor: Document
  image: Document
  /** A page that passes every rule. */
  valid: () => Record<string, unknown>
}

async function setup (t: Parameters<typeof build>[0]): Promise<Fixture> {
  const { app } = await build(t, options)
  // People need a mentor: the first one is inserted directly, bypassing the rule.
  await sql`insert into people (document_id, name, created_at, updated_at, published_at)
    values ('aaaaaaaaaaaaaaaaaaaaaaaa', 'Root', now(), now(), now())`.execute(app.contentApi.db)
  const editor = await app.contentApi.documents(PERSON).create({ data: { name: 'Ed', mentor: 'aaaaaaaaaaaaaaaaaaaaaaaa', tips: [{ __component: 'shared.quote', text: 'tip' }] } })
  const image = await app.contentApi.documents(FILE).create({
    data: { name: 'a.png', hash: 'a_png', ext: '.png', mime: 'image/png', size: 1.5, url: '/uploads/a.png', provider: 'local' }
  })
  const valid = (): Record<string, unknown> => ({
    title: 'Page',
    highlights: [{ text: 'h' }],
    hero: { text: 'hero' },
    body: [{ __component: 'shared.quote', text: 'b' }],
    editors: [editor.documentId],
    cover: image.id
  })
  return { app, editor, image, valid }
}

async function counts (app: FastifyInstance): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const table of TABLES) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(app.contentApi.db)
    out[table] = rows[0].n
  }
  return out
}

async function validationError (promise: Promise<unknown>): Promise<ValidationError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof ValidationError) return err
    throw err
  }
  throw new Error('expected a ValidationError')
}

const quotes = (n: number): Array<{ text: string }> => Array.from({ length: n }, (_, i) => ({ text: `q${i}` }))
const zone = (n: number): Array<Record<string, unknown>> => quotes(n).map((q) => ({ __component: 'shared.quote', ...q }))

t.test('a complete page is accepted, within its bounds', async (t) => {
  const { app, valid } = await setup(t)
  const pages = app.contentApi.documents(PAGE)
  const doc = await pages.create({ data: { ...valid(), quotes: quotes(3), body: zone(2) }, populate: { quotes: true, body: true, editors: true, cover: true } })
  t.equal((doc.quotes as unknown[]).length, 3, 'max items accepted')
  t.equal((doc.body as unknown[]).length, 2)
  t.equal((doc.editors as unknown[]).length, 1)
  t.match(doc.cover, { name: 'a.png' })
  const empty = await pages.create({ data: { ...valid(), quotes: [] } })
  t.ok(empty.documentId, 'an empty list is not held to min when the attribute is not required')
})

t.test('min and max on repeatable components and dynamic zones', async (t) => {
  const { app, valid } = await setup(t)
  const pages = app.contentApi.documents(PAGE)
  const before = await counts(app)
  const cases: Array<[Record<string, unknown>, { path: string[], message: string, value: unknown }]> = [
    [{ quotes: quotes(1) }, { path: ['quotes'], message: 'quotes field must have at least 2 items', value: quotes(1) }],
    [{ quotes: quotes(4) }, { path: ['quotes'], message: 'quotes field must have less than or equal to 3 items', value: quotes(4) }],
    [{ highlights: [] }, { path: ['highlights'], message: 'highlights field must have at least 1 items', value: [] }],
    [{ body: zone(3) }, { path: ['body'], message: 'body field must have less than or equal to 2 items', value: zone(3) }],
    [{ extra: { items: quotes(3) } }, { path: ['extra', 'items'], message: 'extra.items field must have less than or equal to 2 items', value: quotes(3) }]
  ]
  for (const [data, error] of cases) {
    const err = await validationError(pages.create({ data: { ...valid(), ...data } }))
    t.equal(err.message, error.message)
    t.same(err.details, { errors: [{ ...error, name: 'ValidationError' }] }, error.message)
  }
  t.same(await counts(app), before, 'nothing written')
})

t.test('required components, dynamic zones, relations and media on create', async (t) => {
  const { app, valid, editor } = await setup(t)
  const pages = app.contentApi.documents(PAGE)
  const before = await counts(app)

  const err = await validationError(pages.create({ data: { title: 'Bare' } }))
  t.equal(err.message, '5 errors occurred')
  t.same(err.details, {
    errors: [
      { path: ['highlights'], message: 'highlights must be a `array` type, but the final value was: `null`.', name: 'ValidationError', value: null },
      { path: ['hero'], message: 'hero must be a `object` type, but the final value was: `null`.', name: 'ValidationError', value: null },
      { path: ['body'], message: 'body must be a `array` type, but the final value was: `null`.', name: 'ValidationError', value: null },
      { path: ['editors'], message: 'editors is a required field', name: 'ValidationError', value: null },
      { path: ['cover'], message: 'cover is a required field', name: 'ValidationError', value: null }
    ]
  }, 'every attribute left out, in model order')

  const nulls = await validationError(pages.create({ data: { ...valid(), highlights: null, hero: null, body: null, editors: null, cover: null } }))
  t.same(nulls.details, err.details, 'null answers as left out')

  const empties: Array<[string, unknown]> = [['editors', []], ['editors', { set: [] }], ['editors', { connect: [] }], ['cover', []]]
  for (const [name, value] of empties) {
    const empty = await validationError(pages.create({ data: { ...valid(), [name]: value } }))
    t.same(empty.details, { errors: [{ path: [name], message: `${name} is a required field`, name: 'ValidationError', value }] }, `${name}: ${JSON.stringify(value)}`)
  }
  t.same(await counts(app), before, 'nothing written')

  const connected = await pages.create({ data: { ...valid(), editors: { connect: [editor.documentId] } }, populate: { editors: true } })
  t.equal((connected.editors as unknown[]).length, 1, 'a connect naming a document satisfies required')
})

t.test('updates check only the keys they send', async (t) => {
  const { app, valid, editor } = await setup(t)
  const pages = app.contentApi.documents(PAGE)
  const doc = await pages.create({ data: { ...valid(), quotes: quotes(2) } })
  const before = await counts(app)

  const err = await validationError(pages.update({ documentId: doc.documentId, data: { hero: null, editors: [], quotes: quotes(1) } }))
  t.same(err.details, {
    errors: [
      { path: ['quotes'], message: 'quotes field must have at least 2 items', name: 'ValidationError', value: quotes(1) },
      { path: ['hero'], message: 'hero must be a `object` type, but the final value was: `null`.', name: 'ValidationError', value: null },
      { path: ['editors'], message: 'editors is a required field', name: 'ValidationError', value: [] }
    ]
  })
  t.same(await counts(app), before, 'nothing written')

  const updated = await pages.update({ documentId: doc.documentId, data: { title: 'Renamed', quotes: [] }, populate: { quotes: true, editors: true } })
  t.equal(updated?.title, 'Renamed', 'a write leaving the required attributes out is accepted')
  t.same(updated?.quotes, [], 'and may empty a list whose min applies only to non-empty lists')
  t.match(updated?.editors, [{ documentId: editor.documentId }], 'attributes left out are kept')
})

t.test('drafts skip required and min/max; publishing checks them', async (t) => {
  const { app, valid } = await setup(t)
  const pages = app.contentApi.documents(PAGE)
  const draft = await pages.create({ data: { title: 'Draft', quotes: quotes(1), body: zone(3) }, status: 'draft' })
  t.ok(draft.documentId, 'an incomplete draft is written')
  const before = await counts(app)

  const err = await validationError(pages.publish({ documentId: draft.documentId }))
  t.equal(err.message, '6 errors occurred')
  t.match(err.details, {
    errors: [
      { path: ['quotes'], message: 'quotes field must have at least 2 items', value: [{ id: Number, text: 'q0' }] },
      { path: ['highlights'], message: 'highlights field must have at least 1 items', value: [] },
      { path: ['hero'], message: 'hero must be a `object` type, but the final value was: `null`.', value: null },
      { path: ['body'], message: 'body field must have less than or equal to 2 items' },
      { path: ['editors'], message: 'editors is a required field', value: [] },
      { path: ['cover'], message: 'cover is a required field', value: null }
    ]
  }, 'the draft as stored, validated as a creation')
  t.same(await counts(app), before, 'nothing published')
  t.equal(await pages.findOne({ documentId: draft.documentId, status: 'published' }), null)

  const published = await validationError(pages.update({ documentId: draft.documentId, data: { title: 'Still incomplete' } }))
  t.equal(published.message, '6 errors occurred', 'a published write of an incomplete draft is refused')
  t.equal((await pages.findOne({ documentId: draft.documentId, status: 'draft' }))?.title, 'Draft', 'and rolled back')

  await pages.update({ documentId: draft.documentId, data: { ...valid(), quotes: quotes(2), body: zone(1) }, status: 'draft' })
  const done = await pages.publish({ documentId: draft.documentId })
  t.equal(done.entries.length, 1, 'a complete draft publishes')
})

t.test('a published write checks relations as the draft stores them', async (t) => {
  const { app, valid, editor } = await setup(t)
  const pages = app.contentApi.documents(PAGE)
  const doc = await pages.create({ data: valid() })
  const before = await counts(app)
  const err = await validationError(pages.update({ documentId: doc.documentId, data: { editors: { disconnect: [editor.documentId] } } }))
  t.same(err.details, { errors: [{ path: ['editors'], message: 'editors is a required field', name: 'ValidationError', value: [] }] },
    'a disconnect emptying a required relation fails at publication')
  t.same(await counts(app), before, 'nothing written')
  const draft = await pages.findOne({ documentId: doc.documentId, status: 'draft', populate: { editors: true } })
  t.match(draft?.editors, [{ documentId: editor.documentId }], 'the draft keeps its editor')

  await pages.update({ documentId: doc.documentId, data: { editors: { disconnect: [editor.documentId] } }, status: 'draft' })
  const emptied = await pages.findOne({ documentId: doc.documentId, status: 'draft', populate: { editors: true } })
  t.same(emptied?.editors, [], 'a draft may empty it')
})

t.test('over REST: Strapi\'s envelope, and status=draft', async (t) => {
  const { app, valid } = await setup(t)
  const before = await counts(app)
  const res = await app.inject({ method: 'POST', url: '/api/pages', payload: { data: { ...valid(), hero: undefined, body: zone(3) } } })
  t.equal(res.statusCode, 400)
  t.same(res.json(), {
    data: null,
    error: {
      status: 400,
      name: 'ValidationError',
      message: '2 errors occurred',
      details: {
        errors: [
          { path: ['hero'], message: 'hero must be a `object` type, but the final value was: `null`.', name: 'ValidationError', value: null },
          { path: ['body'], message: 'body field must have less than or equal to 2 items', name: 'ValidationError', value: zone(3) }
        ]
      }
    }
  })
  t.same(await counts(app), before, 'nothing written')

  const draft = await app.inject({ method: 'POST', url: '/api/pages?status=draft', payload: { data: { title: 'Draft', body: zone(3) } } })
  t.equal(draft.statusCode, 200, 'a draft may break every rule')
  const { documentId } = (draft.json() as { data: Document }).data
  const stored = await app.contentApi.documents(PAGE).findOne({ documentId, status: 'draft', populate: { body: true } })
  t.equal((stored?.body as unknown[]).length, 3, 'with its items as sent')
})

t.test('types without draft & publish check every write', async (t) => {
  const { app, editor } = await setup(t)
  const people = app.contentApi.documents(PERSON)
  const before = await counts(app)
  const err = await validationError(people.create({ data: { name: 'Nobody', tips: [] } }))
  t.same(err.details, { errors: [{ path: ['mentor'], message: 'mentor is a required field', name: 'ValidationError', value: null }] },
    'min does not apply to an empty list of an attribute that is not required')
  const bounds = await validationError(people.update({ documentId: editor.documentId, data: { mentor: null, tips: zone(3) } }))
  t.same(bounds.details, {
    errors: [
      { path: ['mentor'], message: 'mentor is a required field', name: 'ValidationError', value: null },
      { path: ['tips'], message: 'tips field must have less than or equal to 2 items', name: 'ValidationError', value: zone(3) }
    ]
  })
  const draft = await validationError(people.create({ data: { name: 'Nobody' }, status: 'draft' }))
  t.same(draft.details, err.details, 'status=draft changes nothing on a type without draft & publish')
  t.same(await counts(app), before, 'nothing written')
})
