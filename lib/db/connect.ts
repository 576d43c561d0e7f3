import { Kysely, PostgresDialect } from 'kysely'
import type { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { PGliteDialect } from './pglite-dialect.js'

/**
 * Where documents are stored:
 * - a `Kysely` instance you own (the plugin never destroys it);
 * - a PostgreSQL connection string, or `{ connectionString, max }` for the pool size;
 * - `{ pglite }`, an embedded PGlite instance you own;
 * - `{ dataDir }` or nothing: an embedded PGlite the plugin creates (in memory without `dataDir`)
 *   and closes with the app.
 */
export type DatabaseOption =
  | Kysely<any>
  | string
  | { connectionString: string, max?: number }
  | { pglite: PGlite }
  | { dataDir?: string }
  | undefined

export interface DatabaseHandle {
  readonly db: Kysely<any>
  readonly dialect: 'postgres' | 'pglite' | 'external'
  close (): Promise<void>
}

export function isKysely (value: unknown): value is Kysely<any> {
  return value instanceof Kysely ||
    (typeof value === 'object' && value !== null && typeof (value as Kysely<any>).selectFrom === 'function' &&
      typeof (value as Kysely<any>).transaction === 'function')
}

async function createPGlite (dataDir?: string): Promise<PGlite> {
  // Loaded lazily: applications on PostgreSQL never pay for the WASM module.
  const { PGlite } = await import('@electric-sql/pglite')
  return await PGlite.create(dataDir)
}

export function connect (option: DatabaseOption): DatabaseHandle {
  if (isKysely(option)) return { db: option, dialect: 'external', close: async () => {} }
  if (typeof option === 'string' || (typeof option === 'object' && 'connectionString' in option)) {
    const config = typeof option === 'string' ? { connectionString: option } : option
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool(config) }) })
    return { db, dialect: 'postgres', close: async () => { await db.destroy() } }
  }
  if (typeof option === 'object' && 'pglite' in option) {
    const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite: option.pglite }) })
    return { db, dialect: 'pglite', close: async () => { await db.destroy() } }
  }
  const dataDir = option?.dataDir
  const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite: async () => await createPGlite(dataDir), closeOnDestroy: true }) })
  return { db, dialect: 'pglite', close: async () => { await db.destroy() } }
}
