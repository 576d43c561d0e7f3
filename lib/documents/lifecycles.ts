import { UsageError } from '../errors.js'
import type { ContentType } from '../model/registry.js'
import type { LifecycleEvent, LifecycleHook, LifecycleHooks } from '../model/types.js'

/**
 * Strapi's lifecycle hooks (`beforeCreate`, `afterUpdate`, ...): a model's own `lifecycles`, and
 * subscribers for several models (`app.contentApi.lifecycles.subscribe`). The document service
 * runs them around each call (service.ts): a before hook may change `event.params` or throw (the
 * call is refused, nothing written); a write's after hook runs inside the write's transaction,
 * before the commit, so one that throws rolls the write back.
 *
 * Unlike Strapi's database lifecycles, which fire per row (a REST create of a draft & publish
 * type fires `beforeCreate` twice, a publish fires a delete and a create), ours fire once per
 * document-service call: `publish`, `unpublish` and `discardDraft` run the update hooks, with
 * `event.operation` naming the call (docs/extending.md#lifecycles).
 */

/** What the hooks are run around: Strapi's action names without `before`/`after`. */
export type LifecycleStage = 'Create' | 'Update' | 'Delete' | 'FindOne' | 'FindMany' | 'Count'

/**
 * A subscriber: hooks by Strapi's names, for the `models` listed (every model without), or a
 * function called with every event of every model, as Strapi's `strapi.db.lifecycles.subscribe`.
 */
export type LifecycleSubscriber = (LifecycleHooks & { models?: readonly string[] }) | ((event: LifecycleEvent) => unknown)

interface Subscription {
  models: ReadonlySet<string> | null
  subscriber: LifecycleSubscriber
}

/** The hooks of one call: run `before`, then the call, then `after` (with the result). */
export interface LifecycleRun {
  readonly params: Record<string, any>
  before: () => Promise<void>
  after: (result: unknown) => Promise<unknown>
}

export class Lifecycles {
  readonly #subscriptions: Subscription[] = []
  /** Per uid, the stages any subscription has a hook of: read per call, forgotten on subscribe. */
  #hooked = new Map<string, ReadonlySet<LifecycleStage>>()
  /** Each model's `event.model`, made once. */
  readonly #models = new WeakMap<ContentType, LifecycleEvent['model']>()

  /** The models' own `lifecycles`, first (as Strapi subscribes them when it loads the models). */
  constructor (models: Iterable<ContentType>) {
    for (const model of models) {
      const hooks = model.schema.lifecycles
      if (hooks !== undefined) this.subscribe({ ...hooks, models: [model.uid] })
    }
  }

  /**
   * Adds a subscriber; returns a function that removes it.
   *
   * @example
   * app.contentApi.lifecycles.subscribe({
   *   models: ['api::article.article'],
   *   beforeCreate (event) { event.params.data.slug ??= slugify(event.params.data.title) }
   * })
   */
  subscribe (subscriber: LifecycleSubscriber): () => void {
    checkSubscriber(subscriber)
    const models = typeof subscriber === 'function' || subscriber.models === undefined ? null : new Set(subscriber.models)
    const subscription: Subscription = { models, subscriber }
    this.#subscriptions.push(subscription)
    this.#hooked = new Map()
    return () => {
      const at = this.#subscriptions.indexOf(subscription)
      if (at >= 0) this.#subscriptions.splice(at, 1)
      this.#hooked = new Map()
    }
  }

  /** Whether a call of `stage` on `uid` has hooks to run: false is the read fast path's one check (a Map lookup). */
  has (uid: string, stage: LifecycleStage): boolean {
    let hooked = this.#hooked.get(uid)
    if (hooked === undefined) {
      hooked = new Set(STAGES.filter((s) => this.#subscriptions.some((subscription) => applies(subscription, uid, s))))
      this.#hooked.set(uid, hooked)
    }
    return hooked.has(stage)
  }

  /**
   * The hooks of one call, or null when none applies. Each subscriber has its own `state`,
   * shared by its before and after hooks (Strapi's); `params` is one object passed along, so a
   * change by one hook is seen by the next and by the call.
   */
  run (model: ContentType, stage: LifecycleStage, operation: string, params: Record<string, any>): LifecycleRun | null {
    if (!this.has(model.uid, stage)) return null
    const subscriptions = this.#subscriptions.filter((s) => applies(s, model.uid, stage))
    const states = subscriptions.map(() => ({}))
    const described = this.#described(model)
    const run = {
      params,
      before: async () => {
        for (let i = 0; i < subscriptions.length; i++) {
          const event: LifecycleEvent = { action: `before${stage}`, model: described, params: run.params, state: states[i], operation }
          await call(subscriptions[i], event)
          run.params = event.params
        }
      },
      after: async (result: unknown) => {
        for (let i = 0; i < subscriptions.length; i++) {
          const event: LifecycleEvent = { action: `after${stage}`, model: described, params: run.params, result, state: states[i], operation }
          await call(subscriptions[i], event)
          result = event.result
        }
        return result
      }
    }
    return run
  }

  #described (model: ContentType): LifecycleEvent['model'] {
    let described = this.#models.get(model)
    if (described === undefined) this.#models.set(model, described = describe(model))
    return described
  }
}

const STAGES: readonly LifecycleStage[] = ['Create', 'Update', 'Delete', 'FindOne', 'FindMany', 'Count']
const HOOKS: ReadonlySet<string> = new Set(STAGES.flatMap((s) => [`before${s}`, `after${s}`]))

/** A subscriber's mistakes, at once: a misspelt hook would never be called. */
function checkSubscriber (subscriber: unknown): asserts subscriber is LifecycleSubscriber {
  if (typeof subscriber === 'function') return
  if (typeof subscriber !== 'object' || subscriber === null || Array.isArray(subscriber)) throw new UsageError('FCA_ERR_LIFECYCLE_SUBSCRIBER', 'expects a function or an object of hooks')
  for (const [key, value] of Object.entries(subscriber)) {
    if (key === 'models') {
      if (!Array.isArray(value) || !value.every((uid) => typeof uid === 'string')) throw new UsageError('FCA_ERR_LIFECYCLE_SUBSCRIBER', 'models must be an array of content-type uids')
    } else if (!HOOKS.has(key)) {
      throw new UsageError('FCA_ERR_LIFECYCLE_SUBSCRIBER', `hook ${key} is not a lifecycle hook`)
    } else if (typeof value !== 'function') {
      throw new UsageError('FCA_ERR_LIFECYCLE_SUBSCRIBER', `hook ${key} must be a function`)
    }
  }
}

/** A function subscriber is called with every event; an object's hook of the event's name, if it has one. */
async function call ({ subscriber }: Subscription, event: LifecycleEvent): Promise<void> {
  if (typeof subscriber === 'function') await subscriber(event)
  else await (subscriber[event.action] as LifecycleHook | undefined)?.call(subscriber, event)
}

function applies ({ models, subscriber: hooks }: Subscription, uid: string, stage: LifecycleStage): boolean {
  if (models !== null && !models.has(uid)) return false
  return typeof hooks === 'function' || typeof hooks[`before${stage}`] === 'function' || typeof hooks[`after${stage}`] === 'function'
}

/** The model as an event names it: Strapi's `event.model` has the uid, names and attributes. */
function describe (model: ContentType): LifecycleEvent['model'] {
  return { uid: model.uid, singularName: model.singularName, pluralName: model.pluralName, kind: model.kind, tableName: model.tableName, attributes: model.attributes }
}
