import { sql, type Kysely } from 'kysely'
import { SchemaSyncError } from '../errors.js'
import type { Registry } from '../model/registry.js'
import { desiredSchema, type TableSpec } from './desired-schema.js'
import { describeStatement } from './describe-statement.js'
import { diffSchema, type SchemaPlan } from './diff.js'
import { describeDuplicates, findDuplicates } from './duplicates.js'
import { introspectSchema } from './introspect.js'
import { lockSchema } from './lock.js'
import { introspectRowCounts, planRowCounts } from './row-counts.js'

export type { DestructiveChange, SchemaPlan } from './diff.js'

export interface SchemaSyncOptions {
  mode: 'apply' | 'dryRun' | 'off'
  allowDestructive: boolean
}

/** The part of a pino / Fastify logger sync uses. */
export interface SchemaSyncLogger {
  info (obj: unknown, msg?: string): void
  warn (obj: unknown, msg?: string): void
  debug? (obj: unknown, msg?: string): void
}

export type SchemaSyncResult = SchemaPlan & {
  /** True when the plan ran (mode `apply`); `destructive` ran too only with `allowDestructive`. */
  applied: boolean
}

function warnDestructive (plan: SchemaPlan, log: SchemaSyncLogger | undefined): void {
  if (plan.destructive.length === 0) return
  log?.warn(
    { destructive: plan.destructive },
    `Schema sync left ${plan.destructive.length} destructive change(s) unapplied:\n` +
    plan.destructive.map((d) => `  - ${d.description}\n    ${d.sql}`).join('\n') +
    '\nReview them, then set schemaSync.allowDestructive: true to apply them (or apply them yourself).'
  )
}

/**
 * One `info` line per change, `schema sync: create table articles`, and its SQL at `debug`
 * (`{ sql }` with the same message): a start-up log a person can read, the statements for
 * whoever turns debug on. A dry run says `schema sync (dry run): ...`.
 */
function logChanges (log: SchemaSyncLogger | undefined, prefix: string, statements: readonly string[]): void {
  if (log === undefined) return
  for (const statement of statements) {
    const line = `${prefix}: ${describeStatement(statement)}`
    log.info(line)
    log.debug?.({ sql: statement }, line)
  }
}

/** What `apply` runs of a plan: its statements, then its destructive changes when they are allowed. */
function toRun (plan: SchemaPlan, options: SchemaSyncOptions): string[] {
  return [...plan.statements, ...options.allowDestructive ? plan.destructive.map((change) => change.sql) : []]
}

/** The row counts' function, triggers and fills run last, once every table and column exists. */
function withRowCounts (plan: SchemaPlan, counts: string[]): SchemaPlan {
  return counts.length === 0 ? plan : { ...plan, statements: [...plan.statements, ...counts] }
}

async function run (trx: Kysely<any>, statement: string): Promise<void> {
  try {
    await sql.raw(statement).execute(trx)
  } catch (err) {
    throw new SchemaSyncError(
      `Schema sync failed on \`${statement}\`: ${(err as Error).message}. Nothing was changed.`, { cause: err }
    )
  }
}

/**
 * The plan's statements as one script, in one round trip: a text without parameters is sent in
 * PostgreSQL's simple query protocol, which runs several statements (node-postgres does so, and
 * PGliteDialect likewise). A new database's plan is a hundred statements or more, each a round
 * trip when sent alone (docs/schema-sync.md#the-advisory-lock). The script runs under a savepoint:
 * when it fails, it is rolled back and the statements run again one at a time, so that the
 * error names the statement that failed, as it would have without the script. A statement
 * ending in a `--` comment cannot swallow the separator: it stands on a line of its own.
 */
async function runAll (trx: Kysely<any>, statements: readonly string[]): Promise<void> {
  if (statements.length <= 1) {
    for (const statement of statements) await run(trx, statement)
    return
  }
  await sql`savepoint schema_sync`.execute(trx)
  try {
    await sql.raw(statements.join('\n;\n')).execute(trx)
  } catch {
    await sql`rollback to savepoint schema_sync`.execute(trx)
    for (const statement of statements) await run(trx, statement)
  }
}

