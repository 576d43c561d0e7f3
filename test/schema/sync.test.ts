import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { createRegistry } from '../../lib/model/registry.js'
import type { ContentTypeSchema } from '../../lib/model/types.js'
import { syncSchema, type SchemaSyncOptions } from '../../lib/schema/sync.js'
import { lockSchema, schemaLockKey } from '../../lib/schema/lock.js'
import { countTriggers } from '../../lib/schema/row-counts.js'
import { createTestDatabase, dialectName } from '../helpers/database.js'
import { article, components, everyType, homepage } from './models.js'

/** Tables every registry has: the row counts, the built-in upload file type and the media link table. */
const BUILT_IN = ['content_api_row_counts', 'files', 'files_related_mph']
/** ...and those of users and permissions, which sort after the models' tables. */
const AUTH = ['strapi_api_tokens', 'up_permissions', 'up_permissions_role_lnk', 'up_roles', 'up_users', 'up_users_role_lnk']

const apply: SchemaSyncOptions = { mode: 'apply', allowDestructive: false }
const destructive: SchemaSyncOptions = { mode: 'apply', allowDestructive: true }

function recorder () {
  const info: unknown[][] = []
  const warn: unknown[][] = []
  const debug: unknown[][] = []
  return {
    info,
    warn,
    debug,
    log: { info: (...args: unknown[]) => { info.push(args) }, warn: (...args: unknown[]) => { warn.push(args) }, debug: (...args: unknown[]) => { debug.push(args) } }
  }
}

const sync = (db: Kysely<any>, models: ContentTypeSchema[], options = apply, log?: ReturnType<typeof recorder>['log']) =>
  syncSchema(db, createRegistry(models, components), options, log)

async function tables (db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = current_schema() order by table_name`.execute(db)
  return rows.map((r) => r.table_name)
}

async function columns (db: Kysely<any>, table: string): Promise<Record<string, { type: string, nullable: string }>> {
  const { rows } = await sql<{ column_name: string, data_type: string, is_nullable: string }>`
    select column_name, data_type, is_nullable from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(db)
  return Object.fromEntries(rows.map((r) => [r.column_name, { type: r.data_type, nullable: r.is_nullable }]))
}

async function indexes (db: Kysely<any>, table: string): Promise<string[]> {
  const { rows } = await sql<{ indexname: string }>`
    select indexname from pg_indexes where schemaname = current_schema() and tablename = ${table} order by indexname`.execute(db)
  return rows.map((r) => r.indexname)
}

t.test('the first sync creates every table, column and index', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const log = recorder()
  const result = await sync(tdb.db, [everyType, article(), homepage], apply, log.log)

  t.equal(result.applied, true)
  t.same(result.destructive, [])
  t.ok(result.statements.some((statement) => /^create table "kitchen_sinks" \("id" serial primary key, "document_id" varchar\(255\) not null, /.test(statement)))
  t.same(await tables(tdb.db), ['articles', 'components_shared_seos', ...BUILT_IN, 'homepages', 'kitchen_sinks', ...AUTH])

  const cols = await columns(tdb.db, 'articles')
  t.same(Object.keys(cols), ['id', 'document_id', 'title', 'slug', 'body', 'created_at', 'updated_at', 'published_at', 'locale'])
  t.same(cols.id, { type: 'integer', nullable: 'NO' })
  t.same(cols.document_id, { type: 'character varying', nullable: 'NO' })
  t.same(cols.title, { type: 'character varying', nullable: 'YES' })
  t.same(cols.created_at, { type: 'timestamp with time zone', nullable: 'NO' })
  t.same(cols.published_at, { type: 'timestamp with time zone', nullable: 'YES' })
  t.same(await indexes(tdb.db, 'articles'), ['articles_document_id_locale_version_unique', 'articles_pkey', 'articles_slug_idx'])
  t.equal((await columns(tdb.db, 'kitchen_sinks')).a_json.type, 'jsonb')

  const { rows } = await sql<{ id: number, title: string, created_at: unknown, updated_at: unknown }>`
    insert into articles (document_id, title, locale) values ('abc', 'Hello', 'en') returning *`.execute(tdb.db)
  t.match(rows[0], { id: 1, title: 'Hello' }, 'ids come from the serial sequence')
  t.not(rows[0].created_at, null, 'created_at defaults to now()')
  t.not(rows[0].updated_at, null, 'updated_at defaults to now()')
  await t.rejects(sql`insert into articles (title) values ('no document id')`.execute(tdb.db), /null/, 'document_id is NOT NULL')

  t.equal(log.warn.length, 0, 'nothing to warn about')
  t.equal(log.info.length, result.statements.length + 1, 'one info line per change, and a count')
  t.ok(log.info.every((args) => args.length === 1 && typeof args[0] === 'string'), 'plain lines, no statements in them')
  const lines = log.info.map(([line]) => line)
  t.ok(lines.includes('schema sync: create table articles'))
  t.ok(lines.includes('schema sync: create unique index articles_document_id_locale_version_unique on articles'))
  t.ok(lines.includes('schema sync: create index articles_slug_idx on articles'))
  t.ok(lines.includes('schema sync: create trigger content_api_row_counts_insert on articles'))
  t.equal(lines.at(-1), `schema sync: applied ${result.statements.length} statement(s)`)
  t.same(log.debug.map(([payload]) => (payload as { sql: string }).sql), result.statements, 'every statement at debug')
  t.same(log.debug.map(([, line]) => line), lines.slice(0, -1), 'each with its change\'s line')
})

