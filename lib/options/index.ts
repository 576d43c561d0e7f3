import type { Static } from 'typebox'
import { ConfigurationError } from '../errors.js'
import { isKysely, type DatabaseOption } from '../db/connect.js'
import { MAX_PREPARED_STATEMENTS } from '../db/prepared-statements.js'
import { SETTING_NAME } from '../db/embedded.js'
import { isReplicated, resolveReplicated } from './replicas.js'
import { connectionStringProblem } from './connection-string.js'
import type { ComponentSchema, ContentTypeSchema } from '../model/types.js'
import { resolveGraphqlOptions, type GraphqlOptions, type ResolvedGraphqlOptions } from './graphql.js'
import { resolveUploadOptions, type ResolvedUploadOptions, type UploadOptions } from './upload.js'
import { resolveSchema } from './validate.js'
import { checkRestRoutes, type NamedPolicies, type RestRoutes } from './rest-routes.js'
import { RestBatchOptions, checkRestBatch, type ResolvedRestBatch } from './rest-batch.js'
import { resolveWebhookOptions, type ResolvedWebhookOptions, type WebhookOptions } from './webhooks.js'

/**
 * Every tunable of the plugin, with its default, in one schema. `resolveOptions` validates the
 * user's options against it once, at registration, before anything connects or writes, and
 * reports every problem in one error. The `graphql` and `upload` sections have their schemas in
 * their areas (lib/graphql/options.ts, lib/upload/options.ts), run by the same step.
 * docs/options.md documents each key.
 */
const RestOptions = {
  type: 'object',
  required: ['prefix', 'defaultLimit', 'maxLimit', 'withCount', 'batch'],
  properties: {
    /** Path prefix of every REST route. */
    prefix: { type: 'string', default: '/api', pattern: '^/' },
    /** Page size (and offset-mode limit) when the request gives none (Strapi's `api.rest.defaultLimit`). */
    defaultLimit: { type: 'integer', minimum: 1, default: 25 },
    /** Largest page size or limit a request may ask for; larger values are clamped (`api.rest.maxLimit`). */
    maxLimit: { type: 'integer', minimum: 1, default: 100 },
    /** Whether list responses count the total by default (`api.rest.withCount`). */
    withCount: { type: 'boolean', default: true },
    /** Per content type: route config, only/except, controllers, Cache-Control (checked by rest-routes.ts). */
    routes: {},
    /** The atomic batch route, off by default (rest-batch.ts, docs/batches.md). */
    batch: RestBatchOptions
  },
  additionalProperties: false
} as const

const SchemaSyncOptions = {
  type: 'object',
  required: ['mode', 'allowDestructive'],
  properties: {
    /**
     * `apply` creates missing tables, columns and indexes at start-up; `dryRun` only computes the
     * plan (read it from `app.contentApi.schemaPlan`); `off` leaves the database alone.
     */
    mode: { anyOf: [{ const: 'apply' }, { const: 'dryRun' }, { const: 'off' }], default: 'apply' },
    /** Also apply destructive changes (drop removed columns, change column types). Off by default. */
    allowDestructive: { type: 'boolean', default: false }
  },
  additionalProperties: false
} as const

const I18nOptions = {
  type: 'object',
  required: ['locales', 'defaultLocale', 'fallbacks'],
  properties: {
    /** Locale codes documents of localized types may have. */
    locales: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, default: ['en'] },
    /** The locale a request addresses when it names none. */
    defaultLocale: { type: 'string', minLength: 1, default: 'en' },
    /**
     * Beyond Strapi: locales to read, in order, when a document has no version in the requested
     * one, e.g. `{ 'fr-CA': ['fr', 'en'] }`. Off (empty) by default.
     */
    fallbacks: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string', minLength: 1 } }, default: {} }
  },
  additionalProperties: false
} as const

