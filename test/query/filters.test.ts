import t from 'tap'
import { ValidationError } from '../../lib/errors.js'
import { createRegistry } from '../../lib/model/registry.js'
import { filtersLocale, parseFilters, type FilterNode } from '../../lib/query/filters.js'
import { parseQueryString } from '../../lib/query/querystring.js'
import { everything } from '../fixtures/models.js'
import { article } from '../fixtures/articles.js'

/**
 * `filters`: validation into a `FilterNode` (every mistake a 400 with Strapi's message and
 * details) and the casting of values to their field's type (oracle cases filter-*).
 */

const registry = createRegistry([everything, article])
const model = registry.get('api::everything.everything')!
const articles = registry.get('api::article.article')!

type Compare = Extract<FilterNode, { kind: 'compare' }>

/** A filter node with fields as names, for compact assertions. */
function shape (node: FilterNode | null): unknown {
  if (node === null) return null
  switch (node.kind) {
    case 'and':
    case 'or': return { [node.kind]: node.children.map(shape) }
    case 'not': return { not: shape(node.child) }
    case 'compare': return [node.field.name, node.operator, node.value]
    default: return node.kind
  }
}

const parsed = (raw: unknown): unknown => shape(parseFilters(model, raw))
/** The value of a single comparison, after casting. */
const value = (raw: unknown): unknown => (parseFilters(model, raw) as Compare).value
/** The cast value, or the error thrown, as text. */
function attempt (raw: unknown): unknown {
  try {
    return value(raw)
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`
  }
}
/** Filters as a client writes them in a query string. */
const fromQuery = (search: string): unknown => parseQueryString(`/api/everythings?${search}`, { queryLength: 16384, queryParameters: 1000 }).filters

function rejection (raw: unknown): { status: number, name: string, message: string, details: unknown } {
  try {
    parseFilters(model, raw)
  } catch (err) {
    if (err instanceof ValidationError) return err.toEnvelope().error
    throw err
  }
  throw new Error(`expected filters ${JSON.stringify(raw)} to be rejected`)
}

const invalidKey = (key: string, path: string | null, at = '') => ({
  status: 400, name: 'ValidationError', message: `Invalid key ${key}${at}`, details: { key, path, source: 'query', param: 'filters' }
})

t.test('no filters', async (t) => {
  t.equal(parseFilters(model, undefined), null)
  t.equal(parseFilters(model, null), null)
  t.equal(parseFilters(model, {}), null)
  t.equal(parseFilters(model, []), null)
  t.equal(parsed({ id: {} }), null, 'an empty object filters nothing: filters[id]={}')
  t.equal(parsed({ $and: [] }), null)
  t.equal(parsed({ $or: [{}] }), null)
  t.equal(parsed({ $not: {} }), null)
})

t.test('structure: implicit $eq and $in, implicit AND, $and, $or, $not', async (t) => {
  t.same(parsed(fromQuery('filters[title]=Hello')), ['title', '$eq', 'Hello'], 'filter-eq-implicit')
  t.same(parsed(fromQuery('filters[count][0]=42&filters[count][1]=43')), ['count', '$in', [42, 43]], 'an array value is $in')
  t.same(parsed(fromQuery('filters[title][$eq]=a&filters[count][$gt]=1')), { and: [['title', '$eq', 'a'], ['count', '$gt', 1]] }, 'fields are AND-ed')
  t.same(parsed(fromQuery('filters[count][$gte]=1&filters[count][$lte]=5')), { and: [['count', '$gte', 1], ['count', '$lte', 5]] }, 'operators on one field are AND-ed (filter-multi-op-same-field)')
  t.same(parsed(fromQuery('filters[$and][0][kind][$eq]=news&filters[$and][1][flag][$eq]=true')),
    { and: [['kind', '$eq', 'news'], ['flag', '$eq', true]] }, 'filter-and')
  t.same(parsed(fromQuery('filters[$or][0][count][$lt]=30&filters[$or][1][title][$startsWith]=Wild')),
    { or: [['count', '$lt', 30], ['title', '$startsWith', 'Wild']] }, 'filter-or')
  t.same(parsed(fromQuery('filters[$not][kind][$eq]=news')), { not: ['kind', '$eq', 'news'] }, 'filter-not')
  t.same(parsed(fromQuery('filters[$not][$or][0][kind][$eq]=news&filters[$not][$or][1][kind][$eq]=opinion')),
    { not: { or: [['kind', '$eq', 'news'], ['kind', '$eq', 'opinion']] } }, 'filter-not-nested-or')
  t.same(parsed(fromQuery('filters[$and][0][$or][0][count][$gt]=300&filters[$and][0][$or][1][count][$lt]=50&filters[$and][1][flag]=true')),
    { and: [{ or: [['count', '$gt', 300], ['count', '$lt', 50]] }, ['flag', '$eq', true]] }, 'filter-nested-and-or')
  t.same(parsed(fromQuery('filters[count][$not][$gt]=100')), { not: ['count', '$gt', 100] }, 'field-level $not (filter-field-not)')
  t.same(parsed({ count: { $not: 5 } }), { not: ['count', '$eq', 5] }, 'field-level $not with a bare value')
  t.same(parsed(fromQuery('filters[0][title]=a&filters[1][count]=2')), { and: [['title', '$eq', 'a'], ['count', '$eq', 2]] }, 'a root array is an AND')
  t.same(parsed({ $or: [[{ title: 'a' }, { count: 1 }], { count: 2 }] }),
    { or: [{ and: [['title', '$eq', 'a'], ['count', '$eq', 1]] }, ['count', '$eq', 2]] }, 'an array inside $or is an AND group')
  t.same(parsed({ title: { $containsi: ['a', 'b'] } }), { or: [['title', '$containsi', 'a'], ['title', '$containsi', 'b']] }, 'an array for a non-array operator is an OR')
  // An OR of nothing: Strapi's query builder drops the empty group, so the condition is gone (it was `()` in the SQL: a 500).
  t.same(parsed({ title: { $eq: [] } }), null, 'an empty array for a non-array operator is no condition')
  t.same(parsed({ title: { $ne: [], $containsi: [[]] }, count: { $gt: 1 } }), ['count', '$gt', 1], 'beside other conditions, and nested')
  t.same(parsed({ count: { $not: [] } }), null, 'field-level $not with an empty array')
  t.same(parsed({ count: { $not: [[], 5] } }), { not: ['count', '$eq', 5] }, 'field-level $not keeps its other elements')
  t.same(parsed(fromQuery('filters[kind][$in]=opinion')), ['kind', '$in', ['opinion']], 'a single $in value is a list (filter-in-single-string)')
  t.same(parsed(fromQuery('filters[kind][$in]=')), ['kind', '$in', ['']], "filters[kind][$in]= is IN ('') (filter-in-empty)")
  t.same(parsed({ id: { $in: [] } }), ['id', '$in', []])
  t.same(parsed({ id: { $in: { 0: '2', 150: '8' } } }), ['id', '$in', [2, 8]], 'an indexed object is a list')
  t.same(parsed(fromQuery('filters[documentId][$eq]=abc')), ['documentId', '$eq', 'abc'], 'system fields filter (filter-documentId-eq)')
  t.same(parsed(fromQuery('filters[createdAt][$notNull]=true')), ['createdAt', '$notNull', true], 'filter-createdAt-notNull')
})

t.test('compare nodes carry the registry field', async (t) => {
  const node = parseFilters(model, { bodyMd: { $contains: 'x' } }) as Compare
  t.equal(node.field, model.fields.get('bodyMd'))
  t.equal(node.field.column, 'body_md')
})

t.test('unknown fields and operators', async (t) => {
  t.same(rejection(fromQuery('filters[nope][$eq]=x')), invalidKey('nope', null), 'unknown field: path null (filter-unknown-field)')
  t.same(rejection(fromQuery('filters[$or][0][nope][$eq]=1')), invalidKey('nope', null), 'inside $or (filter-or-invalid-key)')
  t.same(rejection({ $not: { $and: [{ nope: 1 }] } }), invalidKey('nope', null), 'inside $not and $and')
  t.same(rejection({ Title: 'x' }), invalidKey('Title', null), 'field names are case-sensitive')
  t.same(rejection(fromQuery('filters[title][$foo]=x')), invalidKey('$foo', 'title', ' at title'), 'unknown operator (filter-invalid-operator)')
  t.same(rejection(fromQuery('filters[title][$STARTSWITH]=x')), invalidKey('$STARTSWITH', 'title', ' at title'), 'operators are case-sensitive')
  t.same(rejection({ title: { $startswith: 'x' } }), invalidKey('$startswith', 'title', ' at title'))
  t.same(rejection({ title: { $not: { $foo: 1 } } }), invalidKey('$foo', 'title', ' at title'), 'inside a field-level $not')
  t.same(rejection({ title: { eq: 'x' } }), invalidKey('eq', 'title', ' at title'), 'an operator without $')
  t.same(rejection({ $foo: { title: 'x' } }), invalidKey('$foo', null), 'unknown root operator')
  t.same(rejection({ $eq: 'x' }), invalidKey('$eq', null), 'a comparison operator at the root')
})

t.test('private and password fields', async (t) => {
  t.same(rejection(fromQuery('filters[note][$eq]=private')), invalidKey('note', 'note'), 'private: the attribute is named (filter-private-field-direct)')
  t.same(rejection({ $or: [{ note: { $null: true } }] }), invalidKey('note', 'note'))
  t.same(rejection({ secret: { $eq: 'x' } }), invalidKey('secret', 'secret'), 'password')
  t.same(rejection({ secret: { $null: true } }), invalidKey('secret', 'secret'), 'even a NULL test would leak whether it is set')
})

t.test('filters that are not an object', async (t) => {
  const message = { status: 400, name: 'ValidationError', message: 'The filters parameter must be an object or an array', details: {} }
  t.same(rejection(fromQuery('filters=')), message, 'filters= (filter-empty-filters)')
  t.same(rejection('title'), message)
  t.same(rejection(['title']), message, 'an array of strings')
  t.same(rejection({ $not: 'x' }), message, '$not given a value')
})

t.test('$and and $or must be arrays: 400 where Strapi answers 500', async (t) => {
  const and = rejection(fromQuery('filters[$and][kind][$eq]=news'))
  t.equal(and.status, 400, 'filter-$and-object-form')
  t.equal(and.name, 'ValidationError')
  t.equal(and.message, 'Operator $and must be an array')
  const or = rejection({ $or: 'x' })
  t.equal(or.status, 400)
  t.equal(or.message, 'Operator $or must be an array')
})

t.test('operator values of the wrong shape', async (t) => {
  const between = rejection(fromQuery('filters[count][$between][0]=1'))
  t.equal(between.status, 400, '$between with one value')
  t.equal(between.name, 'ValidationError')
  t.equal(between.message, '$between on count expects two values')
  t.equal(rejection({ count: { $between: [1, 2, 3] } }).status, 400, '$between with three values')
  t.equal(rejection({ count: { $between: '1' } }).status, 400, '$between with a single string')
  const object = rejection({ count: { $eq: { a: 1 } } })
  t.equal(object.status, 400, 'an object where a value belongs')
  t.equal(object.message, 'Invalid value for $eq on count')
})

t.test('values that cannot be cast are 400s (Strapi answers 500)', async (t) => {
  const abc = rejection(fromQuery('filters[count][$eq]=abc'))
  t.same(abc, {
    status: 400,
    name: 'ValidationError',
    message: 'Invalid value "abc" for count: expected a number',
    details: { key: 'count', path: 'count', source: 'query', param: 'filters' }
  }, 'filter-eq-number-abc')
  for (const [raw, why] of [
    [{ ratio: { $gt: 'x' } }, 'float'],
    [{ price: { $lt: '1,5' } }, 'decimal with a comma'],
    [{ count: { $in: ['1', 'two'] } }, 'one bad element of $in'],
    [{ count: { $between: ['1', 'z'] } }, 'one bad bound'],
    [{ count: 'Infinity' }, 'not finite'],
    [{ big: '1.5' }, 'biginteger with a fraction'],
    [{ big: '12345678901234567890' }, 'biginteger over 19 digits'],
    [{ big: 'abc' }, 'biginteger text'],
    [{ day: 'yesterday' }, 'date'],
    [{ day: '2024-13-45' }, 'date out of range'],
    [{ at: 'abc' }, 'datetime'],
    [{ at: '12/31/2024' }, 'datetime not in ISO 8601'],
    [{ clock: '25:00' }, 'time out of range'],
    [{ clock: 'noon' }, 'time']
  ] as Array<[unknown, string]>) {
    const error = rejection(raw)
    t.equal(error.status, 400, why)
    t.equal(error.name, 'ValidationError', why)
  }
})

t.test('dates and times that cannot be cast: the 400 of Strapi\'s database fields, without details', async (t) => {
  const plain = (message: string) => ({ status: 400, name: 'ValidationError', message, details: {} })
  for (const day of ['yesterday', '2024-13-45', '24-01-01', '', '01/02/2024']) {
    t.same(rejection({ day }), plain('Invalid format, expected yyyy-MM-dd'), JSON.stringify(day))
  }
  for (const day of ['2024-02-30', '2023-02-29', '2024-04-31']) t.same(rejection({ day: { $gt: day } }), plain('Invalid date'), `${day}: not a day`)
  t.equal(value({ day: '2024-02-29' }), '2024-02-29', 'a leap day is one')
  for (const at of ['abc', '12/31/2024', '2024-13-01T00:00:00Z']) {
    t.same(rejection({ at }), plain('Invalid format, expected a timestamp or an ISO date'), at)
    t.same(rejection({ stamp: { $lt: at } }), plain('Invalid format, expected a timestamp or an ISO date'), `timestamp ${at}`)
  }
  for (const clock of ['25:00', 'noon', '9:30']) t.same(rejection({ clock }), plain('Invalid time format, expected HH:mm:ss.SSS'), clock)
  t.same(rejection({ day: { $in: ['2024-01-01', 'soon'] } }), plain('Invalid format, expected yyyy-MM-dd'), 'one bad element of $in')
})

t.test('filters Strapi cannot run (a 500 there) are 400s with a clear message, never a silent answer', async (t) => {
  const refusal = (message: string, key: string, path: string) => ({ status: 400, name: 'ValidationError', message, details: { key, path, source: 'query', param: 'filters' } })
  // PostgreSQL has no LIKE for numbers, booleans, dates or jsonb: Strapi's `column LIKE ?` fails.
  for (const [name, type] of [['count', 'integer'], ['big', 'biginteger'], ['ratio', 'float'], ['price', 'decimal'], ['flag', 'boolean'],
    ['day', 'date'], ['clock', 'time'], ['at', 'datetime'], ['stamp', 'timestamp'], ['meta', 'json'], ['body', 'blocks'], ['id', 'integer'], ['createdAt', 'datetime']]) {
    for (const operator of ['$contains', '$notContains', '$startsWith', '$endsWith']) {
      t.same(rejection({ [name]: { [operator]: '1' } }),
        refusal(`${operator} cannot be used on ${name}, a ${type} attribute: it applies to text (use ${operator}i to match the value's text)`, operator, name), `${operator} on ${type}`)
      t.equal(attempt({ [name]: { [`${operator}i`]: '1' } }), '1', `${operator}i compares the text of ${type} (Strapi casts it to varchar)`)
    }
  }
  for (const name of ['title', 'slug', 'summary', 'bodyMd', 'email', 'kind', 'code', 'documentId']) {
    t.equal(attempt({ [name]: { $contains: 'x' } }), 'x', `$contains on text: ${name}`)
  }
  t.same(rejection({ count: { $contains: ['1', '2'] } }).message, '$contains cannot be used on count, a integer attribute: it applies to text (use $containsi to match the value\'s text)', 'each element of a list')
  t.same(rejection({ $or: [{ title: 'x' }, { count: { $startsWith: '1' } }] }).name, 'ValidationError', 'inside $or')

  // A json or blocks attribute compares as jsonb: the value must be JSON text (filter-json-field-eq).
  const jsonText = (operator: string) => refusal(`${operator} on meta, a json attribute, expects JSON text (such as "text", 42 or ["a","b"])`, operator, 'meta')
  t.same(rejection(fromQuery('filters[meta][$eq]=odd')), jsonText('$eq'), 'filter-json-field-eq: odd is not JSON')
  for (const operator of ['$ne', '$lt', '$lte', '$gt', '$gte']) t.same(rejection({ meta: { [operator]: 'odd' } }), jsonText(operator))
  t.same(rejection({ meta: { $in: ['"a"', 'b'] } }), jsonText('$in'), 'one element of $in')
  t.same(rejection({ meta: { $between: ['1', 'x'] } }), jsonText('$between'))
  t.same(rejection({ meta: 'odd' }), jsonText('$eq'), 'implicit $eq')
  t.same(rejection({ body: { $eq: 'x' } }), refusal('$eq on body, a blocks attribute, expects JSON text (such as "text", 42 or ["a","b"])', '$eq', 'body'))
  for (const text of ['"odd"', '42', '["a","b"]', '{"a":1}', 'null', 'true']) t.same(attempt({ meta: { $eq: text } }), text, `${text} is JSON text`)
  t.same(attempt({ meta: { $containsi: 'odd' } }), 'odd', 'case-insensitive patterns search the JSON text')
  t.same(parsed({ meta: { $null: true } }), ['meta', '$null', true], '$null runs on every type')
  t.same(parsed({ meta: { $eq: null } }), ['meta', '$eq', null], 'null is IS NULL')
})

