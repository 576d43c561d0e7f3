import { sql, type RawBuilder, type SqlBool } from 'kysely'

/**
 * One key of a walk's order as ORDER BY has it, with PostgreSQL's default NULL placement: an
 * ascending key puts NULLs last, a descending one first. `value` is the position's value of the
 * key: a parameter; `null` when the position's value is SQL NULL.
 */
export interface KeysetKey {
  expression: RawBuilder<unknown>
  direction: 'asc' | 'desc'
  value: unknown
}

/** The other way round: `asc` (NULLs last) reversed is `desc` (NULLs first), and the other way. */
export const reversed = (direction: 'asc' | 'desc'): 'asc' | 'desc' => direction === 'asc' ? 'desc' : 'asc'

/**
 * The rows strictly after a position in the order `order by k1 d1, ..., kn dn, t.id <dir>` (or at
 * or after it with `inclusive`, which only changes the id's comparison), as one or two conditions
 * whose rows together are that set. Nested, so that each key is compared once, and written for
 * each key's NULL placement, so that they select exactly the rows ORDER BY puts after the
 * position (a plain `(k1, id) > ($1, $2)` would lose the NULLs):
 *
 * ```sql
 * -- sort=title:asc (NULLs last), position ('b', 7): two ranges, the values from 'b' on, then the NULLs
 * t.title >= $1 and (t.title > $2 or (t.title = $3 and t.id > $4))   |   t.title is null
 * -- sort=title:asc, position (NULL, 7): only NULLs are left, past the id
 * t.title is null and t.id > $1
 * -- sort=publishedAt:desc (NULLs first), position ('2024-01-01 ...', 7)
 * t.published_at <= $1 and (t.published_at < $2 or (t.published_at = $3 and t.id > $4))
 * -- sort=publishedAt:desc, position (NULL, 7): every value, then the NULLs past the id
 * (t.published_at is not null or (t.published_at is null and t.id > $1))
 * ```
 *
 * Each condition opens with a bound on the first key (`k >= $1`, `k <= $1`, `k is null`) that an
 * index on the sort's keys and the id seeks to, so a page deep in a walk reads about a page of
 * index entries (docs/rest.md#cursor-pagination). An ascending first key with a value has two:
 * the values from the position on and the NULLs after them are two ranges of such an index, and
 * one condition `k > $1 or k is null` would make PostgreSQL read every row before the position.
 */
export function keysetAfter (keys: readonly KeysetKey[], id: { expression: RawBuilder<unknown>, direction: 'asc' | 'desc', value: unknown }, inclusive: boolean): Array<RawBuilder<SqlBool>> {
  const op = id.direction === 'asc' ? (inclusive ? '>=' : '>') : (inclusive ? '<=' : '<')
  let rest: RawBuilder<SqlBool> = sql<SqlBool>`${id.expression} ${sql.raw(op)} ${id.value}`
  for (const key of keys.slice(1).reverse()) rest = after(key, rest)
  const [first] = keys
  if (first === undefined) return [rest]
  const k = first.expression
  if (first.direction === 'asc' && first.value !== null) {
    return [sql<SqlBool>`${k} >= ${first.value} and (${k} > ${first.value} or (${k} = ${first.value} and ${rest}))`, sql<SqlBool>`${k} is null`]
  }
  return [after(first, rest)]
}

/** The rows after the position on `key`, or equal on it and after on the keys that follow (`rest`). */
function after (key: KeysetKey, rest: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  const k = key.expression
  if (key.value === null) {
    // NULL is last ascending (nothing is after it) and first descending (every value is after it).
    return key.direction === 'asc'
      ? sql<SqlBool>`${k} is null and ${rest}`
      : sql<SqlBool>`(${k} is not null or (${k} is null and ${rest}))`
  }
  return key.direction === 'asc'
    ? sql<SqlBool>`(${k} > ${key.value} or ${k} is null or (${k} = ${key.value} and ${rest}))`
    : sql<SqlBool>`${k} <= ${key.value} and (${k} < ${key.value} or (${k} = ${key.value} and ${rest}))`
}
