import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Kysely, PostgresDialect, sql } from 'kysely'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import tap from 'tap'
import { PGliteDialect } from '../../lib/db/pglite-dialect.js'

/**
 * Test databases. Every test gets its own PostgreSQL schema, so tests never see each other's
 * tables: on PostgreSQL when DATABASE_URL is set, otherwise in one embedded PGlite per test
 * process (PGlite takes seconds to boot, a schema milliseconds).
 */
/** PGlite's version, which names its snapshot (its package exports no package.json). */
const PGLITE_VERSION = (JSON.parse(readFileSync(join(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string }).version

export const DATABASE_URL = process.env.DATABASE_URL
export const dialectName = DATABASE_URL !== undefined && DATABASE_URL !== '' ? 'postgres' : 'pglite'
/**
 * The `skip` of a test of the embedded PGlite itself (`db` omitted, `{ dataDir }`, `{ pglite }`),
 * which runs the same whatever DATABASE_URL says: the PGlite suite runs it, the PostgreSQL suite
 * would only run it again.
 */
export const embeddedOnly = dialectName === 'postgres' ? 'the embedded PGlite, the same on every suite: run by the PGlite suite' : false

let sharedPGlite: Promise<PGlite> | null = null
function pglite (): Promise<PGlite> {
  if (sharedPGlite === null) {
    const created = newPGlite()
    sharedPGlite = created
    // The embedded backend keeps the process alive until it is closed.
    tap.teardown(async () => { await (await created).close() })
  }
  return sharedPGlite
}

/**
 * A new embedded PostgreSQL, started from a snapshot of a freshly initialised cluster when one
 * is there: `initdb` is most of PGlite's boot (about 2.5 s of CPU against 0.5 s from the
 * snapshot), and every test file boots one. The first process to need it makes the snapshot in
 * the system's temporary directory, per PGlite version, written under another name and renamed,
 * so that a process never reads a half-written one. Tests that need an instance of their own
 * (`db: { pglite }`) take one from here too; the caller closes it.
 */
export async function newPGlite (): Promise<PGlite> {
  const snapshot = join(tmpdir(), `fastify-content-api-test-pglite-${PGLITE_VERSION}.tar`)
  const saved = await readFile(snapshot).catch(() => null)
  if (saved !== null) return await PGlite.create({ loadDataDir: new Blob([saved]) })
  const created = await PGlite.create()
  const dump = await created.dumpDataDir('none')
  const partial = `${snapshot}.${process.pid}`
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()))
  await rename(partial, snapshot)
  return created
}

export interface TestDatabase {
  /** A Kysely instance whose search_path is the test's own schema. */
  db: Kysely<any>
  schema: string
  /** Another, independent connection to the same schema (a second application instance). */
  connectAgain (): Kysely<any>
  /** Drops the schema and closes every connection made. */
  drop (): Promise<void>
}

function postgresKysely (schema: string): Kysely<any> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4, options: `-c search_path=${schema}` })
  return new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
}

export async function createTestDatabase (): Promise<TestDatabase> {
  const schema = `t_${randomBytes(6).toString('hex')}`
  const opened: Array<Kysely<any>> = []
  if (dialectName === 'postgres') {
    const admin = postgresKysely('public')
    await sql`create schema ${sql.id(schema)}`.execute(admin)
    await admin.destroy()
    const connectAgain = (): Kysely<any> => { const k = postgresKysely(schema); opened.push(k); return k }
    const db = connectAgain()
    return {
      db,
      schema,
      connectAgain,
      async drop () {
        for (const k of opened) await k.destroy()
        const admin = postgresKysely('public')
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin)
        await admin.destroy()
      }
    }
  }
  const client = await pglite()
  await client.exec(`create schema "${schema}"`)
  // One PGlite session is shared by every Kysely in this process; each query runs with the
  // schema set on the session just before it (the dialect serialises access to the session).
  const connectAgain = (): Kysely<any> => {
    const k = new Kysely<any>({ dialect: new PGliteDialect({ pglite: client, searchPath: schema }) })
    opened.push(k)
    return k
  }
  const db = connectAgain()
  return {
    db,
    schema,
    connectAgain,
    async drop () {
      for (const k of opened) await k.destroy()
      await client.exec(`drop schema if exists "${schema}" cascade`)
    }
  }
}
