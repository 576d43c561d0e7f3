import t from 'tap'
import { ValidationError } from '../../lib/errors.js'
import { createRegistry } from '../../lib/model/registry.js'
import { parseSort } from '../../lib/query/sort.js'
import { everything } from '../fixtures/models.js'

/** `sort` in every form Strapi v5 accepts, and its 400s (oracle cases sort-*). */

const model = createRegistry([everything]).get('api::everything.everything')!

/** Sort terms as `name:direction` strings, for compact assertions. */
const terms = (raw: unknown): string[] => parseSort(model, raw).map((term) => `${term.field.name}:${term.direction}`)

function rejection (raw: unknown): { status: number, name: string, message: string, details: unknown } {
  try {
    parseSort(model, raw)
  } catch (err) {
    if (err instanceof ValidationError) return err.toEnvelope().error
    throw err
  }
  throw new Error(`expected sort ${JSON.stringify(raw)} to be rejected`)
}

const invalidKey = (key: string, path: string | null) => ({
  status: 400, name: 'ValidationError', message: `Invalid key ${key}`, details: { key, path, source: 'query', param: 'sort' }
})
const invalidOrder = { status: 400, name: 'ValidationError', message: 'Invalid order. order can only be one of asc|desc|ASC|DESC', details: {} }

t.test('no sort', async (t) => {
  t.same(terms(undefined), [])
  t.same(terms(null), [])
  t.same(terms(''), [])
})

t.test('string forms', async (t) => {
  t.same(terms('title'), ['title:asc'], 'ascending by default (sort-title-asc)')
  t.same(terms('title:asc'), ['title:asc'])
  t.same(terms('title:desc'), ['title:desc'], 'sort-title-desc')
  t.same(terms('title:DESC'), ['title:desc'], 'the direction is case-insensitive (sort-title-DESC-upper)')
  t.same(terms('title:Asc'), ['title:asc'])
  t.same(terms('kind,title:desc'), ['kind:asc', 'title:desc'], 'comma list (sort-multi-comma)')
  t.same(terms('kind,,title:desc,'), ['kind:asc', 'title:desc'], 'empty segments are dropped')
  t.same(terms(' kind , title:desc '), ['kind:asc', 'title:desc'], 'segments are trimmed')
})

t.test('array forms', async (t) => {
  t.same(terms(['kind:asc', 'count:desc']), ['kind:asc', 'count:desc'], 'sort[0]=kind:asc&sort[1]=count:desc (sort-multi-array)')
  t.same(terms(['kind,title:desc', 'count']), ['kind:asc', 'title:desc', 'count:asc'], 'comma lists inside an array')
  t.same(terms([{ title: 'desc' }, { count: 'asc' }]), ['title:desc', 'count:asc'], 'array of objects: sort[0][title]=desc')
})

t.test('object forms', async (t) => {
  t.same(terms({ title: 'desc' }), ['title:desc'], 'sort[title]=desc (sort-object)')
  t.same(terms({ title: 'DESC', count: 'asc' }), ['title:desc', 'count:asc'], 'keys in order')
})

t.test('system fields sort', async (t) => {
  t.same(terms('id:desc'), ['id:desc'], 'sort-id-desc')
  t.same(terms('documentId'), ['documentId:asc'], 'sort-documentId')
  t.same(terms('createdAt:desc,updatedAt,publishedAt'), ['createdAt:desc', 'updatedAt:asc', 'publishedAt:asc'])
})

t.test('the sort term carries the registry field, never the client text', async (t) => {
  const [term] = parseSort(model, 'bodyMd:desc')
  t.equal(term.field.column, 'body_md')
  t.equal(term.field, model.fields.get('bodyMd'))
})

t.test('unknown, private and password fields are 400s', async (t) => {
  t.same(rejection('nope'), invalidKey('nope', null), 'unknown: path null (sort-unknown-field)')
  t.same(rejection('title,nope:desc'), invalidKey('nope', null))
  t.same(rejection(['title', 'nope']), invalidKey('nope', null))
  t.same(rejection({ nope: 'asc' }), invalidKey('nope', null))
  t.same(rejection([{ nope: 'asc' }]), invalidKey('nope', null))
  t.same(rejection('Title'), invalidKey('Title', null), 'names are case-sensitive')
  t.same(rejection('note:desc'), invalidKey('note', 'note'), 'private: the attribute is named (sort-private-field)')
  t.same(rejection({ note: 'desc' }), invalidKey('note', 'note'))
  t.same(rejection('secret'), invalidKey('secret', 'secret'), 'password')
})

t.test('directions and malformed terms', async (t) => {
  t.same(rejection('title:sideways'), invalidOrder, 'sort-invalid-direction')
  t.same(rejection('title:'), invalidOrder, 'an empty direction')
  t.same(rejection({ title: 'up' }), invalidOrder)
  t.same(rejection([{ title: 'descending' }]), invalidOrder)
  t.same(rejection(':desc'), { status: 400, name: 'ValidationError', message: 'Field cannot be empty', details: {} })
  const invalidSort = {
    status: 400,
    name: 'ValidationError',
    message: 'Invalid sort parameter. Expected a string, an array of strings, a sort object or an array of sort objects',
    details: {}
  }
  const deep = rejection({ title: { nested: 'asc' } })
  t.equal(deep.status, 400, 'a deep (relation) sort on a scalar')
  t.equal(deep.name, 'ValidationError')
  t.same(rejection([['title']]), invalidSort, 'nested arrays')
})
