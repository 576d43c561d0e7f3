import { sql, type Kysely } from 'kysely'
import { COUNT_FUNCTION_MARK, ROW_COUNTS_TABLE, indexName, quoteIdent } from '../model/naming.js'
import type { ContentType, Registry } from '../model/registry.js'
import type { TableSpec } from './desired-schema.js'

/**
 * Exact row counts of every content-type table, per draft or published state and locale, kept by
 * PostgreSQL triggers in the writer's own transaction, so that `meta.pagination.total` of an
 * unfiltered page is a sum of a few rows instead of a scan of the table (lib/compiler/find.ts).
 * Every write path keeps them: the document service, bulk SQL, seeding scripts, cascades, an
 * application's own SQL.
 *
 * Writers never wait for each other: each statement adds its net change per key (`n`: rows
 * added minus rows removed) to one of the key's rows that no other transaction holds, or to a
 * new row when all are held (see `COUNT_FUNCTION_BODY`). A count is the sum of its key's rows,
 * which are about as many as writers that once wrote the key at the same time.
 *
 * Each statement that writes rows also adds one to `changes` of one of its rows: the sum of a
 * table's `changes` counts the write statements a snapshot sees. Two snapshots with the same sum
 * see the same rows (a later snapshot sees every commit an earlier one saw), which is what lets a
 * filtered total be remembered and checked by the statement that would otherwise count it
 * (lib/compiler/row-count.ts).
 *
 * ```sql
 * create table "content_api_row_counts" ("table_name" varchar(255) not null, "published" boolean not null,
 *   "locale" varchar(255) not null, "n" bigint not null, "changes" bigint not null default 0)
 * create index "content_api_row_counts_table_name_published_locale_idx" on "content_api_row_counts" ("table_name", "published", "locale")
 * ```
 */

/** The trigger function every content-type table's triggers call. */
export const COUNT_FUNCTION = 'content_api_count_rows'

/** One trigger per event: PostgreSQL gives transition tables only to single-event triggers. */
const TRIGGERS = [
  { name: `${ROW_COUNTS_TABLE}_insert`, event: 'insert', referencing: 'referencing new table as new_rows ' },
  { name: `${ROW_COUNTS_TABLE}_update`, event: 'update', referencing: 'referencing old table as old_rows new table as new_rows ' },
  { name: `${ROW_COUNTS_TABLE}_delete`, event: 'delete', referencing: 'referencing old table as old_rows ' },
  { name: `${ROW_COUNTS_TABLE}_truncate`, event: 'truncate', referencing: '' }
] as const

export const rowCountsTable: TableSpec = {
  name: ROW_COUNTS_TABLE,
  columns: [
    { name: 'table_name', type: 'varchar(255)', nullable: false },
    { name: 'published', type: 'boolean', nullable: false },
    { name: 'locale', type: 'varchar(255)', nullable: false },
    { name: 'n', type: 'bigint', nullable: false },
    { name: 'changes', type: 'bigint', nullable: false, default: '0' }
  ],
  indexes: [{ name: indexName(ROW_COUNTS_TABLE, ['table_name', 'published', 'locale'], 'idx'), columns: ['table_name', 'published', 'locale'] }],
  foreignKeys: []
}

/** The deltas of one event, localized or not, into the arrays `keys`, `locales`, `ns`. */
function deltas (from: string, sign: '' | '-', localized: boolean): string {
  const locale = localized ? "coalesce(r.locale, '')" : "''"
  return `select array_agg(d.published), array_agg(d.locale), array_agg(d.n) into keys, locales, ns from (
      select r.published_at is not null as published, ${locale}::varchar as locale, ${sign}count(*) as n from ${from} as r group by 1, 2) as d;`
}

function updateDeltas (localized: boolean): string {
  const locale = localized ? "coalesce(r.locale, '')" : "''"
  return `select array_agg(d.published), array_agg(d.locale), array_agg(d.n) into keys, locales, ns from (
      select d.published, d.locale, sum(d.n) as n from (
        select r.published_at is not null as published, ${locale}::varchar as locale, 1 as n from new_rows as r
        union all select r.published_at is not null, ${locale}::varchar, -1 from old_rows as r) as d
      group by 1, 2 having sum(d.n) <> 0) as d;`
}

