import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Policy, PolicyReference, RoutePolicyContext } from '../policies.js'

/**
 * `rest.routes` and `policies`: Strapi's core router config (`createCoreRouter(uid, { config,
 * only, except })`) and core controller overrides, per content type, checked here with the rest
 * of the options, before anything connects. lib/rest/route-config.ts applies them.
 */

/** A core route's action: Strapi's handler names (`find` is a single type's `GET` too). */
export type RouteAction = 'find' | 'findOne' | 'create' | 'update' | 'delete'
const COLLECTION_ACTIONS: readonly RouteAction[] = ['find', 'findOne', 'create', 'update', 'delete']
const SINGLE_ACTIONS: readonly RouteAction[] = ['find', 'update', 'delete']

/** A route middleware: a Fastify `preHandler`, run after the access check and the policies. */
export type RouteMiddleware = (request: FastifyRequest, reply: FastifyReply) => unknown

/** The answer of a core handler, as a controller override receives it (null: a delete's empty answer). */
export interface CoreAnswer { data: unknown, meta: Record<string, unknown> }

/**
 * A controller override: Strapi's `createCoreController(uid, () => ({ async find (ctx) { ... super.find(ctx) } }))`.
 * `core()` runs the generated handler for this request and resolves its answer, unsent; what the
 * override returns is sent (200 JSON, or 204 for null/undefined) unless it has sent the reply itself.
 */
export type RouteController = (request: FastifyRequest, reply: FastifyReply, core: () => Promise<CoreAnswer | null>) => unknown

export interface RouteActionConfig {
  /** `false`: no permission is checked (Strapi's `auth: false`); the caller is still identified for policies. */
  auth?: false
  policies?: Array<PolicyReference<RoutePolicyContext>>
  middlewares?: RouteMiddleware[]
}

/** `Cache-Control` of a type's `GET` answers; `false`: no header. */
export type CacheControl = string | false | { public?: string | false, authenticated?: string | false }

export interface ContentTypeRoutes {
  config?: Partial<Record<RouteAction, RouteActionConfig>>
  /** Only these core routes are registered (Strapi's `only`). */
  only?: RouteAction[]
  /** These core routes are not registered (Strapi's `except`); their paths are free for the application's own. */
  except?: RouteAction[]
  controllers?: Partial<Record<RouteAction, RouteController>>
  cacheControl?: CacheControl
}

export type RestRoutes = Readonly<Record<string, ContentTypeRoutes>>
export type NamedPolicies = Readonly<Record<string, Policy>>

