import t from 'tap'
import { LimitError } from '../../lib/errors.js'
import { resolveOptions } from '../../lib/options/index.js'
import { parseQueryString, qsOptions } from '../../lib/query/querystring.js'

/**
 * Query-string parsing: Strapi's qs settings (strictNullHandling, arrayLimit 100, depth 20) and
 * our bounds on the number of parameters and the length of the query string (`limits`).
 */

/** The default `limits`, as the plugin resolves them. */
const LIMITS = resolveOptions({ models: [] }).limits

const parse = (search: string) => parseQueryString(`/api/articles?${search}`, LIMITS)

function rejection (url: string, limits = LIMITS): LimitError {
  try {
    parseQueryString(url, limits)
  } catch (err) {
    if (err instanceof LimitError) return err
    throw err
  }
  throw new Error('expected the query string to be rejected')
}

t.test('the settings', async (t) => {
  t.same(qsOptions(LIMITS), { strictNullHandling: true, arrayLimit: 100, depth: 20, parameterLimit: 1000, allowPrototypes: false })
  t.equal(LIMITS.queryLength, 16384)
  t.equal(LIMITS.queryParameters, 1000)
})

t.test('no query string', async (t) => {
  t.same(parseQueryString('/api/articles', LIMITS), {})
  t.same(parseQueryString('/api/articles?', LIMITS), {})
})

t.test('brackets, plain or percent-encoded', async (t) => {
  const expected = { filters: { title: { $eq: 'Tiny Tour of Paris 008' } }, fields: ['title'] }
  t.same(parse('filters[title][$eq]=Tiny%20Tour%20of%20Paris%20008&fields[0]=title'), expected)
  t.same(parse('filters%5Btitle%5D%5B%24eq%5D=Tiny%20Tour%20of%20Paris%20008&fields%5B0%5D=title'), expected, 'query-array-brackets-encoded')
  t.same(parse('filters[title][$eq]=Tiny+Tour+of+Paris+008&fields[0]=title'), expected, '+ is a space (query-plus-as-space)')
  t.same(parse('filters[title][$eq]=a%2Bb'), { filters: { title: { $eq: 'a+b' } } }, '%2B is a plus')
  t.same(parse('filters[title][$contains]=50%25'), { filters: { title: { $contains: '50%' } } }, '%25 is a percent sign')
  t.same(parse('sort=kind,title:desc'), { sort: 'kind,title:desc' }, 'commas are not split by qs')
  t.same(parse('sort[0]=a&sort[1]=b'), { sort: ['a', 'b'] })
  t.same(parse('sort[]=a&sort[]=b'), { sort: ['a', 'b'] })
  t.same(parse('a=1&a=2'), { a: ['1', '2'] }, 'a repeated key is an array')
  t.same(parse('a.b=1'), { 'a.b': '1' }, 'dots are not nesting')
})

t.test('strictNullHandling: a key without = is null, a key with = is an empty string', async (t) => {
  t.same(parse('filters[title][$null]'), { filters: { title: { $null: null } } })
  t.same(parse('filters[title][$eq]'), { filters: { title: { $eq: null } } })
  t.same(parse('filters='), { filters: '' })
  t.same(parse('x=&y'), { x: '', y: null })
})

t.test('depth 20: deeper brackets are kept as one literal key', async (t) => {
  const keys = Array.from({ length: 25 }, (_, i) => `k${i}`)
  let node = parse(`a${keys.map((k) => `[${k}]`).join('')}=x`).a as Record<string, unknown>
  for (const key of keys.slice(0, 20)) node = node[key] as Record<string, unknown>
  t.same(node, { '[k20][k21][k22][k23][k24]': 'x' })
  const twenty = parse(`a${keys.slice(0, 20).map((k) => `[${k}]`).join('')}=x`).a as Record<string, unknown>
  let leaf: unknown = twenty
  for (const key of keys.slice(0, 20)) leaf = (leaf as Record<string, unknown>)[key]
  t.equal(leaf, 'x', '20 levels are nested normally')
})

t.test('arrayLimit 100: a larger index makes an object, not a sparse array', async (t) => {
  t.same(parse('fields[99]=title'), { fields: ['title'] }, 'indexes up to 99 compact into an array')
  t.same(parse('fields[100]=title'), { fields: { 100: 'title' } })
  t.same(parse('fields[0]=slug&fields[150]=title'), { fields: { 0: 'slug', 150: 'title' } }, 'the whole array becomes an object')
  const many = parse(Array.from({ length: 150 }, (_, i) => `f[]=v${i}`).join('&')).f
  t.notOk(Array.isArray(many), 'more than 100 pushed elements make an object too')
  t.equal(Object.keys(many as object).length, 150, 'and keep every element')
})

t.test('prototype keys are dropped', async (t) => {
  t.same(parse('__proto__[x]=1&constructor[prototype][y]=2'), {})
  t.same(parse('filters[__proto__][title]=1'), {})
  t.equal(({} as Record<string, unknown>).x, undefined)
})

t.test('limits.queryParameters: more parameters are a 400 naming the limit, not a silent truncation', async (t) => {
  const params = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&')
  t.equal(Object.keys(parse(params(1000))).length, 1000)
  const error = rejection(`/api/articles?${params(1001)}`)
  t.same(error.toEnvelope(), {
    data: null,
    error: {
      status: 400,
      name: 'ValidationError',
      message: 'The query string has more than 1000 parameters (limits.queryParameters is 1000)',
      details: { limit: 'limits.queryParameters', max: 1000 }
    }
  })
  t.equal(error.code, 'FCA_ERR_LIMIT')
  const small = { ...LIMITS, queryParameters: 3 }
  t.same(Object.keys(parseQueryString('/api/articles?a=1&b=2&c=3', small)), ['a', 'b', 'c'], 'exactly the limit parses')
  t.same(rejection('/api/articles?a=1&b=2&c=3&d=4', small).details, { limit: 'limits.queryParameters', max: 3 }, 'the configured bound')
})

t.test('limits.queryLength: a longer query string is a 400 before any parsing', async (t) => {
  t.same(Object.keys(parse(`a=${'x'.repeat(LIMITS.queryLength - 2)}`)), ['a'], 'exactly 16 KiB parses')
  const error = rejection(`/api/articles?a=${'x'.repeat(LIMITS.queryLength)}`)
  t.same(error.toEnvelope().error, {
    status: 400,
    name: 'ValidationError',
    message: 'The query string is longer than 16384 characters (limits.queryLength is 16384)',
    details: { limit: 'limits.queryLength', max: 16384 }
  })
  t.same(rejection('/api/articles?title=abcdef', { ...LIMITS, queryLength: 10 }).details, { limit: 'limits.queryLength', max: 10 })
})
