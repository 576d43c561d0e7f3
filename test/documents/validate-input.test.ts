import t from 'tap'
import { ValidationError, type FieldError } from '../../lib/errors.js'
import type { Component, ContentType } from '../../lib/model/registry.js'
import { printValue, yupPath } from '../../lib/documents/print-value.js'
import { validateInput, type ValidateInputOptions } from '../../lib/documents/validate-input.js'
import { models } from './validate-models.js'

const { article, author, sample, strict, defaults, seo, quote } = models
const CREATE: ValidateInputOptions = { partial: false }
const UPDATE: ValidateInputOptions = { partial: true }

function rejection (model: ContentType | Component, data: unknown, options: ValidateInputOptions = CREATE): ValidationError {
  try {
    validateInput(model, data, options)
  } catch (err) {
    if (err instanceof ValidationError) return err
    throw err
  }
  throw new Error(`expected a ValidationError for ${JSON.stringify(data)}`)
}

/** The Strapi error body (`error` of the envelope) for a rejected payload. */
const body = (model: ContentType | Component, data: unknown, options?: ValidateInputOptions) =>
  rejection(model, data, options).toEnvelope().error

/** The field errors of a rejected payload. */
const fieldErrors = (model: ContentType | Component, data: unknown, options?: ValidateInputOptions): FieldError[] =>
  rejection(model, data, options).details.errors as FieldError[]

/** The single field error of a payload, as `{ path, message, value }`. */
function only (model: ContentType | Component, data: unknown, options?: ValidateInputOptions) {
  const errors = fieldErrors(model, data, options)
  if (errors.length !== 1) throw new Error(`expected one error, got ${JSON.stringify(errors)}`)
  const [{ path, message, name, value }] = errors
  if (name !== 'ValidationError') throw new Error(`unexpected name ${name}`)
  return { path, message, value }
}

const sampleValue = (name: string, value: unknown, options: ValidateInputOptions = UPDATE): unknown =>
  validateInput(sample, { [name]: value }, options).values[name]

/** Strapi's ValidationError body with one field error. */
const oneError = (path: Array<string | number>, message: string, value: unknown) => ({
  status: 400,
  name: 'ValidationError',
  message,
  details: { errors: [{ path, message, name: 'ValidationError', value }] }
})

t.test('recorded Strapi answers (oracle cases)', async (t) => {
  t.test('create-data-array / update-data-array', async (t) => {
    t.same(body(article, [{ title: 'a' }]), oneError([],
      'this must be a `object` type, but the final value was: `null` (cast from the value `[\n  {\n    "title": "\\"a\\""\n  }\n]`).', null))
    t.same(body(article, [{ title: 'x' }], UPDATE), oneError([],
      'this must be a `object` type, but the final value was: `null` (cast from the value `[\n  {\n    "title": "\\"x\\""\n  }\n]`).', null))
  })

  t.test('create-wrong-type-int / update-wrong-type', async (t) => {
    t.same(body(article, { title: 'Wrong type', views: 'abc' }), oneError(['views'],
      'views must be a `number` type, but the final value was: `NaN` (cast from the value `"abc"`).', null))
    t.same(body(article, { views: 'lots' }, UPDATE), oneError(['views'],
      'views must be a `number` type, but the final value was: `NaN` (cast from the value `"lots"`).', null))
  })

  t.test('create-wrong-type-bool', async (t) => {
    t.same(body(article, { title: 'Wrong bool', featured: 'maybe' }), oneError(['featured'],
      'featured must be a `boolean` type, but the final value was: `"maybe"`.', 'maybe'))
  })

  t.test('create-wrong-enum', async (t) => {
    t.same(body(article, { title: 'Wrong enum', kind: 'gossip' }), oneError(['kind'],
      'kind must be one of the following values: news, opinion, review, ', 'gossip'))
  })

  t.test('create-missing-required', async (t) => {
    t.same(body(article, { summary: 'no title' }), oneError(['title'],
      'title must be a `string` type, but the final value was: `null`.', null))
  })

  t.test('create-bad-uid', async (t) => {
    t.same(body(article, { title: 'Bad uid', slug: 'Not A Valid Slug!' }), oneError(['slug'],
      'slug must match the following: "/^[A-Za-z0-9-_.~]*$/"', 'Not A Valid Slug!'))
  })

  t.test('create-with-id', async (t) => {
    const data = { id: 99999, documentId: 'forcedid0000000000000000', title: 'With id', slug: 'with-id' }
    t.same(body(article, data), { status: 400, name: 'ValidationError', message: 'Invalid key id', details: { key: 'id', source: 'body' } })
  })

  t.test('create-component-unknown-key, when the component is validated at its path', async (t) => {
    t.same(body(seo, { metaTitle: 'a', nope: 1 }, { partial: false, path: ['seo'] }), {
      status: 400, name: 'ValidationError', message: 'Invalid key nope at seo', details: { key: 'nope', path: 'seo', source: 'body' }
    })
  })

  t.test('create-author-private-field: private attributes are writable', async (t) => {
    const { values } = validateInput(author, { name: 'Private set', email: 'p@example.com', internalNote: 'secret' }, CREATE)
    t.same(values, { name: 'Private set', email: 'p@example.com', internalNote: 'secret' })
  })

  t.test('create-valid and update-partial pass', async (t) => {
    const scalars = {
      title: 'Oracle Created One',
      slug: 'oracle-created-one',
      summary: 'created',
      views: 7,
      rating: 2.5,
      featured: true,
      publishDate: '2025-05-05',
      tags: ['x'],
      kind: 'news'
    }
    const created = validateInput(article, { ...scalars, category: 'cat0' }, CREATE)
    t.same(created.values, scalars)
    t.same(created.deferred, { category: 'cat0' })
    t.same(validateInput(article, { views: 8, summary: 'updated summary' }, UPDATE).values, { views: 8, summary: 'updated summary' })
  })
})

