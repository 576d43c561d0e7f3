import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { freePort } from './net.js'

/**
 * A real streaming replica for the read-replica tests: `pg_basebackup -R -X stream` into a
 * temporary directory, started with `pg_ctl` on a free port of 127.0.0.1, stopped (`-m
 * immediate`) and removed by `close()`.
 *
 * The replica is taken from the server DATABASE_URL names when that server accepts replication
 * connections from 127.0.0.1 (pg_hba.conf: `host replication postgres 127.0.0.1/32 trust`). When
 * it refuses them, a private primary is made first (`initdb`, whose pg_hba.conf allows them), and
 * the replica is taken from it: the tests then run on that primary. PostgreSQL refuses to run as
 * root, so under root the server binaries run as the `postgres` user (`runuser`).
 */
export interface Replication {
  /** Where the app writes: DATABASE_URL's server, or the private primary. */
  primaryUrl: string
  replicaUrl: string
  /** 'server': replicating DATABASE_URL's server; 'private': a primary made for the test. */
  source: 'server' | 'private'
  /** Milliseconds from nothing to a replica accepting connections. */
  setupMs: number
  stopReplica (): Promise<void>
  startReplica (): Promise<void>
  /** A session on the primary or the replica (closed by `close()`). */
  primary: pg.Pool
  replica: pg.Pool
  /** Resolves once the replica has replayed everything the primary has written so far. */
  caughtUp (timeoutMs?: number): Promise<void>
  close (): Promise<void>
}

const run = async (file: string, args: string[], timeoutMs = 60_000): Promise<string> => await new Promise((resolve, reject) => {
  execFile(file, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
    if (err !== null) reject(Object.assign(err, { message: `${file} ${args.join(' ')}: ${stderr.trim() || err.message}` }))
    else resolve(stdout)
  })
})

const asRoot = process.getuid?.() === 0

/** Runs a server binary; as the postgres user when the test runs as root. */
const pgRun = async (bin: string, args: string[], timeoutMs?: number): Promise<string> =>
  asRoot ? await run('runuser', ['-u', 'postgres', '--', bin, ...args], timeoutMs) : await run(bin, args, timeoutMs)

