// Types only: the class is exported by the package's entry, which loads graphql-js and
// @graphql-tools only when GraphQL is on (lib/index.ts).
import type * as graphql from 'graphql'
import type { GraphQLNamedType, GraphQLSchema } from 'graphql'
import type { makeExecutableSchema, mergeSchemas } from '@graphql-tools/schema'
import type { FastifyInstance } from 'fastify'
import { UsageError } from '../errors.js'
import type { Registry } from '../model/registry.js'
import { builtInDefaults, ContentTypeConfig } from './shadow-crud.js'
import type { MiddlewareFactory, PolicyFunction, ResolverConfig } from './wrap.js'

/** The schema-building libraries an extension factory receives (Strapi passes nexus; we pass graphql-js and @graphql-tools). */
export interface ExtensionLibraries {
  graphql: typeof graphql
  tools: { makeExecutableSchema: typeof makeExecutableSchema, mergeSchemas: typeof mergeSchemas }
  app: FastifyInstance
  registry: Registry
}

/** What `use()` takes: any of these keys, all optional. */
export interface Extension {
  /** graphql-js type definitions (`new GraphQLObjectType(...)`), with their field resolvers. */
  types?: GraphQLNamedType[]
  /** SDL: new types, or `extend type Query { ... }`. */
  typeDefs?: string
  /** Schema transforms, applied in order to the built schema: `(schema) => schema`. */
  plugins?: Array<(schema: GraphQLSchema) => GraphQLSchema>
  /** Resolvers, deep-merged over the generated ones (a later extension wins). */
  resolvers?: Record<string, any>
  /** Per-resolver `auth`, `policies` and `middlewares`, keyed `Type.field` (e.g. `Query.articles`). */
  resolversConfig?: Record<string, ResolverConfig>
}

export type ExtensionFactory = (libraries: ExtensionLibraries) => Extension

/**
 * `app.contentApi.graphql`: Strapi's GraphQL extension service, used by application code after
 * registering the plugin and before the server is ready (the schema is built once, when the
 * application becomes ready).
 *
 * @example
 * const { graphql } = app.contentApi
 * graphql.shadowCRUD('api::secret.secret').disable()
 * graphql.use(({ graphql: { GraphQLInt } }) => ({
 *   typeDefs: 'extend type Query { articleCount: Int! }',
 *   resolvers: { Query: { articleCount: () => app.contentApi.documents('api::article.article').count() } },
 *   resolversConfig: { 'Query.articleCount': { auth: false } }
 * }))
 */
export class GraphqlApi {
  readonly #configs = new Map<string, ContentTypeConfig>()
  readonly #extensions: Array<Extension | ExtensionFactory> = []
  readonly #policies = new Map<string, PolicyFunction>()
  readonly #middlewares = new Map<string, MiddlewareFactory>()
  #schema: GraphQLSchema | null = null
  #print: ((schema: GraphQLSchema) => string) | null = null
  /** Path of the GraphQL endpoint (the sandbox is served there too). */
  readonly endpoint: string

  constructor (endpoint: string) {
    this.endpoint = endpoint
    builtInDefaults((uid) => this.shadowCRUD(uid))
  }

  #open (what: string): void {
    if (this.#schema !== null) throw new UsageError('FCA_ERR_GRAPHQL_SCHEMA_BUILT', what)
  }

  /**
   * What Shadow CRUD generates for a content type (created on first use, enabled). Its getters
   * answer at any time; its changes (`disable()`, `field(name).disableFilters()`...) throw
   * `FCA_ERR_GRAPHQL_SCHEMA_BUILT` once the application is ready.
   */
  shadowCRUD (uid: string): ContentTypeConfig {
    let config = this.#configs.get(uid)
    if (config === undefined) {
      config = new ContentTypeConfig(uid, (what) => this.#open(what))
      this.#configs.set(uid, config)
    }
    return config
  }

  /** Adds types, resolvers and resolver configurations; a function receives the schema libraries. */
  use (extension: Extension | ExtensionFactory): this {
    this.#open('use')
    if (typeof extension !== 'function' && (typeof extension !== 'object' || extension === null)) {
      throw new UsageError('FCA_ERR_GRAPHQL_INVALID_EXTENSION')
    }
    this.#extensions.push(extension)
    return this
  }

  /** Registers a policy that resolversConfig refers to by name. */
  policy (name: string, fn: PolicyFunction): this {
    this.#open('policy')
    this.#policies.set(name, fn)
    return this
  }

  /** Registers a middleware factory that resolversConfig refers to by name (`{ name, options }`). */
  middleware (name: string, factory: MiddlewareFactory): this {
    this.#open('middleware')
    this.#middlewares.set(name, factory)
    return this
  }

  /** The built schema, once the application is ready (null before). */
  get schema (): GraphQLSchema | null { return this.#schema }

  /** The schema in SDL, once built. */
  printSchema (): string {
    if (this.#schema === null) throw new UsageError('FCA_ERR_GRAPHQL_SCHEMA_NOT_BUILT')
    return this.#print!(this.#schema)
  }

  /** @internal the registration's view of what application code configured. */
  get registered (): { extensions: ReadonlyArray<Extension | ExtensionFactory>, policies: ReadonlyMap<string, PolicyFunction>, middlewares: ReadonlyMap<string, MiddlewareFactory> } {
    return { extensions: this.#extensions, policies: this.#policies, middlewares: this.#middlewares }
  }

  /** @internal set once the schema is built, with graphql-js's `printSchema`. */
  seal (schema: GraphQLSchema, print: (schema: GraphQLSchema) => string): void {
    this.#schema = schema
    this.#print = print
  }
}