t.test('data that is not an object', async (t) => {
  const message = (cast: string) => `this must be a \`object\` type, but the final value was: \`null\`${cast}`
  t.equal(body(article, 'hello').message, message(' (cast from the value `"hello"`).'))
  t.equal(body(article, 5).message, message(' (cast from the value `5`).'))
  t.equal(body(article, true, UPDATE).message, message(' (cast from the value `true`).'))
  t.equal(body(article, null).message, message('.'))
  t.equal(body(article, undefined).message, message('.'))
  t.same(body(seo, ['x'], { partial: false, path: ['blocks', '0'] }).details, {
    errors: [{
      path: ['blocks', '0'],
      message: 'blocks[0] must be a `object` type, but the final value was: `null` (cast from the value `[\n  "\\"x\\""\n]`).',
      name: 'ValidationError',
      value: null
    }]
  })
})

t.test('keys', async (t) => {
  t.test('id and documentId at the root, before anything else', async (t) => {
    t.same(body(article, { documentId: 'x', title: 5 }), {
      status: 400, name: 'ValidationError', message: 'Invalid key documentId', details: { key: 'documentId', source: 'body' }
    })
    t.equal(body(article, { documentId: 'x', id: 1 }, UPDATE).message, 'Invalid key id')
  })

  t.test('system fields and writable: false attributes carry their path, as Strapi reports them', async (t) => {
    for (const key of ['createdAt', 'updatedAt']) {
      t.same(body(article, { title: 'x', [key]: '2025-01-01T00:00:00.000Z' }), {
        status: 400, name: 'ValidationError', message: `Invalid key ${key}`, details: { key, path: key, source: 'body' }
      }, key)
    }
    t.same(body(sample, { frozen: 'x' }, UPDATE).details, { key: 'frozen', path: 'frozen', source: 'body' })
  })

  t.test('unknown keys', async (t) => {
    t.same(body(article, { title: 'x', nope: 1 }), {
      status: 400, name: 'ValidationError', message: 'Invalid key nope', details: { key: 'nope', path: null, source: 'body' }
    })
    t.equal(body(article, { __proto__x: 1 }).message, 'Invalid key __proto__x')
    t.equal(body(article, JSON.parse('{"__proto__": {"title": "x"}}')).message, 'Invalid key __proto__')
    t.equal(body(article, { constructor: 'x' }, UPDATE).message, 'Invalid key constructor', 'no prototype lookups')
    t.equal(body(sample, { createdBy: 1 }, UPDATE).message, 'Invalid key createdBy')
  })

  t.test('non-writable keys are found before unknown ones, keys before values', async (t) => {
    t.equal(body(article, { nope: 1, updatedAt: 'x' }).message, 'Invalid key updatedAt')
    t.equal(body(article, { views: 'abc', nope: 1 }).message, 'Invalid key nope')
  })

  t.test('publishedAt and locale are accepted and ignored', async (t) => {
    const { values, deferred } = validateInput(article, { title: 'x', publishedAt: null, locale: 'fr' }, CREATE)
    t.same(values, { title: 'x', featured: false })
    t.same(deferred, {})
    t.same(validateInput(article, { publishedAt: '2025-01-01T00:00:00.000Z' }, UPDATE).values, {})
    t.same(validateInput(author, { locale: 'en' }, UPDATE).values, {})
  })

  t.test('relations, media, components and dynamic zones are deferred untouched', async (t) => {
    const seoValue = { metaTitle: 'a' }
    const blocks = [{ __component: 'shared.quote', text: 'q' }]
    const { values, deferred } = validateInput(article, { title: 'x', category: 'abc', cover: 1, seo: seoValue, blocks }, CREATE)
    t.same(values, { title: 'x', featured: false })
    t.same(Object.keys(deferred), ['category', 'cover', 'seo', 'blocks'])
    t.equal(deferred.seo, seoValue, 'same reference')
    t.equal(deferred.blocks, blocks, 'same reference')
    t.same(validateInput(article, { category: null }, UPDATE).deferred, { category: null })
  })

  t.test('components: id and __component are deferred, system keys are unknown, paths prefix everything', async (t) => {
    const { values, deferred } = validateInput(quote, { id: 4, __component: 'shared.quote', text: 'q' }, { partial: false, path: ['blocks', '0'] })
    t.same(values, { text: 'q' })
    t.same(deferred, { id: 4, __component: 'shared.quote' })
    t.same(body(seo, { createdAt: 'x' }, { partial: false, path: ['seo'] }), {
      status: 400, name: 'ValidationError', message: 'Invalid key createdAt at seo', details: { key: 'createdAt', path: 'seo', source: 'body' }
    })
    t.same(body(quote, { publishedAt: null }, { partial: false, path: ['blocks', '2'] }).details, { key: 'publishedAt', path: 'blocks', source: 'body' })
    t.same(only(seo, { metaTitle: 5 }, { partial: false, path: ['seo'] }), {
      path: ['seo', 'metaTitle'], message: 'seo.metaTitle must be a `string` type, but the final value was: `5`.', value: 5
    })
    t.same(only(quote, { author: true }, { partial: true, path: ['blocks', '1'] }), {
      path: ['blocks', '1', 'author'], message: 'blocks[1].author must be a `string` type, but the final value was: `true`.', value: true
    })
  })
})

