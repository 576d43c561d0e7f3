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

/**
 * Shortens an identifier past PostgreSQL's limit (or past `max` bytes, for a name that gets a
 * fixed suffix after it), keeping it unique and deterministic.
 */
export function identifier (name: string, max = MAX_IDENTIFIER): string {
  if (Buffer.byteLength(name) <= max) return name
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8)
  return `${name.slice(0, max - 9)}_${hash}`
}

export const columnName = (attribute: string): string => identifier(snakeCase(attribute))
export const indexName = (table: string, columns: readonly string[], suffix: 'idx' | 'unique'): string =>
  identifier(`${table}_${columns.join('_')}_${suffix}`)

/** The suffix of every version index, by which a write conflict is recognised (lib/documents/write-conflict.ts). */
export const VERSION_INDEX_SUFFIX = '_version_unique'

/** `articles_document_id_locale_version_unique`: shortened before the suffix, so a long table name keeps it. */
export const versionIndexName = (table: string, columns: readonly string[]): string =>
  `${identifier(`${table}_${columns.join('_')}`, MAX_IDENTIFIER - VERSION_INDEX_SUFFIX.length)}${VERSION_INDEX_SUFFIX}`

/** `order` -> `"order"`, `a"b` -> `"a""b"`: an identifier in SQL text the plugin writes itself. */
export function quoteIdent (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/**
 * The library's own table of row counts per content-type table, draft or published state and
 * locale, kept by triggers (lib/schema/row-counts.ts) and read for `meta.pagination.total`.
 */
export const ROW_COUNTS_TABLE = 'content_api_row_counts'

/**
 * The first line of the body of the row counts' trigger function: a body without it is an
 * earlier release's, which keeps the counts but no change count. A release whose function
 * counts changes differently must change it.
 */
export const COUNT_FUNCTION_MARK = '-- fastify-content-api: row counts and change counts'

/**
 * The library's own table of secrets generated outside production (the JWT secret and the API
 * token salt when not configured), so that every instance on one database uses the same ones
 * (lib/schema/stored-secrets.ts).
 */
export const SECRETS_TABLE = 'content_api_secrets'

/**
 * The library's own outbox of webhook deliveries, one row per event and endpoint, written in the
 * transaction of the change (lib/webhooks/outbox.ts); created only with a `webhooks` option.
 */
export const WEBHOOKS_TABLE = 'content_api_webhook_deliveries'
