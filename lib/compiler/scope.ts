import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { ContentType } from '../model/registry.js'
import type { Status } from '../query/index.js'

export interface DocumentScope {
  status: Status
  /** One locale, or null for every locale. */
  locale: string | null
}

/**
 * The rows a request may see, as Strapi v5 stores documents: one row per (documentId, locale,
 * version), where the draft version has `published_at IS NULL`.
 * - draft & publish types: `published` reads published rows, `draft` reads draft rows;
 * - other types keep a single, always-published row per locale, so status does not apply;
 * - localized types: `locale = $1` unless every locale was asked for.
 */
export function scopeConditions (
  model: ContentType, scope: DocumentScope, alias: string, eb: ExpressionBuilder<any, any>
): Array<Expression<SqlBool>> {
  const conditions: Array<Expression<SqlBool>> = []
  if (model.draftAndPublish) {
    const published = sql.ref(`${alias}.published_at`)
    conditions.push(scope.status === 'draft' ? sql<SqlBool>`${published} is null` : sql<SqlBool>`${published} is not null`)
  }
  if (model.localized && scope.locale !== null) conditions.push(eb(`${alias}.locale`, '=', scope.locale))
  return conditions
}
