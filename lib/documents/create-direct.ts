import { CompiledQuery, type Transaction } from 'kysely'
import type { FindSpec } from '../compiler/find.js'
import type { RelationAssociation } from '../model/associations.js'
import { quoteIdent } from '../model/naming.js'
import type { ContentType, Field } from '../model/registry.js'
import { LruCache } from '../lru-cache.js'
import { APPENDED_BASE, nextLinkId } from './list-positions.js'
import { toColumns } from './columns.js'
import { draftOnly } from './publication.js'
import type { RelationInput, RelationRef } from './relation-input.js'
import type { PreparedWrite, ServiceContext } from './types.js'
import type { ChangeAction } from './change-events.js'
import { writtenInStatement } from './reader.js'
import { uniqueLockKey, uniqueValues } from './unique.js'

/**
 * The direct create: a new document whose associations are relations only (the common case:
 * `{ title, category, authors: [...] }`), written in two statements, the second of which also
 * renders the answer when it needs none of the links (no populate), where
 * the general path (write-document.ts's `insertVersion`) sends one or more per relation and per
 * version. Both paths write the same rows and links; the direct one returns null (having
 * written nothing it leaves behind) whenever the general path's answer could differ: a relation
 * target missing (the general path then answers its 400), or a unique value taken (it then
 * answers its 400, or gives a generated uid its `-1` suffix).
 *
 * ```sql
 * -- 1. the locks, as lockWrite and enforceUnique take them, in one statement, which also reads the targets' rows
 * select * from (select 0 as "k", "id", "document_id", "locale" from "authors"
 *   where "document_id" = any($1) or "document_id" in (select "document_id" from "authors" where "id" = any($2))
 *   order by "id" for share) as "t0"
 * union all select * from (select 1, ... from "categories" ... for share) as "t1"
 * union all select -1, null, pg_advisory_xact_lock(hashtext($5), hashtext($6))::text, null;
 * -- 2. every row (the draft, and its published copy) and every link of both, at the end of each target's list,
 * --    the answer (read from the rows the insert returns: the table shows none of the statement's own writes),
 * --    whether each unique value was taken before this statement, and the change's notification to other
 * --    instances (with notifications on), which the transaction then does not send again
 * with "rows" as (insert into "articles" (...) values ($4, ..., null), ($4, ..., $12) returning *),
 *   "p0" as materialized (select nextval(pg_get_serial_sequence('"articles_authors_lnk"', 'id'))::integer as "k", u."target", u."position", u."n"
 *     from unnest($13::integer[], $14::double precision[]) with ordinality as u("target", "position", "n")),
 *   "l0" as (insert into "articles_authors_lnk" ("id", "article_id", "author_id", "author_ord", "article_ord")
 *     select case when r."id" = (select min("id") from "rows") then p."k" else nextval(...)::integer end,
 *       r."id", p."target", p."position", 2147483648 + p."k"
 *     from "rows" as r cross join "p0" as p order by r."id", p."n")
 * select (select row_to_json(r)::text as "data" from (select "t"."id" as "id", ... from "rows" as "t"
 *     where ("t"."published_at" is not null and "t"."locale" = $1) and "t"."document_id" = $2 order by "t"."id" asc limit $3) as "r") as "data",
 *   exists (select 1 from "articles" as t where t."slug" = $15 and t."locale" = $16) as "u0"
 *   from (select pg_notify('content_api_' || md5(current_schema()), $17)) as "n"
 * ```
 *
 * The related documents are locked `for share` (document-locks.ts): creates linking the same
 * category run side by side, each link taking a position of its own (list-positions.ts), while a
 * writer of the category waits for them. The first statement's locks come before the second
 * statement's snapshot, so the uniqueness check sees every writer that held the value's lock
 * before (READ COMMITTED takes a snapshot per statement). Statement texts depend on the write's
 * shape only (which columns, relations and unique values), never on how many documents a
 * relation names (arrays travel as one parameter each), so each runs named on the plugin's pool.
 */

