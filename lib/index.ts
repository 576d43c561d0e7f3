import fp from 'fastify-plugin'
import type { FastifyInstance, preHandlerHookHandler } from 'fastify'
import type { Kysely } from 'kysely'
import { randomBytes } from 'node:crypto'
import type { AccessControl } from './auth/access.js'
import type { ApiTokenService } from './auth/api-tokens.js'
import { authModels, authPlugin, createAuth } from './auth/index.js'
import type { PermissionStore } from './auth/permissions.js'
import { connect } from './db/connect.js'
import { warnLooseServerSettings } from './db/server-settings.js'
import { notificationsFor, type Notifications } from './db/notifications.js'
import { ChangeEvents } from './documents/change-events.js'
import { Lifecycles, type LifecycleSubscriber } from './documents/lifecycles.js'
import { DocumentMiddlewares, type DocumentMiddleware } from './documents/middlewares.js'
import { LruCache } from './lru-cache.js'
import { CursorCodec } from './query/cursor.js'
import { authStores } from './documents/auth-stores.js'
import { DocumentService, type CachedRead } from './documents/service.js'
import { runBatch, type BatchOperation, type BatchResult } from './documents/batch.js'
import { UnknownContentTypeError } from './errors.js'
import { createRegistry, type Registry } from './model/registry.js'
import { resolveOptions, type ContentApiOptions, type ResolvedOptions } from './options/index.js'
import type { GraphqlApi } from './graphql/index.js'
import { restPlugin } from './rest/index.js'
import { protect, type ProtectOptions } from './rest/route-config.js'
import { errorHandler } from './error-handler.js'
import type { UploadApi } from './upload/index.js'
import { rowCountsInUse, storedSecrets, syncSchema, type RowCountsInUse, type SchemaSyncResult } from './schema/index.js'
import { missingSecrets, ownTables } from './own-tables.js'
import { SECRETS_TABLE } from './model/naming.js'
import { gracefulShutdown } from './shutdown.js'
import { createWebhooks, webhookRoutes, type WebhooksApi } from './webhooks/index.js'
import type { WebhookWorker } from './webhooks/worker.js'
import { wants, type WriteAction } from './documents/webhook-events.js'
import type { ServiceContext } from './documents/types.js'
import type { TypedDocumentService } from './documents/typed-service.js'
import type { ContentSchemas, SchemasOf } from './model/document-types.js'
import type { ComponentSchema, ContentTypeSchema } from './model/types.js'
import { serverOptionsInUse } from './server/server-options.js'
import { addSurfaces, hasSurfaces, surfaceOf } from './server/surfaces.js'

export interface ContentApi {
  /** The validated, immutable content-type and component registry. */
  readonly registry: Registry
  /** The Kysely instance documents are stored through. */
  readonly db: Kysely<any>
  /** The schema-sync plan computed at start-up (what was applied, or with `dryRun` what would be). */
  readonly schemaPlan: SchemaSyncResult
  /**
   * The document service of a content type: the one path for reads and writes; `documents.use()`
   * adds a document-service middleware (docs/extending.md#document-service-middlewares).
   */
  readonly documents: Documents
  /** Strapi's lifecycle hooks for several models at once (docs/extending.md#lifecycles). */
  readonly lifecycles: { subscribe (subscriber: LifecycleSubscriber): () => void }
  /** Roles and their permissions (`grant`, `revoke`, `createRole`, `listRoles`, `tree`, `setActions`, `deleteRole`). */
  readonly permissions: PermissionStore
  /** API tokens (`create`, `list`, `revoke`, `regenerate`). */
  readonly apiTokens: ApiTokenService
  /** The access check every route and resolver goes through. */
  readonly access: AccessControl
  /** The GraphQL extension API (Shadow CRUD, `use`); null when GraphQL is off. */
  graphql: GraphqlApi | null
  /** The upload service; null when uploads are off. */
  upload: UploadApi | null
  /** The webhook delivery log and redelivery; null without a `webhooks` option (docs/extending.md#webhooks). */
  readonly webhooks: WebhooksApi | null
  /** The content API's route checks for the application's own routes (docs/extending.md#routes-policies-middlewares-controllers). */
  readonly routes: ContentApiRoutes
}

