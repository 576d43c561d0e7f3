import type { ContentType } from '../model/registry.js'
import { checkInputDepth } from '../query/index.js'
import { parseFields } from '../query/fields.js'
import { UNLIMITED_POPULATE, parsePopulate } from '../query/populate.js'
import { Visibility } from '../query/visibility.js'
import { associationInputs } from './association-writes.js'
import { checkBodyKeys } from './check-keys.js'
import { writeScope } from './locales.js'
import { hashPasswords } from './password.js'
import { draftOnly } from './publication.js'
import { checkWritable } from './row-access.js'
import type { PreparedWrite, ServiceContext, Shape, WriteParams } from './types.js'
import { generateUids } from './unique.js'
import { validateInput } from './validate-input.js'

/**
 * Everything a write checks before its transaction opens, so that a request refused for its
 * input never takes a connection or a lock: the bounds of `limits`, the response's shape, the
 * caller's field limits, status and locale, generated uids, the data, the association inputs,
 * and password hashing (slow on purpose, so kept out of the transaction too).
 */

/**
 * Validates a write: its response shape, the caller's field limits, status and locale, and the
 * data (a creation in full, `partial` an update; a draft-only write of a draft & publish type
 * with Strapi's draft rules, which let required values wait until publication). No SQL: the
 * checks that need the database (uniqueness, row-level conditions) run in the transaction.
 *
 * @example
 * const write = await prepareWrite(model, ctx, { data: { title: 'Hello' }, status: 'draft' }, false)
 * // write.values: { title: 'Hello', slug: 'hello' }, write.generated: Set { 'slug' }
 */
export async function prepareWrite (model: ContentType, ctx: ServiceContext, params: WriteParams, partial: boolean): Promise<PreparedWrite> {
  // Before anything walks them: validation, relation inputs and error messages all recurse.
  if (params.limits === true) {
    checkInputDepth(params.data, ctx.bounds.inputDepth, 'data')
    checkInputDepth({ fields: params.fields, populate: params.populate }, ctx.bounds.inputDepth, 'The query')
  }
  const shape = writeShape(model, ctx, params)
  const requested = plainData(params.data)
  checkWritable(model, requested, params.access)
  const data = params.trusted === undefined ? requested : { ...requested, ...params.trusted }
  checkBodyKeys(ctx.registry, model, requested)
  const { status, locale } = writeScope(model, ctx, params)
  const generated = partial ? new Set<string>() : generateUids(model, data)
  const input = validateInput(model, data, { partial, draft: draftOnly(model, status) })
  const associations = associationInputs(model, ctx, input.deferred, params.access, new Set(Object.keys(params.trusted ?? {})))
  const values = await hashPasswords(model, input.values)
  return { shape, data, status, locale, values, associations, generated, access: params.access, cache: params.limits === true }
}

/**
 * The response shape of a write (`fields`, `populate`, and under `limits` its bounds), parsed as
 * a read's would be, and validated before anything is written. No SQL.
 */
export function writeShape (model: ContentType, ctx: ServiceContext, params: Pick<WriteParams, 'fields' | 'populate' | 'access' | 'limits'>): Shape {
  const access = params.access
  const bounds = params.limits === true ? ctx.bounds : undefined
  const visibility = access === undefined ? null : new Visibility(ctx.registry, access.read)
  return {
    fields: parseFields(model, params.fields, access?.fields ?? null),
    populate: parsePopulate(ctx.registry, model, params.populate, visibility, access?.fields ?? null, false,
      bounds === undefined ? UNLIMITED_POPULATE : { max: bounds.populateDepth, limited: true }),
    maxRows: bounds?.maxRows
  }
}

/** A shallow copy, so uid generation never mutates the caller's object. Non-objects go to validation as they are. */
function plainData (data: unknown): Record<string, unknown> {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? { ...(data as Record<string, unknown>) } : data as Record<string, unknown>
}