t.test('create, update, defaults and null', async (t) => {
  t.test('defaults fill attributes left out on create, coerced like sent values', async (t) => {
    t.same(validateInput(defaults, {}, CREATE).values, {
      label: 'untitled', size: 3, on: true, tone: 'cold', since: '2025-01-01', from: '2025-01-01T08:00:00.000Z', extra: { a: 1 }
    })
    t.same(validateInput(defaults, { size: 5, label: 'x' }, CREATE).values.size, 5)
    t.same(validateInput(defaults, {}, UPDATE).values, {}, 'no defaults on update')
  })

  t.test('an explicit null is kept on create (a default applies only to a missing key)', async (t) => {
    t.same(validateInput(defaults, { size: null, on: null }, CREATE).values.size, null)
    t.same(validateInput(defaults, { size: null, on: null }, CREATE).values.on, null)
  })

  t.test('update validates only the keys sent; null clears a field', async (t) => {
    t.same(validateInput(article, { views: null, summary: null, tags: null, body: null }, UPDATE).values,
      { body: null, summary: null, views: null, tags: null })
    t.same(validateInput(article, {}, UPDATE).values, {})
    t.same(validateInput(article, { views: undefined }, UPDATE).values, {}, 'undefined counts as absent')
  })

  t.test('a required attribute left out on create: the answer of its yup schema', async (t) => {
    const err = rejection(strict, {})
    t.equal(err.message, '8 errors occurred')
    t.same(err.details.errors, [
      { path: ['rs'], message: 'rs must be a `string` type, but the final value was: `null`.', name: 'ValidationError', value: null },
      { path: ['ri'], message: 'ri must be a `number` type, but the final value was: `NaN`.', name: 'ValidationError', value: null },
      { path: ['rb'], message: 'rb must be a `boolean` type, but the final value was: `null`.', name: 'ValidationError', value: null },
      { path: ['rbig'], message: 'rbig must be defined.', name: 'ValidationError', value: null },
      { path: ['rdate'], message: 'rdate must be defined.', name: 'ValidationError', value: null },
      { path: ['rjson'], message: 'rjson must be defined.', name: 'ValidationError', value: null },
      { path: ['rblocks'], message: 'rblocks must be a `array` type, but the final value was: `null`.', name: 'ValidationError', value: null },
      { path: ['renum'], message: 'renum must be a `string` type, but the final value was: `null`.', name: 'ValidationError', value: null }
    ])
    t.same(fieldErrors(strict, { rs: null, ri: 1, rb: true, rbig: 1, rdate: '2025-01-01', rjson: {}, rblocks: [], renum: 'a' }).map((e) => e.path),
      [['rs']], 'explicit null on create is the same error')
  })

  t.test('a required attribute set to null on update', async (t) => {
    const err = rejection(strict, { rbig: null, rs: null, rjson: null }, UPDATE)
    t.equal(err.message, '3 errors occurred')
    t.same((err.details.errors as FieldError[]).map((e) => e.message), [
      'rs must be a `string` type, but the final value was: `null`.',
      'rbig cannot be null.',
      'rjson cannot be null.'
    ])
    t.same(validateInput(strict, { ri: 4 }, UPDATE).values, { ri: 4 }, 'required attributes left out of an update are fine')
  })

  t.test('drafts skip required', async (t) => {
    t.same(validateInput(strict, {}, { partial: false, draft: true }).values, {})
    t.same(validateInput(strict, { rs: null }, { partial: true, draft: true }).values, { rs: null })
  })

  t.test('every error is collected, in model order', async (t) => {
    const err = rejection(article, { featured: 'maybe', views: 'abc', title: 'x' })
    t.equal(err.message, '2 errors occurred')
    t.same((err.details.errors as FieldError[]).map((e) => e.path), [['views'], ['featured']])
    t.same(body(article, { kind: 'x', featured: 2 }), {
      status: 400,
      name: 'ValidationError',
      message: '3 errors occurred',
      details: {
        errors: [
          { path: ['title'], message: 'title must be a `string` type, but the final value was: `null`.', name: 'ValidationError', value: null },
          { path: ['featured'], message: 'featured must be a `boolean` type, but the final value was: `2`.', name: 'ValidationError', value: 2 },
          { path: ['kind'], message: 'kind must be one of the following values: news, opinion, review, ', name: 'ValidationError', value: 'x' }
        ]
      }
    })
  })
})