const ENTRY_KEYS = new Set(['config', 'only', 'except', 'controllers', 'cacheControl'])
const CONFIG_KEYS = new Set(['auth', 'policies', 'middlewares'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The uid a model schema gets (lib/model): its own, or `api::<singularName>.<singularName>`. */
function uidOf (model: unknown): { uid: string, single: boolean } | null {
  if (!isObject(model)) return null
  const singular = isObject(model.info) ? model.info.singularName : undefined
  const uid = typeof model.uid === 'string' ? model.uid : typeof singular === 'string' ? `api::${singular}.${singular}` : null
  return uid === null ? null : { uid, single: model.kind === 'singleType' }
}

function checkCacheControl (path: string, value: unknown): string[] {
  if (value === undefined || value === false || typeof value === 'string') return []
  if (isObject(value) && Object.entries(value).every(([k, v]) => (k === 'public' || k === 'authenticated') && (v === false || typeof v === 'string'))) return []
  return [`${path}: must be a string, false, or { public, authenticated } of strings or false`]
}

/**
 * Every problem of `rest.routes` and `policies`, one line each: unknown content types, actions
 * and keys, policies named but not defined, non-functions where functions go.
 *
 * @example
 * checkRestRoutes({ 'api::article.article': { except: ['delete'], config: { find: { auth: false, policies: ['is-owner'] } } } }, {}, [article])
 * // ['rest.routes.api::article.article.config.find.policies[0]: no policy "is-owner" in the policies option']
 */
export function checkRestRoutes (routes: unknown, policies: unknown, models: readonly unknown[]): string[] {
  const problems: string[] = []
  if (policies !== undefined) {
    if (!isObject(policies)) problems.push('policies: must be an object of policy functions by name')
    else for (const [name, fn] of Object.entries(policies)) if (typeof fn !== 'function') problems.push(`policies.${name}: must be a function`)
  }
  if (routes === undefined) return problems
  if (!isObject(routes)) return [...problems, 'rest.routes: must be an object keyed by content-type uid']
  const known = new Map(models.map(uidOf).filter((m) => m !== null).map((m) => [m.uid, m.single]))
  const named = isObject(policies) ? policies : {}
  for (const [uid, entry] of Object.entries(routes)) {
    const path = `rest.routes.${uid}`
    if (!known.has(uid)) { problems.push(`${path}: no content type "${uid}" among the models`); continue }
    if (!isObject(entry)) { problems.push(`${path}: must be an object`); continue }
    const actions = known.get(uid) === true ? SINGLE_ACTIONS : COLLECTION_ACTIONS
    const action = (where: string, a: unknown): void => {
      if (!actions.includes(a as RouteAction)) problems.push(`${where}: unknown action "${String(a)}" (one of ${actions.join(', ')})`)
    }
    for (const key of Object.keys(entry)) if (!ENTRY_KEYS.has(key)) problems.push(`${path}: unknown key "${key}" (one of ${[...ENTRY_KEYS].join(', ')})`)
    for (const key of ['only', 'except'] as const) {
      if (entry[key] === undefined) continue
      if (!Array.isArray(entry[key])) problems.push(`${path}.${key}: must be an array of actions`)
      else for (const a of entry[key]) action(`${path}.${key}`, a)
    }
    if (entry.controllers !== undefined) {
      if (!isObject(entry.controllers)) problems.push(`${path}.controllers: must be an object of functions by action`)
      else {
        for (const [a, fn] of Object.entries(entry.controllers)) {
          action(`${path}.controllers`, a)
          if (typeof fn !== 'function') problems.push(`${path}.controllers.${a}: must be a function (request, reply, core)`)
        }
      }
    }
    problems.push(...checkCacheControl(`${path}.cacheControl`, entry.cacheControl))
    if (entry.config === undefined) continue
    if (!isObject(entry.config)) { problems.push(`${path}.config: must be an object keyed by action`); continue }
    for (const [a, config] of Object.entries(entry.config)) {
      const where = `${path}.config.${a}`
      action(`${path}.config`, a)
      if (!isObject(config)) { problems.push(`${where}: must be an object`); continue }
      for (const key of Object.keys(config)) if (!CONFIG_KEYS.has(key)) problems.push(`${where}: unknown key "${key}" (one of auth, policies, middlewares)`)
      if (config.auth !== undefined && config.auth !== false) problems.push(`${where}.auth: must be false (or left out)`)
      if (config.policies !== undefined) {
        if (!Array.isArray(config.policies)) problems.push(`${where}.policies: must be an array`)
        else {
          config.policies.forEach((p: unknown, i: number) => {
            const name = typeof p === 'string' ? p : isObject(p) && typeof p.name === 'string' ? p.name : null
            if (typeof p === 'function') return
            if (name === null) problems.push(`${where}.policies[${i}]: must be a function, a policy name or { name, config }`)
            else if (typeof named[name] !== 'function') problems.push(`${where}.policies[${i}]: no policy "${name}" in the policies option`)
          })
        }
      }
      if (config.middlewares !== undefined && (!Array.isArray(config.middlewares) || !config.middlewares.every((m: unknown) => typeof m === 'function'))) {
        problems.push(`${where}.middlewares: must be an array of functions (request, reply)`)
      }
    }
  }
  return problems
}