/** One relation of the write, resolved: the target rows to link, each with its position in the list. */
interface PlannedRelation {
  association: RelationAssociation
  target: ContentType
  refs: RelationRef[]
  input: RelationInput & { mode: 'set' }
}

/**
 * Statement texts by model (or by the answer's read, which is of one model and one app), then by
 * the write's shape: a text is fully determined by its model or read and key (two apps may each
 * have an `articles` table with other columns or links).
 */
const texts = new WeakMap<object, LruCache<string, string>>()

/** The text kept under `key` for `owner` (a model, or the read the statement ends with), or `build()`'s, kept now. */
function textOf (owner: ContentType | CompiledQuery, key: string, build: () => string): string {
  let cache = texts.get(owner)
  if (cache === undefined) texts.set(owner, cache = new LruCache<string, string>(100))
  let text = cache.get(key)
  if (text === undefined) cache.set(key, text = build())
  return text
}

/**
 * The relations of a write the direct create can take, or null: every association is a
 * relation to a registered type, replacing the list (`set`, or `connect` without positions or
 * `disconnect`, which on a new document is the same), not exclusive (linking elsewhere unlinks
 * there), without row-level conditions on the target. No SQL.
 */
function directRelations (ctx: ServiceContext, write: PreparedWrite): PlannedRelation[] | null {
  const planned: PlannedRelation[] = []
  for (const [association, input, visible] of write.associations) {
    if (association.kind !== 'relation' || visible !== null || association.exclusive) return null
    const target = ctx.registry.get(association.target)
    if (target === undefined) return null
    const relation = input as RelationInput
    let set: RelationInput & { mode: 'set' }
    if (relation.mode === 'set') set = relation
    else if (relation.disconnect.length === 0 && relation.connect.every((r) => r.position === undefined)) set = { mode: 'set', items: relation.connect }
    else return null
    planned.push({ association, target, refs: set.items, input: set })
  }
  return planned
}

/**
 * Writes a new document's rows and relation links (see the top of this file), or returns null
 * with nothing written for the general path to take the write. The caller checks the row-level
 * conditions afterwards, as for the general path. `answer`: the read of the document the caller
 * answers with, when its statement may be kept; `data` is its rendering when the insert statement
 * could render it, or null: the caller then reads the document back, as for the general path.
 */