t.test('string, text, richtext', async (t) => {
  t.equal(sampleValue('plain', 'hello'), 'hello')
  t.equal(sampleValue('text', 'x'.repeat(100_000)), 'x'.repeat(100_000), 'text has no length limit')
  t.equal(sampleValue('rich', '# Title'), '# Title')
  t.equal(sampleValue('plain', ''), '')

  t.test('only strings: no casting, as Strapi disables yup\'s string cast', async (t) => {
    t.same(only(sample, { plain: 5 }, UPDATE), { path: ['plain'], message: 'plain must be a `string` type, but the final value was: `5`.', value: 5 })
    t.same(only(sample, { text: false }, UPDATE), { path: ['text'], message: 'text must be a `string` type, but the final value was: `false`.', value: false })
    t.same(only(sample, { rich: ['a'] }, UPDATE), {
      path: ['rich'], message: 'rich must be a `string` type, but the final value was: `[\n  "\\"a\\""\n]`.', value: ['a']
    })
    t.same(only(sample, { plain: { a: 1, b: [true, null] } }, UPDATE).message,
      'plain must be a `string` type, but the final value was: `{\n  "a": "1",\n  "b": [\n    "true",\n    "null"\n  ]\n}`.')
  })

  t.test('minLength, maxLength, regex', async (t) => {
    t.equal(sampleValue('short', 'abc'), 'abc')
    t.same(only(sample, { short: 'a' }, UPDATE), { path: ['short'], message: 'short must be at least 2 characters', value: 'a' })
    t.same(only(sample, { short: 'abcdefghijk' }, UPDATE), { path: ['short'], message: 'short must be at most 10 characters', value: 'abcdefghijk' })
    t.same(only(sample, { short: 'AB' }, UPDATE), { path: ['short'], message: 'short must match the following: "/^[a-z]+$/"', value: 'AB' })
    t.same(fieldErrors(sample, { short: 'A' }, UPDATE).map((e) => e.message),
      ['short must be at least 2 characters', 'short must match the following: "/^[a-z]+$/"'], 'all tests of a field are reported')
    t.same(only(sample, { short: '' }, UPDATE).message, 'short must be at least 2 characters', 'an empty string skips the regex of an optional field')
  })

  t.test('the varchar column limit is a 400, counted in characters as PostgreSQL does', async (t) => {
    t.equal(sampleValue('plain', 'x'.repeat(255)), 'x'.repeat(255))
    t.same(only(sample, { plain: 'x'.repeat(256) }, UPDATE), { path: ['plain'], message: 'plain must be at most 255 characters', value: 'x'.repeat(256) })
    t.equal(sampleValue('plain', '😀'.repeat(255)), '😀'.repeat(255), '255 emoji are 255 characters')
    t.equal(only(sample, { plain: '😀'.repeat(256) }, UPDATE).message, 'plain must be at most 255 characters')
    t.equal(sampleValue('long', 'x'.repeat(300)), 'x'.repeat(300), 'maxLength above 255 widens the column')
    t.equal(only(sample, { long: 'x'.repeat(301) }, UPDATE).message, 'long must be at most 300 characters')
  })

  t.test('characters PostgreSQL cannot store', async (t) => {
    const message = 'plain must not contain NUL characters (\\u0000) or unpaired surrogates'
    t.same(only(sample, { plain: 'a\u0000b' }, UPDATE), { path: ['plain'], message, value: 'a\u0000b' })
    t.equal(only(sample, { plain: 'a\uD800b' }, UPDATE).message, message)
    t.equal(only(sample, { text: '\uDC00' }, UPDATE).message, 'text must not contain NUL characters (\\u0000) or unpaired surrogates')
  })

  t.test('drafts skip minLength and regex, not maxLength', async (t) => {
    const draft = { partial: true, draft: true }
    t.equal(sampleValue('short', 'A', draft), 'A')
    t.equal(only(sample, { short: 'abcdefghijk' }, draft).message, 'short must be at most 10 characters')
  })
})

