import { createHash } from 'node:crypto'

/** PostgreSQL truncates identifiers at 63 bytes; longer names are shortened with a stable hash suffix. */
const MAX_IDENTIFIER = 63

/** `publishDate` -> `publish_date`, `rich-text` -> `rich_text`, as Strapi names its columns. */
export function snakeCase (name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[-\s.]+/g, '_')
    .toLowerCase()
}

/** Shortens an identifier past PostgreSQL's limit, keeping it unique and deterministic. */
export function identifier (name: string): string {
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER) return name
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8)
  return `${name.slice(0, MAX_IDENTIFIER - 9)}_${hash}`
}

export const columnName = (attribute: string): string => identifier(snakeCase(attribute))
export const indexName = (table: string, columns: readonly string[], suffix: 'idx' | 'unique'): string =>
  identifier(`${table}_${columns.join('_')}_${suffix}`)
