import t from 'tap'
import { LruCache } from '../lib/lru-cache.js'

// The statement cache, the query-tree memos and auth's caches are LruCaches: a hit on the newest
// key moves nothing (the hot path of a repeated request), and eviction stays least recently used.

t.test('a hit on the newest key keeps the order; a hit on an older key makes it the newest', async (t) => {
  const cache = new LruCache<string, number>(3)
  cache.set('a', 1)
  cache.set('b', 2)
  cache.set('c', 3)
  t.equal(cache.get('c'), 3, 'the newest, hit')
  t.equal(cache.get('c'), 3, 'and hit again')
  t.equal(cache.get('a'), 1, 'the oldest, hit: now the newest')
  cache.set('d', 4)
  t.equal(cache.get('b'), undefined, 'b, least recently used, went first')
  t.same([cache.get('a'), cache.get('c'), cache.get('d')], [1, 3, 4])
  t.equal(cache.size, 3)
})

t.test('the newest key evicted or cleared is forgotten as the newest', async (t) => {
  const cache = new LruCache<string, number>(1)
  cache.set('a', 1)
  t.equal(cache.get('a'), 1)
  cache.set('b', 2)
  t.equal(cache.get('a'), undefined, 'a was evicted')
  t.equal(cache.get('b'), 2)
  cache.clear()
  t.equal(cache.get('b'), undefined)
  cache.set('b', 3)
  cache.set('c', 4)
  t.equal(cache.get('b'), undefined, 'b, set again after the clear, was evicted by c')
  t.equal(cache.get('c'), 4)
})

t.test('a hit after other keys were set moves the key behind them', async (t) => {
  const cache = new LruCache<string, number>(2)
  cache.set('a', 1)
  t.equal(cache.get('a'), 1)
  cache.set('b', 2)
  t.equal(cache.get('a'), 1, 'a is no longer the newest: it moves')
  cache.set('c', 3)
  t.equal(cache.get('b'), undefined, 'b went, not a')
  t.equal(cache.get('a'), 1)
})
