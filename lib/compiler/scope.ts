import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely'
import type { ContentType } from '../model/registry.js'
import type { Status } from '../query/index.js'

export interface DocumentScope {
  status: Status
  /** One locale, or null for every locale. */
  locale: string | null
  /**
   * Locales to serve, in order, when a document has no version in `locale` (the `i18n.fallbacks`
   * option). Empty: no fallback.
   */
  fallbacks?: readonly string[]
}

function statusCondition (model: ContentType, status: Status, alias: string): RawBuilder<SqlBool> | null {
  if (!model.draftAndPublish) return null
  const published = sql.ref(`${alias}.published_at`)
  return status === 'draft' ? sql<SqlBool>`${published} is null` : sql<SqlBool>`${published} is not null`
}

/** `case <alias>.locale when $1 then 0 when $2 then 1 ... end`: a locale's rank in the chain. */
function rank (chain: readonly string[], alias: string): RawBuilder<number> {
  return sql`case ${sql.ref(`${alias}.locale`)} ${sql.join(chain.map((l, i) => sql`when ${l} then ${sql.lit(i)}`), sql` `)} end`
}

/**
 * The rows a request may see, as Strapi v5 stores documents: one row per (documentId, locale,
 * version), where the draft version has `published_at IS NULL`.
 * - draft & publish types: `published` reads published rows, `draft` reads draft rows;
 * - other types keep a single, always-published row per locale, so status does not apply;
 * - localized types: `locale = $1` unless every locale was asked for;
 * - with fallbacks, each document's row in the first locale of the chain it has:
 *
 * ```sql
 * t.locale in ($1, $2) and not exists (select 1 from "articles" as f where f.document_id = t.document_id
 *   and <same status> and f.locale in ($1, $2) and <rank of f.locale> < <rank of t.locale>)
 * ```
 */
export function scopeConditions (
  model: ContentType, scope: DocumentScope, alias: string, eb: ExpressionBuilder<any, any>
): Array<Expression<SqlBool>> {
  const conditions: Array<Expression<SqlBool>> = []
  const status = statusCondition(model, scope.status, alias)
  if (status !== null) conditions.push(status)
  if (!model.localized || scope.locale === null) return conditions
  const fallbacks = scope.fallbacks ?? []
  if (fallbacks.length === 0) {
    conditions.push(eb(`${alias}.locale`, '=', scope.locale))
    return conditions
  }
  const chain = [scope.locale, ...fallbacks]
  const inChain = (a: string): RawBuilder<SqlBool> => sql`${sql.ref(`${a}.locale`)} in (${sql.join(chain)})`
  const f = `${alias}_fallback`
  const sameStatus = statusCondition(model, scope.status, f)
  conditions.push(inChain(alias), sql<SqlBool>`not exists (select 1 from ${sql.table(model.tableName)} as ${sql.id(f)}
    where ${sql.ref(`${f}.document_id`)} = ${sql.ref(`${alias}.document_id`)}${sameStatus === null ? sql`` : sql` and ${sameStatus}`}
    and ${inChain(f)} and ${rank(chain, f)} < ${rank(chain, alias)})`)
  return conditions
}