t.test('a new attribute is logged as one line naming the column and its type', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  const log = recorder()
  await sync(tdb.db, [article({ views: { type: 'integer' } })], apply, log.log)
  t.same(log.info, [['schema sync: add column articles.views integer'], ['schema sync: applied 1 statement(s)']])
  t.same(log.debug, [[{ sql: 'alter table "articles" add column "views" integer' }, 'schema sync: add column articles.views integer']])
})

t.test('a unique attribute allows the same value twice (draft and published rows, two locales)', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  await sql`insert into articles (document_id, slug, locale, published_at) values ('a', 'hello', 'en', null), ('a', 'hello', 'en', now()), ('a', 'hello', 'fr', null)`.execute(tdb.db)
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from articles where slug = 'hello'`.execute(tdb.db)
  t.equal(rows[0].n, 3)
})

t.test('a second sync plans nothing (idempotence), from the same or another instance', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const models = [everyType, article(), homepage]
  const first = await sync(tdb.db, models)
  t.ok(first.statements.length > 0)
  const log = recorder()
  const second = await sync(tdb.db, models, apply, log.log)
  t.same(second, { statements: [], destructive: [], applied: true })
  t.same(log.info, [], 'an empty plan logs nothing')
  t.same(await sync(tdb.connectAgain(), models), { statements: [], destructive: [], applied: true })
  t.same(await sync(tdb.db, models, destructive), { statements: [], destructive: [], applied: true },
    'nothing destructive either')
})

t.test('adding an attribute adds exactly one column and keeps existing rows', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  await sql`insert into articles (document_id, title, locale) values ('abc', 'Kept', 'en')`.execute(tdb.db)
  const before = Object.keys(await columns(tdb.db, 'articles'))

  const result = await sync(tdb.db, [article({ views: { type: 'integer' } })])
  t.same(result.statements, ['alter table "articles" add column "views" integer'])
  t.same(result.destructive, [])
  t.same(Object.keys(await columns(tdb.db, 'articles')), [...before, 'views'])
  const { rows } = await sql`select title, views from articles`.execute(tdb.db)
  t.same(rows, [{ title: 'Kept', views: null }])
})

t.test('a new unique attribute gets its column and its index', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  const result = await sync(tdb.db, [article({ code: { type: 'string', unique: true } })])
  t.same(result.statements, [
    'alter table "articles" add column "code" varchar(255)',
    'create index "articles_code_idx" on "articles" ("code")'
  ])
  t.ok((await indexes(tdb.db, 'articles')).includes('articles_code_idx'))
})

t.test('a removed attribute keeps its column and data, is reported as destructive and warned about', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article({ subtitle: { type: 'string' } })])
  await sql`insert into articles (document_id, subtitle) values ('abc', 'keep me')`.execute(tdb.db)

  const log = recorder()
  const result = await sync(tdb.db, [article()], apply, log.log)
  t.same(result.statements, [])
  t.equal(result.destructive.length, 1)
  t.match(result.destructive[0].description, /^articles\.subtitle: column is no longer in the model/)
  t.equal(result.destructive[0].sql, 'alter table "articles" drop column "subtitle"')
  t.equal(result.applied, true)

  t.ok('subtitle' in await columns(tdb.db, 'articles'), 'the column is still there')
  const { rows } = await sql`select subtitle from articles`.execute(tdb.db)
  t.same(rows, [{ subtitle: 'keep me' }], 'and so is its data')

  t.equal(log.warn.length, 1, 'one warning for all destructive changes')
  const [payload, message] = log.warn[0] as [unknown, string]
  t.match(payload, { destructive: result.destructive })
  t.match(message, /articles\.subtitle/)
  t.match(message, /allowDestructive: true/)

  const again = await sync(tdb.db, [article()])
  t.same(again.destructive, result.destructive, 'reported again on every start until resolved')
})

t.test('a changed type is reported, not applied', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article({ views: { type: 'integer' } })])
  await sql`insert into articles (document_id, views) values ('abc', 42)`.execute(tdb.db)

  const log = recorder()
  const result = await sync(tdb.db, [article({ views: { type: 'string' } })], apply, log.log)
  t.same(result.statements, [])
  t.same(result.destructive, [{
    description: 'articles.views: type is integer in the database but varchar(255) in the model; converting may fail or lose data',
    sql: 'alter table "articles" alter column "views" type varchar(255) using "views"::varchar(255)'
  }])
  t.equal((await columns(tdb.db, 'articles')).views.type, 'integer', 'still an integer column')
  t.equal(log.warn.length, 1)
})

t.test('a longer maxLength widens the varchar without allowDestructive', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  await sql`insert into articles (document_id, title) values ('abc', 'Kept')`.execute(tdb.db)
  const result = await sync(tdb.db, [article({ title: { type: 'string', maxLength: 500 } })])
  t.same(result.statements, ['alter table "articles" alter column "title" type varchar(500) using "title"::varchar(500)'])
  t.same(result.destructive, [])
  const { rows } = await sql<{ n: number }>`
    select character_maximum_length as n from information_schema.columns
    where table_schema = current_schema() and table_name = 'articles' and column_name = 'title'`.execute(tdb.db)
  t.equal(rows[0].n, 500)

  const back = await sync(tdb.db, [article()])
  t.equal(back.destructive.length, 1, 'narrowing it again is destructive (an older instance in a rolling deploy)')
  t.same(back.statements, [])
})

t.test('allowDestructive: true applies the drop and the type change', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article({ subtitle: { type: 'string' }, views: { type: 'integer' } })])
  await sql`insert into articles (document_id, subtitle, views) values ('abc', 'gone', 42)`.execute(tdb.db)

  const log = recorder()
  const result = await sync(tdb.db, [article({ views: { type: 'string' } })], destructive, log.log)
  t.equal(result.destructive.length, 2)
  t.equal(log.warn.length, 0, 'nothing is left to warn about')
  const cols = await columns(tdb.db, 'articles')
  t.notOk('subtitle' in cols, 'the column was dropped')
  t.equal(cols.views.type, 'character varying')
  const { rows } = await sql`select views from articles`.execute(tdb.db)
  t.same(rows, [{ views: '42' }], 'values converted with the using clause')
  t.same(await sync(tdb.db, [article({ views: { type: 'string' } })]), { statements: [], destructive: [], applied: true })
})

t.test('dryRun returns the SQL and creates nothing', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const log = recorder()
  const plan = await sync(tdb.db, [article(), homepage], { mode: 'dryRun', allowDestructive: false }, log.log)
  t.equal(plan.applied, false)
  // The built-in tables (files, users and permissions) are planned too; the models' own are below.
  const own = plan.statements.filter((statement) => !/"(files|files_related_mph|up_\w+|strapi_api_tokens|content_api_\w+)"/.test(statement))
  t.ok(plan.statements.length - own.length > 0, 'the built-in tables are planned too')
  t.same(own, [
    'create table "articles" ("id" serial primary key, "document_id" varchar(255) not null, "title" varchar(255), ' +
      '"slug" varchar(255), "body" text, "created_at" timestamp(3) with time zone not null default now(), ' +
      '"updated_at" timestamp(3) with time zone not null default now(), "published_at" timestamp(3) with time zone, ' +
      '"locale" varchar(255))',
    'create table "homepages" ("id" serial primary key, "document_id" varchar(255) not null, "heading" varchar(255), ' +
      '"created_at" timestamp(3) with time zone not null default now(), ' +
      '"updated_at" timestamp(3) with time zone not null default now(), "published_at" timestamp(3) with time zone)',
    'create table "components_shared_seos" ("id" serial primary key, "meta_title" varchar(255), "meta_description" text)',
    'create unique index "articles_document_id_locale_version_unique" on "articles" ("document_id", "locale", ("published_at" is null))',
    'create index "articles_slug_idx" on "articles" ("slug")',
    'create unique index "homepages_document_id_version_unique" on "homepages" ("document_id", ("published_at" is null))'
  ])
  t.ok(plan.statements.some((statement) => statement.startsWith('create trigger "content_api_row_counts_insert" after insert on "articles"')),
    'the row counts\' triggers are planned')
  t.same(await tables(tdb.db), [], 'nothing was created')
  t.equal(log.info.length, plan.statements.length + 1, 'the plan is logged, a line per change')
  t.ok(log.info.some(([line]) => line === 'schema sync (dry run): create table articles'))

  // The plan is exactly what apply runs.
  const applied = await sync(tdb.db, [article(), homepage])
  t.same(applied.statements, plan.statements)
})

t.test('dryRun lists destructive changes without running them', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article({ subtitle: { type: 'string' } })])
  const plan = await sync(tdb.db, [article()], { mode: 'dryRun', allowDestructive: true })
  t.same(plan.destructive.map((d) => d.sql), ['alter table "articles" drop column "subtitle"'])
  t.ok('subtitle' in await columns(tdb.db, 'articles'), 'dryRun never applies, even with allowDestructive')
})

t.test('off does nothing and never touches the database', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const closed = tdb.connectAgain()
  await closed.destroy()
  const log = recorder()
  const result = await sync(closed, [article()], { mode: 'off', allowDestructive: true }, log.log)
  t.same(result, { statements: [], destructive: [], applied: false })
  t.same(await tables(tdb.db), [])
  t.same([log.info, log.warn], [[], []])
})

t.test('tables no model describes are left alone and not reported', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sql`create table app_sessions (token text primary key, data jsonb)`.execute(tdb.db)
  await sql`insert into app_sessions values ('x', '{}')`.execute(tdb.db)
  const result = await sync(tdb.db, [article()], destructive)
  t.same(result.destructive, [])
  t.notMatch(result.statements.join('\n'), /app_sessions/)
  t.same(Object.keys(await columns(tdb.db, 'app_sessions')), ['token', 'data'])
  const { rows } = await sql`select token from app_sessions`.execute(tdb.db)
  t.same(rows, [{ token: 'x' }])
})

t.test('only the current schema counts: tables of another schema are invisible', async (t) => {
  const one = await createTestDatabase()
  const two = await createTestDatabase()
  t.teardown(async () => { await one.drop(); await two.drop() })
  await sync(one.db, [article()])
  const result = await sync(two.db, [article()])
  t.ok(result.statements.some((statement) => /^create table "articles"/.test(statement)))
  t.same(await tables(two.db), ['articles', 'components_shared_seos', ...BUILT_IN, ...AUTH])
})

t.test('two instances syncing at once both succeed and create the tables once', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const models = [everyType, article(), homepage]
  const [a, b] = await Promise.all([sync(tdb.connectAgain(), models), sync(tdb.connectAgain(), models)])
  const planned = [a.statements.length, b.statements.length].sort((x, y) => x - y)
  t.equal(planned[0], 0, 'the instance that waited planned nothing')
  t.ok(planned[1] > 0, 'the other created everything')
  t.same(await tables(tdb.db), ['articles', 'components_shared_seos', ...BUILT_IN, 'homepages', 'kitchen_sinks', ...AUTH])
})

t.test('sync waits for whoever holds the schema lock', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => { locked = resolve })
  const holder = tdb.connectAgain().transaction().execute(async (trx) => {
    await lockSchema(trx)
    locked()
    await released
    // Created while the lock is held: the waiting sync must see it once it gets the lock.
    await sql`create table homepages (id serial primary key)`.execute(trx)
  })
  await isLocked

  let done = false
  const waiting = sync(tdb.connectAgain(), [homepage]).then((result) => { done = true; return result })
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(done, false, 'still waiting while the lock is held')
  release()
  await holder
  const result = await waiting
  t.notMatch(result.statements.join('\n'), /create table "homepages"/, 'it introspected after the lock was released')
  t.ok(result.statements.includes('alter table "homepages" add column "document_id" varchar(255)'))
})

// PGlite has one session for every schema, so only PostgreSQL can show that schemas do not wait for each other.
t.test('an instance in another schema does not wait for the lock', { skip: dialectName !== 'postgres' && 'needs PostgreSQL' }, async (t) => {
  const one = await createTestDatabase()
  const two = await createTestDatabase()
  t.teardown(async () => { await one.drop(); await two.drop() })
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => { locked = resolve })
  const holder = one.db.transaction().execute(async (trx) => { await lockSchema(trx); locked(); await released })
  await isLocked
  let timer: NodeJS.Timeout | undefined
  try {
    const result = await Promise.race([
      sync(two.db, [homepage]),
      new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), 5000) })
    ])
    t.not(result, 'timeout', 'sync in the other schema finished while the first schema was locked')
  } finally {
    clearTimeout(timer)
    release()
    await holder
  }
})

t.test('the lock key is stable and differs per schema', async (t) => {
  t.equal(schemaLockKey('public'), schemaLockKey('public'))
  t.not(schemaLockKey('public'), schemaLockKey('tenant_a'))
  t.equal(typeof schemaLockKey('public'), 'bigint')
})

t.test('a failing statement rolls the whole plan back', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  // An index of that name on another table makes the last statement of the plan fail.
  await sql`create table other (slug text)`.execute(tdb.db)
  await sql`create index articles_slug_idx on other (slug)`.execute(tdb.db)
  // The plan runs as one script; its failure is reported as the statement that failed, and only
  // that one, as when the statements ran one at a time.
  const error = await sync(tdb.db, [article()]).then(() => null, (err: Error) => err)
  t.match(error, { name: 'SchemaSyncError', code: 'FCA_ERR_SCHEMA_SYNC' })
  t.match(error?.message, /^Schema sync failed on `create (unique )?index "articles_slug_idx" on "articles" [^`]*`: relation "articles_slug_idx" already exists\. Nothing was changed\.$/)
  t.same(await tables(tdb.db), ['other'], 'the tables created before the failure were rolled back')
})

