import type { Field } from '../model/registry.js'
import { varcharLimit } from '../model/column-types.js'
import { printValue } from './print-value.js'
import { parseDate, parseDateTime, parseTime } from './temporal.js'

/**
 * Validation and coercion of one scalar attribute value, with Strapi v5's rules and yup 0.32's
 * messages (Strapi builds one yup schema per attribute, see docs/validation.md):
 *
 * - string, text, richtext, password, email, uid: `yup.string()` with casting disabled, so only
 *   strings pass; enumeration: `yup.string().oneOf([...enum, null])`, which does cast (5 -> "5").
 * - integer, float, decimal: `yup.number()`, which casts numeric strings (`"37"` -> 37) and
 *   turns everything else into NaN.
 * - boolean: `yup.boolean()`, which casts `"true"`/`"false"`/`"1"`/`"0"` (any case) and 1/0.
 * - blocks: `yup.array()` of block nodes.
 * - biginteger, date, time, datetime, timestamp, json: `yup.mixed()`, which accepts anything;
 *   Strapi's database layer then refuses a bad date or time with a 400 of its own (`database`
 *   issues below) and fails on the rest (500). We check them all here and answer 400.
 *
 * On top of Strapi's rules, every value must fit its column (`columnType`), so that a bad value
 * is always a 400 and never a database error.
 */

export interface Issue {
  message: string
  /** The value yup reports: the cast value, with NaN and infinities as null (their JSON form). */
  value: unknown
  /** Path below the attribute (a block node's index), when the issue is about a part of the value. */
  path?: string[]
  /**
   * A format Strapi's yup schema lets through (`yup.mixed()`) and its database layer refuses
   * (`InvalidDateError`...): answered as that layer's plain ValidationError, without details,
   * and only when no yup rule failed (see validate-input.ts).
   */
  database?: true
}

export interface RuleContext {
  /** yup's path of the attribute, the subject of every message (`title`, `seo.metaTitle`). */
  label: string
  /** Strapi's draft validation: required, minLength, min, regex and format checks are skipped. */
  draft: boolean
  /** Create (yup `notNil`) or update (`notNull`): only changes the message for a required null. */
  create: boolean
}

export interface Coerced {
  value: unknown
  issues: Issue[]
}

const INT4_MIN = -2147483648
const INT4_MAX = 2147483647
const INT8_MIN = -9223372036854775808n
const INT8_MAX = 9223372036854775807n
const UID_PATTERN = /^[A-Za-z0-9-_.~]*$/
const DIGITS = /^[+-]?\d+$/
/** A pragmatic RFC 5322 dot-atom address; the Unicode ranges mirror yup's email rule. */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF-]+)*@([a-z0-9\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF]([a-z0-9\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF._~-]*[a-z0-9\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF])?\.)+[a-z\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF]([a-z0-9\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF._~-]*[a-z\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF])?$/i
const LONE_SURROGATE = /\p{Cs}/u
/** Block node types of Strapi's rich-text editor (`blocks-validator.ts`). */
const BLOCK_TYPES = new Set(['paragraph', 'heading', 'quote', 'list', 'image', 'code'])
/** Deeper JSON would overflow `JSON.stringify` on the way to the jsonb column. */
export const MAX_JSON_DEPTH = 500

type Family = 'string' | 'number' | 'boolean' | 'array' | 'mixed'

const FAMILY: Record<Field['type'], Family> = {
  string: 'string',
  text: 'string',
  richtext: 'string',
  email: 'string',
  password: 'string',
  uid: 'string',
  enumeration: 'string',
  integer: 'number',
  float: 'number',
  decimal: 'number',
  boolean: 'boolean',
  blocks: 'array',
  biginteger: 'mixed',
  date: 'mixed',
  time: 'mixed',
  datetime: 'mixed',
  timestamp: 'mixed',
  json: 'mixed'
}

const regexCache = new Map<string, RegExp>()

function compiled (source: string): RegExp {
  let regex = regexCache.get(source)
  if (regex === undefined) {
    regex = new RegExp(source)
    regexCache.set(source, regex)
  }
  return regex
}

const ok = (value: unknown): Coerced => ({ value, issues: [] })
const fail = (...issues: Issue[]): Coerced => ({ value: undefined, issues })
const jsonSafe = (value: unknown): unknown => typeof value === 'number' && !Number.isFinite(value) ? null : value
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  Object.prototype.toString.call(value) === '[object Object]'
const positiveInteger = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0
const isNumber = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n)

