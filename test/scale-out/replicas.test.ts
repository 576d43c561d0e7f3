import { randomBytes } from 'node:crypto'
import t from 'tap'
import { DATABASE_URL } from '../helpers/database.js'
import { startReplication } from '../helpers/replica.js'
import { call, startInstances, type Instance } from './instances.js'

/**
 * Three instances in three processes on one primary and one streaming replica
 * (`db: { primary, replicas }`): their reads go to the replica (a post written while its replay
 * is paused is not seen without `x-content-api-consistency: strong`), and when the replica stops,
 * every instance keeps answering from the primary, then reads from the replica again once it is back.
 */

const STRONG = { 'x-content-api-consistency': 'strong' }
const schema = `sorep_${randomBytes(6).toString('hex')}`
const replication = await startReplication(DATABASE_URL, schema)

async function titles (instance: Instance, headers: Record<string, string> = {}): Promise<string[] | number> {
  const res = await fetch(`${instance.url}/api/posts?sort=title&pagination[pageSize]=100`, { headers })
  if (res.status !== 200) { await res.arrayBuffer(); return res.status }
  return ((await res.json()) as { data: Array<{ title: string }> }).data.map((d) => d.title)
}

async function create (instance: Instance, title: string): Promise<number> {
  const res = await fetch(`${instance.url}/api/posts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: { title, tags: [] } }) })
  await res.arrayBuffer()
  return res.status
}

t.test('scale-out: three instances reading from a replica', { skip: typeof replication === 'string' ? replication : false, timeout: 90_000 }, async (t) => {
  if (typeof replication === 'string') return
  t.teardown(async () => { await replication.close() })
  const db = { primary: replication.primaryUrl, replicas: [replication.replicaUrl], probeIntervalMs: 200 }
  const instances = await startInstances(t, 3, { db: replication.primaryUrl, options: { db, pool: { connectionTimeoutMs: 2000 } } })
  await call(instances[0], 'permissions', 'grant', ['public', ['find', 'findOne', 'create'].map((a) => `api::post.post.${a}`)])
  t.equal(await create(instances[0], 'a'), 200)
  await replication.caughtUp()
  for (const instance of instances) {
    let seen: string[] | number = []
    for (let i = 0; i < 100 && JSON.stringify(seen) !== '["a"]'; i++) seen = await titles(instance)
    t.same(seen, ['a'], `${instance.url} reads the replayed post`)
  }

  await replication.replica.query('select pg_wal_replay_pause()')
  t.equal(await create(instances[1], 'b'), 200, 'a write through B while the replica is paused: on the primary')
  for (const instance of instances) {
    t.same(await titles(instance), ['a'], `${instance.url}: its reads are the replica's (b not replayed)`)
    t.same(await titles(instance, STRONG), ['a', 'b'], `${instance.url}: with the header, the primary's`)
  }
  await replication.replica.query('select pg_wal_replay_resume()')
  await replication.caughtUp()

  await replication.stopReplica()
  for (const instance of instances) {
    for (let i = 0; i < 3; i++) t.same(await titles(instance), ['a', 'b'], `${instance.url}: the replica stopped, read ${i + 1} answered from the primary`)
  }
  await replication.startReplica()
  await replication.replica.query('select pg_wal_replay_pause()')
  t.equal(await create(instances[2], 'c'), 200)
  for (const instance of instances) {
    let seen: string[] | number = []
    // Back on the replica once a probe (every 200 ms) finds it: it has not replayed c.
    for (let i = 0; i < 200 && JSON.stringify(seen) !== '["a","b"]'; i++) {
      seen = await titles(instance)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    t.same(seen, ['a', 'b'], `${instance.url} reads from the replica again once it is back`)
  }
  await replication.replica.query('select pg_wal_replay_resume()')
})