export async function createDirect (
  trx: Transaction<any>, model: ContentType, ctx: ServiceContext, documentId: string, write: PreparedWrite, action: ChangeAction,
  answer: FindSpec | null
): Promise<{ data: string | null } | null> {
  const relations = directRelations(ctx, write)
  if (relations === null) return null
  const unique = uniqueValues(model, write.values)

  // 1. The locks, and the rows of every document the relations name.
  const tables = [...new Set(relations.map((r) => r.target.tableName))].sort()
  const rows = new Map<string, Array<{ id: number, document_id: string, locale: string | null }>>()
  if (tables.length > 0 || unique.length > 0) {
    const parameters: unknown[] = []
    const localized: boolean[] = []
    for (const table of tables) {
      const named = relations.filter((r) => r.target.tableName === table).flatMap((r) => r.refs)
      parameters.push(named.flatMap((r) => r.documentId ?? []), named.flatMap((r) => r.documentId === undefined && r.id !== undefined ? [r.id] : []))
      localized.push(relations.find((r) => r.target.tableName === table)!.target.localized)
    }
    for (const [field, value] of unique) parameters.push(...uniqueLockKey(model, field, String(value)))
    const text = textOf(model, `lock\0${tables.join(',')}\0${unique.length}`, () => lockText(tables, localized, unique.length))
    ctx.prepared?.add(text)
    const locked = await trx.executeQuery(CompiledQuery.raw(text, parameters)) as { rows: Array<{ k: number, id: number, document_id: string, locale: string | null }> }
    for (const row of locked.rows) {
      if (row.k < 0) continue
      const table = tables[row.k]
      rows.set(table, [...rows.get(table) ?? [], row])
    }
  }

  // The rows each relation links, by the general path's rules (write-relations.ts's resolveTargets):
  // every version of each named document in the locale that applies; one document for a to-one.
  const links: Array<{ relation: PlannedRelation, targets: number[], positions: number[] }> = []
  for (const relation of relations) {
    const candidates = rows.get(relation.target.tableName) ?? []
    const documentOf = (ref: RelationRef): string | undefined => ref.documentId ?? candidates.find((r) => r.id === ref.id)?.document_id
    const versions = new Map<string, number[]>()
    for (const ref of relation.refs) {
      const document = documentOf(ref)
      const locale = relation.target.localized ? ref.locale ?? write.locale ?? ctx.i18n.defaultLocale : null
      const matching = document === undefined ? [] : candidates.filter((r) => r.document_id === document && (locale === null || r.locale === locale)).map((r) => r.id)
      // A missing target: the general path answers its 400 (nothing is written yet).
      if (matching.length === 0) return null
      versions.set(document!, matching)
    }
    let documents = [...new Set(relation.refs.map((ref) => documentOf(ref)!))]
    if (!relation.association.toMany && documents.length > 1) documents = documents.slice(-1)
    const targets: number[] = []
    const positions: number[] = []
    documents.forEach((document, index) => {
      for (const row of versions.get(document)!.sort((a, b) => a - b)) {
        targets.push(row)
        positions.push(index + 1)
      }
    })
    if (targets.length > 0) links.push({ relation, targets, positions })
  }

  // 2. The rows and links, the answer, and whether a unique value was taken.
  const read = answer === null ? null : writtenInStatement(model, answer, documentId, ctx, 'rows')
  const now = new Date().toISOString()
  const columns: Record<string, unknown> = { ...toColumns(model, write.values), document_id: documentId, created_at: now, updated_at: now }
  if (model.localized) columns.locale = write.locale
  const names = Object.keys(columns)
  // The read's parameters first: its compiled text numbers them from $1.
  const parameters: unknown[] = [...read?.parameters ?? [], ...Object.values(columns)]
  const published = !model.draftAndPublish || write.status === 'published'
  if (published) parameters.push(now)
  for (const { targets, positions } of links) parameters.push(targets, positions)
  for (const [, value] of unique) parameters.push(value)
  if (model.localized && unique.length > 0) parameters.push(write.locale)
  // The change event, announced to other instances by this statement rather than one of its own.
  const announcement = ctx.changes.announcement(trx, { uid: model.uid, action, documentId }, parameters.length + 1)
  if (announcement !== null) parameters.push(...announcement.parameters)
  const key = [
    'insert', names.join(','), model.draftAndPublish, published,
    links.map((l) => l.relation.association.name).join(','),
    unique.map(([f]) => f.column).join(','), draftOnly(model, write.status), announcement?.text ?? ''
  ].join('\0')
  const text = textOf(read?.statement ?? model, key, () => insertText(
    model, names, published, links.map((l) => l.relation.association), unique.map(([f]) => f), draftOnly(model, write.status),
    announcement?.text ?? null, read?.statement ?? null
  ))
  ctx.prepared?.add(text)
  const result = await trx.executeQuery(CompiledQuery.raw(text, parameters)) as { rows: Array<{ data?: string | null } & Record<`u${number}`, boolean>> }
  const { data = null, ...taken } = result.rows[0] ?? {}
  if (!Object.values(taken).some((t) => t)) return { data }
  // A unique value was taken: undo (the links go with the rows, by their foreign keys), and let
  // the general path answer its 400 or suffix a generated uid.
  await trx.deleteFrom(model.tableName).where('document_id', '=', documentId).execute()
  return null
}

/**
 * The first statement's text: the rows of each related table that the write names, locked in
 * id order (`$1`, `$2`: the documentIds and the ids named, per table), then an advisory lock per
 * unique value (two parameters each, `uniqueLockKey`).
 */