export interface ContentApiRoutes {
  /**
   * A preHandler running the content API's access check, policies and middlewares, answering a
   * refusal in Strapi's envelope: `{ preHandler: app.contentApi.routes.protect({ uid, action, policies }) }`.
   */
  protect (options: ProtectOptions): preHandlerHookHandler
  /** The content API's error handler (`app.setErrorHandler(app.contentApi.routes.errorHandler)`): anything thrown answered in Strapi's envelope. */
  readonly errorHandler: typeof errorHandler
}

/**
 * `app.contentApi.documents`: a content type's document service, and Strapi's
 * `strapi.documents.use()`.
 *
 * @example
 * app.contentApi.documents.use(async (context, next) => {
 *   if (context.uid === 'api::article.article' && context.action === 'create') context.params.data.views ??= 0
 *   return await next()
 * })
 */
export interface Documents<S extends ContentSchemas | null = RegisteredSchemas> {
  <U extends DocumentUid<S>>(uid: U): DocumentServiceOf<S, U>
  /** Adds a middleware run around every call of every document service, after those added before it. */
  use (middleware: DocumentMiddleware): Documents<S>
  /** Several writes of any content types in one transaction, all committed or none (docs/batches.md). */
  batch (operations: readonly BatchOperation[]): Promise<BatchResult[]>
}

/**
 * Where an application registers its models' types, so that `app.contentApi.documents(uid)` is
 * typed by them (docs/typescript.md):
 *
 * @example
 * declare module 'fastify-content-api' {
 *   interface Register { models: typeof models, components: typeof components }
 * }
 */
export interface Register {}

/** The registered models' schemas, or null when the application registered none (everything untyped). */
export type RegisteredSchemas = Register extends { models: infer M extends readonly ContentTypeSchema[] }
  ? SchemasOf<M, Register extends { components: infer C extends Readonly<Record<string, ComponentSchema>> } ? C : {}>
  : null

/** The uids `documents()` accepts: any string untyped; typed, the registered ones and the built-in `plugin::` types. */
type DocumentUid<S extends ContentSchemas | null> = S extends ContentSchemas ? (keyof S['contentTypes'] & string) | `plugin::${string}` : string

type DocumentServiceOf<S extends ContentSchemas | null, U extends string> =
  S extends ContentSchemas ? U extends keyof S['contentTypes'] ? TypedDocumentService<S, S['contentTypes'][U]> : DocumentService : DocumentService

/** `documents` as the library's own modules call it: by any uid, untyped. */
interface AnyDocuments {
  (uid: string): DocumentService
  use (middleware: DocumentMiddleware): AnyDocuments
  batch (operations: readonly BatchOperation[]): Promise<BatchResult[]>
}

declare module 'fastify' {
  interface FastifyInstance {
    contentApi: ContentApi
  }
}

/**
 * Registers the content API: validates options and models, connects to the database, syncs the
 * schema, decorates `app.contentApi`, and mounts the REST routes under `rest.prefix` (`/api`).
 *
 * @example
 * await app.register(contentApi, { models: [article], db: process.env.DATABASE_URL })
 * // GET /api/articles, POST /api/articles, GET|PUT|DELETE /api/articles/:documentId
 */
