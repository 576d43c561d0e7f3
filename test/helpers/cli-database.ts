import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import tap from 'tap'
import { createEmbedded } from '../../lib/db/embedded.js'
import { DATABASE_URL, dialectName } from './database.js'

/** A temporary directory for a CLI test's config modules, and the `database` option they write. */
export interface CliDatabase {
  dir: string
  /** The `database` option as JavaScript source text, to write into a config module. */
  db: string
}

/**
 * The database a CLI test's config modules name, which the CLI opens itself (it runs the
 * application's config, not the test's connection): with DATABASE_URL a schema of its own on
 * PostgreSQL, reached through the connection string's `search_path`; otherwise an embedded
 * PGlite data directory under `dir`. Both, and the directory, go at the test's teardown.
 */
export async function cliDatabase (prefix: string): Promise<CliDatabase> {
  const dir = await mkdtemp(join(tmpdir(), `fca-${prefix}-`))
  const schema = `${prefix.replace(/-/g, '_')}_${randomBytes(6).toString('hex')}`
  let db: string
  if (dialectName === 'postgres') {
    await admin(`create schema "${schema}"`)
    const separator = DATABASE_URL!.includes('?') ? '&' : '?'
    db = JSON.stringify({ connectionString: `${DATABASE_URL!}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` })
  } else {
    const dataDir = join(dir, 'pgdata')
    db = JSON.stringify({ dataDir })
    // The application has usually created its data directory by the time the CLI runs. Made as the
    // application makes it: from the boot snapshot (an initdb when there is none yet, over 10 s on a
    // loaded machine: past Fastify's default plugin timeout, which the CLI's app keeps).
    await (await createEmbedded({ dataDir })).pglite.close()
  }
  tap.teardown(async () => {
    if (dialectName === 'postgres') await admin(`drop schema if exists "${schema}" cascade`)
    await rm(dir, { recursive: true, force: true })
  })
  return { dir, db }
}

async function admin (statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