/** yup's `notType` message; the "(cast from ...)" part appears when casting changed the value. */
function typeError (label: string, type: string, value: unknown, original: unknown): Issue {
  const cast = original !== null && original !== undefined && original !== value
  return {
    message: `${label} must be a \`${type}\` type, but the final value was: \`${printValue(value, true)}\`` +
      (cast ? ` (cast from the value \`${printValue(original, true)}\`).` : '.'),
    value: jsonSafe(value)
  }
}

const minMessage = (label: string, min: unknown): string => `${label} must be greater than or equal to ${String(min)}`
const maxMessage = (label: string, max: unknown): string => `${label} must be less than or equal to ${String(max)}`
const storageMessage = (label: string): string =>
  `${label} must not contain NUL characters (\\u0000) or unpaired surrogates`

/** PostgreSQL rejects NUL in text and jsonb; an unpaired surrogate cannot be encoded as UTF-8. */
function storable (text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text)
}

function codePoints (text: string): number {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xD800 && unit <= 0xDBFF && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xDC00 && next <= 0xDFFF) i++
    }
    count++
  }
  return count
}

/**
 * Checks that a value can be stored in a jsonb column: only JSON types, finite numbers,
 * storable strings (keys too), bounded depth, no cycles. Iterative, so depth cannot overflow
 * the stack here.
 */
function jsonProblem (label: string, root: unknown): string | null {
  const ancestors = new Set<object>()
  const stack: Array<{ value: unknown, depth: number } | { leave: object }> = [{ value: root, depth: 0 }]
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown, depth: number } | { leave: object }
    if ('leave' in item) { ancestors.delete(item.leave); continue }
    const { value, depth } = item
    if (value === null || typeof value === 'boolean') continue
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return `${label} must be a JSON value`
      continue
    }
    if (typeof value === 'string') {
      if (!storable(value)) return storageMessage(label)
      continue
    }
    if (!Array.isArray(value) && !isPlainObject(value)) return `${label} must be a JSON value`
    if (depth >= MAX_JSON_DEPTH) return `${label} must not be nested more than ${MAX_JSON_DEPTH} levels deep`
    if (ancestors.has(value)) return `${label} must be a JSON value`
    ancestors.add(value)
    stack.push({ leave: value })
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], depth: depth + 1 })
    } else {
      for (const [key, child] of Object.entries(value)) {
        if (!storable(key)) return storageMessage(label)
        stack.push({ value: child, depth: depth + 1 })
      }
    }
  }
  return null
}

/** A required attribute given null (or missing on create): yup's answer for its schema type. */
function coerceNull (field: Field, ctx: RuleContext): Coerced {
  if (field.attribute?.required !== true || ctx.draft) return ok(null)
  const { label } = ctx
  switch (FAMILY[field.type]) {
    case 'string': return fail(typeError(label, 'string', null, null))
    // yup 0.32's number cast turns a non-nullable null into NaN.
    case 'number': return fail(typeError(label, 'number', NaN, null))
    case 'boolean': return fail(typeError(label, 'boolean', null, null))
    case 'array': return fail(typeError(label, 'array', null, null))
    case 'mixed': return fail({ message: ctx.create ? `${label} must be defined.` : `${label} cannot be null.`, value: null })
  }
}

function stringRules (field: Field, value: string, ctx: RuleContext): Issue[] {
  const attribute = field.attribute as { minLength?: number, maxLength?: number, regex?: string, required?: boolean }
  const { label, draft } = ctx
  const issues: Issue[] = []
  const push = (message: string): void => { issues.push({ message, value }) }
  // Strapi's email schema replaces the minLength test with its own `min(1)`, checked last.
  if (field.type !== 'email' && !draft && positiveInteger(attribute.minLength) && value.length < attribute.minLength) {
    push(`${label} must be at least ${attribute.minLength} characters`)
  }
  // The stored value of a password is its hash, so only the declared maxLength applies to it.
  const limit = field.type === 'password' ? undefined : varcharLimit(field)
  if (positiveInteger(attribute.maxLength) && value.length > attribute.maxLength) {
    push(`${label} must be at most ${attribute.maxLength} characters`)
  } else if (limit !== undefined && codePoints(value) > limit) {
    push(`${label} must be at most ${limit} characters`)
  }
  if (!draft && typeof attribute.regex === 'string') {
    const regex = compiled(attribute.regex)
    const skipEmpty = attribute.required !== true && value === ''
    if (!skipEmpty && !regex.test(value)) push(`${label} must match the following: "${String(regex)}"`)
  }
  if (!draft && field.type === 'uid' && !UID_PATTERN.test(value)) {
    push(`${label} must match the following: "${String(UID_PATTERN)}"`)
  }
  if (!draft && field.type === 'email') {
    if (value !== '' && !EMAIL.test(value)) push(`${label} must be a valid email`)
    if (value.length < 1) push(`${label} cannot be empty`)
  }
  if (!storable(value)) push(storageMessage(label))
  return issues
}