async function contentApi (app: FastifyInstance, userOptions: ContentApiOptions): Promise<void> {
  const options = resolveOptions(userOptions)
  const registry = createRegistry(options.models, options.components)
  const handle = connect(options.db, options.pool, app.log)
  const areas = loadAreas(options)
  let notifications: Notifications | null = null
  let worker: WebhookWorker | null = null
  let workerStopped: Promise<void> | null = null
  // Registered first, so that the database is closed with the app whatever fails below. The
  // content API's paths are recorded once it has registered (answerServerErrors), before any
  // request arrives.
  gracefulShutdown(app, {
    timeoutMs: options.shutdown.timeoutMs,
    isContentRequest: (request) => surfaceOf(app.server, request.url) !== null,
    closeDatabase: async (graceMs) => {
      // The webhook worker first: its deliveries in flight are recorded (or given back) before the pool closes.
      await (workerStopped ?? worker?.stop(Math.min(graceMs, options.webhooks?.timeoutMs ?? 0)))
      await notifications?.close()
      await handle.close(graceMs)
    }
  })

  let schemaPlan: SchemaSyncResult
  let rowCounts: RowCountsInUse
  let secrets: { jwtSecret: string, apiTokenSalt: string }
  try {
    // Which tables' row counts triggers keep, and with which function (docs/rest.md#totals), once sync has put them in place.
    [schemaPlan, rowCounts, secrets] = await handle.admin(async (db) => {
      const plan = await syncSchema(db, registry, options.schemaSync, app.log, ownTables(options))
      if (handle.dialect === 'postgres' && options.pool.transactionPooling) await warnLooseServerSettings(db, options.pool, app.log)
      return [plan, await rowCountsInUse(db, registry), await authSecrets(db, options, app)] as const
    })
  } catch (err) {
    await handle.close()
    throw err
  }

  // Other instances' changes (lib/db/notifications.ts), heard from before the first request.
  notifications = notificationsFor(options.notifications, handle.listener, app.log)
  const changes = new ChangeEvents(notifications, app.log)
  await notifications?.start()

  const lifecycles = new Lifecycles(registry.contentTypes.values())
  const middlewares = new DocumentMiddlewares()
  const context = { changes, lifecycles, middlewares, webhooks: options.webhooks === null ? null : webhookRoutes(options.webhooks), db: handle.db, reads: handle.reads, primaryReads: handle.primaryReads, registry, limits: options.rest, bounds: options.limits, i18n: options.i18n, compile: { ...options.query, rowCounts: rowCounts.tables, countFunction: rowCounts.countFunction }, cursors: new CursorCodec(secrets.jwtSecret), queries: new LruCache<string, CachedRead>(1000), prepared: handle.prepared }
  const services = new Map<string, DocumentService>()
  for (const model of registry.contentTypes.values()) services.set(model.uid, new DocumentService(model, context))
  const documents: AnyDocuments = Object.assign((uid: string): DocumentService => {
    const service = services.get(uid)
    if (service === undefined) throw new UnknownContentTypeError(uid)
    return service
  }, {
    use (middleware: DocumentMiddleware): AnyDocuments {
      middlewares.use(middleware)
      return documents
    },
    batch: async (operations: readonly BatchOperation[]): Promise<BatchResult[]> => await runBatch(context, operations)
  })

  const webhooks = options.webhooks === null ? null : createWebhooks(handle.db, options.webhooks, app.log)
  if (webhooks?.worker != null) startWorker(app, webhooks.worker, services, context, options.shutdown.timeoutMs, (stopped) => { workerStopped = stopped })
  worker = webhooks?.worker ?? null

  const auth = await createAuth({
    stores: authStores(handle.db, authModels(registry), changes),
    registry,
    documents,
    changes,
    options: options.auth,
    apiTokenSalt: secrets.apiTokenSalt,
    log: app.log
  })
  const { access, authenticator, credentials, permissions, apiTokens } = auth

  // graphql and upload are filled in below, once their modules have registered.
  const routes: ContentApiRoutes = { protect: (o) => protect(app, access, options.policies, o), errorHandler }
  const contentApiState: ContentApi = {
    registry,
    db: handle.db,
    schemaPlan,
    // The same function, seen through the registered models' types (typed-service.ts).
    documents: documents as Documents,
    lifecycles: { subscribe: (subscriber) => lifecycles.subscribe(subscriber) },
    permissions,
    apiTokens,
    access,
    graphql: null,
    upload: null,
    routes,
    webhooks: webhooks?.api ?? null
  }
  app.decorate('contentApi', contentApiState)
  // Auth first: it registers @fastify/jwt, which the GraphQL login and register mutations sign with.
  await app.register(authPlugin, {
    prefix: options.rest.prefix,
    auth,
    registry,
    documents,
    options: options.auth,
    jwtSecret: secrets.jwtSecret,
    limits: options.limits
  })
  await app.register(restPlugin, { prefix: options.rest.prefix, registry, documents, access, limits: options.limits, i18n: options.i18n, routes: options.rest.routes, policies: options.policies, batch: options.rest.batch, runBatch: documents.batch })
  contentApiState.upload = areas.upload === null ? null : await (await areas.upload).registerUpload(app, { registry, documents, access, options })
  contentApiState.graphql = areas.graphql === null ? null : await (await areas.graphql).registerGraphql(app, { registry, documents, access, authenticator, credentials, permissions, options })
  answerServerErrors(app, options.rest.prefix, contentApiState.graphql?.endpoint ?? null)
}

