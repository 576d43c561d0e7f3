import { randomBytes } from 'node:crypto'
import t from 'tap'
import { Redis } from 'ioredis'
import { needsPostgres, scratchDatabase, startInstances, type Instance } from './instances.js'
import { reachable } from '../helpers/net.js'

/**
 * The credential routes' rate limit counted once for three instances in three processes, in the
 * machine's Redis (auth.rateLimit.redis): logins spread over the instances meet the limit after
 * `max` attempts in all, not `max` per instance.
 */

const REDIS_URL = 'redis://127.0.0.1:6379'
const MAX = 3
const PASSWORD = 'Password123!'

async function post (instance: Instance, path: string, body: unknown): Promise<number> {
  const res = await fetch(`${instance.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await res.arrayBuffer()
  return res.status
}

const skip = needsPostgres !== false ? needsPostgres : (await reachable(6379) ? false : 'no Redis answers on 127.0.0.1:6379 (start redis-server to run this test)')

t.test('scale-out: one rate limit for three instances, in Redis', { skip, timeout: 60_000 }, async (t) => {
  const nameSpace = `fca-test-so-rl-${randomBytes(4).toString('hex')}:`
  const redis = new Redis(REDIS_URL)
  t.teardown(async () => {
    const keys = await redis.keys(`${nameSpace}*`)
    if (keys.length > 0) await redis.del(...keys)
    redis.disconnect()
  })
  const db = await scratchDatabase(t, 'ratelimit')
  const rateLimit = { max: MAX, timeWindow: 60_000, redis: REDIS_URL, nameSpace }
  const instances = await startInstances(t, 3, { db, options: { auth: { rateLimit } } })

  t.equal(await post(instances[0], '/api/auth/local/register', { username: 'spread', email: 'spread@example.com', password: PASSWORD }), 200, 'registered')
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push(await post(instances[i % 3], '/api/auth/local', { identifier: 'spread', password: PASSWORD }))
  t.same(statuses, [200, 200, 200, 429, 429, 429], `the ${MAX + 1}th login in all is refused, whichever instance it reaches (without the shared store: ${MAX} per instance, 9 in all)`)
})