/**
 * Deletes a table's counts but keeps its change count, plus one, in a row of its own (under the
 * key false, ''). A truncate and a refill change the rows as any write does: a total remembered
 * against the old change count must not match after them (lib/compiler/row-count.ts).
 */
function keepChanges (table: string): string {
  const counts = quoteIdent(ROW_COUNTS_TABLE)
  return `with "gone" as (delete from ${counts} where "table_name" = ${table} returning "changes") ` +
    `insert into ${counts} ("table_name", "published", "locale", "n", "changes") select ${table}, false, '', 0, coalesce(sum("changes"), 0) + 1 from "gone"`
}

/**
 * Adds each key's delta (`ns[i]` rows, `cs[i]` changes) to one of the key's rows that no other
 * transaction holds, or to a new row. A row locked in a version this statement's snapshot does
 * not see is not updated (`found` is false): the delta then goes to a new row, never lost.
 */
const ADD_TO_KEYS = `for i in 1 .. coalesce(array_length(ns, 1), 0) loop
    if shared then
      update ${ROW_COUNTS_TABLE} set n = n + ns[i], changes = changes + cs[i] where ctid = (select c.ctid from ${ROW_COUNTS_TABLE} as c
        where c.table_name = TG_TABLE_NAME and c.published = keys[i] and c.locale = locales[i] limit 1 for update skip locked);
      continue when found;
    end if;
    insert into ${ROW_COUNTS_TABLE} (table_name, published, locale, n, changes) values (TG_TABLE_NAME, keys[i], locales[i], ns[i], cs[i]);
  end loop;`

/**
 * The trigger function's body. The locale column is read only by the triggers of localized types
 * (argument `'locale'`): PL/pgSQL plans a statement when it first runs it, per trigger, so a
 * branch naming `locale` is never planned for a table without one. Rows without a locale count
 * under `''`.
 *
 * Each key's delta is added to one of the key's rows that no other transaction holds (`for
 * update skip locked`), or, when every one is held, to a new row: a writer never waits, a key
 * has at most as many rows as writers once wrote it at the same time, and the update changes no
 * indexed column, so PostgreSQL prunes its old versions in place (HOT) without waiting for a
 * vacuum, and the rows a read sums stay few. Outside READ COMMITTED a writer only inserts (locking
 * a row another transaction updated after its snapshot would fail it); about one statement in 64
 * under READ COMMITTED folds the rows of each key it can lock into one of them. The fold deletes
 * the others and adds their sum to the row it kept, in place, so it adds no index entry: between
 * vacuums, the entries a count's read visits grow only with the rows writers had to insert.
 */
export const COUNT_FUNCTION_BODY = `
${COUNT_FUNCTION_MARK}
declare
  localized constant boolean := TG_NARGS > 0 and TG_ARGV[0] = 'locale';
  shared constant boolean := current_setting('transaction_isolation') = 'read committed';
  keys boolean[];
  locales varchar[];
  ns bigint[];
  cs bigint[];
begin
  if TG_OP = 'TRUNCATE' then
    ${keepChanges('TG_TABLE_NAME')};
    return null;
  elsif TG_OP = 'INSERT' and localized then
    ${deltas('new_rows', '', true)}
  elsif TG_OP = 'INSERT' then
    ${deltas('new_rows', '', false)}
  elsif TG_OP = 'DELETE' and localized then
    ${deltas('old_rows', '-', true)}
  elsif TG_OP = 'DELETE' then
    ${deltas('old_rows', '-', false)}
  elsif localized then
    ${updateDeltas(true)}
  else
    ${updateDeltas(false)}
  end if;
  if ns is null then
    -- No key's count moved: a statement of no rows, or an update of other columns, which still
    -- counts as a change (under the key false, '').
    if TG_OP <> 'UPDATE' then return null; end if;
    if not exists (select from new_rows) then return null; end if;
    keys := array[false]; locales := array['']; ns := array[0];
  end if;
  -- The statement's one change goes with its first key.
  cs := array_fill(0::bigint, array[array_length(ns, 1)]);
  cs[1] := 1;
  ${ADD_TO_KEYS}
  if shared and random() < 0.015625 then
    -- Fold: of each key's rows it can lock, keep the first, delete the others, and add what the
    -- delete returned to a row of the key. Only rows the delete saw are added, so a row another
    -- writer changed after this statement's snapshot (locked in its new version, which the
    -- snapshot does not see) is neither deleted nor counted twice.
    with locked as (select c.ctid, c.published, c.locale from ${ROW_COUNTS_TABLE} as c
        where c.table_name = TG_TABLE_NAME for update skip locked),
      gone as (delete from ${ROW_COUNTS_TABLE} where ctid = any(array(select l.ctid from locked as l
        where l.ctid <> (select min(k.ctid) from locked as k where k.published = l.published and k.locale = l.locale)))
        returning published, locale, n, changes)
    select array_agg(g.published), array_agg(g.locale), array_agg(g.n), array_agg(g.changes) into keys, locales, ns, cs
      from (select g.published, g.locale, sum(g.n) as n, sum(g.changes) as changes from gone as g group by 1, 2) as g;
    ${ADD_TO_KEYS}
  end if;
  return null;
end
`