const QueryOptions = {
  type: 'object',
  required: ['escapeLikeWildcards'],
  properties: {
    /**
     * Treat `%` and `_` in `$contains`, `$startsWith`, `$eqi`... values literally. Off by default:
     * Strapi passes them through as LIKE wildcards, and clients may rely on it.
     */
    escapeLikeWildcards: { type: 'boolean', default: false }
  },
  additionalProperties: false
} as const

/**
 * Bounds on the work one request may cause, checked before any SQL runs (a request over one is a
 * 400 `LimitError` naming the option). docs/operations.md explains each and how its default was
 * chosen.
 */
const LimitOptions = {
  type: 'object',
  required: ['populateDepth', 'maxRows', 'queryLength', 'queryParameters', 'bodyBytes', 'inputDepth'],
  properties: {
    /** Deepest nesting of `populate` (relations, media, components, dynamic zones), any form. */
    populateDepth: { type: 'integer', minimum: 1, default: 6 },
    /** Most rows one response may return, populated rows included (REST and GraphQL). */
    maxRows: { type: 'integer', minimum: 1, default: 10000 },
    /** Longest query string, in characters. */
    queryLength: { type: 'integer', minimum: 1, default: 16384 },
    /** Most query-string parameters. */
    queryParameters: { type: 'integer', minimum: 1, default: 1000 },
    /** Largest request body, in bytes (uploads have their own `upload.sizeLimit`). */
    bodyBytes: { type: 'integer', minimum: 1, default: 1048576 },
    /** Deepest nesting of a JSON body, a filter or a GraphQL value (objects and arrays). */
    inputDepth: { type: 'integer', minimum: 1, default: 64 }
  },
  additionalProperties: false
} as const

/**
 * The pool the plugin creates from a connection string (`db: 'postgres://...'`). With a Kysely or
 * a PGlite given, these do not apply (a ConfigurationError if set); docs/operations.md says what to
 * set on a pool of your own.
 */
const PoolOptions = {
  type: 'object',
  required: ['size', 'connectionTimeoutMs', 'idleTimeoutMs', 'statementTimeoutMs', 'idleInTransactionTimeoutMs', 'jit', 'preparedStatements', 'maxPreparedStatements', 'transactionPooling'],
  properties: {
    /** Most connections open at once (`db.max` is the older spelling, still accepted). */
    size: { type: 'integer', minimum: 1, default: 10 },
    /** Longest wait for a connection, new or free; past it the request answers 503. */
    connectionTimeoutMs: { type: 'integer', minimum: 1, default: 5000 },
    /** A connection unused this long is closed (0 keeps them open). */
    idleTimeoutMs: { type: 'integer', minimum: 0, default: 10000 },
    /**
     * Longest a statement of a request may run (PostgreSQL's `statement_timeout`); past it the
     * request answers 503. 0 turns it off, and the client-side bound with it. Schema sync is exempt.
     */
    statementTimeoutMs: { type: 'integer', minimum: 0, default: 5000 },
    /**
     * The server ends a session left idle inside a transaction this long (its locks are released):
     * an instance that froze or lost the network mid-write. 0 turns it off.
     */
    idleInTransactionTimeoutMs: { type: 'integer', minimum: 0, default: 30000 },
    /**
     * PostgreSQL's JIT compilation for the plugin's sessions. Off by default: populate statements
     * have large select lists whose compiling costs more than running them (docs/operations.md).
     */
    jit: { type: 'boolean', default: false },
    /**
     * Send the reads the plugin repeats as named (prepared) statements, parsed and planned once per
     * connection. `false` sends every statement unnamed: needed behind PgBouncer in transaction
     * mode before 1.21 (docs/operations.md). Defaults to `false` with `transactionPooling`.
     */
    preparedStatements: { type: 'boolean', default: true },
    /**
     * Most texts named per app, so per connection: each named statement holds 50-250 KiB of its
     * backend's memory until the connection closes (docs/operations.md#named-statements).
     */
    maxPreparedStatements: { type: 'integer', minimum: 1, default: MAX_PREPARED_STATEMENTS },
    /**
     * The connection string points at a pooler in transaction mode (PgBouncer `pool_mode =
     * transaction`, Supavisor, pgcat, RDS Proxy): the timeouts and `jit` are sent with each
     * transaction (`set local`) instead of at connection, and `preparedStatements` defaults to
     * `false` (docs/operations.md#pgbouncer).
     */
    transactionPooling: { type: 'boolean', default: false }
  },
  additionalProperties: false
} as const

