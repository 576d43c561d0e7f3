import { LruCache } from '../lru-cache.js'

/**
 * Query trees (or what an edge builds with them) memoized where requests are parsed: REST by its
 * query string, GraphQL by a root field's AST node and variables. A repeated request costs a
 * lookup instead of a parse and a validation; the document service then finds the statement
 * compiled for the same tree object by its key, memoized on the tree (lib/query/tree-key.ts).
 *
 * Entries are grouped by an owner object (a REST plugin's route context, a GraphQL AST node),
 * held weakly: a group goes with its owner. A build that throws (a 400, a 403) stores nothing.
 */
export class TreeMemo<T> {
  readonly #max: number
  readonly #groups = new WeakMap<object, LruCache<string, T>>()

  /** `max`: entries kept per owner, least recently used first out. */
  constructor (max: number) {
    this.#max = max
  }

  get (owner: object, key: string, build: () => T): T {
    let value = this.find(owner, key)
    if (value === undefined) {
      value = build()
      this.add(owner, key, value)
    }
    return value
  }

  /** The value kept for `key`, if any (`get` without a `build` closure, for the hottest paths). */
  find (owner: object, key: string): T | undefined {
    return this.#groups.get(owner)?.get(key)
  }

  /** Keeps `value` for `key`, and returns it. */
  add (owner: object, key: string, value: T): T {
    let group = this.#groups.get(owner)
    if (group === undefined) {
      group = new LruCache(this.#max)
      this.#groups.set(owner, group)
    }
    group.set(key, value)
    return value
  }
}
