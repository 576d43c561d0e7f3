/**
 * A small LRU map, with no dependency on any layer so that any of them may use it: the compiled
 * statements of reads (building and compiling a query with Kysely costs more per request than
 * running it on a warm connection) and the credentials auth has looked up are both bounded by it.
 * A Map iterates in insertion order, so re-inserting on a hit keeps the oldest entry first.
 */
export class LruCache<K, V> {
  readonly #max: number
  readonly #map = new Map<K, V>()

  constructor (max: number) { this.#max = max }

  /** The most recently used key: a hit on it moves nothing (most hits, when one request repeats). */
  #newest: K | undefined = undefined

  get (key: K): V | undefined {
    const value = this.#map.get(key)
    if (value !== undefined && key !== this.#newest) {
      this.#map.delete(key)
      this.#map.set(key, value)
      this.#newest = key
    }
    return value
  }

  set (key: K, value: V): void {
    this.#map.delete(key)
    this.#map.set(key, value)
    this.#newest = key
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value as K)
  }

  clear (): void {
    this.#map.clear()
    this.#newest = undefined
  }

  get size (): number { return this.#map.size }
}
