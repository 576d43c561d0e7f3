import { ValidationError } from '../errors.js'
import type { Field } from '../model/registry.js'

const DATE = /^(\d{4})-(\d{2})-(\d{2})/
const TIME = /^([01]\d|2[0-3]):([0-5]\d)(:([0-5]\d)(\.\d{1,3})?)?$/

function invalid (where: string, value: unknown, expected: string): ValidationError {
  return new ValidationError(`Invalid value ${JSON.stringify(value)} for ${where}: expected ${expected}`, {
    key: where, path: where, source: 'query', param: 'filters'
  })
}

/** lodash `toNumber`, as Strapi casts numeric filter values: '' is 0, whitespace is trimmed. */
function toNumber (value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value !== 'string') return Number.NaN
  const trimmed = value.trim()
  return trimmed === '' ? 0 : Number(trimmed)
}

/**
 * Casts one filter value to the field's type, the way Strapi's query layer does, except that a
 * value that cannot be cast is a 400 (Strapi answers 500 there). Strings stay strings.
 */
export function castFilterValue (field: Field, value: unknown, where: string): unknown {
  if (value === null) return null
  switch (field.type) {
    case 'integer':
    case 'float':
    case 'decimal': {
      const n = toNumber(value)
      if (!Number.isFinite(n)) throw invalid(where, value, 'a number')
      return n
    }
    case 'biginteger': {
      const text = typeof value === 'number' && Number.isInteger(value) ? String(value) : typeof value === 'string' ? value.trim() : ''
      if (!/^-?\d{1,19}$/.test(text)) throw invalid(where, value, 'an integer')
      return text
    }
    case 'boolean':
      if (value === true || value === 'true' || value === 't' || value === '1' || value === 1) return true
      if (value === false || value === 'false' || value === 'f' || value === '0' || value === 0) return false
      // Strapi's BooleanField falls back to JavaScript truthiness: 'yes' is true, '' is false.
      return Boolean(value)
    case 'date': {
      const text = String(value)
      const match = DATE.exec(text)
      if (match === null || Number.isNaN(Date.parse(`${match[0]}T00:00:00Z`))) throw invalid(where, value, 'a date (YYYY-MM-DD)')
      return match[0]
    }
    case 'datetime':
    case 'timestamp': {
      const text = String(value)
      const time = typeof value === 'number' ? value : Date.parse(text)
      if (Number.isNaN(time) || (typeof value === 'string' && !DATE.test(text))) throw invalid(where, value, 'an ISO 8601 date-time')
      return new Date(time).toISOString()
    }
    case 'time': {
      const text = String(value)
      if (!TIME.test(text)) throw invalid(where, value, 'a time (HH:mm:ss.SSS)')
      return text
    }
    case 'json':
    case 'blocks':
      return value
    default:
      return typeof value === 'string' ? value : String(value)
  }
}
