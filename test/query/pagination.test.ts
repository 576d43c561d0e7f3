import t from 'tap'
import { PaginationError, ValidationError } from '../../lib/errors.js'
import { checkRootPagination, paginationMeta, parsePagination, type PaginationLimits } from '../../lib/query/pagination.js'

/**
 * `pagination[...]` with Strapi v5's REST semantics. The oracle cases named in each test are the
 * recorded answers of Strapi 5.54 with `api.rest.defaultLimit` 25 and `maxLimit` 100; values
 * arrive as qs gives them, strings.
 */

const LIMITS: PaginationLimits = { defaultLimit: 25, maxLimit: 100, withCount: true }
const parse = (raw: unknown, limits: PaginationLimits = LIMITS) => parsePagination(raw, limits)

/** The error thrown for `raw`, as Strapi's envelope renders it. */
function rejection (raw: unknown): { status: number, name: string, message: string, details: unknown } {
  try {
    parse(raw)
  } catch (err) {
    if (err instanceof ValidationError || err instanceof PaginationError) return err.toEnvelope().error
    throw err
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be rejected`)
}

const invalid = (message: string) => ({ status: 400, name: 'ValidationError', message, details: {} })

t.test('no parameters: page 1 of defaultLimit, reported in page form (list-default)', async (t) => {
  t.same(parse(undefined), { mode: 'page', page: 1, pageSize: 25, start: 0, limit: 25, withCount: true })
  t.same(parse({}), { mode: 'page', page: 1, pageSize: 25, start: 0, limit: 25, withCount: true })
  t.same(parse('garbage'), parse({}), 'a non-object pagination is ignored')
  t.same(parse(undefined, { defaultLimit: 10, maxLimit: 50, withCount: false }),
    { mode: 'page', page: 1, pageSize: 10, start: 0, limit: 10, withCount: false })
})

t.test('page mode', async (t) => {
  t.same(parse({ page: '2', pageSize: '10' }), { mode: 'page', page: 2, pageSize: 10, start: 10, limit: 10, withCount: true }, 'list-page2-size10')
  t.same(parse({ page: '3' }), { mode: 'page', page: 3, pageSize: 25, start: 50, limit: 25, withCount: true }, 'page alone keeps the default size')
  t.same(parse({ pageSize: '5' }), { mode: 'page', page: 1, pageSize: 5, start: 0, limit: 5, withCount: true })
  t.same(parse({ page: '100', pageSize: '10' }), { mode: 'page', page: 100, pageSize: 10, start: 990, limit: 10, withCount: true }, 'past the end is not an error')
  t.same(parse({ page: ' 2 ', pageSize: '10' }).start, 10, 'numbers are trimmed (lodash toNumber)')
})

t.test('page-mode clamping', async (t) => {
  const page = (raw: Record<string, string>) => {
    const { page, pageSize, start, limit } = parse(raw)
    return { page, pageSize, start, limit }
  }
  t.same(page({ pageSize: '0' }), { page: 1, pageSize: 1, start: 0, limit: 1 }, 'pageSize 0 is 1')
  t.same(page({ pageSize: '-1' }), { page: 1, pageSize: 1, start: 0, limit: 1 }, 'pageSize -1 is 1 (list-pagesize-neg1)')
  t.same(page({ pageSize: '1' }), { page: 1, pageSize: 1, start: 0, limit: 1 }, 'list-pagesize-1')
  t.same(page({ pageSize: '1000' }), { page: 1, pageSize: 100, start: 0, limit: 100 }, 'pageSize above maxLimit is maxLimit (list-pagesize-1000)')
  t.same(page({ page: '0' }), { page: 1, pageSize: 25, start: 0, limit: 25 }, 'page 0 is page 1 (list-page-0)')
  t.same(page({ page: '-1' }), { page: 1, pageSize: 25, start: 0, limit: 25 }, 'page -1 is page 1')
  t.same(page({ page: '' }), { page: 1, pageSize: 25, start: 0, limit: 25 }, "'' is 0, so page 1")
  t.same(page({ pageSize: '' }), { page: 1, pageSize: 1, start: 0, limit: 1 }, "'' is 0, so size 1")
})

t.test('page-mode values that are not integers', async (t) => {
  t.same(rejection({ page: 'abc' }), invalid('convertStartQueryParams expected a positive integer got NaN'), 'list-page-abc')
  t.same(rejection({ page: '1.5' }), invalid('convertStartQueryParams expected a positive integer got 12.5'))
  t.same(rejection({ pageSize: '2.5' }), invalid('convertLimitQueryParams expected a positive integer got 2.5'))
  // Strapi computes start = (page - 1) * pageSize and converts start before limit.
  t.same(rejection({ page: '2', pageSize: '2.5' }), invalid('convertStartQueryParams expected a positive integer got 2.5'))
  t.same(rejection({ page: 'abc', pageSize: 'abc' }), invalid('convertStartQueryParams expected a positive integer got NaN'))
})

t.test('a size that is not a number is maxLimit (withMaxLimit: NaN < maxLimit is false)', async (t) => {
  const page = (raw: Record<string, unknown>) => {
    const { page, pageSize, start, limit } = parse(raw)
    return { page, pageSize, start, limit }
  }
  t.same(page({ pageSize: 'abc' }), { page: 1, pageSize: 100, start: 0, limit: 100 }, 'list-pagesize-abc')
  t.same(page({ page: '2', pageSize: 'abc' }), { page: 2, pageSize: 100, start: 100, limit: 100 })
  t.same(page({ pageSize: 'Infinity' }), { page: 1, pageSize: 100, start: 0, limit: 100 })
  t.same(page({ pageSize: { a: '1' } }), { page: 1, pageSize: 100, start: 0, limit: 100 }, 'an object is not a number')
  t.same(page({ pageSize: ['3'] }), { page: 1, pageSize: 3, start: 0, limit: 3 }, 'a repeated key of one value is that value')
  t.same(page({ pageSize: ['3', '4'] }), { page: 1, pageSize: 100, start: 0, limit: 100 }, 'of two values, not a number')
  t.same(page({ pageSize: '0x10' }), { page: 1, pageSize: 16, start: 0, limit: 16 }, 'JavaScript number syntax')
  t.same(page({ pageSize: '1e1' }), { page: 1, pageSize: 10, start: 0, limit: 10 })
  t.same(page({ limit: 'abc' }), { page: null, pageSize: null, start: 0, limit: 100 }, 'offset mode too')
  t.same(page({ start: '3', limit: 'many' }), { page: null, pageSize: null, start: 3, limit: 100 })
  t.same(parse({ pageSize: 'abc' }, { ...LIMITS, maxLimit: 40 }).limit, 40, 'the configured maxLimit')
})

t.test('offset mode', async (t) => {
  t.same(parse({ start: '5', limit: '5' }), { mode: 'offset', page: null, pageSize: null, start: 5, limit: 5, withCount: true }, 'list-offset')
  t.same(parse({ start: '45' }), { mode: 'offset', page: null, pageSize: null, start: 45, limit: 25, withCount: true }, 'start alone keeps the default limit (list-offset-start-only)')
  t.same(parse({ limit: '3' }), { mode: 'offset', page: null, pageSize: null, start: 0, limit: 3, withCount: true }, 'list-offset-limit-only')
})

t.test('offset-mode clamping', async (t) => {
  const window = (raw: Record<string, string>) => {
    const { start, limit } = parse(raw)
    return { start, limit }
  }
  t.same(window({ limit: '-1' }), { start: 0, limit: 1 }, 'limit -1 is 1, not "no limit" (list-limit-neg1)')
  t.same(window({ limit: '0' }), { start: 0, limit: 1 }, 'limit 0 is 1')
  t.same(window({ limit: '1000' }), { start: 0, limit: 100 }, 'limit above maxLimit is maxLimit (list-limit-1000)')
  t.same(window({ start: '-1', limit: '2' }), { start: 0, limit: 2 }, 'start -1 is 0 (list-start-neg1)')
  t.same(rejection({ start: 'abc' }), invalid('convertStartQueryParams expected a positive integer got NaN'))
  t.same(rejection({ start: '1.5' }), invalid('convertStartQueryParams expected a positive integer got 1.5'))
  t.same(rejection({ limit: '1.5' }), invalid('convertLimitQueryParams expected a positive integer got 1.5'))
})

t.test('page and offset keys mixed: PaginationError', async (t) => {
  const mixed = { status: 400, name: 'PaginationError', message: 'Cannot use both page & offset pagination in the same query', details: {} }
  t.same(rejection({ page: '1', limit: '5' }), mixed, 'list-mix-page-limit')
  t.same(rejection({ start: '0', pageSize: '5' }), mixed, 'list-mix-start-pagesize')
  t.same(rejection({ page: '1', pageSize: '5', start: '0', limit: '5' }), mixed)
  try { parse({ page: '1', start: '0' }) } catch (err) {
    t.ok(err instanceof PaginationError, 'instanceof PaginationError')
    t.equal((err as PaginationError).code, 'FCA_ERR_PAGINATION')
  }
})

t.test('withCount spellings', async (t) => {
  for (const value of ['true', 't', '1', true, 1]) t.equal(parse({ withCount: value }).withCount, true, `${JSON.stringify(value)} counts`)
  for (const value of ['false', 'f', '0', false, 0]) t.equal(parse({ withCount: value }).withCount, false, `${JSON.stringify(value)} does not count`)
  t.equal(parse({}).withCount, true, 'default: api.rest.withCount')
  t.equal(parse({}, { ...LIMITS, withCount: false }).withCount, false)
  t.equal(parse({ withCount: 'true' }, { ...LIMITS, withCount: false }).withCount, true, 'the request overrides the default')
  const message = 'Invalid withCount parameter. Expected "t","1","true","false","0","f"'
  for (const value of ['abc', 'TRUE', 'yes', '', null, '2']) {
    t.same(rejection({ withCount: value, pageSize: '3' }), invalid(message), `${JSON.stringify(value)} is rejected (list-withcount-abc)`)
  }
  t.same(parse({ start: '0', limit: '3', withCount: 'false' }).mode, 'offset', 'withCount is neither mode (list-withcount-false-offset)')
})

t.test('meta.pagination shapes', async (t) => {
  t.same(paginationMeta(parse({}), 50), { page: 1, pageSize: 25, pageCount: 2, total: 50 }, 'list-default')
  t.same(paginationMeta(parse({ page: '2', pageSize: '10' }), 50), { page: 2, pageSize: 10, pageCount: 5, total: 50 }, 'list-page2-size10')
  t.same(paginationMeta(parse({ pageSize: '-1' }), 50), { page: 1, pageSize: 1, pageCount: 50, total: 50 }, 'list-pagesize-neg1')
  t.same(paginationMeta(parse({ pageSize: '3' }), 50), { page: 1, pageSize: 3, pageCount: 17, total: 50 }, 'pageCount rounds up (fields-array)')
  t.same(paginationMeta(parse({ pageSize: '100' }), 0), { page: 1, pageSize: 100, pageCount: 0, total: 0 }, 'no match (filter-in-empty)')
  t.same(paginationMeta(parse({ page: '100', pageSize: '10' }), 50), { page: 100, pageSize: 10, pageCount: 5, total: 50 }, 'past the end')
  t.same(paginationMeta(parse({ start: '5', limit: '5' }), 50), { start: 5, limit: 5, total: 50 }, 'list-offset')
  t.same(paginationMeta(parse({ limit: '-1' }), 50), { start: 0, limit: 1, total: 50 }, 'list-limit-neg1')
  t.same(paginationMeta(parse({ page: '2', pageSize: '10', withCount: 'false' }), null), { page: 2, pageSize: 10 }, 'page2-withcount-false')
  t.same(paginationMeta(parse({ start: '0', limit: '3', withCount: 'false' }), null), { start: 0, limit: 3 }, 'list-withcount-false-offset')
  t.same(Object.keys(paginationMeta(parse({}), 7)), ['page', 'pageSize', 'pageCount', 'total'], 'key order as Strapi writes it')
  t.same(Object.keys(paginationMeta(parse({ start: '1' }), 7)), ['start', 'limit', 'total'])
})

t.test('pagination keys outside pagination[...] (checkRootPagination)', async (t) => {
  const refused = (raw: Record<string, unknown>, list: boolean): unknown => {
    try { checkRootPagination(raw, list) } catch (err) { return (err as PaginationError).toEnvelope().error }
    return 'accepted'
  }
  const mixed = { status: 400, name: 'PaginationError', message: 'Invalid pagination attributes. The page parameters are incorrect and must be in the pagination object', details: {} }
  t.same(refused({ page: '2' }, true), mixed, 'a list has its window: a root page mixes the modes')
  t.same(refused({ pageSize: '10' }, true), mixed)
  t.same(refused({ page: 'abc' }, true), mixed, 'whatever its value')
  t.equal(refused({ start: 'abc', limit: 'x' }, true), 'accepted', 'a root start or limit is replaced by the window')
  t.equal(refused({}, true), 'accepted')
  t.same(refused({ page: '1', limit: '5' }, false), mixed, 'one document: both modes')
  t.equal(refused({ page: '2', pageSize: '10' }, false), 'accepted', 'valid ones are converted and dropped')
  t.equal(refused({ start: '0', limit: '-1' }, false), 'accepted', 'limit -1 is valid')
  t.same(refused({ page: '0' }, false), { status: 400, name: 'PaginationError', message: "Invalid 'page' parameter. Expected an integer > 0, received: 0", details: {} })
  t.same(refused({ pageSize: 'abc' }, false), { status: 400, name: 'PaginationError', message: "Invalid 'pageSize' parameter. Expected an integer > 0, received: abc", details: {} })
  t.same(refused({ start: '-1' }, false), { status: 400, name: 'ValidationError', message: 'convertStartQueryParams expected a positive integer got -1', details: {} })
  t.same(refused({ limit: '1.5' }, false), { status: 400, name: 'ValidationError', message: 'convertLimitQueryParams expected a positive integer got 1.5', details: {} })
})
