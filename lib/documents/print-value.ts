import { nestedDeeperThan } from '../query/limits.js'

/** Deepest value printed in full; far below where JSON.stringify with a replacer overflows (~2,000). */
const PRINT_DEPTH = 100

/**
 * Renders values and paths the way yup 0.32 (Strapi v5's validator) writes them into its
 * messages, so our validation errors read exactly like Strapi's.
 *
 * Scalars print as themselves (`5`, `true`, `null`, `NaN`), strings in double quotes without
 * escaping when `quote` is set, and anything else as 2-space-indented JSON in which every nested
 * scalar is first rendered by the same rule, so nested strings end up double-encoded:
 * `[{ title: 'a' }]` prints as
 * ```
 * [
 *   {
 *     "title": "\"a\""
 *   }
 * ]
 * ```
 */
export function printValue (value: unknown, quote = false): string {
  const simple = printSimple(value, quote)
  if (simple !== null) return simple
  // JSON.stringify recurses, and with a replacer overflows the stack a few thousand levels down:
  // a value that deep (only application code can pass one; REST bounds its input) prints as a note.
  if (nestedDeeperThan(value, PRINT_DEPTH)) return `[a value nested more than ${PRINT_DEPTH} levels deep]`
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, replaced: unknown) {
    return printSimple(this[key], quote) ?? replaced
  }, 2)
}

function printSimple (value: unknown, quote: boolean): string | null {
  if (value === null || value === undefined || value === true || value === false) return String(value)
  switch (typeof value) {
    case 'number': return Number.isNaN(value) ? 'NaN' : Object.is(value, -0) ? '-0' : String(value)
    case 'string': return quote ? `"${value}"` : value
    case 'bigint': return String(value)
    case 'symbol': return value.toString()
    case 'function': return `[Function ${value.name === '' ? 'anonymous' : value.name}]`
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString()
  if (value instanceof Error) return `[${Error.prototype.toString.call(value)}]`
  if (value instanceof RegExp) return String(value)
  return null
}

/**
 * yup's name for a place in the payload, used as the subject of its messages:
 * `[]` -> `this`, `['title']` -> `title`, `['blocks', '0', 'text']` -> `blocks[0].text`.
 */
export function yupPath (segments: readonly string[]): string {
  let path = ''
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`
    else path += path === '' ? segment : `.${segment}`
  }
  return path === '' ? 'this' : path
}
