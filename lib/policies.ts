import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Principal } from './auth/authenticate.js'
import { PolicyError, UsageError } from './errors.js'
import type { AccessScope } from './query/access-scope.js'

/**
 * Policies, shared by the REST routes (`rest.routes`, lib/rest/route-config.ts) and GraphQL's
 * `resolversConfig` (lib/graphql/wrap.ts): Strapi's `(policyContext, config, { strapi })`, with
 * the Fastify app in `strapi`'s place. Each surface builds its own policy context (a REST route's
 * or a resolver call's, as Strapi does); resolving names and deciding the verdict is done here
 * once, so a policy means the same thing on both.
 */

/**
 * The server a policy runs in: the Fastify app, under the spec's name (`instance`) and Strapi's
 * (`strapi`) too, so policies written for either find it.
 */
export interface PolicyExtras {
  instance: FastifyInstance
  app: FastifyInstance
  strapi: FastifyInstance
}

/** A policy: `true` or `undefined` lets the call through; anything else refuses it with a 403 `PolicyError`; a throw answers with what it threw. */
export type Policy<Context = any> = (context: Context, config: unknown, extra: PolicyExtras) => unknown

/**
 * A policy given as a function where it is used. It has no config, so it is called as the spec
 * writes it, `(context, { instance })`: its second argument is the extras (its third too, where
 * Strapi's `(context, config, { strapi })` looks for them).
 */
export type InlinePolicy<Context = any> = (context: Context, extra: PolicyExtras, same: PolicyExtras) => unknown

/** How a route or resolver names a policy: a function, a registered name, or a name with its config. */
export type PolicyReference<Context = any> = InlinePolicy<Context> | string | { name: string, config?: unknown }

export type ResolvedPolicy<Context = any> = { inline: true, fn: InlinePolicy<Context> } | { inline: false, fn: Policy<Context>, config: unknown }

/**
 * A reference resolved against the registered policies; an unknown name is a UsageError thrown
 * at start-up, not at the first request.
 *
 * @example
 * resolvePolicy({ 'is-owner': isOwner }.get, { name: 'is-owner', config: { field: 'author' } })
 * // { inline: false, fn: isOwner, config: { field: 'author' } }
 */
export function resolvePolicy<Context> (
  find: (name: string) => Policy<Context> | undefined, item: PolicyReference<Context>, unknown: (name: string) => UsageError = (name) => new UsageError('FCA_ERR_UNKNOWN_POLICY', name)
): ResolvedPolicy<Context> {
  if (typeof item === 'function') return { inline: true, fn: item }
  const name = typeof item === 'string' ? item : item.name
  const fn = find(name)
  if (fn === undefined) throw unknown(name)
  // As Strapi resolves it: a policy named without a config gets an empty one.
  return { inline: false, fn, config: typeof item === 'string' ? {} : item.config ?? {} }
}

/** Runs policies in order; the first that refuses throws a PolicyError (Strapi's "Policy Failed"). */
export async function applyPolicies<Context> (policies: ReadonlyArray<ResolvedPolicy<Context>>, context: Context, app: FastifyInstance): Promise<void> {
  const extra: PolicyExtras = { instance: app, app, strapi: app }
  for (const policy of policies) {
    const verdict = policy.inline ? await policy.fn(context, extra, extra) : await policy.fn(context, policy.config, extra)
    if (verdict !== true && verdict !== undefined) throw new PolicyError()
  }
}

/** What a REST policy sees: Strapi's koa-shaped policy context, on Fastify's request. */
export interface RoutePolicyContext {
  /** `'koa'` in Strapi for HTTP routes; `is('koa')` is true here too, so Strapi policies that branch on it keep working. */
  type: 'koa'
  is: (type: string) => boolean
  /** `user`: the calling user (null for the public and API tokens); `auth`: the caller and its grant (scope null with `auth: false`). */
  state: { user: unknown, auth: { principal: Principal, scope: AccessScope | null } }
  params: Record<string, string>
  query: Record<string, unknown>
  request: FastifyRequest
  reply: FastifyReply
  /** The same objects, as GraphQL's policy context names them. */
  http: { request: FastifyRequest, reply: FastifyReply }
  /** The content type and action of the route. */
  uid: string | undefined
  action: string
  app: FastifyInstance
}
