import { ConfigurationError } from '../errors.js'

/**
 * The GraphQL plugin's options (`graphql` in the plugin options; `false` turns GraphQL off).
 * Every key is optional; docs/graphql.md documents each one.
 */
export interface GraphqlOptions {
  /** Path of the GraphQL endpoint; the sandbox is served at the same path. Default `/graphql`. */
  endpoint?: string
  /** Generate the schema from the content types ("Shadow CRUD"). Default true. */
  shadowCRUD?: boolean
  /** Deepest field nesting a query may have; deeper queries are refused (HTTP 400). Default 10. */
  depthLimit?: number
  /** Most items one list may return; a longer list is a GraphQL error on its field. Default 100. */
  amountLimit?: number
  /** Most aliased fields in one operation, fragments expanded; more is refused (HTTP 400). Default 15. */
  maxAliases?: number
  /** Most field selections in one operation, fragments expanded; more is refused (HTTP 400). Default 1000. */
  maxSelections?: number
  /** Most tokens in the documents of one request, counted before parsing; more is refused (HTTP 400). Default 1000. */
  maxTokens?: number
  /**
   * Most rows one request may read, estimated from its page sizes before it runs; more is refused
   * (HTTP 400). Default 2500; `limits.maxRows` bounds GraphQL too, the smaller one applies.
   */
  maxRows?: number
  /** Page size of a list when the query gives none (Strapi's `defaultLimit`). Default 10. */
  defaultLimit?: number
  /**
   * Schema shape: `entity` (default) is the spec's `<Type>Entity { id, attributes }` shape;
   * `flat` is Strapi 5's default shape (`articles: [Article]!`, `articles_connection`, `documentId`).
   */
  format?: 'entity' | 'flat'
  /** With `format: 'flat'`, add Strapi 5's deprecated v4 alias fields (`id`, `attributes`, `data`, `meta`). */
  v4CompatibilityMode?: boolean
  /** Serve the sandbox: a boolean, or a function deciding at start-up. Default: off in production, on otherwise. */
  landingPage?: boolean | (() => boolean)
  /** Deprecated alias of `landingPage: true`. */
  playgroundAlways?: boolean
  /** Answer introspection queries. Default: off in production, on otherwise. */
  introspection?: boolean
  /** Options passed as they are to Mercurius (e.g. `jit`, `cache`, `allowBatchedQueries`). */
  engineServer?: Record<string, unknown>
}

export interface ResolvedGraphqlOptions {
  endpoint: string
  shadowCRUD: boolean
  depthLimit: number
  amountLimit: number
  maxAliases: number
  maxSelections: number
  maxTokens: number
  maxRows: number
  defaultLimit: number
  format: 'entity' | 'flat'
  v4CompatibilityMode: boolean
  landingPage: boolean
  introspection: boolean
  engineServer: Record<string, unknown>
}

const KNOWN = new Set(['endpoint', 'shadowCRUD', 'depthLimit', 'amountLimit', 'maxAliases', 'maxSelections', 'maxTokens', 'maxRows', 'defaultLimit', 'format',
  'v4CompatibilityMode', 'landingPage', 'playgroundAlways', 'introspection', 'engineServer'])

/** Mercurius options this module sets itself: passing them through `engineServer` would break it. */
export const RESERVED_ENGINE_OPTIONS = new Set(['schema', 'resolvers', 'loaders', 'path', 'prefix', 'routes', 'context', 'errorFormatter',
  'errorHandler', 'graphiql', 'ide', 'schemaTransforms', 'defineMutation'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const positiveInteger = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 1

/**
 * Validates and defaults the `graphql` option; every problem is reported in one
 * `ConfigurationError`. Returns null when GraphQL is off (`graphql: false`). Run by the plugin's
 * one options step (`resolveOptions`, lib/options.ts), before anything connects.
 */
export function resolveGraphqlOptions (raw: unknown, production = process.env.NODE_ENV === 'production'): ResolvedGraphqlOptions | null {
  if (raw === false) return null
  const options = raw === undefined ? {} : raw
  if (!isObject(options)) throw new ConfigurationError(['graphql: expected an object or false'], 'graphql options')
  const problems: string[] = []
  const unknown = Object.keys(options).filter((key) => !KNOWN.has(key))
  if (unknown.length > 0) problems.push(`graphql: unknown option(s) ${unknown.join(', ')}`)
  const o = options as GraphqlOptions
  if (o.endpoint !== undefined && (typeof o.endpoint !== 'string' || !/^\/[\w\-./]*$/.test(o.endpoint))) {
    problems.push('graphql.endpoint: expected a path starting with /')
  }
  for (const key of ['shadowCRUD', 'v4CompatibilityMode', 'playgroundAlways', 'introspection'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') problems.push(`graphql.${key}: expected a boolean`)
  }
  for (const key of ['depthLimit', 'amountLimit', 'maxAliases', 'maxSelections', 'maxTokens', 'maxRows', 'defaultLimit'] as const) {
    if (o[key] !== undefined && !positiveInteger(o[key])) problems.push(`graphql.${key}: expected an integer of at least 1`)
  }
  if (o.format !== undefined && o.format !== 'entity' && o.format !== 'flat') problems.push('graphql.format: must be one of "entity", "flat"')
  if (o.v4CompatibilityMode === true && o.format !== 'flat') problems.push('graphql.v4CompatibilityMode: only applies to format "flat"')
  if (o.landingPage !== undefined && typeof o.landingPage !== 'boolean' && typeof o.landingPage !== 'function') {
    problems.push('graphql.landingPage: expected a boolean or a function returning one')
  }
  if (o.engineServer !== undefined) {
    if (!isObject(o.engineServer)) problems.push('graphql.engineServer: expected an object')
    else {
      const reserved = Object.keys(o.engineServer).filter((key) => RESERVED_ENGINE_OPTIONS.has(key))
      if (reserved.length > 0) problems.push(`graphql.engineServer: ${reserved.join(', ')} cannot be set (the content API sets them)`)
    }
  }
  const defaultLimit = o.defaultLimit ?? 10
  const amountLimit = o.amountLimit ?? 100
  if (positiveInteger(defaultLimit) && positiveInteger(amountLimit) && defaultLimit > amountLimit) {
    problems.push('graphql.defaultLimit must not be greater than graphql.amountLimit')
  }
  let landingPage = !production
  if (o.playgroundAlways === true) landingPage = true
  if (typeof o.landingPage === 'boolean') landingPage = o.landingPage
  if (typeof o.landingPage === 'function') {
    const decided = o.landingPage()
    if (typeof decided !== 'boolean') problems.push('graphql.landingPage: the function must return a boolean')
    else landingPage = decided
  }
  if (problems.length > 0) throw new ConfigurationError(problems, 'graphql options')
  return {
    endpoint: o.endpoint ?? '/graphql',
    shadowCRUD: o.shadowCRUD ?? true,
    depthLimit: o.depthLimit ?? 10,
    amountLimit,
    maxAliases: o.maxAliases ?? 15,
    maxSelections: o.maxSelections ?? 1000,
    maxTokens: o.maxTokens ?? 1000,
    maxRows: o.maxRows ?? 2500,
    defaultLimit,
    format: o.format ?? 'entity',
    v4CompatibilityMode: o.v4CompatibilityMode ?? false,
    landingPage,
    introspection: o.introspection ?? !production,
    engineServer: { ...(o.engineServer ?? {}) }
  }
}
