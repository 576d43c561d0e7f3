import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely'
import type { Field } from '../model/registry.js'

/** ISO 8601 in UTC with milliseconds, the format Strapi returns for every timestamp. */
const ISO_UTC = sql.lit('YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
const TIME = sql.lit('HH24:MI:SS.MS')

/**
 * The SQL expression that renders one field as the API returns it, so PostgreSQL can build the
 * response JSON itself (no parse and re-stringify in Node):
 *
 * | field type            | expression                                                    | JSON      |
 * |-----------------------|---------------------------------------------------------------|-----------|
 * | datetime, timestamps  | `to_char(t.col at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` | string |
 * | time                  | `to_char(t.col::interval, 'HH24:MI:SS.MS')`                   | string    |
 * | date                  | `t.col::text` (`YYYY-MM-DD`)                                  | string    |
 * | biginteger            | `t.col::text`                                                 | string    |
 * | anything else         | `t.col`                                                       | native    |
 */
export function outputExpression (field: Field, alias: string): RawBuilder<unknown> {
  return renderExpression(field, sql.ref(`${alias}.${field.column}`))
}

/** `outputExpression` of any expression holding a value of the field's type (an aggregate's). */
export function renderExpression (field: Field, ref: RawBuilder<unknown>): RawBuilder<unknown> {
  switch (field.type) {
    case 'datetime':
    case 'timestamp':
      return sql`to_char(${ref} at time zone 'UTC', ${ISO_UTC})`
    case 'time':
      return sql`to_char(${ref}::interval, ${TIME})`
    case 'date':
    case 'biginteger':
      return sql`${ref}::text`
    default:
      return sql`${ref}`
  }
}

/** `<expression> as "<api name>"` for each field: the select list of a document. */
export function projection (fields: readonly Field[], alias: string): Array<AliasedRawBuilder<unknown, string>> {
  return fields.map((field) => outputExpression(field, alias).as(field.name))
}
