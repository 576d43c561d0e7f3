/**
 * One spelling for PostgreSQL types, so that the type a model asks for (`columnType()`) and the
 * type the catalog reports (`format_type()`) compare as strings.
 */

const ALIASES: ReadonlyArray<[RegExp, string]> = [
  [/^character varying/, 'varchar'],
  [/^timestamptz/, 'timestamp with time zone'],
  [/^timetz/, 'time with time zone'],
  [/^int4$|^int$/, 'integer'],
  [/^int8$/, 'bigint'],
  [/^int2$/, 'smallint'],
  [/^float8$/, 'double precision'],
  [/^bool$/, 'boolean'],
  [/^decimal/, 'numeric'],
  [/^serial4$/, 'serial'],
  [/^serial8$/, 'bigserial']
]

/**
 * `character varying(255)` -> `varchar(255)`, `TIMESTAMPTZ(3)` -> `timestamp(3) with time zone`,
 * `time(3)` -> `time(3) without time zone`: the spelling `format_type()` uses, except that
 * varchar keeps its short name because `columnType()` uses it.
 */
export function normalizeType (type: string): string {
  let t = type.trim().toLowerCase().replace(/\s+/g, ' ').replace(/\s*\(\s*/g, '(').replace(/\s*\)/g, ')').replace(/\s*,\s*/g, ',')
  for (const [pattern, replacement] of ALIASES) t = t.replace(pattern, replacement)
  // `timestamptz(3)` became `timestamp with time zone(3)`: move the precision where PostgreSQL prints it.
  const moved = /^(timestamp|time) (with|without) time zone\((\d+)\)$/.exec(t)
  if (moved !== null) return `${moved[1]}(${moved[3]}) ${moved[2]} time zone`
  if (/^(timestamp|time)(\(\d+\))?$/.test(t)) return `${t} without time zone`
  return t
}

/** The type a column is stored as: `serial` is an `integer` column with a sequence default. */
export function storageType (type: string): string {
  const t = normalizeType(type)
  if (t === 'serial') return 'integer'
  if (t === 'bigserial') return 'bigint'
  return t
}

/** Whether a column of type `current` already is what the model asks for with `desired`. */
export function sameType (desired: string, current: string): boolean {
  return storageType(desired) === storageType(current)
}

const VARCHAR = /^varchar(?:\((\d+)\))?$/

/**
 * Changes PostgreSQL makes without rewriting the table and without losing any value: a longer
 * varchar, or varchar to text. Sync treats them as additive (a model raising `maxLength` should
 * not need `allowDestructive`); every other type change is destructive.
 */
export function isWidening (current: string, desired: string): boolean {
  const from = VARCHAR.exec(storageType(current))
  if (from === null) return false
  const to = storageType(desired)
  if (to === 'text') return true
  const target = VARCHAR.exec(to)
  if (target === null) return false
  if (target[1] === undefined) return true
  return from[1] !== undefined && Number(target[1]) >= Number(from[1])
}