/**
 * Cross-instance change notifications (PostgreSQL LISTEN/NOTIFY, lib/db/notifications.ts): on by
 * default with a connection string; `false` turns them off (each instance then sees other
 * instances' changes only as its caches expire). Checked by `checkNotifications`, for messages
 * that name the key at fault rather than each member of a union.
 */
export type NotificationOptions = false | {
  /**
   * The channel; by default `content_api_` and the md5 of the schema (`current_schema()`), so
   * that only apps sharing tables hear each other. Set one behind PgBouncer when the schema
   * comes from a startup parameter it ignores.
   */
  channel?: string
  /**
   * Where the listening connection connects, when not where the pool does: the primary itself
   * behind PgBouncer in transaction mode (which cannot LISTEN), or with a Kysely given (without
   * it, a Kysely's instances are not told of each other's changes).
   */
  connectionString?: string
}

/** `app.close()`: how long in-flight requests may finish before their connections are cut. */
const ShutdownOptions = {
  type: 'object',
  required: ['timeoutMs'],
  properties: {
    timeoutMs: { type: 'integer', minimum: 0, default: 10000 }
  },
  additionalProperties: false
} as const

const AuthOptions = {
  type: 'object',
  required: ['jwtExpiresIn', 'rateLimit', 'register', 'credentialsCacheMs', 'draftsRequirePermission', 'urls'],
  properties: {
    /**
     * Secret of the HS256 JWTs users receive. Required unless NODE_ENV is unset, `development` or
     * `test`, where one is generated once per database, stored in `content_api_secrets` and shared
     * by every instance on it, with a warning (lib/schema/stored-secrets.ts).
     */
    jwtSecret: { type: 'string', minLength: 16 },
    /** Lifetime of a user JWT, as `@fastify/jwt` reads it (`'30d'`, `'12h'`, seconds). Strapi: 30 days. */
    jwtExpiresIn: { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 1 }], default: '30d' },
    /** Key of the HMAC that stores API tokens. Required where `jwtSecret` is. */
    apiTokenSalt: { type: 'string', minLength: 16 },
    /**
     * Auth routes allow `max` requests per `timeWindow` ms per client and path (Strapi: 10 a
     * minute); `false` disables. Counted in this process's memory unless `redis` is given: an
     * ioredis client of the application's, or a `redis://` / `rediss://` URL the plugin connects to
     * (and closes) itself; then every instance on that Redis counts against one limit, its keys
     * starting with `nameSpace`. docs/auth.md#rate-limits.
     */
    rateLimit: {
      anyOf: [
        { type: 'boolean', const: false },
        {
          type: 'object',
          required: ['max', 'timeWindow', 'nameSpace'],
          properties: {
            max: { type: 'integer', minimum: 1, default: 10 },
            timeWindow: { type: 'integer', minimum: 1, default: 60000 },
            /** Checked by checkRateLimitStore: an ioredis client or a redis:// URL. */
            redis: {},
            nameSpace: { type: 'string', minLength: 1, default: 'fastify-content-api:rate-limit:' }
          },
          additionalProperties: false
        }
      ],
      default: { max: 10, timeWindow: 60000, nameSpace: 'fastify-content-api:rate-limit:' }
    },
    register: {
      type: 'object',
      required: ['enabled', 'allowedFields', 'defaultRole', 'emailConfirmation'],
      properties: {
        /** `POST /api/auth/local/register` accepts new users. */
        enabled: { type: 'boolean', default: true },
        /** User attributes a registration may set besides username, email and password. */
        allowedFields: { type: 'array', items: { type: 'string' }, default: [] },
        /** Role type given to registered users. */
        defaultRole: { type: 'string', default: 'authenticated' },
        /** New users must confirm their email (needs `email.send`: without it, a configuration error). */
        emailConfirmation: { type: 'boolean', default: false }
      },
      additionalProperties: false,
      default: {}
    },
    /**
     * Sends the forgot-password and confirmation emails: `send({ to, subject, text, html })`; needs
     * `urls.resetPassword`. Without it those flows answer as Strapi does but send nothing.
     */
    email: {
      type: 'object',
      required: ['send'],
      properties: { send: {}, from: { type: 'string' } },
      additionalProperties: false
    },
    /**
     * How long (ms) a resolved user or API token is reused before it is read again. Changes made
     * through this process (user writes, revoked tokens) apply at once; other instances see them
     * within this delay. 0 reads them on every request.
     */
    credentialsCacheMs: { type: 'integer', minimum: 0, default: 5000 },
    /** Beyond Strapi: reading `status=draft` needs the `<uid>.findDrafts` permission too (Strapi lets anyone with `find`). */
    draftsRequirePermission: { type: 'boolean', default: false },
    /** Where links in emails point (the reset-password page, the confirmation redirect, this server). */
    urls: {
      type: 'object',
      properties: {
        /** This server's public URL (Strapi's `server.url`), which the confirmation link starts with. */
        server: { type: 'string', pattern: '^https?://' },
        resetPassword: { type: 'string' },
        emailConfirmationRedirect: { type: 'string' }
      },
      additionalProperties: false,
      default: {}
    }
  },
  additionalProperties: false
} as const

