import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely'
import type { ContentType } from '../model/registry.js'
import type { PublicationFilter, Status } from '../query/index.js'

export interface DocumentScope {
  status: Status
  /** One locale, several, or null for every locale. */
  locale: string | readonly string[] | null
  /**
   * Locales to serve, in order, when a document has no version in `locale` (the `i18n.fallbacks`
   * option). Empty: no fallback.
   */
  fallbacks?: readonly string[]
  /** Strapi 5's publication cohort (`publicationFilter`); absent or null: every row of `status`. */
  publicationFilter?: PublicationFilter | null
}

function statusCondition (model: ContentType, status: Status, alias: string): RawBuilder<SqlBool> | null {
  if (!model.draftAndPublish) return null
  const published = sql.ref(`${alias}.published_at`)
  return status === 'draft' ? sql<SqlBool>`${published} is null` : sql<SqlBool>`${published} is not null`
}

/**
 * The condition a publication cohort adds on the rows of `status` under `alias` (null: none), as
 * Strapi 5 decides it (@strapi/utils' publication filter): whether a row of the other version
 * exists for the same document, in the same locale (pair-scoped modes) or in any locale (the
 * `-document` modes), and for `modified`/`unmodified` whether the draft was updated after the
 * published version. A cohort that cannot hold in `status` (a never-published row that is
 * published, a published-only mode read as drafts) matches nothing:
 *
 * ```sql
 * -- has-published-version, status=draft, localized
 * exists (select 1 from "articles" as t_version where t_version.document_id = t.document_id
 *   and t_version.locale is not distinct from t.locale and t_version.published_at is not null)
 * -- modified, status=published
 * exists (select 1 from "articles" as t_version where ... and t_version.published_at is null
 *   and t_version.updated_at > t.updated_at)
 * ```
 */
export function cohortCondition (model: ContentType, mode: PublicationFilter, status: Status, alias: string): RawBuilder<SqlBool> | null {
  if (!model.draftAndPublish) return null
  const draft = status === 'draft'
  const never = mode === 'never-published' || mode === 'never-published-document'
  const publishedOnly = mode === 'published-without-draft' || mode === 'published-with-draft'
  if ((never && !draft) || (publishedOnly && draft)) return sql<SqlBool>`false`
  const v = `${alias}_version`
  const ref = (a: string, column: string): RawBuilder<unknown> => sql.ref(`${a}.${column}`)
  const perLocale = model.localized && !mode.endsWith('-document')
  // The other version: published rows when reading drafts, draft rows when reading published ones.
  const other = draft ? sql`${ref(v, 'published_at')} is not null` : sql`${ref(v, 'published_at')} is null`
  const locale = perLocale ? sql` and ${ref(v, 'locale')} is not distinct from ${ref(alias, 'locale')}` : sql``
  // The draft's and the published row's updated_at, whichever of the two `alias` is.
  const [draftRow, publishedRow] = draft ? [alias, v] : [v, alias]
  const newer = mode === 'modified'
    ? sql` and ${ref(draftRow, 'updated_at')} > ${ref(publishedRow, 'updated_at')}`
    : mode === 'unmodified' ? sql` and ${ref(draftRow, 'updated_at')} <= ${ref(publishedRow, 'updated_at')}` : sql``
  const exists = sql`exists (select 1 from ${sql.table(model.tableName)} as ${sql.id(v)}
    where ${ref(v, 'document_id')} = ${ref(alias, 'document_id')}${locale} and ${other}${newer})`
  return never || mode === 'published-without-draft' ? sql<SqlBool>`not ${exists}` : sql<SqlBool>`${exists}`
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
 * - a publication cohort (`publicationFilter`) adds its `exists` (see `cohortCondition`);
 * - localized types: `locale = $1` (`locale in ($1, $2)` for a list of locales) unless every
 *   locale was asked for;
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
  const cohort = scope.publicationFilter == null ? null : cohortCondition(model, scope.publicationFilter, scope.status, alias)
  if (cohort !== null) conditions.push(cohort)
  if (!model.localized || scope.locale === null) return conditions
  if (typeof scope.locale !== 'string') {
    conditions.push(eb(`${alias}.locale`, 'in', scope.locale))
    return conditions
  }
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