t.test('casting: numbers (lodash toNumber)', async (t) => {
  t.equal(value({ count: '37' }), 37, 'filter-eq-number-as-string')
  t.equal(value({ count: ' 5 ' }), 5, 'trimmed')
  t.equal(value({ count: '' }), 0, "'' is 0: filters[count][$eq]= matches 0")
  t.equal(value({ count: '1e3' }), 1000)
  t.equal(value({ count: '0x10' }), 16)
  t.equal(value({ count: '-4' }), -4)
  t.equal(value({ ratio: '0.25' }), 0.25)
  t.equal(value({ price: { $gt: '4' } }), 4, 'filter-decimal-gt')
  t.equal(value({ id: { $lt: '10' } }), 10, 'filter-id-eq')
  t.same(value({ id: { $in: ['2', '6', '8'] } }), [2, 6, 8], 'filter-id-in-array')
  t.same(value({ count: { $between: ['100', '200'] } }), [100, 200], 'filter-between')
})

t.test('casting: bigintegers stay strings (no precision lost)', async (t) => {
  t.equal(value({ big: '9007199254740993' }), '9007199254740993')
  t.equal(value({ big: ' -5 ' }), '-5')
  t.equal(value({ big: 12 }), '12', 'a number from application code')
  t.equal(value({ big: '9223372036854775807' }), '9223372036854775807')
})

