import type { ContentType, Registry } from '../model/registry.js'
import type { ReadAccessOf } from './access-scope.js'
import { parseFilters, type FilterNode, type ReadLimits } from './filters.js'

/**
 * What a query may reach beyond its root, through relations, media and `localizations`: a type
 * the caller may not read cannot be populated, filtered or sorted through (400, or left out of
 * `populate=*`), and a readable type shows only its visible rows and attributes. The rows become
 * one more condition on every sub-select that reads the type (populate, counts, filters through
 * relations, sorting through relations), so they are enforced in the same SQL statement.
 *
 * One instance serves one query: the conditions of each type are validated once, on first use.
 */
export class Visibility implements ReadLimits {
  readonly #registry: Registry
  readonly #access: ReadAccessOf
  readonly #rows = new Map<string, FilterNode | null>()

  constructor (registry: Registry, access: ReadAccessOf) {
    this.#registry = registry
    this.#access = access
  }

  canRead (uid: string): boolean {
    return this.#access(uid) !== null
  }

  /** The attributes of `uid` the caller may see (null: all); only asked for readable types. */
  fields (uid: string): ReadonlySet<string> | null {
    return this.#access(uid)?.fields ?? null
  }

  /** The caller's rows of `target` as a validated filter (null: every row). */
  rows (target: ContentType): FilterNode | null {
    let rows = this.#rows.get(target.uid)
    if (rows === undefined) {
      const conditions = this.#access(target.uid)?.conditions ?? null
      // Conditions are the application's, not the client's: they may go through any relation.
      rows = conditions === null ? null : parseFilters(target, conditions, this.#registry)
      this.#rows.set(target.uid, rows)
    }
    return rows
  }
}

/** `a AND b`, either of which may be absent. */
export function andFilters (a: FilterNode | null, b: FilterNode | null): FilterNode | null {
  if (a === null) return b
  if (b === null) return a
  return { kind: 'and', children: [a, b] }
}