/** The document indexes of the versions before the version index: plain, on (document_id, [locale,] published_at). */
async function downgradeIndexes (db: Kysely<any>): Promise<void> {
  await sql`drop index articles_document_id_locale_version_unique`.execute(db)
  await sql`create index articles_document_id_locale_published_at_idx on articles (document_id, locale, published_at)`.execute(db)
  await sql`drop index homepages_document_id_version_unique`.execute(db)
  await sql`create index homepages_document_id_published_at_idx on homepages (document_id, published_at)`.execute(db)
}

t.test('an existing database gets the version index in place of the composite index, rows kept', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const models = [article(), homepage]
  await sync(tdb.db, models)
  await downgradeIndexes(tdb.db)
  await sql`insert into articles (document_id, title, locale, published_at) values ('a', 'A', 'en', null), ('a', 'A', 'en', now()), ('a', 'A', 'fr', null)`.execute(tdb.db)

  const plan = await sync(tdb.db, models)
  t.same(plan.statements, [
    'create unique index "articles_document_id_locale_version_unique" on "articles" ("document_id", "locale", ("published_at" is null))',
    'drop index "articles_document_id_locale_published_at_idx"',
    'create unique index "homepages_document_id_version_unique" on "homepages" ("document_id", ("published_at" is null))',
    'drop index "homepages_document_id_published_at_idx"'
  ])
  t.same(await indexes(tdb.db, 'articles'), ['articles_document_id_locale_version_unique', 'articles_pkey', 'articles_slug_idx'])
  t.same(await indexes(tdb.db, 'homepages'), ['homepages_document_id_version_unique', 'homepages_pkey'])
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from articles`.execute(tdb.db)
  t.equal(rows[0].n, 3, 'every row is kept')
  await t.rejects(sql`insert into articles (document_id, locale) values ('a', 'fr')`.execute(tdb.db), { code: '23505' }, 'a second draft is refused')
  await t.rejects(sql`insert into articles (document_id, locale, published_at) values ('a', 'en', now())`.execute(tdb.db), { code: '23505' }, 'a second published row too')
  await sql`insert into articles (document_id, locale, published_at) values ('a', 'fr', now())`.execute(tdb.db)
  t.same((await sync(tdb.db, models)).statements, [], 'the next sync plans nothing')
})

/**
 * Each side's list of a link table has an index in its order (desired-schema.ts's
 * `orderedIndex`): a new link's `max(<order>) + 1` is one index step, however many links the
 * list holds. Earlier versions indexed the ids alone; sync replaces those, links kept.
 */
t.test('link tables: an ordered index per side, in place of the id indexes earlier versions created', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  const ordered = ['up_users_role_lnk_role_id_user_ord_idx', 'up_users_role_lnk_user_id_role_ord_idx']
  const linkIndexes = ['up_users_role_lnk_pkey', 'up_users_role_lnk_role_id_user_ord_idx', 'up_users_role_lnk_user_id_role_id_unique', 'up_users_role_lnk_user_id_role_ord_idx']
  t.same(await indexes(tdb.db, 'up_users_role_lnk'), linkIndexes)
  const { rows: definitions } = await sql<{ indexdef: string }>`select indexdef from pg_indexes
    where schemaname = current_schema() and indexname in (${ordered[0]}, ${ordered[1]}) order by indexname`.execute(tdb.db)
  t.match(definitions.map((d) => d.indexdef), [/\(role_id, user_ord\)$/, /\(user_id, role_ord\)$/])

  // A database an earlier version synced: the ids indexed alone, links stored.
  for (const name of ordered) await sql`drop index ${sql.id(name)}`.execute(tdb.db)
  await sql`create index up_users_role_lnk_user_id_idx on up_users_role_lnk (user_id)`.execute(tdb.db)
  await sql`create index up_users_role_lnk_role_id_idx on up_users_role_lnk (role_id)`.execute(tdb.db)
  await sql`insert into up_users (document_id, username) values ('u', 'ada')`.execute(tdb.db)
  await sql`insert into up_roles (document_id, name, type) values ('r', 'Reader', 'reader')`.execute(tdb.db)
  await sql`insert into up_users_role_lnk (user_id, role_id, role_ord, user_ord) select u.id, r.id, 1, 1 from up_users u, up_roles r`.execute(tdb.db)

  const plan = await sync(tdb.db, [article()])
  t.same(plan.statements.filter((statement) => statement.includes('up_users_role_lnk')), [
    'create index "up_users_role_lnk_user_id_role_ord_idx" on "up_users_role_lnk" ("user_id", "role_ord")',
    'drop index "up_users_role_lnk_user_id_idx"',
    'create index "up_users_role_lnk_role_id_user_ord_idx" on "up_users_role_lnk" ("role_id", "user_ord")',
    'drop index "up_users_role_lnk_role_id_idx"'
  ], 'each replaced once its replacement exists')
  t.same(await indexes(tdb.db, 'up_users_role_lnk'), linkIndexes)
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from up_users_role_lnk`.execute(tdb.db)
  t.equal(rows[0].n, 1, 'the link is kept')
  t.same((await sync(tdb.db, [article()])).statements, [], 'the next sync plans nothing')
})

