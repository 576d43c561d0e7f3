import { createHash } from 'node:crypto'
import { sql, type Kysely } from 'kysely'

const LOCK_NAMESPACE = 'fastify-content-api:schema'

/**
 * The advisory-lock key for one schema: the first 8 bytes of
 * sha256('fastify-content-api:schema:<schema>') as a signed 64-bit integer. Fixed across
 * processes and versions, so every instance of every release agrees on it; per schema, so
 * applications in different schemas of one database never wait for each other. Computed here
 * rather than in SQL so that it does not depend on server hash functions (md5 is refused on FIPS
 * builds, hashtext is internal).
 */
export function schemaLockKey (schema: string): bigint {
  const digest = createHash('sha256').update(`${LOCK_NAMESPACE}:${schema}`).digest()
  return digest.readBigInt64BE(0)
}

/**
 * Takes the schema lock for the rest of the transaction `trx` (released at commit or rollback,
 * so a crashed instance never leaves it held):
 *
 * ```sql
 * select current_schema() as schema
 * select pg_advisory_xact_lock($1::bigint)
 * ```
 */
export async function lockSchema (trx: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(trx)
  // No schema on the search_path exists: nothing can be created, and the first create says so.
  const key = schemaLockKey(rows[0]?.schema ?? '')
  await sql`select pg_advisory_xact_lock(${key.toString()}::bigint)`.execute(trx)
}