export const OptionsSchema = {
  type: 'object',
  required: ['models', 'components'],
  properties: {
    models: { type: 'array', items: {}, default: [] },
    components: { type: 'object', additionalProperties: {}, default: {} },
    db: {},
    // A group left out, or given as `undefined`, is `{}` with its own defaults filled in: Ajv's
    // `useDefaults` fills a missing or undefined property, then the defaults inside it.
    pool: { ...PoolOptions, default: {} },
    shutdown: { ...ShutdownOptions, default: {} },
    notifications: {},
    /** Named policies for `rest.routes` and GraphQL's `resolversConfig` (checked by rest-routes.ts). */
    policies: {},
    rest: { ...RestOptions, default: {} },
    schemaSync: { ...SchemaSyncOptions, default: {} },
    i18n: { ...I18nOptions, default: {} },
    query: { ...QueryOptions, default: {} },
    limits: { ...LimitOptions, default: {} },
    auth: { ...AuthOptions, default: {} },
    /** GraphQL options; their schema is lib/graphql/options.ts. `false` turns GraphQL off. */
    graphql: {},
    /** Upload options; their schema is lib/upload/options.ts. */
    upload: {},
    /** Webhook options; their schema is lib/options/webhooks.ts. */
    webhooks: {}
  },
  additionalProperties: false
} as const