/**
 * `create or replace function "content_api_count_rows"() ...`: the search path is fixed to the
 * one sync ran with (whose first schema holds the counts table), so a writer on another search
 * path still counts in the right table.
 */
export function createCountFunction (): string {
  return `create or replace function ${quoteIdent(COUNT_FUNCTION)}() returns trigger language plpgsql set search_path from current as $$${COUNT_FUNCTION_BODY}$$`
}

/**
 * The counts table's storage settings, set with the function: every write updates a few rows
 * of it, so its old row versions are many and its live rows few. Room on each page for the new
 * versions (fillfactor) keeps updates in place (HOT), and a vacuum after every 1,000 dead
 * versions, whatever the table's size, keeps the index a read scans short.
 */
export function tuneCountsTable (): string {
  return `alter table ${quoteIdent(ROW_COUNTS_TABLE)} set (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, ` +
    'autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0)'
}

/** `'articles'`: a table name as an SQL literal (names come from models, never from requests). */
const literal = (value: string): string => `'${value.replaceAll("'", "''")}'`

/**
 * The statements that put one table's triggers in place and fill its counts, in this order, in
 * sync's transaction: `create trigger` locks writers out of the table until commit, so the
 * fill counts exactly the rows the triggers did not see.
 *
 * ```sql
 * create trigger "content_api_row_counts_insert" after insert on "articles" referencing new table as new_rows
 *   for each statement execute function "content_api_count_rows"('locale')
 * -- ... update, delete, truncate
 * with "gone" as (delete from "content_api_row_counts" where "table_name" = 'articles' returning "changes")
 *   insert into "content_api_row_counts" ("table_name", "published", "locale", "n", "changes") select 'articles', false, '', 0, coalesce(sum("changes"), 0) + 1 from "gone"
 * insert into "content_api_row_counts" ("table_name", "published", "locale", "n")
 *   select 'articles', "published_at" is not null, coalesce("locale", ''), count(*) from "articles" group by 2, 3
 * ```
 */
export function countTriggers (model: ContentType, existing: ReadonlySet<string>): string[] {
  const table = quoteIdent(model.tableName)
  const argument = model.localized ? "'locale'" : ''
  const statements: string[] = []
  for (const trigger of TRIGGERS) {
    if (existing.has(trigger.name)) statements.push(`drop trigger ${quoteIdent(trigger.name)} on ${table}`)
  }
  for (const trigger of TRIGGERS) {
    statements.push(`create trigger ${quoteIdent(trigger.name)} after ${trigger.event} on ${table} ${trigger.referencing}` +
      `for each statement execute function ${quoteIdent(COUNT_FUNCTION)}(${argument})`)
  }
  const counts = quoteIdent(ROW_COUNTS_TABLE)
  statements.push(keepChanges(literal(model.tableName)))
  statements.push(`insert into ${counts} ("table_name", "published", "locale", "n") select ${literal(model.tableName)}, ` +
    `"published_at" is not null, ${model.localized ? 'coalesce("locale", \'\')' : "''"}, count(*) from ${table} group by 2, 3`)
  return statements
}

