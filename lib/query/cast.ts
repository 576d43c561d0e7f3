import { ValidationError } from '../errors.js'
import type { Field } from '../model/registry.js'

const DATE = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])/
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

/** Whether `YYYY-MM-DD` names a day of the calendar (`2024-02-30` does not). */
function validDay (match: RegExpExecArray): boolean {
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day) // a day past the month's end rolls over
  return at.getUTCDate() === day
}

/**
 * Casts one filter value to the field's type, the way Strapi's query layer does, except that a
 * number that cannot be cast is a 400 (Strapi answers 500 there). A date or time that cannot
 * be cast is the 400 Strapi's database fields answer (`Invalid format, expected yyyy-MM-dd`,
 * `Invalid date`, `Invalid time format, expected HH:mm:ss.SSS`, `Invalid format, expected a
 * timestamp or an ISO date`; no details). Strings stay strings.
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
      if (match === null) throw new ValidationError('Invalid format, expected yyyy-MM-dd')
      if (!validDay(match)) throw new ValidationError('Invalid date')
      return match[0]
    }
    case 'datetime':
    case 'timestamp': {
      const text = String(value)
      const time = typeof value === 'number' ? value : Date.parse(text)
      if (Number.isNaN(time) || (typeof value === 'string' && !DATE.test(text))) throw new ValidationError('Invalid format, expected a timestamp or an ISO date')
      return new Date(time).toISOString()
    }
    case 'time': {
      const text = String(value)
      if (!TIME.test(text)) throw new ValidationError('Invalid time format, expected HH:mm:ss.SSS')
      return text
    }
    case 'json':
    case 'blocks':
      return value
    default:
      return typeof value === 'string' ? value : String(value)
  }
}
