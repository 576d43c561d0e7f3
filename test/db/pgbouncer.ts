import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { DATABASE_URL } from '../helpers/database.js'
import { freePort } from '../helpers/net.js'

/**
 * A PgBouncer of the test's own, in transaction mode, in front of a scratch database on the
 * shared PostgreSQL server: its ini, auth file and log in a temporary directory, a free port on
 * 127.0.0.1, no unix socket. Started and stopped by the test; the scratch database is dropped.
 */

/** The `pgbouncer` binary's version, or null where it is not installed. */
export function pgbouncerVersion (): [number, number] | null {
  for (const bin of ['pgbouncer', '/usr/sbin/pgbouncer']) {
    const run = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 })
    const match = /PgBouncer (\d+)\.(\d+)/.exec(run.stdout ?? '')
    if (run.status === 0 && match !== null) return [Number(match[1]), Number(match[2])]
  }
  return null
}

const binary = (): string => spawnSync('pgbouncer', ['--version']).status === 0 ? 'pgbouncer' : '/usr/sbin/pgbouncer'

export interface Bouncer {
  /** The scratch database's connection string through PgBouncer. */
  readonly url: string
  /** A pool straight to the scratch database (not through PgBouncer). */
  readonly direct: pg.Pool
  /** Its connection string, where the apps' change listener connects (it cannot LISTEN through PgBouncer). */
  readonly directUrl: string
  /** PgBouncer's log so far. */
  log (): string
}

export interface BouncerOptions {
  /** Server connections per database and user (`default_pool_size`). */
  poolSize: number
  /** `max_prepared_statements` (PgBouncer 1.21+); left out when 0. */
  maxPreparedStatements: number
  /**
   * The scratch database's own `statement_timeout` (`alter database ... set`, with `jit = off`), as
   * docs/operations.md#pgbouncer advises; 0 leaves the server's.
   */
  statementTimeoutMs: number
}

export async function startPgBouncer (t: { teardown (fn: () => Promise<void> | void): void }, options: BouncerOptions): Promise<Bouncer> {
  const server = new URL(DATABASE_URL!)
  const database = `pgb_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  admin.on('error', () => {})
  await admin.connect()
  await admin.query(`create database "${database}"`)
  if (options.statementTimeoutMs > 0) {
    await admin.query(`alter database "${database}" set statement_timeout = ${Math.trunc(options.statementTimeoutMs)}`)
    await admin.query(`alter database "${database}" set jit = off`)
  }
  await admin.end()
  const directUrl = new URL(DATABASE_URL!)
  directUrl.pathname = `/${database}`
  const direct = new pg.Pool({ connectionString: directUrl.toString(), max: 3 })
  direct.on('error', () => {})

  const dir = await mkdtemp(join(tmpdir(), 'fca-pgbouncer-'))
  const port = await freePort()
  const user = decodeURIComponent(server.username === '' ? 'postgres' : server.username)
  await writeFile(join(dir, 'users.txt'), `"${user}" ""\n`)
  await writeFile(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `${database} = host=${server.hostname} port=${server.port === '' ? '5432' : server.port} dbname=${database}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize}`,
    'max_client_conn = 200',
    // pg sends none of PgBouncer's unknown parameters by itself; the plugin's must not either.
    'ignore_startup_parameters = extra_float_digits',
    options.maxPreparedStatements > 0 ? `max_prepared_statements = ${options.maxPreparedStatements}` : '',
    ''
  ].join('\n'))
  // PgBouncer refuses to run as root: it is then told to switch to `nobody`, who must read its files.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    await chmod(dir, 0o755)
    for (const file of ['users.txt', 'pgbouncer.ini']) await chmod(join(dir, file), 0o644)
  }
  let output = ''
  const child: ChildProcess = spawn(binary(), [...(asRoot ? ['-u', 'nobody'] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.on('error', () => {})
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))

  t.teardown(async () => {
    await direct.end()
    child.kill('SIGINT')
    const killed = setTimeout(() => child.kill('SIGKILL'), 3000)
    await exited
    clearTimeout(killed)
    await rm(dir, { recursive: true, force: true })
    const dropper = new pg.Client({ connectionString: DATABASE_URL })
    dropper.on('error', () => {})
    await dropper.connect()
    await dropper.query(`drop database if exists "${database}" with (force)`)
    await dropper.end()
  })

  const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`
  // Ready once it accepts a session and runs a statement through to the server (at most 5 s).
  const until = Date.now() + 5000
  for (;;) {
    const probe = new pg.Client({ connectionString: url })
    probe.on('error', () => {})
    try {
      await probe.connect()
      await probe.query('select 1')
      await probe.end()
      break
    } catch (err) {
      await probe.end().catch(() => {})
      if (child.exitCode !== null || Date.now() > until) throw new Error(`pgbouncer did not start: ${(err as Error).message}\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { url, direct, directUrl: directUrl.toString(), log: () => output }
}
