import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { DATABASE_URL } from '../helpers/database.js'
import type { InstanceConfig } from './instance.js'

/**
 * The scale-out suite's harness: app instances in processes of their own (instance.ts, or a
 * script of the test's), on one scratch PostgreSQL database, reached over real HTTP.
 *
 * @example
 * const db = await scratchDatabase(t)
 * const [a, b, c] = await startInstances(t, 3, { db })
 * await fetch(`${a.url}/api/posts`)
 */

/** Why the suite is skipped where it cannot run (PGlite is one process: nothing to scale out). */
export const needsPostgres = DATABASE_URL === undefined || DATABASE_URL === ''
  ? 'DATABASE_URL is not set: the scale-out tests run app instances in several processes on one PostgreSQL database'
  : false

interface Teardown { teardown (fn: () => Promise<void> | void): void }

/** The server DATABASE_URL points to, with `database` as the database. */
export function databaseUrl (database: string): string {
  const url = new URL(DATABASE_URL!)
  url.pathname = `/${database}`
  return url.toString()
}

async function admin<T> (fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/**
 * A database of its own on the server (`so_<hex>`), dropped when the test ends (its sessions
 * forced off). Returns its connection string. NOTIFY channels are per database, so two test
 * files never hear each other.
 */
export async function scratchDatabase (t: Teardown, prefix = 'so'): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  await admin(async (client) => { await client.query(`create database "${name}"`) })
  t.teardown(async () => {
    await admin(async (client) => { await client.query(`drop database if exists "${name}" with (force)`) })
  })
  return databaseUrl(name)
}

export interface Instance {
  /** `http://127.0.0.1:<port>` */
  url: string
  child: ChildProcess
  /** What the process wrote besides its ready line: its log (warnings and errors, stdout) and stderr. */
  output: string[]
  /** SIGTERM (the app closes), SIGKILL past `ms`; resolves once the process has exited. */
  stop (ms?: number): Promise<void>
}

const INSTANCE_SCRIPT = fileURLToPath(new URL('./instance.ts', import.meta.url))

export interface StartOptions {
  /** The script to run; instance.ts by default (its config is `FCA_INSTANCE`). */
  script?: string
  /** Longest wait for an instance to report it listens. */
  timeoutMs?: number
  /** More environment for the children. */
  env?: Record<string, string>
}

/** Starts one instance and waits for its `{ ready, port }` line (or its exit, or the timeout). */
export async function startInstance (t: Teardown, config: InstanceConfig, options: StartOptions = {}): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', options.script ?? INSTANCE_SCRIPT], {
    env: { ...process.env, ...options.env, FCA_INSTANCE: JSON.stringify(config), NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const output: string[] = []
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output.push(chunk) })
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve() }) })
  const stop = async (ms = 5000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => { child.kill('SIGKILL') }, ms)
    await exited
    clearTimeout(timer)
  }
  t.teardown(async () => { await stop() })

  const timeoutMs = options.timeoutMs ?? 30_000
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`instance not ready within ${timeoutMs} ms: ${output.join('\n')}`)) }, timeoutMs)
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const message = JSON.parse(line) as { ready?: boolean, port?: number }
        if (message.ready === true && typeof message.port === 'number') { clearTimeout(timer); resolve(message.port); return }
      } catch {
        // Not JSON: kept as it is.
      }
      output.push(line)
    })
    exited.then(() => { clearTimeout(timer); reject(new Error(`instance exited before it was ready: ${output.join('\n')}`)) })
  })
  return { url: `http://127.0.0.1:${port}`, child, output, stop }
}

/**
 * `count` instances on one database. The first starts alone (it applies the schema); the
 * others start together after it.
 */
export async function startInstances (t: Teardown, count: number, config: InstanceConfig, options: StartOptions = {}): Promise<Instance[]> {
  const first = await startInstance(t, config, options)
  const rest = await Promise.all(Array.from({ length: count - 1 }, async () => await startInstance(t, config, options)))
  return [first, ...rest]
}

/** Calls `app.contentApi[target][method](...args)` in an instance (instance.ts's test route). */
export async function call (instance: Instance, target: 'permissions' | 'apiTokens' | 'documents', method: string, args: unknown[], uid?: string): Promise<any> {
  const res = await fetch(`${instance.url}/__test/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ target, uid, method, args })
  })
  const body = await res.json() as { result?: unknown, error?: string }
  if (body.error !== undefined) throw new Error(`${target}.${method} in ${instance.url}: ${body.error}`)
  return body.result
}

/** The change events an instance's onChange listeners heard (instance.ts's test route). */
export async function heard (instance: Instance): Promise<Array<{ uid: string, action: string, documentId?: string | null, origin: string, at: number }>> {
  return await (await fetch(`${instance.url}/__test/events`)).json() as any
}

/**
 * Polls `check` every `everyMs` until it is true; the milliseconds from `since` until then, or
 * null past `withinMs`.
 */
export async function until (check: () => Promise<boolean>, since: number, withinMs: number, everyMs = 2): Promise<number | null> {
  for (;;) {
    if (await check()) return Date.now() - since
    if (Date.now() - since > withinMs) return null
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
