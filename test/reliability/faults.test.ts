import t from 'tap'
import { isDatabaseUnavailable } from '../../lib/db/faults.js'

/**
 * Which errors mean "the database cannot serve now" (503) and which do not. The suite meets the
 * real ones (terminate.test.ts, timeouts.test.ts, outage.test.ts, pglite.test.ts); this table
 * records the decisions for those it cannot provoke on demand.
 */

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code })

t.test('unavailable: 503', async (t) => {
  for (const code of ['08006', '08001', '57P01', '57P02', '57P03', '57014', '53300', '25P03', '55P03']) {
    t.ok(isDatabaseUnavailable(withCode(code)), `SQLSTATE ${code}`)
  }
  // Lost a race and rolled back whole: the same request sent again will very likely succeed.
  t.ok(isDatabaseUnavailable(withCode('40001')), 'serialization failure')
  t.ok(isDatabaseUnavailable(withCode('40P01')), 'deadlock')
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']) {
    t.ok(isDatabaseUnavailable(withCode(code)), code)
  }
  t.ok(isDatabaseUnavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])), 'a refused connection to every address of a host')
  t.ok(isDatabaseUnavailable(new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') })))
  t.ok(isDatabaseUnavailable(new Error('wrapped', { cause: withCode('57P01') })), 'through a cause')
})

t.test('not unavailable: the request\'s own fault, or ours', async (t) => {
  for (const code of ['23505', '22003', '42P01', '42703', 'XX000', 'FCA_ERR_VALIDATION', 'ENOENT']) {
    t.notOk(isDatabaseUnavailable(withCode(code)), code)
  }
  t.notOk(isDatabaseUnavailable(new TypeError('Cannot read properties of undefined')))
  t.notOk(isDatabaseUnavailable(null))
  t.notOk(isDatabaseUnavailable('Connection terminated'), 'a string is not an error')
  let deep: Error = withCode('57P01')
  for (let i = 0; i < 10; i++) deep = new Error('wrapped', { cause: deep })
  t.notOk(isDatabaseUnavailable(deep), 'causes are followed a few levels only')
})