t.test('casting: booleans', async (t) => {
  for (const raw of ['true', 't', '1', true, 1]) t.equal(value({ flag: raw }), true, `${JSON.stringify(raw)} is true`)
  for (const raw of ['false', 'f', '0', false, 0]) t.equal(value({ flag: raw }), false, `${JSON.stringify(raw)} is false`)
  t.equal(value(fromQuery('filters[flag]=false')), false, 'filter-boolean-false')
  t.equal(value(fromQuery('filters[flag][$eq]=true')), true, 'filter-boolean-true')
  // Strapi's BooleanField.toDB: any other value is JavaScript truthiness, not an error.
  t.equal(attempt({ flag: 'yes' }), true, "'yes' is truthy")
  t.equal(attempt({ flag: 'no' }), true, "'no' is truthy too")
  t.equal(attempt({ flag: '' }), false, "'' is falsy")
  t.same(attempt({ flag: { $in: ['yes', '0'] } }), [true, false])
})

t.test('casting: dates, datetimes, times', async (t) => {
  t.equal(value({ day: '2024-02-01' }), '2024-02-01')
  t.equal(value({ day: '2024-02-01T23:30:00Z' }), '2024-02-01', 'a date-time names its day')
  t.same(value(fromQuery('filters[day][$between][0]=2024-02-01&filters[day][$between][1]=2024-03-31')), ['2024-02-01', '2024-03-31'], 'filter-between-dates')
  t.equal(value({ at: '2024-01-01' }), '2024-01-01T00:00:00.000Z', 'a date is midnight UTC')
  t.equal(value({ at: '2024-01-01T10:00:00+02:00' }), '2024-01-01T08:00:00.000Z', 'offsets are normalised to UTC')
  t.equal(value({ at: '2024-01-01T10:00:00.5Z' }), '2024-01-01T10:00:00.500Z')
  t.equal(value({ stamp: '2024-06-30T12:00:00Z' }), '2024-06-30T12:00:00.000Z')
  t.equal(value({ createdAt: { $gt: '2020-01-01' } }), '2020-01-01T00:00:00.000Z')
  t.equal(value({ clock: '09:30' }), '09:30')
  t.equal(value({ clock: '09:30:15.250' }), '09:30:15.250')
})

