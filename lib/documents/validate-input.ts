import { ValidationError, type FieldError } from '../errors.js'
import type { Component, ContentType } from '../model/registry.js'
import { isScalarAttribute } from '../model/registry.js'
import type { Attribute, ScalarAttribute } from '../model/types.js'
import { COMPONENT_KEYS, checkKeys } from './check-keys.js'
import { coerceScalar } from './coerce-scalar.js'
import { printValue, yupPath } from './print-value.js'

export interface ValidateInputOptions {
  /** `false` for create (required attributes, defaults), `true` for update (only the keys sent). */
  partial: boolean
  /**
   * Strapi's draft rules: when a draft is written without being published, required,
   * minLength, min, regex and the email/uid formats are not checked (max and types still are),
   * nor are `required` on components, dynamic zones, relations and media and the `min`/`max`
   * item counts of repeatable components and dynamic zones.
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

type AssociationAttribute = Exclude<Attribute, ScalarAttribute>

/** Keys that make an object a relation's longhand form (see relation-input.ts). */
const LONGHAND_KEYS = ['connect', 'disconnect', 'set']

/**
 * Whether a relation or media value certainly leaves the attribute with nothing linked: `null`,
 * `[]`, `{ set: [] }` and, on create, a `connect` naming nobody. A `disconnect` on update is
 * relative to what is stored and is judged at publication (see publication.ts), not here.
 */
function linksNothing (value: unknown, create: boolean): boolean {
  if (value === null || value === undefined) return true
  if (Array.isArray(value)) return value.length === 0
  if (!isPlainObject(value) || !LONGHAND_KEYS.some((key) => hasOwn(value, key))) return false
  const named = (list: unknown): number => list === null || list === undefined ? 0 : Array.isArray(list) ? list.length : 1
  if (value.set !== undefined) return named(value.set) === 0
  return create && named(value.connect) === 0
}

/**
 * Strapi's rules for the attributes written beside the row (its entity validator): a required
 * single component, repeatable component or dynamic zone may not be null (yup's type error for
 * `null`), and the item count of a repeatable component or dynamic zone must lie within `min`
 * and `max`, where `min` applies only when the attribute is required or the list is not empty.
 * Under the draft rules none of this is checked. Strapi leaves `required` on relations and media
 * unchecked; here they must link something (yup 0.32's `array().required()` message).
 * The items themselves are validated as they are written (write-components.ts).
 */
function associationIssues (attribute: AssociationAttribute, raw: unknown, path: readonly string[], create: boolean): FieldError[] {
  const label = yupPath(path)
  const fail = (message: string, value: unknown): FieldError[] => [{ path: [...path], message, name: 'ValidationError', value }]
  const required = attribute.required === true
  if (attribute.type === 'relation' || attribute.type === 'media') {
    return required && linksNothing(raw, create) ? fail(`${label} is a required field`, raw ?? null) : []
  }
  if (attribute.type === 'component' && attribute.repeatable !== true) {
    return required && raw == null ? fail(`${label} must be a \`object\` type, but the final value was: \`null\`.`, null) : []
  }
  if (raw == null) return required ? fail(`${label} must be a \`array\` type, but the final value was: \`null\`.`, null) : []
  // Not a list: write-components.ts answers that.
  if (!Array.isArray(raw)) return []
  const { min, max } = attribute
  if (Number.isInteger(min) && (required || raw.length > 0) && raw.length < min!) {
    return fail(`${label} field must have at least ${min!} items`, raw)
  }
  if (Number.isInteger(max) && raw.length > max!) return fail(`${label} field must have less than or equal to ${max!} items`, raw)
  return []
}

/**
 * Validates a write payload (`data` of a REST body or a GraphQL input) against a content type
 * or component and coerces every scalar to what its column takes.
 *
 * Throws `ValidationError` with Strapi's exact answers: "Invalid key <k>" for keys that may not
 * be written, otherwise one error listing every failing attribute (`details.errors`, message
 * "N errors occurred" when there are several), and when only a date or time is wrong, the
 * database layer's message alone (`Invalid format, expected yyyy-MM-dd`, no details).
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
  // The first date or time Strapi's database layer would refuse: reported only when yup passed.
  let refusedFormat: string | null = null
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
      // Left out on create counts as null, as for a required scalar; left out on update, unchanged.
      if (!draft && (sent || create) && attribute.writable !== false) errors.push(...associationIssues(attribute, sent ? data[name] : null, [...prefix, name], create))
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
      if (issue.database === true) refusedFormat ??= issue.message
      else errors.push({ path: [...path, ...(issue.path ?? [])], message: issue.message, name: 'ValidationError', value: issue.value })
    }
  }
  if (errors.length > 0) throw ValidationError.fromFieldErrors(errors)
  if (refusedFormat !== null) throw new ValidationError(refusedFormat)
  return { values, deferred }
}
