import type { FastifyInstance } from 'fastify'
import mercurius from 'mercurius'
import { NoSchemaIntrospectionCustomRule, buildSchema as buildSdl, printSchema } from 'graphql'
import type { AccessControl } from '../auth/access.js'
import type { Authenticator } from '../auth/authenticate.js'
import type { PermissionStore } from '../auth/permissions.js'
import type { UserStore } from '../documents/user-credentials.js'
import type { DocumentService } from '../documents/service.js'
import type { Registry } from '../model/registry.js'
import type { ResolvedOptions } from '../options/index.js'
import { preExecutionHook, rowBound, type CostSettings } from './cost.js'
import { depthLimitRule } from './depth-limit.js'
import { errorFormatter } from './errors.js'
import { endpointHooks, endpointValidation, methodNotAllowed } from './http.js'
import { GraphqlApi } from './extension.js'
import { registerSandboxAssets } from './sandbox.js'
import { buildSchema } from './schema.js'
import { selectionLimitsRule } from './selection-limits.js'

export { GraphqlApi } from './extension.js'
export type { Extension, ExtensionFactory, ExtensionLibraries } from './extension.js'
export type { GraphqlOptions } from '../options/graphql.js'
export type { ContentTypeConfig, FieldConfig } from './shadow-crud.js'
export type { MiddlewareFactory, MiddlewareFunction, PolicyContext, PolicyFunction, ResolverConfig } from './wrap.js'

/**
 * Mercurius compiles a document with graphql-jit once it has run this many times (its first run,
 * when it is parsed and validated, goes through graphql-js). `engineServer.jit` overrides it
 * (`0` never compiles).
 */
export const JIT_AFTER = 1

/** What the GraphQL module needs from the rest of the plugin. */
export interface GraphqlDeps {
  registry: Registry
  documents: (uid: string) => DocumentService
  access: AccessControl
  authenticator: Authenticator
  credentials: UserStore
  permissions: PermissionStore
  options: ResolvedOptions
}

/**
 * Registers the GraphQL endpoint on Mercurius, in a context of its own (Mercurius's decorators
 * and error handler stay there), and returns the extension API decorated as
 * `app.contentApi.graphql`, or null when GraphQL is off (`graphql: false`). The schema is built
 * when the application becomes ready, so application code can configure Shadow CRUD and add
 * extensions in between.
 */
export async function registerGraphql (app: FastifyInstance, deps: GraphqlDeps): Promise<GraphqlApi | null> {
  const options = deps.options.graphql
  if (options === null) return null
  const api = new GraphqlApi(options.endpoint)

  const { limits } = deps.options
  // The row bound reads the roles of the generated fields, known once the schema is built.
  let counting: CostSettings = { defaultLimit: options.defaultLimit, amountLimit: options.amountLimit, roles: new Map() }

  // Outside the endpoint's context, whose hooks apply to every route in it.
  if (options.landingPage) await registerSandboxAssets(app, options.endpoint)
  await app.register(async (child) => {
    endpointHooks(child, options, limits, deps.access)
    endpointValidation(child)
    methodNotAllowed(child, options.endpoint)
    const engine = options.engineServer
    const userRules = Array.isArray(engine.validationRules) ? engine.validationRules : []
    await child.register(mercurius, {
      allowBatchedQueries: false,
      // A document seen a second time runs compiled (graphql-jit) rather than walked by graphql-js.
      jit: JIT_AFTER,
      ...engine,
      // `limits.bodyBytes` bounds a GraphQL body as it bounds REST's.
      additionalRouteOptions: { bodyLimit: limits.bodyBytes, ...(engine.additionalRouteOptions as object | undefined) },
      // A placeholder until the application is ready: extensions are registered in between.
      schema: buildSdl('type Query { _starting: Boolean }'),
      path: options.endpoint,
      graphiql: false,
      errorFormatter: errorFormatter as any,
      validationRules: [
        // The entity shape's `data`/`attributes` wrappers add no depth (known once the schema is built).
        depthLimitRule(options.depthLimit, () => options.format === 'entity' ? (type, field) => counting.roles.get(type)?.get(field)?.kind === 'self' : null),
        selectionLimitsRule(options),
        ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule]),
        ...userRules
      ]
    })
    child.graphql.addHook('preExecution', preExecutionHook(() => counting, rowBound(options.maxRows, limits.maxRows)))
    child.addHook('onReady', async () => {
      const { schema, roles } = await buildSchema({ ...deps, app, graphql: options, api })
      counting = { ...counting, roles }
      child.graphql.replaceSchema(schema)
      api.seal(schema, printSchema)
    })
  })
  return api
}
