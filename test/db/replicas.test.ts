import { randomBytes } from 'node:crypto'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { DATABASE_URL } from '../helpers/database.js'
import { startReplication, type Replication } from '../helpers/replica.js'
import { startApp, type LogLine } from '../reliability/helpers.js'

/**
 * `db: { primary, replicas }` against a real streaming replica (test/helpers/replica.ts). Which
 * server answered a read is seen by what it returns: with the replica's replay paused
 * (`pg_wal_replay_pause()`), a document written since exists on the primary only.
 */
t.setTimeout(60_000)

const STRONG = { 'x-content-api-consistency': 'strong' }

const schema = `rep_${randomBytes(6).toString('hex')}`
const replication = await startReplication(DATABASE_URL, schema)
if (typeof replication === 'string') {
  t.test('read replicas', { skip: replication }, () => {})
} else {
  t.teardown(async () => { await replication.close() })
  t.comment(`replica of ${replication.source === 'server' ? "DATABASE_URL's server" : 'a private primary (DATABASE_URL\'s server refuses replication connections)'}, ready in ${replication.setupMs} ms`)
  await run(replication)
}

async function titles (app: FastifyInstance, headers: Record<string, string> = {}): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: '/api/posts?sort=title&pagination[pageSize]=100', headers })
  if (res.statusCode !== 200) throw new Error(`GET /api/posts: ${res.statusCode} ${res.body}`)
  return (res.json().data as Array<{ title: string }>).map((d) => d.title)
}

async function create (app: FastifyInstance, title: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/posts', payload: { data: { title } } })
  if (res.statusCode !== 200) throw new Error(`POST /api/posts: ${res.statusCode} ${res.body}`)
  return res.json().data.documentId as string
}

async function run (rep: Replication): Promise<void> {
  const pause = async (): Promise<void> => { await rep.replica.query('select pg_wal_replay_pause()') }
  const resume = async (): Promise<void> => { await rep.replica.query('select pg_wal_replay_resume()') }
  // The replica has not replayed the app's schema sync: its tables exist on the primary only.
  await rep.caughtUp()
  await pause()
  const { app, logs } = await startApp(t, {
    db: { primary: rep.primaryUrl, replicas: [rep.replicaUrl], probeIntervalMs: 200 },
    pool: { connectionTimeoutMs: 2000 }
  })

  await t.test('a replica behind the schema sync: its reads run on the primary', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/api/posts' })
    t.equal(res.statusCode, 200, 'the replica answers 42P01 (no such table): the read runs again on the primary')
    t.same(res.json().data, [])
    await resume()
    await rep.caughtUp()
  })

  await t.test('reads go to the replica, writes and the reads that must see them to the primary', async (t) => {
    await create(app, 'a')
    await rep.caughtUp()
    t.same(await titles(app), ['a'], 'the replica has replayed the first post')

    await pause()
    const created = await app.inject({ method: 'POST', url: '/api/posts', payload: { data: { title: 'b' } } })
    t.equal(created.statusCode, 200, 'a create succeeds while the replica is paused: writes go to the primary')
    t.equal(created.json().data.title, 'b', 'the create answers with the document it wrote (re-read inside its transaction)')
    const b = created.json().data.documentId as string

    t.same(await titles(app), ['a'], 'a list read without the header is answered by the replica, which has not replayed b')
    t.equal((await app.inject({ method: 'GET', url: `/api/posts/${b}` })).statusCode, 404, 'so is a one-document read')
    t.same(await titles(app, STRONG), ['a', 'b'], 'x-content-api-consistency: strong reads on the primary')
    const one = await app.inject({ method: 'GET', url: `/api/posts/${b}`, headers: { 'X-Content-API-Consistency': ' Strong ' } })
    t.equal(one.statusCode, 200, 'the header is matched without regard to case and spaces')

    const gql = async (query: string, headers: Record<string, string> = {}): Promise<any> =>
      (await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query } })).json()
    const mutation = await gql('mutation { createPost(data: { title: "c" }) { data { attributes { title } } } }')
    t.same(mutation.data?.createPost?.data?.attributes, { title: 'c' }, 'a GraphQL mutation reads its answer on the primary')
    const listed = (body: any): string[] => body.data.posts.data.map((d: any) => d.attributes.title).sort()
    t.same(listed(await gql('{ posts { data { attributes { title } } } }')), ['a'], 'a GraphQL query reads on the replica')
    t.same(listed(await gql('{ posts { data { attributes { title } } } }', STRONG)), ['a', 'b', 'c'], 'and on the primary with the header')

    const posts = app.contentApi.documents('api::post.post')
    t.equal((await posts.findMany()).length, 3, 'application code reads on the primary by default')
    t.equal((await posts.findMany({ consistency: 'eventual' })).length, 1, "and on a replica with consistency: 'eventual'")
    t.equal(await posts.count({ consistency: 'eventual' }), 1, 'count too')

    await resume()
    await rep.caughtUp()
    t.same(await titles(app), ['a', 'b', 'c'], 'once replayed, the replica answers with every post')
  })

  await t.test('a replica that stops: reads fall back to the primary without an error, and return once it is back', async (t) => {
    await rep.stopReplica()
    const stoppedAt = Date.now()
    t.same(await titles(app), ['a', 'b', 'c'], 'the first read after the stop answers 200 from the primary')
    const fallbackMs = Date.now() - stoppedAt
    for (let i = 0; i < 5; i++) t.same(await titles(app), ['a', 'b', 'c'], `read ${i + 2} while the replica is down: 200`)
    t.ok(logs.some((l: LogLine) => l.msg.includes('a read replica is down')), 'the app logged the replica down')
    t.comment(`first read after the replica stopped: ${fallbackMs} ms`)
    t.ok(fallbackMs < 2000, `the fallback took ${fallbackMs} ms`)

    await rep.startReplica()
    const upAt = Date.now()
    await pause()
    await create(app, 'd')
    let back = -1
    while (Date.now() - upAt < 10_000) {
      if (!(await titles(app)).includes('d')) { back = Date.now() - upAt; break }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    t.comment(`reads returned to the replica ${back} ms after it accepted connections (probeIntervalMs: 200)`)
    t.ok(back >= 0, 'reads go to the replica again once its probe answers')
    t.same(await titles(app, STRONG), ['a', 'b', 'c', 'd'], 'the primary still answers with the header')
    await resume()
  })

  await t.test('maxLagMs: a replica that lags more is not read from', async (t) => {
    const { app: bounded, logs: boundedLogs } = await startApp(t, {
      db: { primary: rep.primaryUrl, replicas: [rep.replicaUrl], probeIntervalMs: 100, maxLagMs: 300 },
      pool: { connectionTimeoutMs: 2000 }
    })
    await rep.caughtUp()
    t.same(await titles(bounded), ['a', 'b', 'c', 'd'], 'reads answer while the replica is caught up (its lag is 0)')
    await pause()
    await create(bounded, 'e')
    const pausedAt = Date.now()
    let seen = -1
    while (Date.now() - pausedAt < 5000) {
      if ((await titles(bounded)).includes('e')) { seen = Date.now() - pausedAt; break }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    t.ok(seen >= 0, `the lagging replica was left out: the primary answered ${seen} ms after the write`)
    t.ok(boundedLogs.some((l: LogLine) => l.msg.includes('lags more than db.maxLagMs')), 'the app logged the lag')
    await resume()
    await bounded.close()
  })
  await app.close()
}
