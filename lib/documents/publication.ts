import { sql, type Transaction } from 'kysely'
import type { CompileOptions, FindSpec } from '../compiler/find.js'
import type { Association } from '../model/associations.js'
import { FILE_UID } from '../model/associations.js'
import type { ContentType, Registry } from '../model/registry.js'
import { parseLocale, type LocaleSettings, type Status } from '../query/index.js'
import type { PopulateNode, PopulateSelection, PopulateTree } from '../query/populate.js'
import { readInTransaction } from './reader.js'
import { validateInput } from './validate-input.js'
import { copyRowAssociations, mirrorIncomingLinks } from './versions.js'

/**
 * Draft & publish across the rows of a document: one draft row and at most one published row
 * per locale. The document service composes these inside its transactions.
 */

export interface VersionContext {
  registry: Registry
  compile: CompileOptions
  i18n: LocaleSettings
}

/**
 * Whether a write goes to the draft only (`status: 'draft'` on a draft & publish type): it is
 * validated with Strapi's draft rules, which let required values wait until publication, and
 * its unique values are checked against other drafts.
 */
export function draftOnly (model: ContentType, status: Status): boolean {
  return model.draftAndPublish && status === 'draft'
}

/**
 * Publishes the draft: the published row takes the draft's values. Unlike Strapi, which deletes
 * the published row and inserts a new one, the row is updated in place when it exists, so its
 * id, and every relation other documents hold to it, survive republishing.
 *
 * ```sql
 * update "articles" as p set "title" = d."title", ..., "published_at" = $1
 * from "articles" as d
 * where p.document_id = $2 and p.published_at is not null and d.document_id = $2 and d.published_at is null
 * ```
 */
export async function publishVersion (
  trx: Transaction<any>, model: ContentType, ctx: VersionContext, documentId: string, locale: string | null, now: string
): Promise<void> {
  const copied = [...model.fields.values()]
    .filter((f) => !['id', 'documentId', 'locale', 'publishedAt'].includes(f.name))
    .map((f) => f.column)
  const version = (alias: string, published: boolean) => (eb: any) => {
    const conditions = [eb(`${alias}.document_id`, '=', documentId), eb(`${alias}.published_at`, published ? 'is not' : 'is', null)]
    if (model.localized && locale !== null) conditions.push(eb(`${alias}.locale`, '=', locale))
    return eb.and(conditions)
  }
  const updated = await trx.updateTable(`${model.tableName} as p`)
    .from(`${model.tableName} as d`)
    .set(Object.fromEntries([...copied.map((c) => [c, sql.ref(`d.${c}`)]), ['published_at', now]]))
    .where(version('p', true))
    .where(version('d', false))
    .executeTakeFirst()
  let created = false
  if (Number(updated.numUpdatedRows) === 0) {
    const columns = [...copied, 'document_id', ...(model.localized ? ['locale'] : [])]
    const draft = trx.selectFrom(`${model.tableName} as d`).where(version('d', false))
      .select([...columns.map((c) => sql.ref(`d.${c}`).as(c)), sql`${now}::timestamptz`.as('published_at')])
    await trx.insertInto(model.tableName).columns([...columns, 'published_at']).expression(draft).execute()
    created = true
  }
  const pair = await versionPair(trx, model, documentId, locale)
  if (pair.draft === null || pair.published === null) return
  const [draftRow, publishedRow] = [pair.draft, pair.published]
  await copyRowAssociations(trx, ctx.registry, model, draftRow, publishedRow)
  if (created) await mirrorIncomingLinks(trx, ctx.registry, model, draftRow, publishedRow)
  // Shared (non-localized) attributes reach the other locales' published versions with this publish.
  const shared = [...model.writableFields.values()].filter((f) => !f.localized).map((f) => f.column)
  if (model.localized && locale !== null && shared.length > 0) {
    await trx.updateTable(`${model.tableName} as o`).from(`${model.tableName} as p`)
      .set(Object.fromEntries(shared.map((c) => [c, sql.ref(`p.${c}`)])))
      .where('p.id', '=', publishedRow)
      .where('o.document_id', '=', documentId).where('o.locale', '<>', locale).where('o.published_at', 'is not', null)
      .execute()
  }
}

/**
 * Discards a draft's edits: the draft row takes the published row's values (its timestamps
 * included) and a copy of its relations, components and media. Both rows keep their ids.
 *
 * ```sql
 * update "articles" as d set "title" = p."title", ..., "updated_at" = p."updated_at" from "articles" as p where d.id = $1 and p.id = $2;
 * delete from "articles_tags_lnk" where "article_id" = $1;
 * insert into "articles_tags_lnk" ("article_id", "tag_id", ...) select $1, "tag_id", ... from "articles_tags_lnk" where "article_id" = $2 order by id
 * ```
 */
