import type { Precondition } from './precondition.js'
import type { WebhookRoutes } from './webhook-events.js'
import type { CompiledQuery, Kysely } from 'kysely'
import type { AccessScope } from '../query/access-scope.js'
import type { LruCache } from '../lru-cache.js'
import type { PreparedStatements } from '../db/prepared-statements.js'
import type { QueryRunner } from '../db/connect.js'
import type { CompileOptions, FindSpec } from '../compiler/find.js'
import type { Association } from '../model/associations.js'
import type { Registry } from '../model/registry.js'
import type { CursorCodec, LocaleSettings, PaginationLimits, PublicationFilter, RequestLimits, Status } from '../query/index.js'
import type { VisibleDocuments } from './write-relations.js'
import type { ChangeEvents } from './change-events.js'
import type { Lifecycles } from './lifecycles.js'
import type { DocumentMiddlewares } from './middlewares.js'
import type { BatchTransaction } from './batch-transaction.js'
import type { KnownTotal } from './known-total.js'

/**
 * The types the document service's modules share: what application code passes and gets back
 * (re-exported by service.ts and lib/index.ts), and what one write carries from its preparation
 * into its transaction.
 */

/** A document as the API returns it: `id`, `documentId`, attributes, timestamps, `locale`. */
export type Document = Record<string, unknown> & { id: number, documentId: string }

/** Strapi's document-service parameters, as application code passes them. */
export interface QueryParams {
  fields?: string | string[]
  /** Related attributes to include, in any of Strapi's populate forms. */
  populate?: unknown
  /** Strapi's filter object, e.g. `{ views: { $gt: 100 }, $or: [...] }`. */
  filters?: Record<string, unknown> | Array<Record<string, unknown>>
  sort?: string | string[] | Record<string, 'asc' | 'desc'> | Array<Record<string, 'asc' | 'desc'>>
  status?: Status
  /** Strapi 5's publication cohort (docs/i18n-and-drafts.md); `hasPublishedVersion` is its deprecated form. */
  publicationFilter?: PublicationFilter
  hasPublishedVersion?: boolean
  /** One locale, `*` for all; a list of locales on `findMany`, `count` and pages only. */
  locale?: string | string[]
  /** Page or offset window; without it `findMany` returns every match. */
  pagination?: { page?: number, pageSize?: number } | { start?: number, limit?: number }
  page?: number
  pageSize?: number
  start?: number
  limit?: number
  /** The caller's limits from the access check (REST and GraphQL pass them; application code need not). */
  access?: AccessScope
  /**
   * `populate` leaves out relations to types the caller may not read instead of refusing them
   * with a 400 (Strapi's users routes sanitise their query so). Only with `access`.
   */
  omitUnreadable?: boolean
  /**
   * Apply the plugin's `limits` (docs/operations.md) to this call, as the REST routes do:
   * `inputDepth`, `populateDepth` and `maxRows`, each a 400 `LimitError` past its bound.
   * Application code is unbounded unless it asks.
   */
  limits?: boolean
  /**
   * Where the read runs when `db` has read replicas: `'strong'` (the default for application
   * code) on the primary, which has every write committed before the call; `'eventual'` on a
   * replica, which may lag behind (docs/operations.md#read-replicas). Without replicas, both read
   * the one database.
   */
  consistency?: Consistency
}

/** Whether a read must see every write committed before it (`strong`: the primary) or may lag (`eventual`: a replica). */
export type Consistency = 'strong' | 'eventual'

export interface WriteParams {
  data: Record<string, unknown>
  status?: Status
  locale?: string
  /** What the returned document shows, as in reads. */
  fields?: string | string[]
  populate?: unknown
  access?: AccessScope
  /**
   * Values the application sets itself (a default role, a provider), written with `data` but not
   * the caller's: neither its field limits nor its reach through relations apply to them. Its
   * row-level conditions still hold for the document written.
   */
  trusted?: Record<string, unknown>
  /**
   * Apply the plugin's `limits` to this write, as the REST routes do: the nesting of `data`
   * (`inputDepth`), and the response's `populate` (`populateDepth`, `maxRows`: a response over
   * it rolls the write back).
   */
  limits?: boolean
  /** `If-Match`: checked in the write's transaction once the document is locked; a 412 when it fails (precondition.ts). */
  ifMatch?: Precondition
}

export interface ServiceContext {
  db: Kysely<any>
  /** Where cached reads run, outside any transaction: `db`, or the plugin's pool directly (lib/db/connect.ts). */
  reads: QueryRunner
  /** Where cached reads run that must see the latest writes: `reads`, or with replicas the primary. */
  primaryReads: QueryRunner
  /** Compiled reads by content type, query-tree shape (lib/query/tree-key.ts) and what is read of the tree (reader.ts). */
  queries: LruCache<string, CachedRead>
  /** Where the reads kept in `queries` are marked to run as named statements; null: all run unnamed. */
  prepared: PreparedStatements | null
  registry: Registry
  limits: PaginationLimits
  /** The `limits` options: applied to REST reads, and to calls that ask (`limits: true`). */
  bounds: RequestLimits
  i18n: LocaleSettings
  compile: CompileOptions
  /** Signs and checks the cursors of cursor pagination (lib/query/cursor.ts). */
  cursors: CursorCodec
  /** Change events of every type, in this instance and the others on the database (change-events.ts). */
  changes: ChangeEvents
  /** Lifecycle hooks of every type: the models' own and the subscribers' (lifecycles.ts). */
  lifecycles: Lifecycles
  /** The document-service middlewares, run around every call (middlewares.ts). */
  middlewares: DocumentMiddlewares
  /** The webhook endpoints listening to each event (webhook-events.ts); absent or null: no webhooks. */
  webhooks?: WebhookRoutes | null
  /** The batch whose transaction every write joins (batch.ts); absent: each write has its own. */
  batch?: BatchTransaction
}

/** A compiled read and what its response needs besides the rows. */
export interface CachedRead {
  query: CompiledQuery<{ data: string | null, total?: number | null, rows?: number }>
  /** The row budget's probe when it runs as a statement of its own, first (see lib/compiler/row-budget.ts). */
  probe: CompiledQuery<{ n: number }> | null
  /** A kept page statement's remembered total (known-total.ts), when its count can be remembered. */
  known?: KnownTotal
}

/**
 * One association of a write with its input (parsed, for relations) and, for a relation whose
 * target the caller sees only in part (row-level conditions), which of its documents it sees.
 */
export type AssociationWrite = [association: Association, input: unknown, visible: VisibleDocuments | null]

/** What a read or a write renders: its fields and populate, and with `limits` its `maxRows`. */
export type Shape = Pick<FindSpec, 'fields' | 'populate' | 'maxRows'>

/** A write validated and ready for its transaction. */
export interface PreparedWrite {
  shape: Shape
  data: Record<string, unknown>
  status: Status
  locale: string | null
  values: Record<string, unknown>
  associations: AssociationWrite[]
  generated: ReadonlySet<string>
  access: AccessScope | undefined
  /**
   * The response's statement may be cached (reader.ts's `readWrittenCached`): the shape was
   * parsed from a request (`limits: true`), not from objects application code holds.
   */
  cache: boolean
}
