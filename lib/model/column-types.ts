import type { Field } from './registry.js'

/**
 * The PostgreSQL type of each field. This is the one contract shared by schema sync (which
 * creates the columns), the write path (which casts values into them) and the read path (which
 * formats them as JSON), so the three never disagree.
 *
 * Strings keep Strapi's varchar(255) unless the attribute allows longer values; decimals are
 * unconstrained `numeric` (Strapi's decimal(10,2) silently rounds); timestamps keep millisecond
 * precision, the precision of the ISO strings the API returns.
 */
export function columnType (field: Field): string {
  if (field.system) {
    switch (field.name) {
      case 'id': return 'serial'
      case 'documentId': return 'varchar(255)'
      case 'locale': return 'varchar(255)'
      default: return 'timestamp(3) with time zone'
    }
  }
  const attribute = field.attribute as { maxLength?: number } | null
  switch (field.type) {
    case 'string':
    case 'email':
    case 'uid':
    case 'enumeration': {
      const max = attribute?.maxLength
      return max !== undefined && max > 255 ? `varchar(${max})` : 'varchar(255)'
    }
    case 'password': return 'varchar(255)'
    case 'text':
    case 'richtext': return 'text'
    case 'blocks':
    case 'json': return 'jsonb'
    case 'integer': return 'integer'
    case 'biginteger': return 'bigint'
    case 'float': return 'double precision'
    case 'decimal': return 'numeric'
    case 'date': return 'date'
    case 'time': return 'time(3) without time zone'
    case 'datetime':
    case 'timestamp': return 'timestamp(3) with time zone'
    case 'boolean': return 'boolean'
  }
}

/** Largest string length a varchar column of this field accepts, or undefined for text columns. */
export function varcharLimit (field: Field): number | undefined {
  const match = /^varchar\((\d+)\)$/.exec(columnType(field))
  return match === null ? undefined : Number(match[1])
}