/**
 * The modules of the GraphQL and upload areas, loaded only when they are on, and from the start of
 * the registration: they load (graphql-js, Mercurius, @fastify/multipart, @fastify/static: about
 * a third of the package's import time) while the database connects and the schema syncs.
 */
function loadAreas (options: ResolvedOptions): { graphql: Promise<typeof import('./graphql/index.js')> | null, upload: Promise<typeof import('./upload/index.js')> | null } {
  const graphql = options.graphql === null ? null : import('./graphql/index.js')
  const upload = options.upload.enabled ? import('./upload/index.js') : null
  // Awaited where the area registers; when the start fails before, nobody awaits them.
  graphql?.catch(() => {})
  upload?.catch(() => {})
  return { graphql, upload }
}

const WRITE_ACTIONS: readonly WriteAction[] = ['create', 'update', 'delete', 'publish', 'unpublish', 'discardDraft']

/**
 * Starts the webhook worker when the app is ready, wakes it at every commit of a content type
 * (here, or in another instance through LISTEN/NOTIFY), and stops its claims as the app starts
 * closing: no delivery begins after `app.close()`; those in flight may end within the shutdown
 * bound (then `closeDatabase` waits for them).
 */
function startWorker (
  app: FastifyInstance, worker: WebhookWorker, services: ReadonlyMap<string, DocumentService>, ctx: Pick<ServiceContext, 'webhooks' | 'changes'>, timeoutMs: number, stopping: (stopped: Promise<void>) => void
): void {
  // Only writes that may have queued an event wake it: others would cost a claim each.
  for (const { model } of services.values()) {
    const actions = WRITE_ACTIONS.filter((action) => wants(ctx, model, action))
    if (actions.length > 0) ctx.changes.on(model.uid, (event) => { if ((actions as string[]).includes(event.action)) worker.wake() })
  }
  app.addHook('onReady', async () => { worker.start() })
  app.addHook('preClose', async () => { stopping(worker.stop(timeoutMs)) })
}

/**
 * Lets the server's own error handlers (`contentApiServerOptions()`) tell content API paths
 * from the application's, and says once when the server was made without them: Fastify's and
 * Node's refusals before routing (a malformed URL, a long path segment, a header block over
 * Node's limit) then answer in Fastify's format, quoting the request.
 */
function answerServerErrors (app: FastifyInstance, restPrefix: string, graphqlEndpoint: string | null): void {
  const first = !hasSurfaces(app.server)
  addSurfaces(app.server, { rest: `${app.prefix}${restPrefix}`, graphql: graphqlEndpoint === null ? null : `${app.prefix}${graphqlEndpoint}` })
  if (first && !serverOptionsInUse(app.server)) {
    app.log.warn('fastify-content-api: the server was not created with contentApiServerOptions(); malformed URLs, over-long paths and over-large headers under the content API are answered in Fastify\'s format (docs/operations.md#one-error-format)')
  }
}

/**
 * The JWT secret and the API-token salt. Only development and test (or no NODE_ENV) may go
 * without them (options validation refuses to start elsewhere); there missing ones are read
 * from the database, where the first instance generated and stored them
 * (lib/schema/stored-secrets.ts), so that every instance on one database signs and checks alike
 * and a restart keeps users signed in. A configured one always wins. With schema sync off or
 * dry, the table is not created, and missing ones are generated per process, as before. The
 * warning names the options, never a value.
 */