function coerceEnumeration (field: Field, raw: unknown, ctx: RuleContext): Coerced {
  const values = (field.attribute as { enum: readonly string[] }).enum
  // yup's string cast: primitives become their text; objects and arrays stay as they are.
  const cast = typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : raw
  const issues: Issue[] = []
  if (typeof cast !== 'string') issues.push(typeError(ctx.label, 'string', cast, raw))
  // `oneOf([...enum, null])`: the null prints as an empty item, hence the trailing ", ".
  if (typeof cast !== 'string' || !values.includes(cast)) {
    issues.push({ message: `${ctx.label} must be one of the following values: ${values.join(', ')}, `, value: cast })
  }
  return issues.length > 0 ? fail(...issues) : ok(cast)
}

/** yup's number cast: strings lose all whitespace, '' is NaN, anything else not a number is NaN. */
function castNumber (raw: unknown): number {
  if (typeof raw === 'number') return raw
  if (typeof raw !== 'string') return NaN
  const compact = raw.replace(/\s/g, '')
  return compact === '' ? NaN : Number(compact)
}

function coerceNumber (field: Field, raw: unknown, ctx: RuleContext): Coerced {
  const attribute = field.attribute as { min?: number, max?: number }
  const { label, draft } = ctx
  const n = castNumber(raw)
  if (Number.isNaN(n)) return fail(typeError(label, 'number', n, raw))
  const issues: Issue[] = []
  const push = (message: string): void => { issues.push({ message, value: jsonSafe(n) }) }
  if (field.type === 'integer') {
    // Strapi truncates integer bounds (`_.toInteger`); the int4 column bounds apply regardless.
    const min = !draft && isNumber(attribute.min) ? Math.max(Math.trunc(attribute.min), INT4_MIN) : INT4_MIN
    const max = isNumber(attribute.max) ? Math.min(Math.trunc(attribute.max), INT4_MAX) : INT4_MAX
    if (!Number.isInteger(n)) push(`${label} must be an integer`)
    if (n < min) push(minMessage(label, min))
    if (n > max) push(maxMessage(label, max))
  } else {
    if (!Number.isFinite(n)) return fail({ message: `${label} must be a finite number`, value: null })
    if (!draft && isNumber(attribute.min) && n < attribute.min) push(minMessage(label, attribute.min))
    if (isNumber(attribute.max) && n > attribute.max) push(maxMessage(label, attribute.max))
  }
  return issues.length > 0 ? fail(...issues) : ok(n)
}

function toBigInt (bound: unknown): bigint | undefined {
  if (typeof bound === 'number' && Number.isInteger(bound)) return BigInt(bound)
  if (typeof bound === 'string' && DIGITS.test(bound)) return BigInt(bound)
  return undefined
}

function coerceBigInteger (field: Field, raw: unknown, ctx: RuleContext): Coerced {
  const attribute = field.attribute as { min?: string | number, max?: string | number }
  const { label, draft } = ctx
  let n: bigint
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) n = BigInt(raw)
  else if (typeof raw === 'string' && DIGITS.test(raw)) n = BigInt(raw)
  else if (typeof raw === 'number' && Number.isInteger(raw)) {
    return fail({
      message: `${label} is beyond the safe integer range of a JSON number (±${Number.MAX_SAFE_INTEGER}); send it as a string of digits`,
      value: raw
    })
  } else {
    return fail({ message: `${label} must be an integer (a number, or a string of digits)`, value: jsonSafe(raw) })
  }
  const declaredMin = draft ? undefined : toBigInt(attribute.min)
  const declaredMax = toBigInt(attribute.max)
  const min = declaredMin !== undefined && declaredMin > INT8_MIN ? declaredMin : INT8_MIN
  const max = declaredMax !== undefined && declaredMax < INT8_MAX ? declaredMax : INT8_MAX
  const text = n.toString()
  const issues: Issue[] = []
  if (n < min) issues.push({ message: minMessage(label, min), value: text })
  if (n > max) issues.push({ message: maxMessage(label, max), value: text })
  return issues.length > 0 ? fail(...issues) : ok(text)
}