export interface ContentApiOptions {
  /** Content-type schemas in Strapi's format. */
  models: readonly ContentTypeSchema[]
  /** Component schemas keyed by uid (`<category>.<name>`). */
  components?: Readonly<Record<string, ComponentSchema>>
  /** Where documents are stored; an embedded PGlite, thrown away at close, when omitted. */
  db?: DatabaseOption
  /** The pool created from a connection string: size and timeouts (docs/operations.md). */
  pool?: Partial<Static<typeof PoolOptions>>
  /** How `app.close()` drains requests (docs/operations.md). */
  shutdown?: Partial<Static<typeof ShutdownOptions>>
  /** Cross-instance change notifications (docs/operations.md#many-instances); `false` turns them off. */
  notifications?: NotificationOptions
  /** Named policies that `rest.routes` and GraphQL's `resolversConfig` refer to (docs/extending.md#routes-policies-middlewares-controllers). */
  policies?: NamedPolicies
  rest?: Partial<Omit<Static<typeof RestOptions>, 'routes' | 'batch'>> & {
    /** Route config, only/except, controllers and Cache-Control per content-type uid (docs/extending.md). */
    routes?: RestRoutes
    /** The atomic batch route `POST /api/batch`, off by default (docs/batches.md). */
    batch?: Partial<ResolvedRestBatch>
  }
  schemaSync?: Partial<Static<typeof SchemaSyncOptions>>
  i18n?: Partial<Static<typeof I18nOptions>>
  query?: Partial<Static<typeof QueryOptions>>
  /** Bounds on a request's work (docs/operations.md). */
  limits?: Partial<Static<typeof LimitOptions>>
  auth?: Partial<Omit<Static<typeof AuthOptions>, 'register' | 'email' | 'rateLimit'>> & {
    /** `false`, or the limit and, for many instances, its shared store (docs/auth.md#rate-limits). */
    rateLimit?: false | RateLimitOptions
    register?: Partial<Static<typeof AuthOptions>['register']>
    email?: { send: (message: EmailMessage) => Promise<void> | void, from?: string }
  }
  /** GraphQL endpoint, sandbox and Shadow CRUD options (docs/graphql.md); `false` disables GraphQL. */
  graphql?: GraphqlOptions | false
  /** Upload API and storage provider options (docs/upload.md). */
  upload?: UploadOptions
  /** Outbound webhooks with an outbox (docs/extending.md#webhooks). */
  webhooks?: WebhookOptions
}

export interface RateLimitOptions {
  /** Requests allowed per client and path in one window. Default 10. */
  max?: number
  /** The window, in milliseconds. Default 60000. */
  timeWindow?: number
  /**
   * Keep the counts in Redis, shared by every instance: an ioredis client the application owns
   * (and closes), or a `redis://` / `rediss://` URL from which the plugin makes its own client
   * (needs the `ioredis` package) and closes it with the app.
   */
  redis?: RedisClient | string
  /** Prefix of the Redis keys, so that two applications on one Redis count apart. */
  nameSpace?: string
}

/**
 * What the Redis store needs of a client: ioredis's `Redis` (or `Cluster`) fits. Typed here, not
 * imported, because ioredis is an optional peer dependency.
 */
export interface RedisClient {
  defineCommand: (name: string, definition: { numberOfKeys?: number, lua: string }) => void
  on: (event: string, listener: (...args: any[]) => void) => unknown
  off: (event: string, listener: (...args: any[]) => void) => unknown
  readonly status: string
}

export interface EmailMessage {
  to: string
  from?: string
  subject: string
  text: string
  html: string
}

export interface ResolvedOptions {
  models: readonly ContentTypeSchema[]
  components: Readonly<Record<string, ComponentSchema>>
  db: DatabaseOption
  pool: Static<typeof PoolOptions>
  shutdown: Static<typeof ShutdownOptions>
  notifications: NotificationOptions
  policies: NamedPolicies
  rest: Omit<Static<typeof RestOptions>, 'routes'> & { routes: RestRoutes }
  schemaSync: Static<typeof SchemaSyncOptions>
  i18n: Static<typeof I18nOptions>
  query: Static<typeof QueryOptions>
  limits: Static<typeof LimitOptions>
  auth: Omit<Static<typeof AuthOptions>, 'rateLimit'> & {
    rateLimit: false | { max: number, timeWindow: number, redis?: RedisClient | string, nameSpace: string }
    email?: { send: (message: EmailMessage) => Promise<void> | void, from?: string }
  }
  /** Null when GraphQL is off (`graphql: false`). */
  graphql: ResolvedGraphqlOptions | null
  upload: ResolvedUploadOptions
  /** Null without a `webhooks` option. */
  webhooks: ResolvedWebhookOptions | null
}

