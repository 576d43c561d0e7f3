import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import { SECRETS_TABLE } from '../model/naming.js'
import type { TableSpec } from './desired-schema.js'

/** The secrets the plugin may keep in the database, by their option names. */
export type StoredSecretName = 'jwtSecret' | 'apiTokenSalt'

/**
 * The plugin's table of development secrets, which schema sync creates (under its lock, with the
 * rest of the schema) when an instance outside production was given no `auth.jwtSecret` or
 * `auth.apiTokenSalt`.
 */
export const storedSecretsTable: TableSpec = {
  name: SECRETS_TABLE,
  columns: [
    { name: 'name', type: 'varchar(255)', nullable: false, primaryKey: true },
    { name: 'value', type: 'text', nullable: false }
  ],
  indexes: [],
  foreignKeys: []
}

/**
 * The development secrets of every instance on one database, from `content_api_secrets`: those
 * missing are generated (32 random bytes, hex) and inserted by the first instance; instances
 * starting at once insert with `on conflict do nothing` and all read the one value that won, so no
 * lock is needed. Values are passed as parameters and never logged. Where the table does not exist
 * (schema sync off, or a dry run) nothing is read: the caller generates per-process ones.
 *
 * ```sql
 * select exists (select 1 from pg_catalog.pg_tables where schemaname = current_schema() and tablename = $1) as present
 * select "name", "value" from "content_api_secrets" where "name" in ($1, $2)
 * -- when one is missing:
 * insert into "content_api_secrets" ("name", "value") values ($1, $2), ($3, $4) on conflict ("name") do nothing
 * select "name", "value" from "content_api_secrets" where "name" in ($1, $2)
 * ```
 *
 * @example
 * const values = await storedSecrets(db, ['jwtSecret', 'apiTokenSalt'])
 */
export async function storedSecrets (db: Kysely<any>, names: readonly StoredSecretName[]): Promise<Partial<Record<StoredSecretName, string>>> {
  if (names.length === 0 || !(await tablePresent(db))) return {}
  const stored = await read(db, names)
  const missing = names.filter((name) => stored[name] === undefined)
  if (missing.length === 0) return stored
  await db.insertInto(SECRETS_TABLE)
    .values(missing.map((name) => ({ name, value: randomBytes(32).toString('hex') })))
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  return await read(db, names)
}

/**
 * Read from the catalog, not through `to_regclass`, whose answer a session may have cached from
 * before another instance's schema sync created the table.
 */
async function tablePresent (db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`select exists (select 1 from pg_catalog.pg_tables where schemaname = current_schema() and tablename = ${SECRETS_TABLE}) as present`.execute(db)
  return rows[0]?.present === true
}

async function read (db: Kysely<any>, names: readonly StoredSecretName[]): Promise<Partial<Record<StoredSecretName, string>>> {
  const rows = await db.selectFrom(SECRETS_TABLE).select(['name', 'value']).where('name', 'in', [...names]).execute() as Array<{ name: StoredSecretName, value: string }>
  return Object.fromEntries(rows.map((row) => [row.name, row.value]))
}