t.test('email', async (t) => {
  t.equal(sampleValue('mail', 'a.b+c@example.co.uk'), 'a.b+c@example.co.uk')
  t.same(only(sample, { mail: 'not-an-email' }, UPDATE), { path: ['mail'], message: 'mail must be a valid email', value: 'not-an-email' })
  for (const bad of ['a@b', '@example.com', 'a@@example.com', 'a b@example.com', 'a@example..com']) {
    t.equal(only(sample, { mail: bad }, UPDATE).message, 'mail must be a valid email', bad)
  }
  t.same(only(sample, { mail: '' }, UPDATE), { path: ['mail'], message: 'mail cannot be empty', value: '' })
  t.equal(only(sample, { mail: 1 }, UPDATE).message, 'mail must be a `string` type, but the final value was: `1`.')
  t.equal(sampleValue('mail', 'not-an-email', { partial: true, draft: true }), 'not-an-email', 'drafts skip the format')
})

t.test('password: validated as a string, returned in clear text for hashPasswords', async (t) => {
  t.equal(sampleValue('secret', 'Password123!'), 'Password123!')
  t.equal(sampleValue('secret', 'x'.repeat(1000)), 'x'.repeat(1000), 'the column holds the hash, so no varchar limit on the clear text')
  t.equal(only(sample, { secret: 123456 }, UPDATE).message, 'secret must be a `string` type, but the final value was: `123456`.')
})

t.test('uid', async (t) => {
  t.equal(sampleValue('code', 'a-slug'), 'a-slug')
  t.equal(validateInput(article, { slug: 'A_b.c~1-2' }, UPDATE).values.slug, 'A_b.c~1-2')
  t.same(fieldErrors(sample, { code: 'Bad Slug' }, UPDATE).map((e) => e.message), [
    'code must match the following: "/^[a-z-]+$/"',
    'code must match the following: "/^[A-Za-z0-9-_.~]*$/"'
  ], 'its own regex, then the uid pattern')
  t.same(only(sample, { code: 'ABC' }, UPDATE).message, 'code must match the following: "/^[a-z-]+$/"')
  t.equal(only(article, { slug: 'x'.repeat(256) }, UPDATE).message, 'slug must be at most 255 characters')
  t.equal(validateInput(article, { slug: 'Not valid!' }, { partial: true, draft: true }).values.slug, 'Not valid!', 'drafts skip the pattern')
})

t.test('enumeration', async (t) => {
  t.equal(sampleValue('level', 'high'), 'high')
  t.same(only(sample, { level: 'mid' }, UPDATE), { path: ['level'], message: 'level must be one of the following values: low, high, ', value: 'mid' })
  t.same(only(sample, { level: 5 }, UPDATE), { path: ['level'], message: 'level must be one of the following values: low, high, ', value: '5' },
    'yup casts a number to a string first')
  t.same(fieldErrors(sample, { level: { a: 1 } }, UPDATE), [
    { path: ['level'], message: 'level must be a `string` type, but the final value was: `{\n  "a": "1"\n}`.', name: 'ValidationError', value: { a: 1 } },
    { path: ['level'], message: 'level must be one of the following values: low, high, ', name: 'ValidationError', value: { a: 1 } }
  ], 'a value that is not castable fails both the type and the oneOf test')
  t.equal(sampleValue('level', null), null)
})

