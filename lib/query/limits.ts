import { LimitError } from '../errors.js'

/**
 * The bounds on one request's work (the plugin's `limits` options, docs/operations.md). REST
 * applies them to every request; the document service applies them to a call that asks
 * (`limits: true`); application code is otherwise unbounded.
 */
export interface RequestLimits {
  /** Deepest nesting of `populate`, counted in populated attributes (see populate.ts). */
  populateDepth: number
  /** Most rows one response may return: its documents and every populated row. */
  maxRows: number
  /** Longest query string, in characters. */
  queryLength: number
  /** Most parameters of a query string or an urlencoded body. */
  queryParameters: number
  /** Largest request body, in bytes. */
  bodyBytes: number
  /** Deepest nesting of objects and arrays in a body, a query or a write's `data`. */
  inputDepth: number
}

/** The `LimitError` of one option: its message names the option, its details too. */
export function overLimit (name: keyof RequestLimits, max: number, what: string): LimitError {
  return new LimitError(`${what} (limits.${name} is ${max})`, { limit: `limits.${name}`, max })
}

/**
 * Whether `value` nests objects and arrays more than `max` levels deep (a scalar is 0 levels,
 * `{}` and `[]` are 1, `{ a: [1] }` is 2). Iterative, and it stops at the first level too deep,
 * so it cannot overflow the stack and costs at most one visit per value: it runs before any
 * recursive walk of client input (validation, filter parsing, error messages).
 */
export function nestedDeeperThan (value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  const values: unknown[] = [value]
  const depths: number[] = [1]
  while (values.length > 0) {
    const current = values.pop() as object
    const depth = depths.pop()!
    if (depth > max) return true
    const children = Array.isArray(current) ? current : Object.values(current)
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        values.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return false
}

/**
 * Refuses `value` when it nests deeper than `limits.inputDepth`, with a 400 naming the option.
 * `what` names the input in the message: `The request body`, `The query`, `data`.
 *
 * @example
 * checkInputDepth(JSON.parse('[[[1]]]'), 2, 'The request body')
 * // throws LimitError: The request body is nested more than 2 levels deep (limits.inputDepth is 2)
 */
export function checkInputDepth (value: unknown, max: number, what: string): void {
  if (nestedDeeperThan(value, max)) throw overLimit('inputDepth', max, `${what} is nested more than ${max} levels deep`)
}
