import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { article, everything, homepage } from '../fixtures/models.js'

/**
 * Every write the REST API refuses, with Strapi's exact envelope, and proof that a refused write
 * leaves the database as it was. No answer may ever leak SQL or a stack trace.
 */

const EVERYTHINGS = '/api/everythings'
const ARTICLES = '/api/articles'
const MISSING_DATA = 'Missing "data" payload in the request body'

/** Nothing of the database or of the server's code may appear in a client's answer. */
const LEAKS = [/\bselect\b/i, /\binsert\b/i, /SQL/, / {4}at /, /\bupdate\s+"/i, /node_modules/, /\.ts:\d+/]

/** The type of a subtest's `t`. */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface Answer { status: number, type: string | undefined, text: string, json: any }

interface FieldError { path: Array<string | number>, message: string, name: 'ValidationError', value: unknown }

function envelope (message: string, details: Record<string, unknown> = {}) {
  return { data: null, error: { status: 400, name: 'ValidationError', message, details } }
}

/** Strapi's answer for one failing field. */
function fieldError (path: Array<string | number>, message: string, value: unknown) {
  return envelope(message, { errors: [{ path, message, name: 'ValidationError', value }] })
}

/** Strapi's answer for several failing fields. */
function fieldErrors (errors: Array<Omit<FieldError, 'name'>>) {
  return envelope(`${errors.length} errors occurred`, { errors: errors.map((e) => ({ path: e.path, message: e.message, name: 'ValidationError', value: e.value })) })
}

async function rowCount (app: FastifyInstance, table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(app.contentApi.db)
  return rows[0].n
}

/** A snapshot of every row, to prove that a refused update changed nothing. */
async function snapshot (app: FastifyInstance, table: string): Promise<unknown[]> {
  const { rows } = await sql`select * from ${sql.table(table)} order by id`.execute(app.contentApi.db)
  return JSON.parse(JSON.stringify(rows))
}

t.test('refused writes', async (t) => {
  const { app } = await build(t, { models: [everything, article, homepage] })

  async function send (t: Tap, method: 'POST' | 'PUT', url: string, options: { payload?: unknown, raw?: string, contentType?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = options.contentType === undefined ? {} : { 'content-type': options.contentType }
    const payload = options.raw ?? (options.payload === undefined ? undefined : JSON.stringify(options.payload))
    if (payload !== undefined && options.contentType === undefined) headers['content-type'] = 'application/json'
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
    for (const leak of LEAKS) {
      if (leak.test(res.body)) t.fail(`${method} ${url} answered with ${String(leak)}: ${res.body}`)
    }
    let json: unknown
    try { json = JSON.parse(res.body) } catch { json = undefined }
    return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, text: res.body, json }
  }

  /** Sends a write that must fail with `expected`, and checks that no row of `table` changed. */
  async function refused (t: Tap, method: 'POST' | 'PUT', url: string, options: Parameters<typeof send>[3], expected: unknown, table = 'everythings'): Promise<void> {
    const before = await snapshot(app, table)
    const res = await send(t, method, url, options)
    t.equal(res.status, 400, `${method} ${url} ${options?.raw ?? JSON.stringify(options?.payload)?.slice(0, 80)}: 400`)
    t.equal(res.type, 'application/json; charset=utf-8')
    t.same(res.json, expected)
    t.same(await snapshot(app, table), before, 'nothing was written')
  }

  const existing = await send(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Existing', code: 'TAKEN', slug: 'taken-slug', count: 5 } } })
  t.equal(existing.status, 200)
  const other = await send(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Other', code: 'MINE' } } })
  const existingId: string = existing.json.data.documentId
  const otherId: string = other.json.data.documentId
  const one = `${EVERYTHINGS}/${otherId}`
  t.equal(await rowCount(app, 'everythings'), 2)

  t.test('the body and its data', async (t) => {
    for (const method of ['POST', 'PUT'] as const) {
      const url = method === 'POST' ? EVERYTHINGS : one
      await refused(t, method, url, {}, envelope(MISSING_DATA))
      await refused(t, method, url, { payload: {} }, envelope(MISSING_DATA))
      await refused(t, method, url, { payload: { data: 'hello' } }, envelope(MISSING_DATA))
      await refused(t, method, url, { payload: { data: null } }, envelope(MISSING_DATA))
      await refused(t, method, url, { payload: { data: 5 } }, envelope(MISSING_DATA))
      await refused(t, method, url, { payload: { title: 'no data wrapper' } }, envelope(MISSING_DATA))
      await refused(t, method, url, { payload: { data: [{ title: 'a' }] } }, fieldError([],
        'this must be a `object` type, but the final value was: `null` (cast from the value `[\n  {\n    "title": "\\"a\\""\n  }\n]`).', null))
      await refused(t, method, url, { raw: '', contentType: 'application/json' }, envelope(MISSING_DATA))
      await refused(t, method, url, { raw: 'title=hello', contentType: 'text/plain' }, envelope(MISSING_DATA))
      await refused(t, method, url, { raw: '{"data": {"title": "x"}}', contentType: 'text/plain' }, envelope(MISSING_DATA))
    }
  })

  t.test('a body that is not JSON: Strapi\'s SyntaxError, without details', async (t) => {
    const syntax = (message: string) => ({ data: null, error: { status: 400, name: 'SyntaxError', message } })
    const parserMessage = (raw: string): string => {
      try { JSON.parse(raw) } catch (err) { return (err as Error).message }
      throw new Error(`${raw} parses`)
    }
    for (const raw of ['{bad', '{"data": {"title": "x"}', '{"data": {"title": "x"}}}', '[1,']) {
      await refused(t, 'POST', EVERYTHINGS, { raw, contentType: 'application/json' }, syntax(parserMessage(raw)))
    }
    await refused(t, 'PUT', one, { raw: '{"data":', contentType: 'application/json' }, syntax(parserMessage('{"data":')))
    // koa-body parses strictly: the top level must be an object or an array.
    for (const raw of ['nul', 'null', '"hello"', '42', 'true', ' \n ', 'data=1']) {
      await refused(t, 'POST', EVERYTHINGS, { raw, contentType: 'application/json' }, syntax('invalid JSON, only supports object and array'))
    }
    await refused(t, 'POST', EVERYTHINGS, { raw: ' \n\t[1]', contentType: 'application/json' }, envelope(MISSING_DATA)) // an array parses, and has no data
    // V8 quotes the body in some of its messages; an answer never repeats the request.
    const quoted = await send(t, 'POST', EVERYTHINGS, { raw: '{"data": {"title": secret-words}}', contentType: 'application/json' })
    t.same(quoted.json, syntax('Unexpected token \'s\' is not valid JSON'))
    t.notMatch(quoted.text, /secret-words/)
    const poisoned = await send(t, 'POST', EVERYTHINGS, { raw: '{"data": {"title": "x", "__proto__": {"admin": true}}}', contentType: 'application/json' })
    t.same(poisoned.json, syntax('Object contains forbidden prototype property'), 'prototype poisoning is still refused')
  })

  t.test('keys that may not be written', async (t) => {
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'x', nope: 1 } } }, envelope('Invalid key nope', { key: 'nope', path: null, source: 'body' }))
    await refused(t, 'PUT', one, { payload: { data: { nope: 1 } } }, envelope('Invalid key nope', { key: 'nope', path: null, source: 'body' }))
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { id: 99999, documentId: 'forcedid0000000000000000', title: 'x' } } }, envelope('Invalid key id', { key: 'id', source: 'body' }))
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { documentId: 'forcedid0000000000000000', title: 'x' } } }, envelope('Invalid key documentId', { key: 'documentId', source: 'body' }))
    await refused(t, 'PUT', one, { payload: { data: { id: 1 } } }, envelope('Invalid key id', { key: 'id', source: 'body' }))
    await refused(t, 'PUT', one, { payload: { data: { documentId: existingId } } }, envelope('Invalid key documentId', { key: 'documentId', source: 'body' }))
    for (const key of ['createdAt', 'updatedAt']) {
      await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'x', [key]: '2020-01-01T00:00:00.000Z' } } }, envelope(`Invalid key ${key}`, { key, path: key, source: 'body' }))
      await refused(t, 'PUT', one, { payload: { data: { [key]: '2020-01-01T00:00:00.000Z' } } }, envelope(`Invalid key ${key}`, { key, path: key, source: 'body' }))
    }
  })

  t.test('a wrong type, per scalar type', async (t) => {
    const cases: Array<[string, unknown, string, unknown]> = [
      ['title', 5, 'title must be a `string` type, but the final value was: `5`.', 5],
      ['slug', ['a'], 'slug must be a `string` type, but the final value was: `[\n  "\\"a\\""\n]`.', ['a']],
      ['summary', true, 'summary must be a `string` type, but the final value was: `true`.', true],
      ['bodyMd', {}, 'bodyMd must be a `string` type, but the final value was: `{}`.', {}],
      ['body', 'abc', 'body must be a `array` type, but the final value was: `null` (cast from the value `"abc"`).', null],
      ['email', 5, 'email must be a `string` type, but the final value was: `5`.', 5],
      ['secret', 12345, 'secret must be a `string` type, but the final value was: `12345`.', 12345],
      ['count', 'abc', 'count must be a `number` type, but the final value was: `NaN` (cast from the value `"abc"`).', null],
      ['count', 1.5, 'count must be an integer', 1.5],
      ['big', 'abc', 'big must be an integer (a number, or a string of digits)', 'abc'],
      ['big', 1.5, 'big must be an integer (a number, or a string of digits)', 1.5],
      ['big', 2 ** 60, 'big is beyond the safe integer range of a JSON number (±9007199254740991); send it as a string of digits', 2 ** 60],
      ['big', '9223372036854775808', 'big must be less than or equal to 9223372036854775807', '9223372036854775808'],
      ['ratio', 'x', 'ratio must be a `number` type, but the final value was: `NaN` (cast from the value `"x"`).', null],
      ['ratio', 'Infinity', 'ratio must be a finite number', null],
      ['price', {}, 'price must be a `number` type, but the final value was: `NaN` (cast from the value `{}`).', null],
      ['flag', 'maybe', 'flag must be a `boolean` type, but the final value was: `"maybe"`.', 'maybe'],
      ['kind', 'blog', 'kind must be one of the following values: news, opinion, review, ', 'blog'],
      ['note', false, 'note must be a `string` type, but the final value was: `false`.', false],
      ['code', 7, 'code must be a `string` type, but the final value was: `7`.', 7]
    ]
    for (const [name, value, message, reported] of cases) {
      const data = name === 'title' ? { title: value } : { title: 'Typed', [name]: value }
      await refused(t, 'POST', EVERYTHINGS, { payload: { data } }, fieldError([name], message, reported))
      await refused(t, 'PUT', one, { payload: { data: { [name]: value } } }, fieldError([name], message, reported))
    }
    let deep: unknown = 1
    for (let i = 0; i < 501; i++) deep = [deep]
    // Through REST, the body's nesting is bounded first (limits.inputDepth, 64); the 500 levels a
    // JSON attribute may hold apply to application code (test/documents/validate-input.test.ts).
    const res = await send(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Deep', meta: deep } } })
    t.equal(res.status, 400)
    t.same(res.json.error.details, { limit: 'limits.inputDepth', max: 64 })
    t.equal(await rowCount(app, 'everythings'), 2)
  })

  t.test('blocks: nodes of an unknown type', async (t) => {
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Blocks', body: [{ type: 'paragraph', children: [] }, { type: 'table' }] } } },
      fieldError(['body', '1'], 'Block node is of invalid type', { type: 'table' }))
  })

  t.test('required attributes', async (t) => {
    const message = 'title must be a `string` type, but the final value was: `null`.'
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { summary: 'no title' } } }, fieldError(['title'], message, null))
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: null } } }, fieldError(['title'], message, null))
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: {} } }, fieldError(['title'], message, null))
    await refused(t, 'PUT', one, { payload: { data: { title: null } } }, fieldError(['title'], message, null))
    await refused(t, 'POST', ARTICLES, { payload: { data: { views: 1 } } }, fieldError(['title'], message, null), 'articles')
  })

  t.test('lengths', async (t) => {
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'x'.repeat(41) } } }, fieldError(['title'], 'title must be at most 40 characters', 'x'.repeat(41)))
    await refused(t, 'PUT', one, { payload: { data: { title: 'x'.repeat(41) } } }, fieldError(['title'], 'title must be at most 40 characters', 'x'.repeat(41)))
    const long = 'c'.repeat(256)
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Long code', code: long } } }, fieldError(['code'], 'code must be at most 255 characters', long))
    await refused(t, 'PUT', one, { payload: { data: { email: `${'e'.repeat(250)}@example.com` } } },
      fieldError(['email'], 'email must be at most 255 characters', `${'e'.repeat(250)}@example.com`))
    const fits = await send(t, 'PUT', one, { payload: { data: { code: 'c'.repeat(255), summary: 's'.repeat(10_000) } } })
    t.equal(fits.status, 200, '255 characters fit, text has no limit')
    await send(t, 'PUT', one, { payload: { data: { code: 'MINE' } } })
  })

  t.test('min and max, and the int4 range of integers', async (t) => {
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Min', count: -1 } } }, fieldError(['count'], 'count must be greater than or equal to 0', -1))
    await refused(t, 'PUT', one, { payload: { data: { count: 1001 } } }, fieldError(['count'], 'count must be less than or equal to 1000', 1001))
    await refused(t, 'POST', ARTICLES, { payload: { data: { title: 'Huge', views: 3000000000 } } },
      fieldError(['views'], 'views must be less than or equal to 2147483647', 3000000000), 'articles')
    await refused(t, 'POST', ARTICLES, { payload: { data: { title: 'Tiny', views: -2147483649 } } },
      fieldError(['views'], 'views must be greater than or equal to -2147483648', -2147483649), 'articles')
    await refused(t, 'POST', ARTICLES, { payload: { data: { title: 'Huge string', views: '99999999999' } } },
      fieldError(['views'], 'views must be less than or equal to 2147483647', 99999999999), 'articles')
  })

  t.test('formats: enumeration, email, uid', async (t) => {
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Enum', kind: 'NEWS' } } }, fieldError(['kind'], 'kind must be one of the following values: news, opinion, review, ', 'NEWS'))
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Email', email: 'not-an-email' } } }, fieldError(['email'], 'email must be a valid email', 'not-an-email'))
    await refused(t, 'PUT', one, { payload: { data: { email: 'a@b' } } }, fieldError(['email'], 'email must be a valid email', 'a@b'))
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Uid', slug: 'Not A Valid Slug!' } } },
      fieldError(['slug'], 'slug must match the following: "/^[A-Za-z0-9-_.~]*$/"', 'Not A Valid Slug!'))
    await refused(t, 'PUT', one, { payload: { data: { slug: 'a/b' } } }, fieldError(['slug'], 'slug must match the following: "/^[A-Za-z0-9-_.~]*$/"', 'a/b'))
  })

  t.test('unique attributes and uids', async (t) => {
    const unique = (name: string, value: unknown) => fieldError([name], 'This attribute must be unique', value)
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Dup', code: 'TAKEN' } } }, unique('code', 'TAKEN'))
    await refused(t, 'PUT', one, { payload: { data: { code: 'TAKEN' } } }, unique('code', 'TAKEN'))
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Dup', slug: 'taken-slug' } } }, unique('slug', 'taken-slug'))
    await refused(t, 'PUT', one, { payload: { data: { slug: 'taken-slug', title: 'Changed' } } }, unique('slug', 'taken-slug'))
    await refused(t, 'PUT', one, { payload: { data: { slug: 'taken-slug', code: 'TAKEN' } } }, fieldErrors([
      { path: ['slug'], message: 'This attribute must be unique', value: 'taken-slug' },
      { path: ['code'], message: 'This attribute must be unique', value: 'TAKEN' }
    ]))
    const same = await send(t, 'PUT', `${EVERYTHINGS}/${existingId}`, { payload: { data: { code: 'TAKEN', slug: 'taken-slug' } } })
    t.equal(same.status, 200, 'a document may keep its own unique values')
  })

  t.test('several errors at once', async (t) => {
    await refused(t, 'POST', EVERYTHINGS, { payload: { data: { title: 5, count: 'x', kind: 'z', flag: 'maybe' } } }, fieldErrors([
      { path: ['title'], message: 'title must be a `string` type, but the final value was: `5`.', value: 5 },
      { path: ['count'], message: 'count must be a `number` type, but the final value was: `NaN` (cast from the value `"x"`).', value: null },
      { path: ['flag'], message: 'flag must be a `boolean` type, but the final value was: `"maybe"`.', value: 'maybe' },
      { path: ['kind'], message: 'kind must be one of the following values: news, opinion, review, ', value: 'z' }
    ]))
    await refused(t, 'PUT', one, { payload: { data: { count: 2000, email: 'nope' } } }, fieldErrors([
      { path: ['email'], message: 'email must be a valid email', value: 'nope' },
      { path: ['count'], message: 'count must be less than or equal to 1000', value: 2000 }
    ]))
  })

  t.test('a refused PUT on a draft & publish type changes neither version', async (t) => {
    const created = await send(t, 'POST', ARTICLES, { payload: { data: { title: 'Kept', views: 1 } } })
    const url = `${ARTICLES}/${created.json.data.documentId as string}`
    await refused(t, 'PUT', url, { payload: { data: { title: null } } }, fieldError(['title'], 'title must be a `string` type, but the final value was: `null`.', null), 'articles')
    await refused(t, 'PUT', url, { payload: { data: { views: 'many' } } },
      fieldError(['views'], 'views must be a `number` type, but the final value was: `NaN` (cast from the value `"many"`).', null), 'articles')
    await refused(t, 'PUT', `${url}?status=draft`, { payload: { data: { views: 3000000000 } } },
      fieldError(['views'], 'views must be less than or equal to 2147483647', 3000000000), 'articles')
  })

  t.test('nothing was written by any refused request', async (t) => {
    t.equal(await rowCount(app, 'everythings'), 2)
    const list = await send(t, 'POST', EVERYTHINGS, { payload: { data: { title: 'Still works' } } })
    t.equal(list.status, 200, 'the API still accepts a valid write afterwards')
  })
})