/**
 * The pool options configure a pool the plugin creates; set with any other `db`, they would be
 * ignored in silence. `db.max` and `pool.size` are one setting: both is a conflict.
 */
function checkPool (db: unknown, pool: Record<string, unknown> | undefined): string[] {
  const keys = typeof pool === 'object' && pool !== null && !Array.isArray(pool) ? Object.keys(pool) : []
  const ownPool = typeof db === 'string' || isReplicated(db) || (typeof db === 'object' && db !== null && typeof (db as { connectionString?: unknown }).connectionString === 'string')
  if (!ownPool) {
    return keys.length === 0
      ? []
      : [`pool.${keys.join(', pool.')}: only for the pool the plugin creates from a connection string; set it on your own pool or PGlite (docs/operations.md)`]
  }
  // With replicas, each server's `max` sizes its own pool (replicas.ts checks it).
  const max = isReplicated(db) ? undefined : (db as { max?: unknown }).max
  if (max !== undefined && !(Number.isInteger(max) && (max as number) >= 1)) return ['db.max: must be an integer >= 1']
  if (max !== undefined && keys.includes('size')) return ['db.max and pool.size set the same thing: keep pool.size']
  return []
}

/** `false`, or `{ channel?, connectionString? }`; not with embedded PGlite, one process with no other instance to tell. */
function checkNotifications (db: unknown, notifications: unknown, transactionPooling: unknown): string[] {
  if (notifications === false) return []
  const pooled = transactionPooling === true && (typeof db === 'string' || (typeof db === 'object' && db !== null && ('connectionString' in db || 'primary' in db)))
  // LISTEN through a pooler in transaction mode registers on a server connection the pooler then
  // lends to other clients: the instance would hear nothing, silently.
  if (pooled && (notifications as { connectionString?: unknown } | undefined)?.connectionString === undefined) {
    return ['notifications.connectionString: required with pool.transactionPooling (a pooler in transaction mode cannot LISTEN): a direct connection to PostgreSQL, or notifications: false']
  }
  if (notifications === undefined) return []
  if (typeof notifications !== 'object' || notifications === null || Array.isArray(notifications)) return ['notifications: must be false or { channel?, connectionString? }']
  const problems: string[] = []
  const { channel, connectionString, ...rest } = notifications as Record<string, unknown>
  if (Object.keys(rest).length > 0) problems.push(`notifications: unknown option(s) ${Object.keys(rest).join(', ')}`)
  if (channel !== undefined && (typeof channel !== 'string' || channel === '' || Buffer.byteLength(channel) > 63)) problems.push('notifications.channel: must be a string of 1 to 63 bytes (a PostgreSQL identifier)')
  if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString === '')) problems.push('notifications.connectionString: must be a connection string')
  else if (typeof connectionString === 'string') problems.push(...listed(connectionStringProblem(connectionString, 'notifications.connectionString')))
  const pglite = db === undefined || (typeof db === 'object' && db !== null && !isKysely(db) && !('primary' in db) && typeof (db as { connectionString?: unknown }).connectionString !== 'string')
  if (pglite && Object.keys(notifications).length > 0) problems.push('notifications: embedded PGlite is one process, with no other instance to notify; remove notifications or use PostgreSQL')
  return problems
}

function checkDb (db: unknown): string[] {
  if (typeof db === 'string') return listed(connectionStringProblem(db, 'db'))
  if (db === undefined || isKysely(db) || isReplicated(db)) return []
  if (typeof db === 'object' && db !== null && !Array.isArray(db)) {
    const o = db as Record<string, unknown>
    if (typeof o.connectionString === 'string') return listed(connectionStringProblem(o.connectionString, 'db.connectionString'))
    if ('pglite' in o && typeof o.pglite === 'object' && o.pglite !== null) return []
    if (Object.keys(o).every((k) => EMBEDDED_KEYS.has(k)) && (o.dataDir === undefined || typeof o.dataDir === 'string')) return checkEmbedded(o)
  }
  return ['db: expected a Kysely instance, a PostgreSQL connection string, { connectionString }, { primary, replicas }, { pglite } or { dataDir }']
}

