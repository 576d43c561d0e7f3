/**
 * A small LRU map. Compiled statements are cached by the exact request that produced them (the
 * content type, the raw query string and the caller's access scope), because building and
 * compiling a query with Kysely costs more per request than running it on a warm connection.
 * A Map iterates in insertion order, so re-inserting on a hit keeps the oldest entry first.
 */
export class LruCache<K, V> {
  readonly #max: number
  readonly #map = new Map<K, V>()

  constructor (max: number) { this.#max = max }

  get (key: K): V | undefined {
    const value = this.#map.get(key)
    if (value !== undefined) {
      this.#map.delete(key)
      this.#map.set(key, value)
    }
    return value
  }

  set (key: K, value: V): void {
    this.#map.delete(key)
    this.#map.set(key, value)
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value as K)
  }

  clear (): void { this.#map.clear() }

  get size (): number { return this.#map.size }
}
