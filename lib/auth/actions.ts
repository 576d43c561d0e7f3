import { ValidationError } from '../errors.js'
import type { Registry } from '../model/registry.js'

const UP = 'plugin::users-permissions'
/** `up_permissions.action` is a varchar(255). */
const MAX_ACTION_LENGTH = 255

/** One action in Strapi's permission tree; `policy` is always `''` (route policies are not configurable here). */
export interface TreeAction { enabled: boolean, policy: string }

/**
 * Strapi's permission tree (`services/users-permissions.ts getActions`): every action grouped by
 * type and controller. `api::article.article.find` is `tree['api::article'].controllers.article.find`.
 *
 * @example
 * { 'api::article': { controllers: { article: { find: { enabled: true, policy: '' }, create: { enabled: false, policy: '' } } } },
 *   'plugin::users-permissions': { controllers: { user: { me: { enabled: true, policy: '' } }, auth: { ... } } } }
 */
export type PermissionTree = Record<string, { controllers: Record<string, Record<string, TreeAction>> }>

/**
 * The content-API actions that exist: those of every application content type's routes and of
 * the plugins' routes and resolvers. Custom API tokens may list only these (as Strapi validates
 * them), and they make the permission tree of the roles routes.
 */
export function knownActions (registry: Registry): Set<string> {
  const actions = new Set<string>()
  for (const ct of registry.contentTypes.values()) {
    if (ct.uid.startsWith('api::')) for (const action of ['find', 'findOne', 'findDrafts', 'create', 'update', 'delete']) actions.add(`${ct.uid}.${action}`)
  }
  for (const action of ['find', 'findOne', 'upload', 'destroy']) actions.add(`plugin::upload.content-api.${action}`)
  for (const action of ['callback', 'register', 'changePassword', 'forgotPassword', 'resetPassword', 'emailConfirmation', 'sendEmailConfirmation']) {
    actions.add(`${UP}.auth.${action}`)
  }
  for (const action of ['me', 'find', 'findOne', 'count', 'create', 'update', 'destroy']) actions.add(`${UP}.user.${action}`)
  for (const action of ['find', 'findOne', 'createRole', 'updateRole', 'deleteRole']) actions.add(`${UP}.role.${action}`)
  actions.add(`${UP}.permissions.getPermissions`)
  actions.add('plugin::i18n.locales.listLocales')
  return actions
}

/** `'api::article.article.find'` as `['api::article', 'article', 'find']`; null for a string of another shape. */
function splitAction (action: string): [string, string, string] | null {
  const parts = action.split('.')
  return parts.length === 3 && parts.every((part) => part !== '') ? parts as [string, string, string] : null
}

/**
 * The tree of every known action, enabled for those in `enabled`. An enabled action that is not
 * known (a grant of an action no route has, such as Strapi's default `auth.connect`) is listed
 * too, as Strapi's tree lists every permission a role holds.
 */
export function permissionTree (known: Iterable<string>, enabled: ReadonlySet<string> = new Set()): PermissionTree {
  const tree: PermissionTree = {}
  for (const action of new Set([...known, ...enabled])) {
    const parts = splitAction(action)
    if (parts === null) continue
    const [type, controller, name] = parts
    tree[type] ??= { controllers: {} }
    tree[type].controllers[controller] ??= {}
    tree[type].controllers[controller][name] = { enabled: enabled.has(action), policy: '' }
  }
  return tree
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The actions a tree enables (`enabled: true`), as Strapi's role service reads a tree it is sent.
 * Anything that is not a tree is a 400 naming where, rather than an action nobody meant.
 */
export function enabledActions (tree: unknown): string[] {
  const invalid = (path: string): ValidationError => new ValidationError(`Invalid permissions: ${path} must be an object`, { path })
  if (!isObject(tree)) throw invalid('permissions')
  const actions: string[] = []
  for (const [type, group] of Object.entries(tree)) {
    if (!isObject(group) || (group.controllers !== undefined && !isObject(group.controllers))) throw invalid(`permissions.${type}`)
    for (const [controller, entries] of Object.entries(group.controllers ?? {})) {
      if (!isObject(entries)) throw invalid(`permissions.${type}.controllers.${controller}`)
      for (const [name, entry] of Object.entries(entries)) {
        if (!isObject(entry)) throw invalid(`permissions.${type}.controllers.${controller}.${name}`)
        if (entry.enabled !== true) continue
        const action = `${type}.${controller}.${name}`
        if (splitAction(action) === null || action.length > MAX_ACTION_LENGTH) throw new ValidationError(`Invalid permissions: "${action}" is not an action`, { path: `permissions.${type}.controllers.${controller}.${name}` })
        actions.push(action)
      }
    }
  }
  return actions
}