const listed = (problem: string | null): string[] => problem === null ? [] : [problem]

const EMBEDDED_KEYS = new Set(['dataDir', 'settings', 'bootSnapshot', 'optimizeWasm'])

/** The embedded PGlite's options: `{ dataDir, settings, bootSnapshot, optimizeWasm }`, each optional. */
function checkEmbedded (o: Record<string, unknown>): string[] {
  const problems: string[] = []
  if (o.bootSnapshot !== undefined && o.bootSnapshot !== false && (typeof o.bootSnapshot !== 'string' || o.bootSnapshot === '')) {
    problems.push('db.bootSnapshot: must be a file path, or false')
  }
  if (o.optimizeWasm !== undefined && typeof o.optimizeWasm !== 'boolean') problems.push('db.optimizeWasm: must be a boolean')
  if (o.settings !== undefined) {
    if (typeof o.settings !== 'object' || o.settings === null || Array.isArray(o.settings)) {
      problems.push('db.settings: must be an object of PostgreSQL settings, e.g. { shared_buffers: \'32MB\' }')
    } else {
      for (const [name, value] of Object.entries(o.settings)) {
        if (!SETTING_NAME.test(name)) problems.push(`db.settings.${name}: not a PostgreSQL setting name`)
        else if (!((typeof value === 'string' && value !== '' && !/[\0\n]/.test(value)) || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) {
          problems.push(`db.settings.${name}: must be a string, a number or a boolean`)
        }
      }
    }
  }
  return problems
}

export function resolveOptions (options: ContentApiOptions): ResolvedOptions {
  const { value: resolved, problems } = resolveSchema<ResolvedOptions>(OptionsSchema, options, '')
  problems.push(...checkDb(options.db))
  problems.push(...checkPool(options.db, options.pool))
  if (isReplicated(options.db)) {
    const replicated = resolveReplicated(options.db)
    problems.push(...replicated.problems)
    resolved.db = replicated.db
  }
  problems.push(...checkNotifications(options.db, options.notifications, options.pool?.transactionPooling))
  resolved.notifications ??= {}
  // `db.max`, the older spelling of the pool size, is the size unless `pool.size` is given too.
  const max = isReplicated(options.db) ? undefined : (options.db as { max?: unknown } | undefined)?.max
  if (Number.isInteger(max) && (max as number) >= 1 && options.pool?.size === undefined && typeof resolved.pool === 'object') {
    resolved.pool.size = max as number
  }
  // A pooler in transaction mode lends each transaction any server connection: a name prepared
  // on one is unknown on the next, unless the pooler tracks them (PgBouncer 1.21+), which the
  // application says by setting `preparedStatements: true` itself.
  if (resolved.pool?.transactionPooling === true && options.pool?.preparedStatements === undefined) {
    resolved.pool.preparedStatements = false
  }
  // Cross-option rules, checked wherever the values they compare are valid, so that one run
  // reports every problem at once.
  const { rest, i18n } = resolved
  const validLimit = (n: unknown): boolean => Number.isInteger(n) && (n as number) >= 1
  if (validLimit(rest?.defaultLimit) && validLimit(rest?.maxLimit) && rest.defaultLimit > rest.maxLimit) {
    problems.push('rest.defaultLimit must not be greater than rest.maxLimit')
  }
  if (Array.isArray(i18n?.locales) && i18n.locales.length > 0) {
    if (typeof i18n.defaultLocale === 'string' && !i18n.locales.includes(i18n.defaultLocale)) {
      problems.push(`i18n.defaultLocale "${i18n.defaultLocale}" is not one of i18n.locales`)
    }
    for (const [locale, chain] of Object.entries(i18n.fallbacks ?? {})) {
      for (const code of [locale, ...(Array.isArray(chain) ? chain : [])]) {
        if (!i18n.locales.includes(code)) problems.push(`i18n.fallbacks: "${code}" is not one of i18n.locales`)
      }
    }
  }
  problems.push(...checkAuth(resolved.auth))
  problems.push(...checkRestRoutes(options.rest?.routes, options.policies, Array.isArray(options.models) ? options.models : []))
  problems.push(...checkRestBatch(resolved.rest?.batch, Array.isArray(options.models) ? options.models : []))
  resolved.policies ??= {}
  if (typeof resolved.rest === 'object' && resolved.rest !== null) resolved.rest.routes ??= {}
  resolved.graphql = areaOptions(() => resolveGraphqlOptions(options.graphql), problems) ?? null
  resolved.upload = areaOptions(() => resolveUploadOptions(options.upload), problems)!
  resolved.webhooks = areaOptions(() => resolveWebhookOptions(options.webhooks), problems) ?? null
  if (problems.length > 0) throw new ConfigurationError(problems)
  return resolved
}

/** An area's own resolve step (graphql, upload), its problems listed with the others. */
function areaOptions<T> (resolve: () => T, problems: string[]): T | undefined {
  try {
    return resolve()
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err
    problems.push(...err.problems)
    return undefined
  }
}

/** The auth options' rules across keys: secrets outside development, and what the email flows need. */
function checkAuth (auth: ResolvedOptions['auth'] | undefined): string[] {
  if (typeof auth !== 'object' || auth === null) return []
  const problems: string[] = []
  const email = auth.email
  if (email !== undefined && typeof email.send !== 'function') problems.push('auth.email.send must be a function')
  // Registration would answer { user } and send nothing: the user could never confirm.
  if (auth.register?.emailConfirmation === true && email === undefined) problems.push('auth.register.emailConfirmation needs auth.email.send')
  // The reset email's link would have no host: `?code=...` alone.
  if (email !== undefined && auth.urls?.resetPassword === undefined) problems.push('auth.email needs auth.urls.resetPassword (the page the reset-password email links to)')
  problems.push(...checkRateLimitStore(auth.rateLimit))
  const env = process.env.NODE_ENV
  // A missing secret is generated (with a warning) rather than refused only without NODE_ENV, in development and test.
  if (env !== undefined && env !== 'development' && env !== 'test') {
    // Throwaway secrets would sign out every user and void every API token at each restart.
    const where = env === 'production' ? 'in production' : `when NODE_ENV is ${JSON.stringify(env)} (only development and test generate one)`
    if (auth.jwtSecret === undefined) problems.push(`auth.jwtSecret is required ${where}`)
    if (auth.apiTokenSalt === undefined) problems.push(`auth.apiTokenSalt is required ${where}`)
  }
  return problems
}

/**
 * `auth.rateLimit.redis`: a client that can run the limiter's Lua script (ioredis's
 * `defineCommand`), or a URL that ioredis connects to. Anything else would surface as a failed
 * count on the first login, and fail open in silence, so it is refused here, at start-up.
 */
function checkRateLimitStore (rateLimit: unknown): string[] {
  if (typeof rateLimit !== 'object' || rateLimit === null) return []
  const redis = (rateLimit as { redis?: unknown }).redis
  if (redis === undefined) return []
  if (typeof redis === 'string') {
    let url: URL | null = null
    try { url = new URL(redis) } catch {}
    if (url === null || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
      return ['auth.rateLimit.redis: must be a redis:// or rediss:// URL (e.g. redis://127.0.0.1:6379/0), or an ioredis client']
    }
    return []
  }
  if (typeof redis === 'object' && redis !== null && typeof (redis as { defineCommand?: unknown }).defineCommand === 'function' &&
    typeof (redis as { on?: unknown }).on === 'function') return []
  return ['auth.rateLimit.redis: must be an ioredis client (new Redis(...)) or a redis:// or rediss:// URL']
}
