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
    let group = this.#groups.get(owner)
    if (group === undefined) {
      group = new LruCache(this.#max)
      this.#groups.set(owner, group)
    }
    let value = group.get(key)
    if (value === undefined) {
      value = build()
      group.set(key, value)
    }
    return value
  }
}
