import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { defineContentType } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { seededRandom, type Random } from '../helpers/random.js'

/**
 * Cursor pagination (`pagination[after]` / `pagination[before]`), property-tested against offset
 * pagination: for random sorts over nullable columns full of ties (and a relation's field), the
 * rows a walk visits page by page, forwards or backwards, are the rows of one offset read, each
 * once, in its order. Then under inserts between the pages, then its refusals.
 */

const GROUP = 'api::group.group'
const ITEM = 'api::item.item'

const group = defineContentType({
  kind: 'collectionType',
  collectionName: 'groups',
  info: { singularName: 'group', pluralName: 'groups', displayName: 'Group' },
  options: { draftAndPublish: false },
  attributes: { label: { type: 'string' } }
})

const item = defineContentType({
  kind: 'collectionType',
  collectionName: 'items',
  info: { singularName: 'item', pluralName: 'items', displayName: 'Item' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: {
    name: { type: 'string' },
    score: { type: 'integer' },
    price: { type: 'decimal' },
    big: { type: 'biginteger' },
    day: { type: 'date' },
    at: { type: 'datetime' },
    flag: { type: 'boolean' },
    group: { type: 'relation', relation: 'manyToOne', target: GROUP }
  }
})

const SEED = Number(process.env.CURSOR_PROPERTY_SEED ?? 0xc0de)
const ROWS = 70
const SORTABLE = ['name', 'score', 'price', 'big', 'day', 'at', 'flag', 'group.label'] as const

/** Few distinct values and many NULLs: ties and NULLs on every key. */
function itemData (random: Random, groups: string[]): Record<string, unknown> {
  const maybe = <T>(value: () => T): T | null => random.chance(0.25) ? null : value()
  return {
    name: maybe(() => random.pick(['alpha', 'beta', 'Gamma', 'delta', ''])),
    score: maybe(() => Math.floor(random.next() * 5) - 2),
    price: maybe(() => random.pick([0.1, 0.2, 0.3, 1e-7, 12345678.125])),
    big: maybe(() => random.pick(['9007199254740993', '9007199254740995', '-1'])),
    day: maybe(() => random.pick(['2024-01-01', '2024-02-29', '1999-12-31'])),
    at: maybe(() => random.pick(['2024-01-01T00:00:00.123Z', '2024-01-01T00:00:00.124Z', '2030-06-01T12:00:00.000Z'])),
    flag: maybe(() => random.chance(0.5)),
    group: random.chance(0.3) ? null : random.pick(groups)
  }
}

async function setup (t: Parameters<typeof build>[0]): Promise<{ app: FastifyInstance, groups: string[], random: Random }> {
  const { app } = await build(t, { models: [group, item], i18n: { locales: ['en', 'fr'], defaultLocale: 'en' } })
  const random = seededRandom(SEED)
  const groups: string[] = []
  for (const label of ['g1', 'g2', null, 'g1']) groups.push((await app.contentApi.documents(GROUP).create({ data: { label } })).documentId)
  const items = app.contentApi.documents(ITEM)
  for (let i = 0; i < ROWS; i++) {
    const status = random.chance(0.2) ? 'draft' : 'published'
    await items.create({ data: itemData(random, groups), status, locale: random.chance(0.15) ? 'fr' : 'en' })
  }
  return { app, groups, random }
}

interface Page { data: Array<{ id: number }>, meta: { pagination: { pageSize: number, next: string | null, previous: string | null, total?: number } } }

async function get (app: FastifyInstance, url: string): Promise<Page> {
  const res = await app.inject(url)
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

function randomSort (random: Random): string {
  const keys = [...SORTABLE].sort(() => random.next() - 0.5).slice(0, 1 + Math.floor(random.next() * 3))
  return keys.map((k) => `${k}:${random.pick(['asc', 'desc'])}`).join(',')
}

/** Every row of a query in one offset read: the order a walk must reproduce. */
async function offsetIds (app: FastifyInstance, query: string): Promise<number[]> {
  const page = await get(app, `/api/items?${query}&pagination[start]=0&pagination[limit]=1000&fields[0]=id`)
  return page.data.map((d) => d.id)
}

/** Follows `next` from the first page (`after=`), or `previous` from the last (`before=`), in reading order. */
async function walk (app: FastifyInstance, query: string, size: number, backwards: boolean, between?: () => Promise<void>): Promise<number[]> {
  const pages: number[][] = []
  let cursor = ''
  for (let n = 0; n < 1000; n++) {
    const page = await get(app, `/api/items?${query}&pagination[${backwards ? 'before' : 'after'}]=${cursor}&pagination[pageSize]=${size}&fields[0]=id`)
    pages.push(page.data.map((d) => d.id))
    const following = backwards ? page.meta.pagination.previous : page.meta.pagination.next
    if (following === null) break
    cursor = following
    await between?.()
  }
  return (backwards ? pages.reverse() : pages).flat()
}

t.test('a walk gives every row once, in the offset order, for random sorts, both ways', async (t) => {
  const { app, random } = await setup(t)
  const scopes = ['', 'status=draft', 'locale=fr', 'locale=*', 'filters[score][$gte]=0', 'filters[$or][0][name][$null]=true&filters[$or][1][flag][$eq]=true']
  for (let round = 0; round < 16; round++) {
    const sort = randomSort(random)
    const query = [`sort=${sort}`, random.pick(scopes)].filter((p) => p !== '').join('&')
    const size = random.pick([1, 3, 7, 25])
    const expected = await offsetIds(app, query)
    t.same(await walk(app, query, size, false), expected, `forwards ${query} pageSize=${size}`)
    t.same(await walk(app, query, size, true), expected, `backwards ${query} pageSize=${size}`)
  }
  // No sort: the id alone.
  t.same(await walk(app, '', 4, false), await offsetIds(app, ''), 'no sort: by id')
})

t.test('rows inserted during a walk never make it repeat or skip a row that was there', async (t) => {
  const { app, groups, random } = await setup(t)
  const items = app.contentApi.documents(ITEM)
  for (let round = 0; round < 4; round++) {
    const query = `sort=${randomSort(random)}`
    const insert = async (): Promise<void> => { await items.create({ data: itemData(random, groups) }) }
    for (const backwards of [false, true]) {
      const before = await offsetIds(app, query)
      const seen = await walk(app, query, random.pick([6, 9]), backwards, insert)
      t.equal(new Set(seen).size, seen.length, `no row twice: ${query}`)
      const existing = new Set(before)
      t.same(seen.filter((id) => existing.has(id)), before, `every earlier row once, in order: ${query} ${backwards ? 'backwards' : 'forwards'}`)
    }
  }
})

t.test('the page answer: cursors, ends, the total only when asked', async (t) => {
  const { app } = await setup(t)
  const first = await get(app, '/api/items?sort=name&pagination[after]=&pagination[pageSize]=5')
  t.same(Object.keys(first.meta.pagination), ['pageSize', 'next', 'previous'], 'no total by default')
  t.equal(first.meta.pagination.pageSize, 5)
  t.equal(first.meta.pagination.previous, null, 'nothing before the first page')
  t.match(first.meta.pagination.next, /^[A-Za-z0-9_-]+$/, 'an opaque base64url cursor')
  const counted = await get(app, '/api/items?sort=name&pagination[after]=&pagination[pageSize]=5&pagination[withCount]=true')
  const all = await offsetIds(app, 'sort=name')
  t.equal(counted.meta.pagination.total, all.length, 'withCount=true adds the total')
  const limitForm = await get(app, '/api/items?sort=name&pagination[after]=&pagination[limit]=5')
  t.same(limitForm.data, first.data, 'limit is pageSize')
  const second = await get(app, `/api/items?sort=name&pagination[after]=${first.meta.pagination.next!}&pagination[pageSize]=5`)
  t.not(second.meta.pagination.previous, null, 'a page after the first has a previous one')
  const back = await get(app, `/api/items?sort=name&pagination[before]=${second.meta.pagination.previous!}&pagination[pageSize]=5`)
  t.same(back.data, first.data, 'previous leads back to the first page')
  t.equal(back.meta.pagination.previous, null, 'which knows it is first')
  const last = await get(app, '/api/items?sort=name&pagination[before]=&pagination[pageSize]=5')
  t.equal(last.meta.pagination.next, null, 'nothing after the last page')
  t.same(last.data.map((d) => d.id), all.slice(-5), 'before= is the last page')
  const all1 = await get(app, '/api/items?sort=name&pagination[after]=&pagination[pageSize]=100')
  t.same([all1.meta.pagination.next, all1.meta.pagination.previous], [null, null], 'one page holds everything: no cursors')
  const populated = await get(app, '/api/items?sort=name&pagination[after]=&pagination[pageSize]=5&populate=group')
  t.same(populated.data.map((d) => d.id), first.data.map((d) => d.id), 'with populate (and its row budget)')
  t.same(populated.meta.pagination, first.meta.pagination, 'the same cursors')
  const offset = await app.inject('/api/items?pagination[page]=1&pagination[pageSize]=5')
  t.same(Object.keys(offset.json().meta.pagination), ['page', 'pageSize', 'pageCount', 'total'], 'page mode unchanged')
})

t.test('refused cursors: 400 in Strapi\'s envelope', async (t) => {
  const { app } = await setup(t)
  const first = await get(app, '/api/items?sort=name&pagination[after]=&pagination[pageSize]=2')
  const cursor = first.meta.pagination.next!
  const bytes = Buffer.from(cursor, 'base64url')
  const tampered = Buffer.from(bytes)
  tampered[tampered.length - 3] ^= 1
  // A cursor whose payload is rewritten with a made-up MAC.
  const forged = Buffer.concat([Buffer.alloc(16), Buffer.from(JSON.stringify(['x', ['alpha'], 1]))]).toString('base64url')
  const cases: Array<[string, string, string]> = [
    ['garbage', 'pagination[after]=not%20a%20cursor', 'ValidationError'],
    ['truncated', `pagination[after]=${cursor.slice(0, 10)}`, 'ValidationError'],
    ['one byte changed', `pagination[after]=${tampered.toString('base64url')}`, 'ValidationError'],
    ['forged', `pagination[after]=${forged}`, 'ValidationError'],
    ['another sort', `sort=name:desc&pagination[after]=${cursor}`, 'ValidationError'],
    ['not a string', 'pagination[after][x]=1', 'ValidationError'],
    ['after and before', 'pagination[after]=&pagination[before]=', 'PaginationError'],
    ['with page', 'pagination[after]=&pagination[page]=2', 'PaginationError'],
    ['with start', 'pagination[before]=&pagination[start]=2', 'PaginationError'],
    ['fractional size (a size that is not a number is maxLimit, as in page mode)', 'pagination[after]=&pagination[pageSize]=2.5', 'ValidationError']
  ]
  for (const [name, query, error] of cases) {
    const res = await app.inject(`/api/items?${query.startsWith('sort=') ? query : `sort=name&${query}`}`)
    t.equal(res.statusCode, 400, name)
    t.equal(res.json().error?.name, error, name)
    t.equal(res.json().data, null, name)
    t.notMatch(res.body, /select|where/i, `${name}: no SQL`)
  }
  const ok = await app.inject(`/api/items?sort=name&pagination[after]=${cursor}&filters[score][$gt]=0&pagination[pageSize]=2`)
  t.equal(ok.statusCode, 200, 'a cursor goes with other filters: it names a position in the sort')
})