function lockText (tables: readonly string[], localized: readonly boolean[], uniqueCount: number): string {
  const branches = tables.map((table, index) => {
    const t = quoteIdent(table)
    const [documentIds, ids] = [2 * index + 1, 2 * index + 2]
    return `select * from (select ${index} as "k", "id", "document_id"::text as "document_id", ${localized[index] ? '"locale"::text' : 'null::text'} as "locale" from ${t} ` +
      `where "document_id" = any($${documentIds}::text[]) or "document_id" in (select "document_id" from ${t} where "id" = any($${ids}::integer[])) ` +
      `order by "id" for share) as "t${index}"`
  })
  for (let i = 0; i < uniqueCount; i++) {
    const at = 2 * tables.length + 2 * i
    branches.push(`select -1 as "k", null::integer as "id", pg_advisory_xact_lock(hashtext($${at + 1}), hashtext($${at + 2}))::text as "document_id", null::text as "locale"`)
  }
  return branches.join(' union all ')
}

/**
 * The second statement's text (see the top of this file). `read`: the answer's compiled read over
 * `"rows"`, whose parameters come first (`$1`...), or null: no answer, and the rows return their
 * ids only.
 */
function insertText (
  model: ContentType, names: string[], published: boolean, relations: RelationAssociation[], unique: Field[], draftsOnly: boolean,
  announcement: string | null, read: CompiledQuery | null
): string {
  const table = quoteIdent(model.tableName)
  const first = (read?.parameters.length ?? 0) + 1
  const values = names.map((_, i) => `$${first + i}`).join(', ')
  const now = `$${first + names.length}`
  const rowValues = model.draftAndPublish
    ? published ? `(${values}, null), (${values}, ${now})` : `(${values}, null)`
    : `(${values}, ${now})`
  let next = first + names.length + (published ? 1 : 0)
  const returning = read === null ? '"id"' : '*'
  const ctes = [`"rows" as (insert into ${table} (${[...names, 'published_at'].map(quoteIdent).join(', ')}) values ${rowValues} returning ${returning})`]
  relations.forEach((association, index) => {
    const { table: linkTable, sourceColumn, targetColumn, orderColumn, otherOrderColumn } = association.link
    const link = quoteIdent(linkTable)
    const columns = [sourceColumn, targetColumn, ...(orderColumn === null ? [] : [orderColumn]), otherOrderColumn].map(quoteIdent).join(', ')
    // One position per target, drawn once (the materialized "p"): each target's list gets the
    // document at one place, whatever the version (list-positions.ts). The first row's links take
    // the drawn values as ids, the other row's links new ones.
    const id = nextLinkId(linkTable)
    ctes.push(`"p${index}" as materialized (select ${id} as "k", u."target", u."position", u."n" ` +
      `from unnest($${next}::integer[], $${next + 1}::double precision[]) with ordinality as u("target", "position", "n"))`)
    ctes.push(`"l${index}" as (insert into ${link} ("id", ${columns}) ` +
      `select case when r."id" = (select min("id") from "rows") then p."k" else ${id} end, r."id", p."target", ${orderColumn === null ? '' : 'p."position", '}${APPENDED_BASE} + p."k" ` +
      `from "rows" as r cross join "p${index}" as p order by r."id", p."n")`)
    next += 2
  })
  const localeAt = next + unique.length
  const checks = unique.map((field, index) => {
    const scope = [`t.${quoteIdent(field.column)} = $${next + index}`]
    if (model.localized) scope.push(`t."locale" = $${localeAt}`)
    if (draftsOnly) scope.push('t."published_at" is null')
    return `exists (select 1 from ${table} as t where ${scope.join(' and ')}) as "u${index}"`
  })
  const answer = read === null ? [] : [`(${read.sql}) as "data"`]
  // The notification's call in the from clause: evaluated once, whatever the select list holds.
  const from = announcement === null ? '' : ` from (select ${announcement}) as "n"`
  return `with ${ctes.join(', ')} select ${[...answer, ...checks].join(', ') || 'false as "u"'}${from}`
}
