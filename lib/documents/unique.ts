import { sql, type Kysely, type Transaction } from 'kysely'
import { ValidationError, type FieldError } from '../errors.js'
import type { ContentType, Field } from '../model/registry.js'
import { varcharLimit } from '../model/column-types.js'
import { slugify } from './slugify.js'

/** Fields whose values must not repeat across documents: `unique: true` attributes and every uid. */
export function uniqueFields (model: ContentType): Field[] {
  return [...model.writableFields.values()].filter((f) => f.type === 'uid' || f.attribute?.unique === true)
}

/** The unique fields a write gives a value (an empty one is no value), with that value. */
export function uniqueValues (model: ContentType, values: Record<string, unknown>): Array<[Field, unknown]> {
  return uniqueFields(model).flatMap((field): Array<[Field, unknown]> => {
    const value = values[field.name]
    return value === undefined || value === null || value === '' ? [] : [[field, value]]
  })
}

/** The two texts whose `hashtext` keys the advisory lock on a unique value: (table.column, value). */
export function uniqueLockKey (model: ContentType, field: Field, value: string): [string, string] {
  return [`${model.tableName}.${field.column}`, value]
}

export interface UniqueScope {
  /** The document being written, excluded from the comparison (null on create). */
  documentId: string | null
  locale: string | null
  /** Compare with draft rows only (a draft-only write of a draft & publish type), or with every row. */
  draftsOnly: boolean
}

/**
 * Serialises writers of the same unique value: two requests creating the same slug at once would
 * both pass a plain check, so each takes a transaction-scoped advisory lock on (table, column, value)
 * first. The lock is released at commit or rollback.
 */
async function lockValue (trx: Transaction<any>, model: ContentType, field: Field, value: string): Promise<void> {
  const [column, text] = uniqueLockKey(model, field, value)
  await sql`select pg_advisory_xact_lock(hashtext(${column}), hashtext(${text}))`.execute(trx)
}

function otherRows (trx: Kysely<any>, model: ContentType, scope: UniqueScope) {
  let query = trx.selectFrom(`${model.tableName} as t`)
  if (scope.documentId !== null) query = query.where('t.document_id', '<>', scope.documentId)
  if (model.localized && scope.locale !== null) query = query.where('t.locale', '=', scope.locale)
  if (scope.draftsOnly) query = query.where('t.published_at', 'is', null)
  return query
}

async function taken (trx: Transaction<any>, model: ContentType, field: Field, value: string, scope: UniqueScope): Promise<boolean> {
  const row = await otherRows(trx, model, scope).select(sql`1`.as('x')).where(`t.${field.column}`, '=', value).limit(1).executeTakeFirst()
  return row !== undefined
}

/**
 * Strapi's uniqueness rule, checked inside the write's transaction: a value of a unique field may
 * not appear in another document of the same locale (uniqueness is per locale, and a document's
 * draft and published versions naturally share it). Violations become one 400 listing each field
 * with "This attribute must be unique".
 *
 * `generated` names uid fields whose value the service derived from their target field; for
 * those a taken value gets the first free `-1`, `-2`, ... suffix instead of an error.
 */
export async function enforceUnique (
  trx: Transaction<any>, model: ContentType, values: Record<string, unknown>, scope: UniqueScope, generated: ReadonlySet<string>
): Promise<void> {
  const errors: FieldError[] = []
  for (const [field, value] of uniqueValues(model, values)) {
    const text = String(value)
    await lockValue(trx, model, field, text)
    if (!(await taken(trx, model, field, text, scope))) continue
    if (generated.has(field.name)) {
      values[field.name] = await firstFreeSuffix(trx, model, field, text, scope)
      continue
    }
    errors.push({ path: [field.name], message: 'This attribute must be unique', name: 'ValidationError', value })
  }
  if (errors.length > 0) throw ValidationError.fromFieldErrors(errors)
}

/** `base-1`, `base-2`, ... shortened so that the suffix still fits the column. */
async function firstFreeSuffix (trx: Transaction<any>, model: ContentType, field: Field, base: string, scope: UniqueScope): Promise<string> {
  const limit = varcharLimit(field) ?? Number.POSITIVE_INFINITY
  for (let n = 1; ; n++) {
    const suffix = `-${n}`
    const candidate = `${base.slice(0, Math.max(0, limit - suffix.length))}${suffix}`
    if (!(await taken(trx, model, field, candidate, scope))) return candidate
  }
}

/**
 * On create, a uid left empty is derived from its target field (`title: 'Hello World'` gives
 * `slug: 'hello-world'`), as Strapi's admin does. Returns the names of the uids it filled in.
 */
export function generateUids (model: ContentType, data: Record<string, unknown>): Set<string> {
  const generated = new Set<string>()
  for (const field of model.writableFields.values()) {
    const attribute = field.attribute
    if (attribute?.type !== 'uid' || attribute.targetField === undefined) continue
    if (data[field.name] !== undefined && data[field.name] !== null && data[field.name] !== '') continue
    const source = data[attribute.targetField]
    if (typeof source !== 'string' || source.trim() === '') continue
    // Slugifying can lengthen a text (ß becomes ss): keep the slug within its column.
    const limit = Math.min(varcharLimit(field) ?? Number.POSITIVE_INFINITY, (attribute as { maxLength?: number }).maxLength ?? Number.POSITIVE_INFINITY)
    const slug = slugify(source).slice(0, limit).replace(/-+$/, '')
    if (slug === '') continue
    data[field.name] = slug
    generated.add(field.name)
  }
  return generated
}
