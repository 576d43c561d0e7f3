import type { Static } from 'typebox'

/**
 * `rest.batch`: the atomic batch route (docs/batches.md), off by default: Strapi has no such
 * route, and an application may route the path itself.
 */
export const RestBatchOptions = {
  type: 'object',
  required: ['enabled', 'path', 'maxOperations'],
  properties: {
    /** Registers `POST <rest.prefix><path>`. */
    enabled: { type: 'boolean', default: false },
    /** The route's path under `rest.prefix`; its first segment must not be a content type's. */
    path: { type: 'string', default: '/batch', pattern: '^/[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$' },
    /** The most operations one batch may carry; more is a 400 before anything runs. */
    maxOperations: { type: 'integer', minimum: 1, maximum: 10000, default: 100 }
  },
  default: {},
  additionalProperties: false
} as const

export type ResolvedRestBatch = Static<typeof RestBatchOptions>

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The batch path against the models' routes: a path whose first segment is a collection type's
 * plural name or a single type's singular name would take (or lose) that type's routes, so it is
 * refused at registration rather than left to whichever route Fastify matches.
 *
 * @example
 * checkRestBatch({ enabled: true, path: '/batch' }, [{ kind: 'collectionType', info: { singularName: 'batch', pluralName: 'batches' } }])
 * // [] ; with pluralName 'batch': ['rest.batch.path "/batch" is the path of the content type "batch"\'s routes: set another rest.batch.path']
 */
export function checkRestBatch (batch: unknown, models: readonly unknown[]): string[] {
  if (!isObject(batch) || batch.enabled !== true || typeof batch.path !== 'string') return []
  const segment = batch.path.split('/')[1]
  for (const model of models) {
    if (!isObject(model) || !isObject(model.info)) continue
    const name = model.kind === 'singleType' ? model.info.singularName : model.info.pluralName
    if (name === segment) return [`rest.batch.path "${batch.path}" is the path of the content type "${String(name)}"'s routes: set another rest.batch.path`]
  }
  return []
}
