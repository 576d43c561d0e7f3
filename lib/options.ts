import Type, { type Static } from 'typebox'
import Value from 'typebox/value'
import { ConfigurationError } from './errors.js'
import { isKysely, type DatabaseOption } from './db/connect.js'
import type { ComponentSchema, ContentTypeSchema } from './model/types.js'

/**
 * Every tunable of the plugin, with its default, in one schema. `resolveOptions` validates the
 * user's options against it once, at registration, and reports every problem in one error.
 * docs/options.md documents each key.
 */
const RestOptions = Type.Object({
  /** Path prefix of every REST route. */
  prefix: Type.String({ default: '/api', pattern: '^/' }),
  /** Page size (and offset-mode limit) when the request gives none (Strapi's `api.rest.defaultLimit`). */
  defaultLimit: Type.Integer({ minimum: 1, default: 25 }),
  /** Largest page size or limit a request may ask for; larger values are clamped (`api.rest.maxLimit`). */
  maxLimit: Type.Integer({ minimum: 1, default: 100 }),
  /** Whether list responses count the total by default (`api.rest.withCount`). */
  withCount: Type.Boolean({ default: true })
}, { additionalProperties: false })

const SchemaSyncOptions = Type.Object({
  /**
   * `apply` creates missing tables, columns and indexes at start-up; `dryRun` only computes the
   * plan (read it from `app.contentApi.schemaPlan`); `off` leaves the database alone.
   */
  mode: Type.Union([Type.Literal('apply'), Type.Literal('dryRun'), Type.Literal('off')], { default: 'apply' }),
  /** Also apply destructive changes (drop removed columns, change column types). Off by default. */
  allowDestructive: Type.Boolean({ default: false })
}, { additionalProperties: false })

const I18nOptions = Type.Object({
  /** Locale codes documents of localized types may have. */
  locales: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, default: ['en'] }),
  /** The locale a request addresses when it names none. */
  defaultLocale: Type.String({ minLength: 1, default: 'en' }),
  /**
   * Beyond Strapi: locales to read, in order, when a document has no version in the requested
   * one, e.g. `{ 'fr-CA': ['fr', 'en'] }`. Off (empty) by default.
   */
  fallbacks: Type.Record(Type.String(), Type.Array(Type.String({ minLength: 1 })), { default: {} })
}, { additionalProperties: false })

const QueryOptions = Type.Object({
  /**
   * Treat `%` and `_` in `$contains`, `$startsWith`, `$eqi`... values literally. Off by default:
   * Strapi passes them through as LIKE wildcards, and clients may rely on it.
   */
  escapeLikeWildcards: Type.Boolean({ default: false })
}, { additionalProperties: false })

const OptionsSchema = Type.Object({
  models: Type.Array(Type.Unknown(), { default: [] }),
  components: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  db: Type.Optional(Type.Unknown()),
  rest: Type.Optional(RestOptions),
  schemaSync: Type.Optional(SchemaSyncOptions),
  i18n: Type.Optional(I18nOptions),
  query: Type.Optional(QueryOptions)
}, { additionalProperties: false })

export interface ContentApiOptions {
  /** Content-type schemas in Strapi's format. */
  models: readonly ContentTypeSchema[]
  /** Component schemas keyed by uid (`<category>.<name>`). */
  components?: Readonly<Record<string, ComponentSchema>>
  /** Where documents are stored; embedded in-memory PGlite when omitted. */
  db?: DatabaseOption
  rest?: Partial<Static<typeof RestOptions>>
  schemaSync?: Partial<Static<typeof SchemaSyncOptions>>
  i18n?: Partial<Static<typeof I18nOptions>>
  query?: Partial<Static<typeof QueryOptions>>
}

export interface ResolvedOptions {
  models: readonly ContentTypeSchema[]
  components: Readonly<Record<string, ComponentSchema>>
  db: DatabaseOption
  rest: Static<typeof RestOptions>
  schemaSync: Static<typeof SchemaSyncOptions>
  i18n: Static<typeof I18nOptions>
  query: Static<typeof QueryOptions>
}

function describe (path: string, message: string): string {
  return `${path === '' ? 'options' : path.slice(1).replaceAll('/', '.')}: ${message}`
}

function checkDb (db: unknown): string[] {
  if (db === undefined || typeof db === 'string' || isKysely(db)) return []
  if (typeof db === 'object' && db !== null) {
    const o = db as Record<string, unknown>
    if (typeof o.connectionString === 'string') return []
    if ('pglite' in o && typeof o.pglite === 'object' && o.pglite !== null) return []
    if (Object.keys(o).every((k) => k === 'dataDir') && (o.dataDir === undefined || typeof o.dataDir === 'string')) return []
  }
  return ['db: expected a Kysely instance, a PostgreSQL connection string, { connectionString }, { pglite } or { dataDir }']
}

export function resolveOptions (options: ContentApiOptions): ResolvedOptions {
  const input = { rest: {}, schemaSync: {}, i18n: {}, query: {}, ...options }
  // Defaults first, so a key left out is filled in rather than reported missing.
  const resolved = Value.Default(OptionsSchema, shallowCopy(input)) as ResolvedOptions
  const problems = [...Value.Errors(OptionsSchema, resolved)]
    .filter((e) => e.keyword !== 'boolean')
    .map((e) => e.keyword === 'additionalProperties'
      ? describe(e.instancePath, `unknown option(s) ${(e.params as { additionalProperties: string[] }).additionalProperties.join(', ')}`)
      : describe(e.instancePath, e.message))
  problems.push(...checkDb(input.db))
  if (problems.length === 0) {
    if (resolved.rest.defaultLimit > resolved.rest.maxLimit) problems.push('rest.defaultLimit must not be greater than rest.maxLimit')
    if (!resolved.i18n.locales.includes(resolved.i18n.defaultLocale)) problems.push(`i18n.defaultLocale "${resolved.i18n.defaultLocale}" is not one of i18n.locales`)
    for (const [locale, chain] of Object.entries(resolved.i18n.fallbacks)) {
      for (const code of [locale, ...chain]) {
        if (!resolved.i18n.locales.includes(code)) problems.push(`i18n.fallbacks: "${code}" is not one of i18n.locales`)
      }
    }
  }
  if (problems.length > 0) throw new ConfigurationError(problems)
  return resolved
}

/** Copies the option objects TypeBox fills with defaults, leaving models and the db handle shared. */
function shallowCopy (input: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...input }
  for (const key of ['rest', 'schemaSync', 'i18n', 'query']) {
    const value = input[key]
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) copy[key] = { ...value }
  }
  return copy
}
