/**
 * Parsers for the date-like attribute types. Each returns the canonical text the PostgreSQL
 * column takes (and the API later returns), or null when the input is not a valid value.
 *
 * Only years 0001-9999 are accepted: PostgreSQL has no year 0, and five-digit years would not
 * survive the `YYYY-MM-DD` / `toISOString()` round trip.
 */

const ISO_DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/
const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/
const EPOCH_MS = /^-?\d+$/

interface IsoParts {
  /** The calendar date exactly as written, `YYYY-MM-DD`. */
  date: string
  /** Milliseconds since the epoch; a date or time without an offset is read as UTC. */
  epoch: number
}

function daysInMonth (year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

function parseIso (text: string): IsoParts | null {
  const m = ISO_DATETIME.exec(text)
  if (m === null) return null
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)]
  const ms = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'))
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null
  if (hour > 23 || minute > 59 || second > 59) return null
  let offset = 0
  const zone = m[8]
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '')
    const [hours, minutes] = [Number(digits.slice(0, 2)), Number(digits.slice(2) || 0)]
    if (hours > 23 || minutes > 59) return null
    offset = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes)
  }
  // Date.UTC maps years 0-99 to 1900-1999, so the year is set separately.
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute, second, ms)
  return { date: text.slice(0, 10), epoch: at.getTime() - offset * 60_000 }
}

function isoFromEpoch (epoch: number): string | null {
  if (!Number.isFinite(epoch)) return null
  const at = new Date(epoch)
  const year = at.getUTCFullYear()
  return Number.isNaN(at.getTime()) || year < 1 || year > 9999 ? null : at.toISOString()
}

/**
 * `date`: `YYYY-MM-DD`, or a full ISO 8601 date-time whose date part (as written, before any
 * offset is applied) is kept. `parseDate('2025-05-05T23:30:00-05:00')` is `'2025-05-05'`.
 */
export function parseDate (value: unknown): string | null {
  if (typeof value !== 'string') return null
  return parseIso(value)?.date ?? null
}

/**
 * `time`: `HH:mm`, `HH:mm:ss` or `HH:mm:ss.S{1,3}`, normalised to `HH:mm:ss.SSS`
 * as Strapi stores it. `parseTime('09:30')` is `'09:30:00.000'`.
 */
export function parseTime (value: unknown): string | null {
  if (typeof value !== 'string') return null
  const m = TIME.exec(value)
  if (m === null) return null
  const [hour, minute, second] = [m[1], m[2], m[3] ?? '00']
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null
  return `${hour}:${minute}:${second}.${(m[4] ?? '').padEnd(3, '0')}`
}

/**
 * `datetime` / `timestamp`: an ISO 8601 string (date only, or with a time and an optional
 * offset; no offset means UTC), a number of milliseconds since the epoch, or a string of digits
 * read the same way. Normalised to `toISOString()`: `'2025-01-01T10:00+02:00'` becomes
 * `'2025-01-01T08:00:00.000Z'`.
 */
export function parseDateTime (value: unknown): string | null {
  if (typeof value === 'number') return isoFromEpoch(value)
  if (typeof value !== 'string') return null
  if (EPOCH_MS.test(value)) return isoFromEpoch(Number(value))
  const parts = parseIso(value)
  return parts === null ? null : isoFromEpoch(parts.epoch)
}
