import { API_TOKEN_UID, PERMISSION_UID, ROLE_UID, USER_UID } from '../model/users-permissions.js'
import type { ContentAction } from '../auth/access.js'
import { UsageError } from '../errors.js'
import { FILE_UID } from '../model/associations.js'

/** The actions Shadow CRUD generates an operation for, per content type. */
export const ACTIONS: readonly ContentAction[] = ['create', 'find', 'findOne', 'update', 'delete']
const QUERIES = new Set<string>(['find', 'findOne'])
const MUTATIONS = new Set<string>(['create', 'update', 'delete'])

function checkAction (action: string): ContentAction | '*' {
  if (action === '*' || (ACTIONS as readonly string[]).includes(action)) return action as ContentAction | '*'
  throw new UsageError('FCA_ERR_GRAPHQL_UNKNOWN_ACTION', action, ACTIONS.join(', '))
}

/**
 * Refuses a change once the schema is built (`FCA_ERR_GRAPHQL_SCHEMA_BUILT`): it would change what
 * the getters say, not the schema being served.
 */
export type ChangeGuard = (what: string) => void
const open: ChangeGuard = () => {}

/** What one attribute shows in the schema: its output field, its input field, its filter. */
export class FieldConfig {
  #output = true
  #input = true
  #filters = true
  readonly #guard: ChangeGuard
  readonly #name: string

  constructor (name = '', guard: ChangeGuard = open) {
    this.#name = name
    this.#guard = guard
  }

  #change (what: string): void { this.#guard(`field('${this.#name}').${what}`) }

  /** Removes the attribute from the output type, the input type and the filters. */
  disable (): this { this.#change('disable'); this.#output = false; this.#input = false; this.#filters = false; return this }
  disableOutput (): this { this.#change('disableOutput'); this.#output = false; return this }
  disableInput (): this { this.#change('disableInput'); this.#input = false; return this }
  disableFilters (): this { this.#change('disableFilters'); this.#filters = false; return this }

  isEnabled (): boolean { return this.#output || this.#input || this.#filters }
  isDisabled (): boolean { return !this.isEnabled() }
  hasOutputEnabled (): boolean { return this.#output }
  hasInputEnabled (): boolean { return this.#input }
  hasFiltersEnabled (): boolean { return this.#filters }
  /** Strapi's misspelt getter (`hasFiltersEnabeld`), kept so code written for Strapi runs. */
  hasFiltersEnabeld (): boolean { return this.#filters }
}

/**
 * What Shadow CRUD generates for one content type (`app.contentApi.graphql.shadowCRUD(uid)`),
 * as Strapi's extension service offers it. Every setter returns the config, so calls chain.
 *
 * @example
 * graphql.shadowCRUD('api::article.article').disableMutations().field('views').disableFilters()
 */
export class ContentTypeConfig {
  readonly uid: string
  #enabled = true
  readonly #disabled = new Set<ContentAction>()
  readonly #fields = new Map<string, FieldConfig>()
  readonly #guard: ChangeGuard

  /**
   * `guard` is given the change as `shadowCRUD('<uid>').<change>` (a field's as
   * `...field('<name>').<change>`); a config of its own, outside the extension API, is always open.
   */
  constructor (uid: string, guard: ChangeGuard = open) {
    this.uid = uid
    this.#guard = (what) => guard(`shadowCRUD('${uid}').${what}`)
  }

  /** Removes the type from the schema altogether, with every relation and filter pointing to it. */
  disable (): this { this.#guard('disable'); this.#enabled = false; return this }
  disableQueries (): this { this.#guard('disableQueries'); return this.disableActions(['find', 'findOne']) }
  disableMutations (): this { this.#guard('disableMutations'); return this.disableActions(['create', 'update', 'delete']) }
  disableAction (action: ContentAction | '*'): this {
    this.#guard('disableAction')
    const checked = checkAction(action)
    for (const a of checked === '*' ? ACTIONS : [checked]) this.#disabled.add(a)
    return this
  }

  disableActions (actions: ReadonlyArray<ContentAction | '*'>): this {
    this.#guard('disableActions')
    for (const action of actions) this.disableAction(action)
    return this
  }

  field (name: string): FieldConfig {
    let config = this.#fields.get(name)
    if (config === undefined) {
      config = new FieldConfig(name, this.#guard)
      this.#fields.set(name, config)
    }
    return config
  }

  isEnabled (): boolean { return this.#enabled }
  isDisabled (): boolean { return !this.#enabled }
  areQueriesEnabled (): boolean { return this.#enabled && [...QUERIES].some((a) => !this.#disabled.has(a as ContentAction)) }
  areQueriesDisabled (): boolean { return !this.areQueriesEnabled() }
  areMutationsEnabled (): boolean { return this.#enabled && [...MUTATIONS].some((a) => !this.#disabled.has(a as ContentAction)) }
  areMutationsDisabled (): boolean { return !this.areMutationsEnabled() }
  isActionEnabled (action: ContentAction | '*'): boolean {
    const checked = checkAction(action)
    return this.#enabled && (checked === '*' ? ACTIONS.every((a) => !this.#disabled.has(a)) : !this.#disabled.has(checked))
  }

  isActionDisabled (action: ContentAction | '*'): boolean { return !this.isActionEnabled(action) }
}

/**
 * Built-in types start as Strapi's plugins leave them: files and users-and-permissions users and
 * roles can be read, not written through Shadow CRUD (uploads, registration and login have their
 * own operations); permissions appear only as the type of a role's relation; API tokens never.
 */
export function builtInDefaults (config: (uid: string) => ContentTypeConfig): void {
  for (const uid of [FILE_UID, USER_UID, ROLE_UID]) config(uid).disableMutations()
  config(PERMISSION_UID).disableQueries().disableMutations()
  config(API_TOKEN_UID).disable()
}