t.test('casting: strings, enumerations and pattern operators are not cast', async (t) => {
  t.equal(value({ title: 5 }), '5')
  t.equal(value({ kind: 'news' }), 'news', 'filter-enum-eq')
  t.equal(value({ kind: 'unknown-value' }), 'unknown-value', 'an enumeration value outside the list simply matches nothing')
  t.equal(value({ count: { $containsi: 5 } }), '5', 'case-insensitive patterns take text, even on numbers')
  t.equal(value({ count: { $startsWithi: '1' } }), '1')
  t.equal(value({ flag: { $eqi: 'TRUE' } }), 'TRUE')
  t.equal(value({ day: { $endsWithi: '-01' } }), '-01')
  t.equal(value({ title: { $contains: '50%_off' } }), '50%_off', 'wildcards are left to the compiler')
})

t.test('null values', async (t) => {
  t.same(parsed(fromQuery('filters[title][$eq]')), ['title', '$eq', null], 'a bare key is null (strictNullHandling): IS NULL')
  t.same(parsed(fromQuery('filters[title]')), ['title', '$eq', null])
  t.same(parsed({ count: { $ne: null } }), ['count', '$ne', null])
  t.same(parsed(fromQuery('filters[summary][$ne]=')), ['summary', '$ne', ''], "'' is a value, not null (filter-ne-null)")
  t.same(parsed({ count: { $in: [1, null] } }), ['count', '$in', [1, null]])
  t.same(parsed({ title: { $eqi: null } }), ['title', '$eqi', null])
})

