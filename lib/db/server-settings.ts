import { sql, type Kysely } from 'kysely'
import type { PoolSettings } from './pool.js'

/** Where the check reports (the Fastify logger). */
export interface SettingsLogger {
  warn (obj: object, msg: string): void
}

/**
 * Behind a pooler in transaction mode (`pool.transactionPooling`), the pool's settings travel with
 * each transaction (`set local`, pool.ts `transactionSettings`); a statement outside any
 * transaction (the cached reads, a direct create) runs under the server's own settings for the
 * database and role. Where those are looser than the pool's, such a statement is bounded only by
 * the client's read deadline, which closes its connection but does not stop it on the server (a
 * write waiting for a lock would still commit once it gets it), and may be JIT-compiled. Run once
 * at start-up, through the pooler; logs a warning saying what to set, and changes nothing.
 *
 * ```sql
 * select current_setting('statement_timeout') as "statementTimeout", current_setting('jit') as "jit",
 *   (select setting::bigint from pg_settings where name = 'statement_timeout') as "statementTimeoutMs"
 * ```
 *
 * @example
 * await warnLooseServerSettings(db, options.pool, app.log)
 * // warn: behind a transaction-mode pooler, statements outside a transaction run under the
 * //       server's statement_timeout (0) ... alter role ... set statement_timeout = 5000
 */
export async function warnLooseServerSettings (db: Kysely<any>, settings: PoolSettings, log: SettingsLogger): Promise<void> {
  const { rows } = await sql<{ statementTimeoutMs: string, jit: string }>`select (select setting from pg_settings where name = 'statement_timeout') as "statementTimeoutMs", current_setting('jit') as "jit"`.execute(db)
  const server = { statementTimeoutMs: Number(rows[0].statementTimeoutMs), jit: rows[0].jit === 'on' }
  const set: string[] = []
  if (settings.statementTimeoutMs > 0 && (server.statementTimeoutMs === 0 || server.statementTimeoutMs > settings.statementTimeoutMs)) {
    set.push(`statement_timeout = ${settings.statementTimeoutMs}`)
  }
  if (!settings.jit && server.jit) set.push('jit = off')
  if (set.length === 0) return
  log.warn({ server, pool: { statementTimeoutMs: settings.statementTimeoutMs, jit: settings.jit } },
    'fastify-content-api: behind a transaction-mode pooler, statements outside a transaction (reads, direct creates) run under the ' +
    `server's own settings, looser than the pool's; set them for the application's role: ${set.map((s) => `alter role <role> set ${s}`).join('; ')} ` +
    '(docs/operations.md#pgbouncer)')
}
