import t from 'tap'
import { sql } from 'kysely'
import { embeddedOnly, newPGlite } from '../helpers/database.js'
import { assertGraphqlUnavailable, assertUnavailable, postBody, sleep, startApp } from './helpers.js'

/**
 * Embedded PGlite, where the same rules apply: a closed instance answers 503, not 500, and
 * `app.close()` lets a transaction in progress commit before it closes the instance it created.
 * (PGlite has no pool, no network and no statement timeout: docs/operations.md.)
 */

// Booting PGlite takes seconds, much more on a loaded machine.
t.setTimeout(180_000)
const server = { pluginTimeout: 120_000 }

t.test('a closed PGlite instance: 503 in the envelope, and in GraphQL\'s format', { skip: embeddedOnly }, async (t) => {
  const pglite = await newPGlite()
  t.teardown(async () => { if (!pglite.closed) await pglite.close() })
  const { app, logs } = await startApp(t, { db: { pglite } }, server)
  t.equal((await app.inject({ method: 'POST', url: '/api/posts', payload: postBody('before') })).statusCode, 200)

  await pglite.close()
  assertUnavailable(t, await app.inject('/api/posts'), 'a read')
  assertUnavailable(t, await app.inject({ method: 'POST', url: '/api/posts', payload: postBody('after') }), 'a write')
  assertGraphqlUnavailable(t, await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ posts { data { id } } }' } }), 'GraphQL')
  t.ok(logs.some((l) => l.level === 40 && l.err?.message === 'PGlite is closed'), 'the cause is logged as a warning')
  t.same(logs.filter((l) => l.level >= 50), [], 'nothing logged as an error')
})

t.test('app.close() on the embedded database it created: a transaction in progress commits first', { skip: embeddedOnly }, async (t) => {
  const { app } = await startApp(t, {}, server)
  // Application code's own transaction, outside any request (which app.close() would wait for).
  const own = app.contentApi.db.transaction().execute(async (trx) => {
    await sql`insert into posts (document_id, title) values ('own', 'own')`.execute(trx)
    await sleep(300)
    return (await sql<{ n: number }>`select count(*)::int as n from posts`.execute(trx)).rows[0].n
  })
  await sleep(50)
  await app.close()
  t.equal(await own, 1, 'it finished before the instance closed')
})
