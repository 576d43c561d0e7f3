import { ValidationError, type FieldError } from '../errors.js'
import type { Component, ContentType } from '../model/registry.js'
import { isScalarAttribute } from '../model/registry.js'
import { coerceScalar } from './coerce-scalar.js'
import { printValue, yupPath } from './print-value.js'

export interface ValidateInputOptions {
  /** `false` for create (required attributes, defaults), `true` for update (only the keys sent). */
  partial: boolean
  /**
   * Strapi's draft rules: when a draft is written without being published, required,
   * minLength, min, regex and the email/uid formats are not checked (max and types still are).
   * Publishing must then validate the whole document with `draft: false`. Default `false`.
   */
  draft?: boolean
  /**
   * Where this object sits in the request body, for components validated on their own:
   * `['seo']`, `['blocks', '0']`. Prefixes every error path and names the place in messages.
   */
  path?: readonly string[]
}

export interface ValidatedInput {
  /**
   * Scalar attributes keyed by attribute NAME, coerced to what their column takes (see
   * docs/validation.md): strings for string-like types (password still in clear text, see
   * `hashPasswords`), date `YYYY-MM-DD`, time `HH:mm:ss.SSS`, datetime/timestamp ISO with `Z`,
   * biginteger as a string of digits, numbers, booleans, JSON values for json and blocks.
   * `null` clears the column. On create, attributes left out appear only when they have a default.
   */
  values: Record<string, unknown>
  /**
   * Relation, media, component and dynamic-zone attributes exactly as sent, for the code that
   * writes them; for a component model also its `id` and `__component` keys.
   */
  deferred: Record<string, unknown>
}

/** System keys a client may send and that are ignored: Strapi sets them from the query instead. */
const IGNORED_KEYS = new Set(['publishedAt', 'locale'])
/** System keys nobody may write. */
const READ_ONLY_KEYS = new Set(['createdAt', 'updatedAt'])
/** Keys a component object may carry besides its attributes. */
const COMPONENT_KEYS = new Set(['id', '__component'])

const hasOwn = (object: object, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key)
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  Object.prototype.toString.call(value) === '[object Object]'

/**
 * yup's answer for a `data` that is not an object: its object cast turns anything else into
 * null, and Strapi reports the error at the root (`path: []`, `value: null`).
 */
function notAnObject (prefix: readonly string[], data: unknown): ValidationError {
  const cast = data !== null && data !== undefined
  const message = `${yupPath(prefix)} must be a \`object\` type, but the final value was: \`null\`` +
    (cast ? ` (cast from the value \`${printValue(data, true)}\`).` : '.')
  return ValidationError.fromFieldErrors([{ path: [...prefix], message, name: 'ValidationError', value: null }])
}

/**
 * Strapi's key checks, in its order: `id`/`documentId` at the root, then keys that exist but
 * are not writable (details carry their `path`), then keys that do not exist. Each throws at
 * the first offending key, before any value is looked at.
 */
function checkKeys (model: ContentType | Component, data: Record<string, unknown>, prefix: readonly string[]): void {
  const keys = Object.keys(data)
  const isContentType = model.modelType === 'contentType'
  const parent = prefix.filter((segment) => !/^\d+$/.test(segment))
  if (isContentType && prefix.length === 0) {
    for (const key of ['id', 'documentId']) {
      if (hasOwn(data, key)) throw ValidationError.invalidKey(key, { source: 'body' })
    }
  }
  for (const key of keys) {
    const attribute = hasOwn(model.attributes, key) ? model.attributes[key] : undefined
    if ((isContentType && READ_ONLY_KEYS.has(key)) || attribute?.writable === false) {
      throw ValidationError.invalidKey(key, { path: [...parent, key].join('.'), source: 'body' })
    }
  }
  for (const key of keys) {
    if (hasOwn(model.attributes, key)) continue
    if (isContentType ? IGNORED_KEYS.has(key) : COMPONENT_KEYS.has(key)) continue
    throw ValidationError.invalidKey(key, parent.length === 0 ? { source: 'body' } : { path: parent.join('.'), source: 'body' })
  }
}

/**
 * Validates a write payload (`data` of a REST body or a GraphQL input) against a content type
 * or component and coerces every scalar to what its column takes.
 *
 * Throws `ValidationError` with Strapi's exact answers: "Invalid key <k>" for keys that may not
 * be written, otherwise one error listing every failing attribute (`details.errors`, message
 * "N errors occurred" when there are several).
 *
 * @example
 * validateInput(article, { title: 'Hello', views: '37', publishedAt: null }, { partial: false })
 * // { values: { title: 'Hello', views: 37, featured: false }, deferred: {} }
 * validateInput(article, { views: 'abc' }, { partial: true })
 * // throws: views must be a `number` type, but the final value was: `NaN` (cast from the value `"abc"`).
 */
export function validateInput (model: ContentType | Component, data: unknown, options: ValidateInputOptions): ValidatedInput {
  const prefix = options.path ?? []
  if (!isPlainObject(data)) throw notAnObject(prefix, data)
  checkKeys(model, data, prefix)

  const values: Record<string, unknown> = {}
  const deferred: Record<string, unknown> = {}
  const errors: FieldError[] = []
  const draft = options.draft === true
  const create = !options.partial

  for (const key of Object.keys(data)) {
    if (model.modelType === 'component' && COMPONENT_KEYS.has(key) && !hasOwn(model.attributes, key)) deferred[key] = data[key]
  }
  // Model order, so that errors come out in the order Strapi sorts them.
  for (const [name, attribute] of Object.entries(model.attributes)) {
    const sent = hasOwn(data, name) && data[name] !== undefined
    if (!isScalarAttribute(attribute)) {
      if (sent) deferred[name] = data[name]
      continue
    }
    const field = model.writableFields.get(name)
    if (field === undefined) continue
    let raw: unknown
    if (sent) raw = data[name]
    else if (!create) continue
    else if (attribute.default !== undefined) raw = attribute.default
    else if (attribute.required === true && !draft) raw = null
    else continue

    const path = [...prefix, name]
    const result = coerceScalar(field, raw, { label: yupPath(path), draft, create })
    if (result.issues.length === 0) {
      values[name] = result.value
      continue
    }
    for (const issue of result.issues) {
      errors.push({ path: [...path, ...(issue.path ?? [])], message: issue.message, name: 'ValidationError', value: issue.value })
    }
  }
  if (errors.length > 0) throw ValidationError.fromFieldErrors(errors)
  return { values, deferred }
}