t.test('rows that repeat a version stop sync: the tables are named, the query listed, nothing changed', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const models = [article(), homepage]
  await sync(tdb.db, models)
  await downgradeIndexes(tdb.db)
  // Two drafts of one locale, two published rows of another, and a single type written twice.
  await sql`insert into articles (document_id, title, locale, published_at) values
    ('a', 'one', 'en', null), ('a', 'two', 'en', null), ('b', 'B', 'fr', now()), ('b', 'B', 'fr', now()), ('b', 'B', 'fr', null)`.execute(tdb.db)
  await sql`insert into homepages (document_id, published_at) values ('h', now()), ('h', now())`.execute(tdb.db)

  const log = recorder()
  await sync(tdb.db, models, { mode: 'dryRun', allowDestructive: false }, log.log)
  t.match(log.warn, [[{ duplicates: [{ table: 'articles', groups: 2 }, { table: 'homepages', groups: 1 }] }, /cannot add 2 unique index/]], 'a dry run warns')

  const error = await sync(tdb.db, models).then(() => null, (err: Error) => err)
  t.match(error, { name: 'SchemaSyncError', code: 'FCA_ERR_SCHEMA_SYNC' })
  t.match(error?.message, /"articles": 2 key value\(s\) held by several rows, for "articles_document_id_locale_version_unique"/)
  t.match(error?.message, /"homepages": 1 key value\(s\)/)
  t.match(error?.message, /Nothing was changed\.$/)
  t.same(await indexes(tdb.db, 'articles'), ['articles_document_id_locale_published_at_idx', 'articles_pkey', 'articles_slug_idx'], 'nothing was changed')

  // The query the message gives lists each group with its rows' ids.
  const query = /List them with:\n\s+(select [^\n]+ from "articles"[^\n]+);/.exec(error?.message ?? '')?.[1]
  t.ok(query)
  const { rows } = await sql.raw<{ document_id: string, ids: number[] }>(query!).execute(tdb.db)
  t.same(rows.map((r) => [r.document_id, r.ids.map(Number)]).sort(), [['a', [1, 2]], ['b', [3, 4]]])

  await sql`delete from articles where id in (1, 3)`.execute(tdb.db)
  await sql`delete from homepages where id = (select min(id) from homepages)`.execute(tdb.db)
  t.same(await indexes(tdb.db, 'articles'), ['articles_document_id_locale_published_at_idx', 'articles_pkey', 'articles_slug_idx'])
  t.equal((await sync(tdb.db, models)).applied, true, 'once repaired, sync adds the indexes')
  t.same(await indexes(tdb.db, 'homepages'), ['homepages_document_id_version_unique', 'homepages_pkey'])
})

t.test('turning i18n on swaps the version index for its localized form', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const plain = { ...article(), pluginOptions: {} }
  await sync(tdb.db, [plain])
  await sql`insert into articles (document_id, title) values ('a', 'A')`.execute(tdb.db)
  const plan = await sync(tdb.db, [article()])
  t.same(plan.statements, [
    'alter table "articles" add column "locale" varchar(255)',
    'create unique index "articles_document_id_locale_version_unique" on "articles" ("document_id", "locale", ("published_at" is null))',
    'drop index "articles_document_id_version_unique"',
    // The triggers of the other form (the locale is now counted), and the counts again.
    ...['insert', 'update', 'delete', 'truncate'].map((event) => `drop trigger "content_api_row_counts_${event}" on "articles"`),
    ...countTriggers(createRegistry([article()], components).get('api::article.article')!, new Set())
  ])
  await sql`update articles set locale = 'en'`.execute(tdb.db)
  await sql`insert into articles (document_id, title, locale) values ('a', 'A', 'fr')`.execute(tdb.db)
  t.pass('a second locale\'s draft is allowed')
})
