import type { Field } from '../model/registry.js'

/**
 * The parameter a field's value is sent as. node-postgres would send a JS array as a PostgreSQL
 * array literal, so json and blocks values travel as JSON text.
 */
export function jsonColumn (field: Field, value: unknown): unknown {
  if (value === null || value === undefined) return value
  return field.type === 'json' || field.type === 'blocks' ? JSON.stringify(value) : value
}

/** Validated values keyed by attribute name → a row keyed by column name. */
export function toColumns (model: { writableFields: ReadonlyMap<string, Field> }, values: Record<string, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(values)) {
    const field = model.writableFields.get(name)
    if (field !== undefined) row[field.column] = jsonColumn(field, value)
  }
  return row
}