/** Our triggers on one table, by name, with their argument count (1: localized). */
type TableTriggers = Map<string, { args: number, enabled: boolean }>

export interface RowCountState {
  /** The trigger function's body and object id, or null when there is none. */
  readonly functionBody: string | null
  readonly functionOid: number | null
  readonly triggers: ReadonlyMap<string, TableTriggers>
}

/**
 * Our trigger function and triggers in the current schema:
 *
 * ```sql
 * select p.oid, p.prosrc from pg_proc p join pg_namespace n on n.oid = p.pronamespace
 * where n.nspname = current_schema() and p.proname = $1
 * select c.relname as "table", t.tgname as name, t.tgnargs as args, t.tgenabled <> 'D' as enabled from pg_trigger t ...
 * ```
 */
export async function introspectRowCounts (db: Kysely<any>): Promise<RowCountState> {
  const fn = await sql<{ oid: number, body: string }>`
    select p.oid::int as oid, p.prosrc as body from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema() and p.proname = ${COUNT_FUNCTION}`.execute(db)
  const rows = await sql<{ table: string, name: string, args: number, enabled: boolean }>`
    select c.relname as "table", t.tgname as name, t.tgnargs::int as args, t.tgenabled <> 'D' as enabled
    from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and not t.tgisinternal and t.tgname = any(${TRIGGERS.map((t) => t.name)})`.execute(db)
  const triggers = new Map<string, TableTriggers>()
  for (const row of rows.rows) {
    let table = triggers.get(row.table)
    if (table === undefined) { table = new Map(); triggers.set(row.table, table) }
    table.set(row.name, { args: row.args, enabled: row.enabled })
  }
  return { functionBody: fn.rows[0]?.body ?? null, functionOid: fn.rows[0]?.oid ?? null, triggers }
}

/** Whether a table's counts are kept: its four triggers, enabled, in its form (localized or not). */
function inPlace (model: ContentType, state: RowCountState): boolean {
  const table = state.triggers.get(model.tableName)
  const args = model.localized ? 1 : 0
  return TRIGGERS.every((t) => { const found = table?.get(t.name); return found !== undefined && found.enabled && found.args === args })
}

/**
 * What sync plans for the counts: the function when it is missing or differs, then, for each
 * content type whose triggers are missing, disabled or of the other form (its localization
 * changed), its triggers and its fill (`countTriggers`). Pure, like `diffSchema`.
 */
export function planRowCounts (registry: Registry, state: RowCountState): string[] {
  const statements: string[] = []
  if (state.functionBody !== COUNT_FUNCTION_BODY) statements.push(createCountFunction(), tuneCountsTable())
  for (const model of registry.contentTypes.values()) {
    if (inPlace(model, state)) continue
    statements.push(...countTriggers(model, new Set(state.triggers.get(model.tableName)?.keys())))
  }
  return statements
}

/** What the compiler may read of the row counts (lib/compiler/find.ts `CompileOptions`). */
export interface RowCountsInUse {
  /** The tables whose counts are kept: their triggers are in place with this release's function. */
  readonly tables: ReadonlySet<string>
  /**
   * That function's object id, or null when the function is not this release's. A remembered
   * total checks at every read that the function is still this one (lib/compiler/row-count.ts
   * `changeCount`): an instance of an earlier release that starts later puts its own back, which
   * keeps no change count.
   */
  readonly countFunction: number | null
}

/**
 * The row counts the compiler may read. Read once at start, after sync (mode `off` or `dryRun`
 * may leave none).
 */
export async function rowCountsInUse (db: Kysely<any>, registry: Registry): Promise<RowCountsInUse> {
  const state = await introspectRowCounts(db)
  const tables = new Set<string>()
  if (state.functionBody !== COUNT_FUNCTION_BODY) return { tables, countFunction: null }
  for (const model of registry.contentTypes.values()) if (inPlace(model, state)) tables.add(model.tableName)
  return { tables, countFunction: state.functionOid }
}