function coerceBoolean (raw: unknown, ctx: RuleContext): Coerced {
  if (typeof raw === 'boolean') return ok(raw)
  if (typeof raw === 'string' || typeof raw === 'number') {
    const text = String(raw)
    if (/^(true|1)$/i.test(text)) return ok(true)
    if (/^(false|0)$/i.test(text)) return ok(false)
  }
  return fail(typeError(ctx.label, 'boolean', raw, raw))
}

function coerceBlocks (raw: unknown, ctx: RuleContext): Coerced {
  let nodes = raw
  // yup's array cast parses JSON text and turns anything that is not an array into null.
  if (typeof nodes === 'string') {
    try { nodes = JSON.parse(nodes) } catch { nodes = null }
  }
  if (!Array.isArray(nodes)) return fail(typeError(ctx.label, 'array', null, raw))
  const issues: Issue[] = []
  nodes.forEach((node: unknown, i) => {
    if (!isPlainObject(node) || typeof node.type !== 'string' || !BLOCK_TYPES.has(node.type)) {
      issues.push({ message: 'Block node is of invalid type', value: node, path: [String(i)] })
    }
  })
  if (issues.length > 0) return fail(...issues)
  const problem = jsonProblem(ctx.label, nodes)
  return problem === null ? ok(nodes) : fail({ message: problem, value: nodes })
}

/** The start of a date Strapi's `parseDate` recognises; past it, a wrong day is "Invalid date". */
const PARTIAL_DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])/

/**
 * date, time, datetime, timestamp: Strapi's yup accepts anything and its database fields parse
 * the value (`@strapi/database` fields/shared/parsers.ts), with these messages.
 */
function coerceTemporal (field: Field, raw: unknown): Coerced {
  const refuse = (message: string): Coerced => fail({ message, value: jsonSafe(raw), database: true })
  switch (field.type) {
    case 'date': {
      const value = parseDate(raw)
      if (value !== null) return ok(value)
      return refuse(typeof raw === 'string' && PARTIAL_DATE.test(raw) ? 'Invalid date' : 'Invalid format, expected yyyy-MM-dd')
    }
    case 'time': {
      const value = parseTime(raw)
      if (value !== null) return ok(value)
      return refuse(typeof raw === 'string' ? 'Invalid time format, expected HH:mm:ss.SSS' : `Expected a string, got a ${typeof raw}`)
    }
    default: {
      const value = parseDateTime(raw)
      return value === null ? refuse('Invalid format, expected a timestamp or an ISO date') : ok(value)
    }
  }
}

/**
 * Validates `raw` for `field` and returns the value to store, or the issues found (all of
 * them, as yup reports with `abortEarly: false`). `null` means the client sent null or, on
 * create, left a required attribute out.
 */
export function coerceScalar (field: Field, raw: unknown, ctx: RuleContext): Coerced {
  if (raw === null || raw === undefined) return coerceNull(field, ctx)
  switch (field.type) {
    case 'string':
    case 'text':
    case 'richtext':
    case 'email':
    case 'password':
    case 'uid': {
      if (typeof raw !== 'string') return fail(typeError(ctx.label, 'string', raw, raw))
      const issues = stringRules(field, raw, ctx)
      return issues.length > 0 ? fail(...issues) : ok(raw)
    }
    case 'enumeration': return coerceEnumeration(field, raw, ctx)
    case 'integer':
    case 'float':
    case 'decimal': return coerceNumber(field, raw, ctx)
    case 'biginteger': return coerceBigInteger(field, raw, ctx)
    case 'boolean': return coerceBoolean(raw, ctx)
    case 'date':
    case 'time':
    case 'datetime':
    case 'timestamp': return coerceTemporal(field, raw)
    case 'blocks': return coerceBlocks(raw, ctx)
    case 'json': {
      const problem = jsonProblem(ctx.label, raw)
      return problem === null ? ok(raw) : fail({ message: problem, value: jsonSafe(raw) })
    }
  }
}