t.test('integer', async (t) => {
  t.equal(sampleValue('count', 7), 7)
  t.equal(sampleValue('count', '7'), 7)
  t.equal(sampleValue('count', ' 1 0 '), 10, 'yup drops all whitespace')
  t.equal(sampleValue('count', '1e1'), 10)
  t.equal(sampleValue('free', -2147483648), -2147483648)
  t.equal(sampleValue('free', 2147483647), 2147483647)

  const nan = (cast: string) => `count must be a \`number\` type, but the final value was: \`NaN\` (cast from the value \`${cast}\`).`
  t.same(only(sample, { count: 'abc' }, UPDATE), { path: ['count'], message: nan('"abc"'), value: null })
  t.same(only(sample, { count: '' }, UPDATE), { path: ['count'], message: nan('""'), value: null })
  t.same(only(sample, { count: true }, UPDATE), { path: ['count'], message: nan('true'), value: null })
  t.same(only(sample, { count: [1] }, UPDATE), { path: ['count'], message: nan('[\n  "1"\n]'), value: null })
  t.same(only(sample, { count: { a: 'x' } }, UPDATE), { path: ['count'], message: nan('{\n  "a": "\\"x\\""\n}'), value: null })

  t.same(only(sample, { count: 1.5 }, UPDATE), { path: ['count'], message: 'count must be an integer', value: 1.5 })
  t.same(only(sample, { count: 0 }, UPDATE), { path: ['count'], message: 'count must be greater than or equal to 1', value: 0 })
  t.same(only(sample, { count: '11' }, UPDATE), { path: ['count'], message: 'count must be less than or equal to 10', value: 11 })
  t.same(fieldErrors(sample, { count: 11.5 }, UPDATE).map((e) => e.message), ['count must be an integer', 'count must be less than or equal to 10'])

  t.test('the int4 column range', async (t) => {
    t.same(only(sample, { free: 2147483648 }, UPDATE), { path: ['free'], message: 'free must be less than or equal to 2147483647', value: 2147483648 })
    t.same(only(sample, { free: '-2147483649' }, UPDATE), { path: ['free'], message: 'free must be greater than or equal to -2147483648', value: -2147483649 })
    t.same(fieldErrors(sample, { free: 'Infinity' }, UPDATE), [
      { path: ['free'], message: 'free must be an integer', name: 'ValidationError', value: null },
      { path: ['free'], message: 'free must be less than or equal to 2147483647', name: 'ValidationError', value: null }
    ])
  })

  t.test('drafts skip min, not max', async (t) => {
    const draft = { partial: true, draft: true }
    t.equal(sampleValue('count', 0, draft), 0)
    t.equal(only(sample, { count: 11 }, draft).message, 'count must be less than or equal to 10')
    t.equal(only(sample, { free: -2147483649 }, draft).message, 'free must be greater than or equal to -2147483648', 'column bounds always apply')
  })
})

t.test('float and decimal', async (t) => {
  t.equal(sampleValue('ratio', 1.5), 1.5)
  t.equal(sampleValue('ratio', '2.5'), 2.5)
  t.equal(sampleValue('price', 19.99), 19.99)
  t.equal(sampleValue('price', '-0.001'), -0.001)
  t.equal(validateInput(article, { rating: 2.5 }, UPDATE).values.rating, 2.5)
  t.same(only(sample, { ratio: 0.1 }, UPDATE), { path: ['ratio'], message: 'ratio must be greater than or equal to 0.5', value: 0.1 })
  t.same(only(sample, { ratio: 3 }, UPDATE), { path: ['ratio'], message: 'ratio must be less than or equal to 2.5', value: 3 })
  t.same(only(sample, { price: 'Infinity' }, UPDATE), { path: ['price'], message: 'price must be a finite number', value: null })
  t.same(only(sample, { price: 'x' }, UPDATE), {
    path: ['price'], message: 'price must be a `number` type, but the final value was: `NaN` (cast from the value `"x"`).', value: null
  })
  t.equal(sampleValue('ratio', 0.1, { partial: true, draft: true }), 0.1)
})

t.test('biginteger: numbers or strings of digits, kept as a string', async (t) => {
  t.equal(sampleValue('big', '123'), '123')
  t.equal(sampleValue('big', 42), '42')
  t.equal(sampleValue('big', '+7'), '7')
  t.equal(sampleValue('big', '-0005'), '-5')
  t.equal(sampleValue('huge', '9223372036854775807'), '9223372036854775807')
  t.equal(sampleValue('huge', '-9223372036854775808'), '-9223372036854775808')
  t.equal(sampleValue('huge', Number.MAX_SAFE_INTEGER), '9007199254740991')

  const notInteger = (name: string) => `${name} must be an integer (a number, or a string of digits)`
  t.same(only(sample, { huge: 1.5 }, UPDATE), { path: ['huge'], message: notInteger('huge'), value: 1.5 })
  t.same(only(sample, { huge: 'abc' }, UPDATE), { path: ['huge'], message: notInteger('huge'), value: 'abc' })
  t.same(only(sample, { huge: '1.0' }, UPDATE).message, notInteger('huge'))
  t.same(only(sample, { huge: true }, UPDATE).message, notInteger('huge'))
  t.same(only(sample, { huge: 2 ** 60 }, UPDATE), {
    path: ['huge'],
    message: 'huge is beyond the safe integer range of a JSON number (±9007199254740991); send it as a string of digits',
    value: 2 ** 60
  })
  t.same(only(sample, { huge: '9223372036854775808' }, UPDATE), {
    path: ['huge'], message: 'huge must be less than or equal to 9223372036854775807', value: '9223372036854775808'
  })
  t.equal(only(sample, { huge: '-9223372036854775809' }, UPDATE).message, 'huge must be greater than or equal to -9223372036854775808')
  t.equal(only(sample, { big: '-6' }, UPDATE).message, 'big must be greater than or equal to -5')
  t.equal(only(sample, { big: '9000000000000000001' }, UPDATE).message, 'big must be less than or equal to 9000000000000000000')
  t.equal(sampleValue('big', -6, { partial: true, draft: true }), '-6')
})