async function authSecrets (db: Kysely<any>, options: ResolvedOptions, app: FastifyInstance): Promise<{ jwtSecret: string, apiTokenSalt: string }> {
  const { auth } = options
  const missing = missingSecrets(auth)
  if (missing.length === 0) return { jwtSecret: auth.jwtSecret!, apiTokenSalt: auth.apiTokenSalt! }
  const values = await storedSecrets(db, missing)
  const named = missing.map((k) => `auth.${k}`).join(' or ')
  if (missing.every((key) => values[key] !== undefined)) {
    app.log.warn(`fastify-content-api: no ${named} given; using a generated one stored in the database table ${SECRETS_TABLE}, shared by every instance on this database (for development only: set it in production)`)
  } else {
    app.log.warn(`fastify-content-api: no ${named} given; using a throwaway one, as schema sync is not applying changes (set it in production)`)
  }
  return {
    jwtSecret: auth.jwtSecret ?? values.jwtSecret ?? randomBytes(32).toString('hex'),
    apiTokenSalt: auth.apiTokenSalt ?? values.apiTokenSalt ?? randomBytes(32).toString('hex')
  }
}

export default fp(contentApi, { fastify: '5.x', name: 'fastify-content-api' })
export { contentApi }

export type { ContentApiOptions, EmailMessage } from './options/index.js'
export type { CacheControl, ContentTypeRoutes, CoreAnswer, RestRoutes, RouteAction, RouteActionConfig, RouteController, RouteMiddleware } from './options/rest-routes.js'
export type { InlinePolicy, Policy, PolicyExtras, PolicyReference, RoutePolicyContext } from './policies.js'
export type { ProtectOptions } from './rest/route-config.js'
export type { WebhookOptions, WebhookEvent } from './options/webhooks.js'
export { verifyWebhookSignature, type WebhooksApi, type WebhookDelivery, type DeliveryStatus, type AttemptLog } from './webhooks/index.js'
export type { ChangeAction, ChangeEvent, ChangeListener } from './documents/change-events.js'
export type { LifecycleSubscriber } from './documents/lifecycles.js'
export type { DocumentAction, DocumentMiddleware, DocumentMiddlewareContext } from './documents/middlewares.js'
export type { BatchCreate, BatchDelete, BatchOperation, BatchPublication, BatchResult, BatchUpdate, DocumentRef } from './documents/batch.js'
export type { AccessControl, AccessGrant } from './auth/access.js'
export type { AccessScope } from './query/access-scope.js'
export type { ApiToken, ApiTokenType, CreateApiToken } from './auth/api-tokens.js'
export type { Permission, GrantOptions } from './auth/permissions.js'
export { PermissionStore } from './auth/permissions.js'
export { ApiTokenService } from './auth/api-tokens.js'
export type { DatabaseOption } from './db/connect.js'
export { PGliteDialect, type PGliteDialectConfig } from './db/pglite-dialect.js'
export * from './errors.js'
export { contentApiServerOptions } from './server/server-options.js'
export * from './model/types.js'
export type { Registry, ContentType, Component, Field } from './model/registry.js'
export { DocumentService, type Document, type QueryParams, type WriteParams, type JsonPage, type TreeReadOptions } from './documents/service.js'
export type { CursorLinks, PaginationMeta, QueryTree, RawQuery } from './query/index.js'
export type { ContentSchemas, SchemasOf, UidOf, ResultOf, MediaFile, LooseDocument, MaxDepth } from './model/document-types.js'
export type { TypedQuery, Filters, FieldOperators, FilterOperand, Sort, Fields, Populate, Pagination, DataOf, RelationInput, RelationRef } from './model/query-types.js'
export type { TypedDocumentService, TypedQueryParams, TypedWriteParams } from './documents/typed-service.js'
export { generateTypes } from './model/generate-types.js'
export type { SchemaPlan, SchemaSyncResult } from './schema/index.js'
export { GraphqlApi } from './graphql/extension.js'
// The local provider, for an application that passes or wraps its own (`upload: { provider }`),
// and the types a provider implements. The S3 provider is not exported: importing it loads the
// AWS SDK, which the plugin loads only when `upload.provider` is 's3' (docs/upload.md).
export { LocalProvider } from './upload/local-provider.js'
export type {
  UploadApi, UploadParams, UploadOptions, UploadProvider, ProviderUpload, ProviderResult, StoredObject, FileInfo, FileRecord, UploadInput
} from './upload/index.js'
export type {
  GraphqlOptions, Extension, ExtensionFactory, ContentTypeConfig, FieldConfig,
  MiddlewareFactory, MiddlewareFunction, PolicyContext, PolicyFunction, ResolverConfig
} from './graphql/index.js'
