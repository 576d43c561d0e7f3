import { createHash } from 'node:crypto'

/**
 * Most statements named, `pool.maxPreparedStatements`'s default: each is kept by every connection
 * that ran it until the connection closes, and takes 50-250 KiB of that backend's memory.
 */
export const MAX_PREPARED_STATEMENTS = 100

/**
 * The SQL texts the plugin's pool sends as named (prepared) statements, by their name. PostgreSQL
 * parses and plans an unnamed statement at every execution; a named one is parsed once per
 * connection, and after a few executions runs on its cached generic plan when that plan is no
 * worse (`plan_cache_mode`). The reader marks each read it caches (lib/documents/reader.ts), so
 * only statements that repeat are named; every other text runs unnamed.
 *
 * A name is a hash of the text (`fca_` and 16 base64url characters): the same text has the same
 * name on every connection, and a name never stands for two texts (pg refuses that on a
 * connection). pg keeps what a connection has prepared with the connection, so a connection lost
 * takes its statements with it, and the next one prepares them again. PostgreSQL never drops a
 * session's statements, so the registry is bounded: past `max` texts, new ones are not named, and
 * no connection holds more than `max` statements.
 *
 * ```sql
 * -- first execution on a connection: Parse "fca_Xy..." then Bind/Execute; later: Bind/Execute only
 * select row_to_json(r)::text as "data" from (... where t.document_id = $1 ...) as r
 * ```
 */
export class PreparedStatements {
  readonly #names = new Map<string, string>()
  readonly #max: number

  constructor (max = MAX_PREPARED_STATEMENTS) {
    this.#max = max
  }

  /** Names `sql`, unless it is named already or `max` texts are. */
  add (sql: string): void {
    if (this.#names.size >= this.#max || this.#names.has(sql)) return
    this.#names.set(sql, `fca_${createHash('sha256').update(sql).digest('base64url').slice(0, 16)}`)
  }

  /** The name `sql` runs under, or undefined: it runs unnamed. */
  nameOf (sql: string): string | undefined {
    return this.#names.get(sql)
  }

  get size (): number {
    return this.#names.size
  }
}