t.test('boolean', async (t) => {
  const cases: Array<[unknown, boolean]> = [
    [true, true], [false, false], ['true', true], ['false', false], ['TRUE', true], ['False', false],
    ['1', true], ['0', false], [1, true], [0, false]
  ]
  for (const [input, expected] of cases) t.equal(sampleValue('flag', input), expected, JSON.stringify(input))
  t.same(only(sample, { flag: 'yes' }, UPDATE), { path: ['flag'], message: 'flag must be a `boolean` type, but the final value was: `"yes"`.', value: 'yes' })
  t.same(only(sample, { flag: 2 }, UPDATE), { path: ['flag'], message: 'flag must be a `boolean` type, but the final value was: `2`.', value: 2 })
  t.same(only(sample, { flag: {} }, UPDATE), { path: ['flag'], message: 'flag must be a `boolean` type, but the final value was: `{}`.', value: {} })
  t.same(only(sample, { flag: [] }, UPDATE).message, 'flag must be a `boolean` type, but the final value was: `[]`.')
})

/** Strapi's database layer refuses a bad date or time with its own plain 400: no details. */
const refusedFormat = (message: string) => ({ status: 400, name: 'ValidationError', message, details: {} })

t.test('date', async (t) => {
  t.equal(sampleValue('day', '2025-05-05'), '2025-05-05')
  t.equal(sampleValue('day', '2024-02-29'), '2024-02-29')
  t.equal(sampleValue('day', '2025-05-05T23:30:00-05:00'), '2025-05-05', 'the date part of a date-time, as written')
  t.equal(sampleValue('day', '2025-05-05T10:00:00.000Z'), '2025-05-05')
  t.equal(sampleValue('day', '0001-01-01'), '0001-01-01')
  for (const bad of ['2025-02-29', '2025-04-31', '0000-01-01', '2025-05-05T25:00:00Z']) {
    t.same(body(sample, { day: bad }, UPDATE), refusedFormat('Invalid date'), `${bad}: a date that starts well but is no day`)
  }
  for (const bad of ['2025-13-01', '2025-5-5', '05/05/2025', 'today', '', 20250505, true]) {
    t.same(body(sample, { day: bad }, UPDATE), refusedFormat('Invalid format, expected yyyy-MM-dd'), String(bad))
  }
})

t.test('time', async (t) => {
  t.equal(sampleValue('at', '09:30'), '09:30:00.000')
  t.equal(sampleValue('at', '09:30:15'), '09:30:15.000')
  t.equal(sampleValue('at', '09:30:15.5'), '09:30:15.500')
  t.equal(sampleValue('at', '23:59:59.999'), '23:59:59.999')
  t.equal(sampleValue('at', '00:00'), '00:00:00.000')
  for (const bad of ['24:00', '9:30', '09:60', '09:30:60', '09:30:15.1234', '09:30:15Z', 'noon']) {
    t.same(body(sample, { at: bad }, UPDATE), refusedFormat('Invalid time format, expected HH:mm:ss.SSS'), bad)
  }
  t.same(body(sample, { at: 930 }, UPDATE), refusedFormat('Expected a string, got a number'))
  t.same(body(sample, { at: {} }, UPDATE), refusedFormat('Expected a string, got a object'), 'typeof, as Strapi words it')
})

t.test('datetime and timestamp', async (t) => {
  for (const name of ['when', 'stamp']) {
    t.equal(sampleValue(name, '2025-01-01T10:00:00Z'), '2025-01-01T10:00:00.000Z')
    t.equal(sampleValue(name, '2025-01-01T10:00:00.123456Z'), '2025-01-01T10:00:00.123Z', 'precision of the column: milliseconds')
    t.equal(sampleValue(name, '2025-01-01T10:00+02:00'), '2025-01-01T08:00:00.000Z')
    t.equal(sampleValue(name, '2025-01-01T01:00:00-0130'), '2025-01-01T02:30:00.000Z')
    t.equal(sampleValue(name, '2025-01-01 10:00:00'), '2025-01-01T10:00:00.000Z', 'no offset is UTC')
    t.equal(sampleValue(name, '2025-01-01'), '2025-01-01T00:00:00.000Z')
    t.equal(sampleValue(name, 1735725600000), '2025-01-01T10:00:00.000Z')
    t.equal(sampleValue(name, '1735725600000'), '2025-01-01T10:00:00.000Z')
    t.equal(sampleValue(name, -62135596800000), '0001-01-01T00:00:00.000Z')
    for (const bad of ['yesterday', '2025-13-01T00:00:00Z', '2025-01-01T10:00:00+25:00', '0001-01-01T00:00:00+01:00', 1e20, 253402300800000, true, '']) {
      t.same(body(sample, { [name]: bad }, UPDATE), refusedFormat('Invalid format, expected a timestamp or an ISO date'), String(bad))
    }
  }
})