/** The directory of the server binaries of `major` (pg_ctl, pg_basebackup, initdb), or null. */
function binaries (major: number): string | null {
  const candidates = [`/usr/lib/postgresql/${major}/bin`, ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`) : []), '/usr/local/bin', '/usr/bin']
  return candidates.find((dir) => ['pg_ctl', 'pg_basebackup', 'initdb'].every((b) => existsSync(join(dir, b)))) ?? null
}

function urlOf (base: string, port: number, database: string, schema: string): string {
  const url = new URL(base)
  url.hostname = '127.0.0.1'
  url.port = String(port)
  url.pathname = `/${database}`
  url.username = 'postgres'
  url.password = ''
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

async function waitAccepting (url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query('select 1')
      await client.end()
      return
    } catch (err) {
      await client.end().catch(() => {})
      if (Date.now() > until) throw err
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/**
 * A replica of DATABASE_URL's server (or of a private primary), with `schema` created on the
 * primary; or why none can be had here (the test is then skipped with that reason).
 */
export async function startReplication (databaseUrl: string | undefined, schema: string): Promise<Replication | string> {
  if (databaseUrl === undefined || databaseUrl === '') return 'DATABASE_URL is not set: the read-replica tests need PostgreSQL server binaries and a primary'
  const started = Date.now()
  const probe = new pg.Client({ connectionString: databaseUrl })
  probe.on('error', () => {})
  await probe.connect()
  const { rows: [server] } = await probe.query<{ major: number, db: string }>("select current_setting('server_version_num')::int / 10000 as major, current_database() as db")
  // A hot standby refuses to start with less of these than its primary has.
  const { rows: limits } = await probe.query<{ name: string, setting: string }>(
    "select name, setting from pg_settings where name in ('max_connections', 'max_worker_processes', 'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction')")
  await probe.end()
  const bin = binaries(server.major)
  if (bin === null) return `no PostgreSQL ${server.major} server binaries (pg_ctl, pg_basebackup, initdb) found`
  if (asRoot && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser') && !existsSync('/usr/bin/runuser')) return 'running as root without runuser: PostgreSQL refuses to run as root'

  const root = mkdtempSync(join(tmpdir(), 'fca-replica-'))
  if (asRoot) await run('chown', ['postgres:postgres', root])
  const running: string[] = []
  const ctl = async (dir: string, args: string[]): Promise<string> => await pgRun(join(bin, 'pg_ctl'), ['-D', dir, ...args], 60_000)
  const stop = async (dir: string): Promise<void> => { await ctl(dir, ['-m', 'immediate', 'stop']).catch(() => {}) }
  const cleanup = async (): Promise<void> => {
    for (const dir of running.splice(0).reverse()) await stop(dir)
    rmSync(root, { recursive: true, force: true })
  }

  try {
    const common = ['-c listen_addresses=127.0.0.1', `-k ${root}`, '-c shared_buffers=16MB', '-c fsync=off']
    let source: 'server' | 'private' = 'server'
    let primaryUrl = urlOf(databaseUrl, Number(new URL(databaseUrl).port || 5432), server.db, schema)
    const replicaDir = join(root, 'replica')
    const basebackup = async (port: number): Promise<void> => {
      await pgRun(join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast'], 30_000)
    }
    try {
      await basebackup(Number(new URL(primaryUrl).port))
    } catch (err) {
      if (!/pg_hba\.conf|replication/.test((err as Error).message)) throw err
      // DATABASE_URL's server refuses replication connections: replicate a primary of our own.
      source = 'private'
      rmSync(replicaDir, { recursive: true, force: true })
      const primaryDir = join(root, 'primary')
      await pgRun(join(bin, 'initdb'), ['-D', primaryDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-N'])
      const port = await freePort()
      await ctl(primaryDir, ['-w', '-t', '30', '-l', join(root, 'primary.log'), '-o', [`-p ${port}`, ...common].join(' '), 'start'])
      running.push(primaryDir)
      primaryUrl = urlOf(databaseUrl, port, 'postgres', schema)
      await basebackup(port)
      limits.length = 0
    }
    // A copy of a Debian cluster has its configuration files elsewhere (/etc/postgresql).
    if (!existsSync(join(replicaDir, 'postgresql.conf'))) writeFileSync(join(replicaDir, 'postgresql.conf'), '')
    if (!existsSync(join(replicaDir, 'pg_hba.conf'))) writeFileSync(join(replicaDir, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n')
    if (asRoot) await run('chown', ['-R', 'postgres:postgres', replicaDir])
    const replicaPort = await freePort()
    const replicaOptions = [`-p ${replicaPort}`, ...common, '-c hot_standby=on', `-c cluster_name=fca_replica_${randomBytes(3).toString('hex')}`,
      ...limits.map((l) => `-c ${l.name}=${l.setting}`)].join(' ')
    const startReplica = async (): Promise<void> => {
      await ctl(replicaDir, ['-w', '-t', '30', '-l', join(root, 'replica.log'), '-o', replicaOptions, 'start'])
      if (!running.includes(replicaDir)) running.push(replicaDir)
      await waitAccepting(replicaUrl, 20_000)
    }
    const replicaUrl = urlOf(databaseUrl, replicaPort, new URL(primaryUrl).pathname.slice(1), schema)

    const primary = new pg.Pool({ connectionString: primaryUrl, max: 2 })
    primary.on('error', () => {})
    await primary.query(`create schema if not exists "${schema}"`)
    await startReplica()
    const replica = new pg.Pool({ connectionString: replicaUrl, max: 2 })
    replica.on('error', () => {})
    const setupMs = Date.now() - started

    return {
      primaryUrl,
      replicaUrl,
      source,
      setupMs,
      primary,
      replica,
      stopReplica: async () => { await ctl(replicaDir, ['-m', 'immediate', 'stop']) },
      startReplica,
      async caughtUp (timeoutMs = 10_000) {
        const { rows: [{ lsn }] } = await primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')
        const until = Date.now() + timeoutMs
        for (;;) {
          const { rows: [{ done }] } = await replica.query<{ done: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [lsn])
          if (done) return
          if (Date.now() > until) throw new Error(`the replica did not replay up to ${lsn} within ${timeoutMs} ms`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      },
      async close () {
        await replica.end().catch(() => {})
        if (source === 'server') await primary.query(`drop schema if exists "${schema}" cascade`).catch(() => {})
        await primary.end().catch(() => {})
        await cleanup()
      }
    }
  } catch (err) {
    await cleanup()
    return `no streaming replica could be made here: ${(err as Error).message.split('\n')[0]}`
  }
}
