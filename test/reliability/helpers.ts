import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import pg from 'pg'
import contentApi, { defineComponent, defineContentType, type ContentApiOptions } from '../../lib/index.js'
import { DATABASE_URL } from '../helpers/database.js'

/**
 * The reliability suite needs PostgreSQL itself: it terminates the app's backends, holds locks
 * from another session and puts a proxy between the app and the server. On PGlite these tests
 * are skipped with this reason.
 */
export const needsPostgres = DATABASE_URL === undefined || DATABASE_URL === ''
  ? 'DATABASE_URL is not set: these tests terminate PostgreSQL backends and proxy its connections'
  : false

/**
 * A post writes many rows in one transaction: its draft and its published version, and three
 * tags (components) linked to each. A write cut half-way would show as a post with one version,
 * or a version with fewer than three tags.
 */
export const tag = defineComponent({
  collectionName: 'components_shared_tags',
  info: { displayName: 'Tag' },
  attributes: { label: { type: 'string' } }
})

export const post = defineContentType({
  kind: 'collectionType',
  collectionName: 'posts',
  info: { singularName: 'post', pluralName: 'posts', displayName: 'Post' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string', required: true },
    tags: { type: 'component', component: 'shared.tag', repeatable: true }
  }
})

export const TAGS_PER_POST = 3

export function postBody (title: string): { data: { title: string, tags: Array<{ label: string }> } } {
  return { data: { title, tags: Array.from({ length: TAGS_PER_POST }, (_, i) => ({ label: `${title}-${i}` })) } }
}

const POST_ACTIONS = ['find', 'findOne', 'create', 'update', 'delete'].map((a) => `api::post.post.${a}`)

/**
 * A schema of its own on the shared PostgreSQL server, and a connection string to it whose
 * sessions carry an `application_name` no other test uses: `terminate()` ends this test's app
 * connections and nobody else's.
 */
export class Scratch {
  readonly schema = `rel_${randomBytes(6).toString('hex')}`
  readonly appName = `fca_${randomBytes(6).toString('hex')}`
  /** A session of the test's own (not the app's), on the test's schema. */
  readonly admin: pg.Pool

  private constructor () {
    this.admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2, options: `-c search_path=${this.schema}` })
  }

  static async create (t: { teardown (fn: () => Promise<void>): void }): Promise<Scratch> {
    const scratch = new Scratch()
    await scratch.admin.query(`create schema "${scratch.schema}"`)
    t.teardown(async () => {
      await scratch.terminate()
      await scratch.admin.query(`drop schema if exists "${scratch.schema}" cascade`)
      await scratch.admin.end()
    })
    return scratch
  }

  /** The app's connection string; `via` routes it through a proxy on that port. */
  url (via?: number): string {
    const url = new URL(DATABASE_URL!)
    if (via !== undefined) { url.hostname = '127.0.0.1'; url.port = String(via) }
    url.searchParams.set('options', `-c search_path=${this.schema}`)
    url.searchParams.set('application_name', this.appName)
    return url.toString()
  }

  /** Terminates every backend of the app (pg_terminate_backend), as a restart or failover does. */
  async terminate (): Promise<number> {
    const { rows } = await this.admin.query<{ n: number }>(
      'select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1',
      [this.appName])
    return rows[0].n
  }

  /** The app's backends now. */
  async backends (): Promise<number> {
    const { rows } = await this.admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = $1', [this.appName])
    return rows[0].n
  }

  /**
   * The app's backends once those that are ending have exited: a backend leaves
   * pg_stat_activity a moment after its client's socket closes (or after it was terminated), so
   * a pool that has just closed may still show one. Waits at most `ms` for none; a connection
   * still open counts.
   */
  async settledBackends (ms = 1000): Promise<number> {
    const until = Date.now() + ms
    let n = await this.backends()
    while (n > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      n = await this.backends()
    }
    return n
  }

  /**
   * Posts written half-way: a document without both its versions, or a version without all its
   * tags. Empty when every write was all or nothing.
   */
  async halfWritten (): Promise<string[]> {
    const { rows } = await this.admin.query<{ document_id: string }>(`
      select document_id from posts group by document_id having count(*) <> 2
      union
      select p.document_id from posts p left join posts_cmps c on c.entity_id = p.id and c.field = 'tags'
      group by p.id, p.document_id having count(c.id) <> ${TAGS_PER_POST}`)
    return rows.map((r) => r.document_id)
  }

  /** The documentIds of every post stored. */
  async documentIds (): Promise<Set<string>> {
    const { rows } = await this.admin.query<{ document_id: string }>('select distinct document_id from posts')
    return new Set(rows.map((r) => r.document_id))
  }
}

export interface LogLine { level: number, msg: string, err?: { message?: string, code?: string } }

export interface Started {
  app: FastifyInstance
  /** What the app logged at warn level and above. */
  logs: LogLine[]
}

/**
 * An app on `db`, posts readable and writable by the public role, logging warnings into `logs`.
 * Closed when the test ends (if the test did not close it).
 */
export async function startApp (
  t: { teardown (fn: () => Promise<void>): void },
  options: Omit<ContentApiOptions, 'models'>,
  server: FastifyServerOptions = {},
  setup?: (app: FastifyInstance) => void
): Promise<Started> {
  const logs: LogLine[] = []
  const app = Fastify({
    ...server,
    logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } }
  })
  t.teardown(async () => { await app.close() })
  setup?.(app)
  await app.register(contentApi, {
    models: [post],
    components: { 'shared.tag': tag },
    auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false },
    ...options
  })
  await app.ready()
  await app.contentApi.permissions.grant('public', POST_ACTIONS)
  return { app, logs }
}

/** Resolves after `ms`. */
export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** A 503 `ServiceUnavailableError` in Strapi's envelope, with `Retry-After`, and no cause in it. */
export function assertUnavailable (t: Test, res: LightMyRequestResponse, label: string): void {
  t.equal(res.statusCode, 503, `${label}: 503`)
  t.equal(res.headers['retry-after'], '1', `${label}: Retry-After`)
  t.same(res.json(), { data: null, error: { status: 503, name: 'ServiceUnavailableError', message: 'Service Unavailable', details: {} } }, `${label}: the envelope, no cause`)
}

/** GraphQL's answer: HTTP 503 with `Retry-After`, an error with `extensions.code: 'SERVICE_UNAVAILABLE'`. */
export function assertGraphqlUnavailable (t: Test, res: LightMyRequestResponse, label: string): void {
  t.equal(res.statusCode, 503, `${label}: 503`)
  t.equal(res.headers['retry-after'], '1', `${label}: Retry-After`)
  const body = res.json()
  t.equal(body.errors?.[0]?.extensions?.code, 'SERVICE_UNAVAILABLE', `${label}: SERVICE_UNAVAILABLE`)
  t.equal(body.errors?.[0]?.message, 'Service Unavailable', `${label}: no cause in the message`)
}
