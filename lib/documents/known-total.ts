import type { CompiledQuery } from 'kysely'
import { KNOWN_CHANGES, KNOWN_TOTAL } from '../compiler/row-count.js'

/** What a page statement that remembers its total selects besides its data (lib/compiler/find.ts `PageRow`). */
interface CountedRow { total?: number | null, changes?: string }

/**
 * The total a kept page statement last read, with the change count of its table it was read at,
 * bound into the statement at each execution (lib/compiler/row-count.ts `rememberedCount`): while
 * the table is unchanged the statement skips its count, and PostgreSQL, not this process, decides
 * that in the statement's own snapshot, so a total is never stale, whatever the other instances
 * wrote.
 *
 * One per place the reads run (the primary, the replicas): each sees commits in its own order
 * (a replica in the log's, the primary as transactions end), so a change count read on one does
 * not name the same rows on the other.
 */
export class KnownTotal {
  readonly #at = new Map<object, { changes: string, total: number }>()

  /** The statement with what is known on `where` bound in; a change count that never matches when nothing is. */
  bound<Q extends CompiledQuery<any>> (query: Q, where: object): Q {
    const known = this.#at.get(where)
    const changes = known?.changes ?? NEVER
    const total = known?.total ?? 0
    return { ...query, parameters: query.parameters.map((p) => p === KNOWN_CHANGES ? changes : p === KNOWN_TOTAL ? total : p) }
  }

  /** Remembers the total a read on `where` answered (none past a row budget, or without a count). */
  learn (where: object, row: CountedRow | undefined): void {
    if (typeof row?.changes === 'string' && typeof row.total === 'number') this.#at.set(where, { changes: row.changes, total: row.total })
  }

  /** A statement compiled to remember its total: one that has the stand-ins among its parameters. */
  static wanted (query: CompiledQuery<any>): boolean {
    return query.parameters.includes(KNOWN_CHANGES)
  }
}

/** Not a change count's text (those are digits): matches none. */
const NEVER = '-'