t.test('a bad date or time is reported only when every yup rule passed, the first in model order', async (t) => {
  const both = body(sample, { day: 'today', flag: 'maybe' }, UPDATE) as unknown as { message: string, details: { errors: Array<{ path: string[] }> } }
  t.equal(both.message, 'flag must be a `boolean` type, but the final value was: `"maybe"`.', 'the yup error wins')
  t.same(both.details.errors.map((e) => e.path), [['flag']], 'and the date is not listed with it')
  const names = Object.keys(sample.attributes)
  const [first, second] = ['day', 'at'].sort((a, b) => names.indexOf(a) - names.indexOf(b))
  const bad: Record<string, string> = { day: 'today', at: 'noon' }
  const expected = { day: 'Invalid format, expected yyyy-MM-dd', at: 'Invalid time format, expected HH:mm:ss.SSS' }
  t.same(body(sample, { [second]: bad[second], [first]: bad[first] }, UPDATE), refusedFormat(expected[first as 'day']), `${first} comes first in the model`)
})

t.test('json', async (t) => {
  const value = { a: [1, 'x', null, { b: false }] }
  t.equal(sampleValue('info', value), value, 'stored as is')
  for (const scalar of ['text', 42, false, []]) t.same(sampleValue('info', scalar), scalar)
  t.same(only(sample, { info: { a: 'x\u0000' } }, UPDATE).message, 'info must not contain NUL characters (\\u0000) or unpaired surrogates')
  t.same(only(sample, { info: { 'k\u0000': 1 } }, UPDATE).message, 'info must not contain NUL characters (\\u0000) or unpaired surrogates')
  let deep: unknown = 1
  for (let i = 0; i < 600; i++) deep = [deep]
  t.same(only(sample, { info: deep }, UPDATE).message, 'info must not be nested more than 500 levels deep')
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.same(only(sample, { info: cyclic }, UPDATE).message, 'info must be a JSON value')
  t.same(only(sample, { info: { n: NaN } }, UPDATE).message, 'info must be a JSON value')
  t.same(only(sample, { info: new Date(0) }, UPDATE).message, 'info must be a JSON value')
  const shared = { x: 1 }
  t.same(sampleValue('info', [shared, shared]), [shared, shared], 'shared references are not cycles')
})

t.test('blocks', async (t) => {
  const nodes = [{ type: 'paragraph', children: [{ type: 'text', text: 'hi' }] }, { type: 'heading', level: 2, children: [] }]
  t.equal(sampleValue('doc', nodes), nodes)
  t.same(sampleValue('doc', JSON.stringify(nodes)), nodes, 'yup\'s array cast parses JSON text')
  t.same(sampleValue('doc', []), [])
  t.same(only(sample, { doc: 'abc' }, UPDATE), {
    path: ['doc'], message: 'doc must be a `array` type, but the final value was: `null` (cast from the value `"abc"`).', value: null
  })
  t.same(only(sample, { doc: {} }, UPDATE).message, 'doc must be a `array` type, but the final value was: `null` (cast from the value `{}`).')
  t.same(fieldErrors(sample, { doc: [{ type: 'paragraph' }, { type: 'nope' }, 5] }, UPDATE), [
    { path: ['doc', '1'], message: 'Block node is of invalid type', name: 'ValidationError', value: { type: 'nope' } },
    { path: ['doc', '2'], message: 'Block node is of invalid type', name: 'ValidationError', value: 5 }
  ])
  t.same(only(sample, { doc: [{ type: 'paragraph', children: [{ type: 'text', text: '\u0000' }] }] }, UPDATE).message,
    'doc must not contain NUL characters (\\u0000) or unpaired surrogates')
})

t.test('printValue and yupPath render like yup', async (t) => {
  t.equal(printValue('a'), 'a')
  t.equal(printValue('a', true), '"a"')
  t.equal(printValue(NaN), 'NaN')
  t.equal(printValue(-0), '-0')
  t.equal(printValue(null), 'null')
  t.equal(printValue(undefined), 'undefined')
  t.equal(printValue(new Date(0)), '1970-01-01T00:00:00.000Z')
  t.equal(printValue(/a/g), '/a/g')
  t.equal(printValue({ a: [1, 'b'] }, true), '{\n  "a": [\n    "1",\n    "\\"b\\""\n  ]\n}')
  t.equal(yupPath([]), 'this')
  t.equal(yupPath(['title']), 'title')
  t.equal(yupPath(['blocks', '0', 'text']), 'blocks[0].text')
  t.equal(yupPath(['seo', 'metaTitle']), 'seo.metaTitle')
})
