import { defaultFieldResolver, isObjectType, type GraphQLFieldResolver, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import type { AccessScope } from '../query/access-scope.js'
import type { Principal } from '../auth/authenticate.js'
import { ForbiddenError, UsageError } from '../errors.js'
import { FILE_UID } from '../model/associations.js'
import { applyPolicies, resolvePolicy, type InlinePolicy, type PolicyExtras, type ResolvedPolicy } from '../policies.js'

type Resolver = GraphQLFieldResolver<any, any, any>

/** What a resolver call may see of its HTTP request, its caller and its grant (Strapi's policy context). */
export interface PolicyContext {
  parent: unknown
  args: Record<string, unknown>
  context: any
  info: GraphQLResolveInfo
  /** `user` is the calling user (null for the public and API tokens); `auth` the access grant. */
  state: { user: unknown, auth: { principal: Principal, scope: AccessScope | null } | null }
  http: { request: FastifyRequest, reply: FastifyReply }
  app: FastifyInstance
}

/** A registered policy: `false` (or anything but `true`/`undefined`) refuses the call with a PolicyError. */
export type PolicyFunction = (context: PolicyContext, config: unknown, extra: PolicyExtras) => unknown
/** A resolver middleware: calls `next` (or not) around the resolver, with the resolver's arguments. */
export type MiddlewareFunction = (next: Resolver, parent: unknown, args: Record<string, unknown>, context: any, info: GraphQLResolveInfo) => unknown
/** A registered middleware is a factory of middlewares, given the options of `{ name, options }`. */
export type MiddlewareFactory = (options: unknown, extra: { app: FastifyInstance }) => MiddlewareFunction

export interface ResolverConfig {
  /** `false`: no authorization; `{ scope }`: the caller must hold every listed permission. */
  auth?: false | { scope: string[] }
  /** Registered names, `{ name, config }`, or functions called `(context, { instance })` (lib/policies.ts). */
  policies?: Array<string | { name: string, config?: unknown } | InlinePolicy<PolicyContext>>
  middlewares?: Array<string | { name: string, options?: unknown } | MiddlewareFunction>
}

/** The access check a generated operation makes by default (`<uid>.<action>`), or a full action. */
export interface DefaultAuth {
  uid?: string
  action: string
  /** Whether the call reads drafts (for `auth.draftsRequirePermission`). */
  draft?: (args: Record<string, unknown>) => boolean
}

interface Grant { principal: Principal, scope: AccessScope | null }

/** The grant of each resolver call, by its path (a new object for every field execution). */
const grants = new WeakMap<object, Grant | null>()

/** The access grant the wrapper obtained for this call (its scope is null with `auth: false`: no limits). */
export function currentGrant (info: GraphQLResolveInfo): Grant | null {
  return grants.get(info.path) ?? null
}

export interface WrapDeps {
  app: FastifyInstance
  access: AccessControl
  policies: ReadonlyMap<string, PolicyFunction>
  middlewares: ReadonlyMap<string, MiddlewareFactory>
  /** The `policies` option: named policies REST routes and resolvers share. */
  sharedPolicies?: Readonly<Record<string, PolicyFunction>>
}

const requestOf = (context: any): FastifyRequest => context.reply.request as FastifyRequest

async function authorize (deps: WrapDeps, config: ResolverConfig, fallback: DefaultAuth | undefined, root: boolean, args: Record<string, unknown>, request: FastifyRequest): Promise<Grant | null> {
  // No permission is checked, but policies still see who is calling.
  if (config.auth === false) return { principal: await deps.access.principal(request), scope: null }
  if (config.auth !== undefined) {
    let first: Grant | null = null
    for (const action of config.auth.scope) {
      const grant = await deps.access.check(request, { action })
      first ??= grant
    }
    return first ?? { principal: await deps.access.principal(request), scope: null }
  }
  if (fallback !== undefined) {
    const draft = fallback.draft?.(args) === true
    if (fallback.uid === FILE_UID) return await deps.access.check(request, { action: `plugin::upload.content-api.${fallback.action}`, draft })
    return await deps.access.check(request, { uid: fallback.uid, action: fallback.action, draft })
  }
  if (!root) return null
  // An operation of an extension without an auth config: any authenticated caller, as Strapi.
  const principal = await deps.access.principal(request)
  if (principal.kind === 'public') throw new ForbiddenError()
  return { principal, scope: null }
}

function policyOf (deps: WrapDeps, item: NonNullable<ResolverConfig['policies']>[number]): ResolvedPolicy<PolicyContext> {
  // `app.contentApi.graphql.policy()`'s first, then the `policies` option's, which REST routes name too.
  const find = (name: string): PolicyFunction | undefined => deps.policies.get(name) ?? deps.sharedPolicies?.[name]
  return resolvePolicy(find, item, (name) => new UsageError('FCA_ERR_GRAPHQL_UNKNOWN_POLICY', name))
}

function middlewareOf (deps: WrapDeps, item: NonNullable<ResolverConfig['middlewares']>[number]): MiddlewareFunction {
  if (typeof item === 'function') return item
  const name = typeof item === 'string' ? item : item.name
  const factory = deps.middlewares.get(name)
  if (factory === undefined) throw new UsageError('FCA_ERR_GRAPHQL_UNKNOWN_MIDDLEWARE', name)
  return factory(typeof item === 'string' ? undefined : item.options, { app: deps.app })
}

/**
 * One resolver with its configuration: authorization first, then the middlewares in order, then
 * the policies, then the resolver (Strapi's order). Unknown policy or middleware names fail at
 * start-up, not at the first request.
 */
function wrap (deps: WrapDeps, resolve: Resolver, config: ResolverConfig, fallback: DefaultAuth | undefined, root: boolean): Resolver {
  const policies = (config.policies ?? []).map((item) => policyOf(deps, item))
  const middlewares = (config.middlewares ?? []).map((item) => middlewareOf(deps, item))
  // Without policies or middlewares (which may expect a promise from `next`), the resolver
  // itself: one async call less per field.
  const guarded: Resolver = policies.length === 0 && middlewares.length === 0
    ? resolve
    : async (parent, args, context, info) => {
      const grant = grants.get(info.path) ?? null
      if (policies.length > 0) {
        const request = requestOf(context)
        const policyContext: PolicyContext = {
          parent,
          args,
          context,
          info,
          state: { user: grant?.principal.kind === 'user' ? grant.principal.user : null, auth: grant },
          http: { request, reply: context.reply },
          app: deps.app
        }
        await applyPolicies(policies, policyContext, deps.app)
      }
      return await resolve(parent, args, context, info)
    }
  const chained = middlewares.reduceRight<Resolver>((next, middleware) => (parent, args, context, info) => middleware(next, parent, args, context, info), guarded)
  return async (parent, args, context, info) => {
    grants.set(info.path, await authorize(deps, config, fallback, root, args, requestOf(context)))
    return await chained(parent, args, context, info)
  }
}

/**
 * Wraps, in place, every Query and Mutation field and every other field that has a
 * configuration. `defaults` are the generated operations' access checks; `configs` the
 * `resolversConfig` of extensions, which win over them key by key.
 */
export function wrapResolvers (schema: GraphQLSchema, deps: WrapDeps, configs: ReadonlyMap<string, ResolverConfig>, defaults: ReadonlyMap<string, DefaultAuth>): void {
  const roots = new Set([schema.getQueryType()?.name, schema.getMutationType()?.name].filter((n): n is string => n !== undefined))
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue
    const root = roots.has(type.name)
    for (const field of Object.values(type.getFields())) {
      const key = `${type.name}.${field.name}`
      const config = configs.get(key)
      if (!root && config === undefined) continue
      field.resolve = wrap(deps, field.resolve ?? defaultFieldResolver, config ?? {}, defaults.get(key), root)
    }
  }
  for (const key of configs.keys()) {
    const [typeName, fieldName] = key.split('.')
    const type = schema.getType(typeName)
    if (!isObjectType(type) || type.getFields()[fieldName] === undefined) throw new UsageError('FCA_ERR_GRAPHQL_UNKNOWN_FIELD', key)
  }
}