/**
 * Brings the database up to the models, additively and idempotently:
 *
 * ```sql
 * begin isolation level read committed
 * set local statement_timeout = 0
 * select pg_advisory_xact_lock(<key of 'fastify-content-api:schema' and current_schema()>)
 * -- introspect pg_catalog, diff, then run the plan, as one script (runAll):
 * savepoint schema_sync
 * create table "articles" (...)
 * alter table "articles" add column "views" integer
 * create index "articles_slug_idx" on "articles" ("slug")
 * -- the row counts' triggers of a table without them, then its counts (row-counts.ts):
 * create trigger "content_api_row_counts_insert" after insert on "articles" referencing new table as new_rows ...
 * insert into "content_api_row_counts" (...) select 'articles', "published_at" is not null, coalesce("locale", ''), count(*) from "articles" group by 2, 3
 * commit
 * ```
 *
 * Introspection happens under the lock, so an instance that waited for another sees its tables
 * and plans nothing; read committed makes sure each catalog read sees what was committed while
 * it waited. PostgreSQL DDL is transactional: a failing statement leaves the database untouched.
 * A unique index to add to a table whose rows already repeat its key (two drafts of one document
 * in one locale, stored before the version index existed) is found before anything runs and
 * refused with a `SchemaSyncError` naming the table and the query that lists the rows
 * (lib/schema/duplicates.ts); a dry run logs the same as a warning.
 *
 * - `apply` runs `statements`, and `destructive` too when `allowDestructive` is set; otherwise
 *   destructive changes are logged with `log.warn` and left alone. Each statement run is logged
 *   as one `info` line (`schema sync: add column articles.views integer`), its SQL at `debug`.
 * - `dryRun` only introspects and returns the plan.
 * - `off` returns an empty plan without touching the database.
 *
 * `ownTables` adds the plugin's own tables that options ask for (lib/webhooks/outbox-table.ts).
 *
 * @example
 * const plan = await syncSchema(db, registry, { mode: 'dryRun', allowDestructive: false }, app.log)
 * plan.statements // ['create table "articles" (...)', 'create index ...']
 */
export async function syncSchema (
  db: Kysely<any>, registry: Registry, options: SchemaSyncOptions, log?: SchemaSyncLogger, ownTables: readonly TableSpec[] = []
): Promise<SchemaSyncResult> {
  if (options.mode === 'off') return { statements: [], destructive: [], applied: false }
  // `ownTables`: the plugin's tables that depend on options, not models (the webhook outbox).
  const desired = [...desiredSchema(registry), ...ownTables]

  if (options.mode === 'dryRun') {
    const current = await introspectSchema(db)
    const plan = withRowCounts(diffSchema(desired, current), planRowCounts(registry, await introspectRowCounts(db)))
    logChanges(log, 'schema sync (dry run)', plan.statements)
    log?.info(`schema sync (dry run): ${plan.statements.length} statement(s) and ${plan.destructive.length} destructive change(s) planned`)
    const duplicates = await findDuplicates(db, desired, current)
    if (duplicates.length > 0) log?.warn({ duplicates }, describeDuplicates(duplicates))
    if (!options.allowDestructive) warnDestructive(plan, log)
    return { ...plan, applied: false }
  }

  const { plan, ran } = await db.transaction().setIsolationLevel('read committed').execute(async (trx) => {
    // A statement timeout on the application's pool is for requests; DDL on a large table, or
    // waiting for the lock while another instance syncs, may take longer.
    await sql`set local statement_timeout = 0`.execute(trx)
    await lockSchema(trx)
    const current = await introspectSchema(trx)
    const plan = withRowCounts(diffSchema(desired, current), planRowCounts(registry, await introspectRowCounts(trx)))
    // Rows that repeat the key of a unique index to add: refuse before changing anything.
    const duplicates = await findDuplicates(trx, desired, current)
    if (duplicates.length > 0) throw new SchemaSyncError(`${describeDuplicates(duplicates)} Nothing was changed.`)
    const ran = toRun(plan, options)
    await runAll(trx, ran)
    return { plan, ran }
  })

  logChanges(log, 'schema sync', ran)
  if (ran.length > 0) log?.info(`schema sync: applied ${ran.length} statement(s)`)
  if (!options.allowDestructive) warnDestructive(plan, log)
  return { ...plan, applied: true }
}