t.test('$null and $notNull spellings', async (t) => {
  const flag = (raw: unknown) => (parseFilters(model, { title: { $null: raw } }) as Compare).value
  for (const raw of [true, 'true', 't', '1', 1]) t.equal(flag(raw), true, `${JSON.stringify(raw)} is true`)
  for (const raw of [false, 'false', 'f', '0', 0, '', null]) t.equal(flag(raw), false, `${JSON.stringify(raw)} is false`)
  for (const raw of ['yes', 'TRUE', 'x', 2]) t.equal(flag(raw), true, `${JSON.stringify(raw)} is truthy`)
  t.same(parsed(fromQuery('filters[count][$null]=true')), ['count', '$null', true], 'filter-null-true')
  t.same(parsed(fromQuery('filters[count][$null]=false')), ['count', '$null', false], 'filter-null-false')
  t.same(parsed(fromQuery('filters[summary][$notNull]=true')), ['summary', '$notNull', true], 'filter-notNull-true')
  t.same(parsed(fromQuery('filters[summary][$notNull]=false')), ['summary', '$notNull', false], 'filter-notNull-false')
  t.same(parsed(fromQuery('filters[summary][$notNull]')), ['summary', '$notNull', false], 'a bare key is false')
  t.same(parsed(fromQuery('filters[summary][$null]')), ['summary', '$null', false])
})

t.test('filtersLocale: a filter on locale replaces the default-locale scope', async (t) => {
  t.equal(filtersLocale(parseFilters(articles, fromQuery('filters[locale][$eq]=fr'))), true, 'filter-locale-filter')
  t.equal(filtersLocale(parseFilters(articles, { $or: [{ title: 'a' }, { $not: { locale: 'en' } }] })), true)
  t.equal(filtersLocale(parseFilters(articles, { title: 'a' })), false)
  t.equal(filtersLocale(null), false)
})