export async function revertDraft (
  trx: Transaction<any>, model: ContentType, ctx: VersionContext, pair: { draft: number, published: number }
): Promise<void> {
  const columns = [...model.fields.values()].filter((f) => !f.system || f.name === 'createdAt' || f.name === 'updatedAt').map((f) => f.column)
  await trx.updateTable(`${model.tableName} as d`).from(`${model.tableName} as p`)
    .set(Object.fromEntries(columns.map((c) => [c, sql.ref(`p.${c}`)])))
    .where('d.id', '=', pair.draft).where('p.id', '=', pair.published).execute()
  await copyRowAssociations(trx, ctx.registry, model, pair.published, pair.draft)
}

/**
 * A draft may lack required values (Strapi's draft rules); publishing it needs them all. The
 * draft is read back as the API would render it, with the relations, media and components that
 * carry a rule (`required`, `min`, `max`), and validated as a creation, as Strapi validates the
 * draft it publishes.
 */
export async function assertPublishable (trx: Transaction<any>, model: ContentType, ctx: VersionContext, documentId: string, locale: string | null): Promise<void> {
  const fields = [...model.writableFields.values()].filter((f) => !f.hidden)
  const populate = constrainedAssociations(model, ctx.registry)
  const spec: FindSpec = { status: 'draft', locale, fields, filters: null, sort: [], populate }
  const data = await readInTransaction(trx, model, spec, documentId, ctx.compile)
  if (data === null) return
  const draft = JSON.parse(data) as Record<string, unknown>
  const names = [...fields.map((f) => f.name), ...populate.keys()]
  validateInput(model, Object.fromEntries(names.map((name) => [name, draft[name]])), { partial: false })
}

/**
 * The writable relations, media, components and dynamic zones of a model that have a rule to
 * check, as populate nodes (built directly: private attributes count too). Everything else is
 * left out of the read.
 *
 * ```sql
 * select ..., (select coalesce(json_agg(...), '[]'::json) from "components_shared_quotes" ...) as "quotes"
 * ```
 */
function constrainedAssociations (model: ContentType, registry: Registry): PopulateTree {
  const tree: PopulateTree = new Map()
  const all = (): PopulateSelection => ({ fields: null, filters: null, sort: [], populate: new Map(), start: null, limit: null })
  for (const association of model.associations.values()) {
    const attribute = model.attributes[association.name] as { required?: boolean, min?: number, max?: number, writable?: boolean }
    if (attribute.writable === false || (attribute.required !== true && attribute.min === undefined && attribute.max === undefined)) continue
    const node = populateNode(association, registry, all)
    if (node !== null) tree.set(association.name, node)
  }
  return tree
}

function populateNode (association: Association, registry: Registry, all: () => PopulateSelection): PopulateNode | null {
  switch (association.kind) {
    case 'relation': {
      const target = registry.get(association.target)
      return target === undefined ? null : { kind: 'relation', association, target, count: false, ...all() }
    }
    case 'media':
      return { kind: 'media', association, target: registry.get(FILE_UID)!, count: false, ...all() }
    case 'component':
      return { kind: 'component', association, target: registry.components.get(association.component)!, ...all() }
    case 'dynamiczone':
      return {
        kind: 'dynamiczone',
        association,
        components: new Map(association.components.map((uid) => [uid, { target: registry.components.get(uid)!, ...all() }]))
      }
  }
}

/** Locales (null for non-localized types) in which the document has a draft (or a published) row. */
export async function versionLocales (
  trx: Transaction<any>, model: ContentType, ctx: VersionContext, documentId: string, locale: string | undefined, drafts: boolean
): Promise<Array<string | null>> {
  if (!model.localized) return (await versionRows(trx, model, ctx, documentId, undefined, !drafts)).length > 0 ? [null] : []
  const wanted = parseLocale(model, locale, ctx.i18n, true)
  let query = trx.selectFrom(model.tableName).select('locale').distinct().where('document_id', '=', documentId)
    .where('published_at', drafts ? 'is' : 'is not', null)
  if (wanted !== null) query = query.where('locale', '=', wanted)
  return (await query.execute()).map((r) => r.locale as string)
}

/** The draft (or published) rows of a document in one locale, or all locales with '*'. */
export async function versionRows (
  trx: Transaction<any>, model: ContentType, ctx: VersionContext, documentId: string, locale: string | undefined, published: boolean
): Promise<number[]> {
  const wanted = parseLocale(model, locale, ctx.i18n, true)
  let query = trx.selectFrom(model.tableName).select('id').where('document_id', '=', documentId)
    .where('published_at', published ? 'is not' : 'is', null)
  if (model.localized && wanted !== null) query = query.where('locale', '=', wanted)
  return (await query.execute()).map((r) => r.id as number)
}

/** The draft and published row ids of a document in one locale. */
export async function versionPair (
  trx: Transaction<any>, model: ContentType, documentId: string, locale: string | null
): Promise<{ draft: number | null, published: number | null }> {
  let query = trx.selectFrom(model.tableName).select(['id', 'published_at']).where('document_id', '=', documentId)
  if (model.localized && locale !== null) query = query.where('locale', '=', locale)
  const rows = await query.execute()
  return {
    draft: (rows.find((r) => r.published_at === null)?.id as number | undefined) ?? null,
    published: (rows.find((r) => r.published_at !== null)?.id as number | undefined) ?? null
  }
}
