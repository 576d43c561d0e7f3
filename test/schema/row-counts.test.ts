import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import { createRegistry, type Registry } from '../../lib/model/registry.js'
import type { ContentTypeSchema } from '../../lib/model/types.js'
import { syncSchema, type SchemaSyncOptions } from '../../lib/schema/sync.js'
import { rowCountsInUse } from '../../lib/schema/row-counts.js'
import { createTestDatabase, dialectName } from '../helpers/database.js'
import { article, components, homepage } from './models.js'

/** The tables whose row counts the compiler may read. */
const tablesCounted = async (db: Kysely<any>, registry: Registry): Promise<ReadonlySet<string>> => (await rowCountsInUse(db, registry)).tables

/**
 * The row counts kept by triggers (lib/schema/row-counts.ts): sync creates and fills them, and
 * every write, however made, keeps them equal to `count(*)` per table, state and locale.
 */

const apply: SchemaSyncOptions = { mode: 'apply', allowDestructive: false }
const sync = (db: Kysely<any>, models: ContentTypeSchema[], options = apply) => syncSchema(db, createRegistry(models, components), options)

/** A key of the counts: rows without a locale (and every row of a type without i18n) count under `''`. */
interface Key { published: boolean, locale: string, n: number }

/** What the counts say for `table`, per key, zero keys left out, in a stable order. */
async function counted (db: Kysely<any>, table: string): Promise<Key[]> {
  const { rows } = await sql<Key>`select published, locale, sum(n)::int as n from content_api_row_counts where table_name = ${table}
    group by published, locale having sum(n) <> 0 order by published, locale`.execute(db)
  return rows
}

/** What `count(*)` says, in the same form. */
async function actual (db: Kysely<any>, table: string, localized = true): Promise<Key[]> {
  const locale = localized ? sql`coalesce(locale, '')` : sql`''::varchar`
  const { rows } = await sql<Key>`select published_at is not null as published, ${locale} as locale, count(*)::int as n
    from ${sql.table(table)} group by 1, 2 order by 1, 2`.execute(db)
  return rows
}

async function agree (t: Test, db: Kysely<any>, table: string, message: string, localized = true): Promise<void> {
  t.same(await counted(db, table), await actual(db, table, localized), message)
}

t.test('sync creates the counts, keeps them on every kind of write, and plans nothing the second time', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const first = await sync(tdb.db, [article(), homepage])
  t.ok(first.statements.includes('create trigger "content_api_row_counts_delete" after delete on "homepages" referencing old table as old_rows ' +
    'for each statement execute function "content_api_count_rows"()'), 'a type without i18n counts no locale')
  t.same((await sync(tdb.db, [article(), homepage])).statements, [], 'idempotent')
  t.same([...await tablesCounted(tdb.db, createRegistry([article(), homepage], components))].sort(), ['articles', 'files', 'homepages', 'strapi_api_tokens', 'up_permissions', 'up_roles', 'up_users'])

  const db = tdb.db
  await sql`insert into articles (document_id, locale, published_at) values ('a', 'en', null), ('a', 'en', now()), ('b', 'fr', null), ('c', null, null)`.execute(db)
  t.same(await counted(db, 'articles'), [
    { published: false, locale: '', n: 1 }, { published: false, locale: 'en', n: 1 }, { published: false, locale: 'fr', n: 1 },
    { published: true, locale: 'en', n: 1 }
  ], 'a multi-row insert: each key counted')
  await sql`update articles set published_at = now() where document_id = 'b'`.execute(db)
  await agree(t, db, 'articles', 'an update that publishes moves the row to the other key')
  await sql`update articles set locale = 'de' where document_id = 'c'`.execute(db)
  await agree(t, db, 'articles', 'an update of the locale')
  await sql`update articles set slug = 'x'`.execute(db)
  await agree(t, db, 'articles', 'an update of neither changes nothing')
  await sql`delete from articles where document_id = 'a'`.execute(db)
  await agree(t, db, 'articles', 'a delete')
  await t.rejects(db.transaction().execute(async (trx) => {
    await sql`insert into articles (document_id, locale) select 'r' || g, 'en' from generate_series(1, 50) as g`.execute(trx)
    throw new Error('rolled back')
  }), /rolled back/)
  await agree(t, db, 'articles', 'a rolled back insert counts nothing')
  await sql`insert into articles (document_id, locale) select 'g' || g, 'en' from generate_series(1, 500) as g`.execute(db)
  await agree(t, db, 'articles', 'a bulk insert')
  await sql`truncate articles`.execute(db)
  t.same(await counted(db, 'articles'), [], 'truncate resets the table\'s counts')
  await sql`insert into homepages (document_id) values ('h')`.execute(db)
  await agree(t, db, 'homepages', 'a type without i18n', false)
})

/** The table's change count: the write statements on it that the snapshot sees. */
async function changes (db: Kysely<any>, table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select coalesce(sum(changes), 0)::int as n from content_api_row_counts where table_name = ${table}`.execute(db)
  return rows[0].n
}

t.test('the change count: one per write statement that changes rows, never going back', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const db = tdb.db
  await sync(db, [article()])
  const start = await changes(db, 'articles')
  const step = async (statement: ReturnType<typeof sql>, expected: number, message: string): Promise<void> => {
    const before = await changes(db, 'articles')
    await statement.execute(db)
    t.equal(await changes(db, 'articles') - before, expected, message)
  }
  await step(sql`insert into articles (document_id, locale) select 'd' || g, 'en' from generate_series(1, 20) as g`, 1, 'a multi-row insert: one')
  await step(sql`update articles set slug = 'x' where document_id = 'd1'`, 1, 'an update of a column no count keys on: one')
  await step(sql`update articles set published_at = now() where document_id in ('d2', 'd3')`, 1, 'an update that moves rows between keys: one')
  await step(sql`update articles set slug = 'y' where document_id = 'none'`, 0, 'an update of no row: none')
  await step(sql`delete from articles where document_id = 'none'`, 0, 'a delete of no row: none')
  await step(sql`delete from articles where document_id = 'd4'`, 1, 'a delete: one')
  const before = await changes(db, 'articles')
  await t.rejects(db.transaction().execute(async (trx) => {
    await sql`update articles set slug = 'z'`.execute(trx)
    throw new Error('rolled back')
  }), /rolled back/)
  t.equal(await changes(db, 'articles'), before, 'a rolled back statement: none')
  await step(sql`truncate articles`, 1, 'a truncate: one, the count kept')
  t.equal(await changes(db, 'articles'), start + 5, 'five writes, five changes: the truncate reset nothing')
  await agree(t, db, 'articles', 'and the row counts still agree')

  // Sync's refill (after a trigger was dropped) keeps the change count too, and adds one.
  await sql`drop trigger "content_api_row_counts_insert" on articles`.execute(db)
  await sql`insert into articles (document_id, locale) values ('unseen', 'en')`.execute(db)
  const unseen = await changes(db, 'articles')
  await sync(db, [article()])
  t.equal(await changes(db, 'articles'), unseen + 1, 'a refill: one more')
  await agree(t, db, 'articles', 'refilled')
})

t.test('a counts table from before the change count gets its column and the new function', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const db = tdb.db
  await sync(db, [article()])
  await sql`insert into articles (document_id, locale) values ('a', 'en')`.execute(db)
  // The layout and function of the release before: no "changes", and a body that differs.
  await sql`alter table content_api_row_counts drop column changes`.execute(db)
  await sql`create or replace function content_api_count_rows() returns trigger language plpgsql as $$ begin return null; end $$`.execute(db)
  t.notOk((await tablesCounted(db, createRegistry([article()], components))).has('articles'), 'an older function is not trusted')
  t.equal((await rowCountsInUse(db, createRegistry([article()], components))).countFunction, null, 'nor named to the compiler')
  const plan = await sync(db, [article()])
  t.ok(plan.statements.includes('alter table "content_api_row_counts" add column "changes" bigint not null default 0'), 'the column is added')
  t.ok((await tablesCounted(db, createRegistry([article()], components))).has('articles'), 'and the counts are read again')
  const { countFunction } = await rowCountsInUse(db, createRegistry([article()], components))
  const { rows } = await sql<{ oid: number }>`select p.oid::int as oid from pg_proc p where p.proname = 'content_api_count_rows' and p.pronamespace = current_schema()::regnamespace`.execute(db)
  t.equal(countFunction, rows[0].oid, 'with the function that is now this release\'s')
  await sql`update articles set slug = 'b'`.execute(db)
  t.equal(await changes(db, 'articles'), 1, 'writes count their changes from there')
})

t.test('folds gather each key\'s rows into one, in place', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const db = tdb.db
  await sync(db, [article()])
  // REPEATABLE READ writers only insert: five rows for the key (false, 'en').
  for (let i = 0; i < 5; i++) {
    await db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
      await sql`insert into articles (document_id, locale) values (${`rr${i}`}, 'en')`.execute(trx)
    })
  }
  const rows = async (): Promise<Array<{ published: boolean, locale: string, rows: number }>> => (await sql<{ published: boolean, locale: string, rows: number }>`
    select published, locale, count(*)::int as rows from content_api_row_counts
    where table_name = 'articles' and locale = 'en' group by 1, 2`.execute(db)).rows
  const before = await rows()
  t.equal(before[0].rows, 5, 'five rows for the key')
  const changesBefore = await changes(db, 'articles')
  // About one statement in 64 folds: 1,000 give a fold all but certainly ((63/64)^1000 < 1e-6).
  // In one transaction, to read its statistics before and after: the rows it inserted into the
  // counts (the session's unsent statistics, which no flush changes inside a transaction).
  const inserted = await db.transaction().execute(async (trx) => {
    const insertedSoFar = async (): Promise<number> => (await sql<{ n: number }>`select pg_stat_get_xact_tuples_inserted('content_api_row_counts'::regclass)::int as n`.execute(trx)).rows[0].n
    const start = await insertedSoFar()
    for (let i = 0; i < 1000; i++) await sql`update articles set slug = ${String(i)} where document_id = 'rr0'`.execute(trx)
    return await insertedSoFar() - start
  })
  t.equal(inserted, 0, 'in place: no row inserted, so no index entry added')
  const after = await rows()
  t.equal(after.length, 1, 'one key')
  t.equal(after[0].rows, 1, 'folded into one row')
  await agree(t, db, 'articles', 'the count is unchanged')
  t.equal(await changes(db, 'articles'), changesBefore + 1000, 'and so is the change count, plus the updates')
})

t.test('a table that had rows before its triggers is filled in the same transaction', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  for (const event of ['insert', 'update', 'delete', 'truncate']) await sql.raw(`drop trigger "content_api_row_counts_${event}" on articles`).execute(tdb.db)
  await sql`insert into articles (document_id, locale, published_at) select 'd' || g, 'en', case when g % 3 = 0 then now() end from generate_series(1, 30) as g`.execute(tdb.db)
  await sql`insert into content_api_row_counts (table_name, published, locale, n) values ('articles', false, 'en', 1000)`.execute(tdb.db)
  t.same([...await tablesCounted(tdb.db, createRegistry([article()], components))].includes('articles'), false, 'without triggers the counts are not read')

  const dry = await sync(tdb.db, [article()], { mode: 'dryRun', allowDestructive: false })
  t.same(dry.statements.slice(-2), [
    'with "gone" as (delete from "content_api_row_counts" where "table_name" = \'articles\' returning "changes") insert into "content_api_row_counts" ("table_name", "published", "locale", "n", "changes") select \'articles\', false, \'\', 0, coalesce(sum("changes"), 0) + 1 from "gone"',
    'insert into "content_api_row_counts" ("table_name", "published", "locale", "n") select \'articles\', "published_at" is not null, coalesce("locale", \'\'), count(*) from "articles" group by 2, 3'
  ], 'a dry run plans the fill')
  t.equal((await counted(tdb.db, 'articles')).length, 1, 'and runs nothing')

  const plan = await sync(tdb.db, [article()])
  t.same(plan.statements, dry.statements, 'apply runs what the dry run showed')
  t.same(await counted(tdb.db, 'articles'), [{ published: false, locale: 'en', n: 20 }, { published: true, locale: 'en', n: 10 }], 'filled from the rows, stale counts gone')
  t.ok((await tablesCounted(tdb.db, createRegistry([article()], components))).has('articles'))
})

t.test('a disabled trigger is not trusted; sync puts it back and counts again', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const registry = createRegistry([article()], components)
  await sync(tdb.db, [article()])
  await sql`alter table articles disable trigger content_api_row_counts_insert`.execute(tdb.db)
  await sql`insert into articles (document_id, locale) values ('a', 'en')`.execute(tdb.db)
  t.notOk((await tablesCounted(tdb.db, registry)).has('articles'))
  await sync(tdb.db, [article()])
  t.ok((await tablesCounted(tdb.db, registry)).has('articles'))
  await agree(t, tdb.db, 'articles', 'refilled')
})

t.test('a renamed type leaves its old table writable, and its new one counted', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  const renamed = { ...article(), collectionName: 'posts' }
  await sync(tdb.db, [renamed])
  await sql`insert into articles (document_id, locale) values ('old', 'en')`.execute(tdb.db)
  await sql`delete from articles`.execute(tdb.db)
  await sql`insert into posts (document_id, locale) values ('new', 'en')`.execute(tdb.db)
  await agree(t, tdb.db, 'posts', 'the new table is counted')
  await sql`drop table articles`.execute(tdb.db)
  await sql`insert into posts (document_id, locale) values ('new2', 'en')`.execute(tdb.db)
  await agree(t, tdb.db, 'posts', 'dropping the old table leaves writes working')
})

t.test('concurrent writers on several connections: the counts stay exact, in few rows', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await sync(tdb.db, [article()])
  const workers = Array.from({ length: 6 }, () => tdb.connectAgain())
  const locales = ['en', 'fr', 'de']
  let seed = 42
  const random = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const rounds = dialectName === 'postgres' ? 60 : 25
  let statements = 0
  let inserted = 0

  await Promise.all(workers.map(async (db, w) => {
    for (let i = 0; i < rounds; i++) {
      const locale = locales[random(3)]
      // Two writers run REPEATABLE READ, and only create: nothing of theirs may fail.
      const repeatable = w < 2
      const op = repeatable ? random(2) : random(5)
      const rollBack = random(6) === 0
      await db.transaction().setIsolationLevel(repeatable ? 'repeatable read' : 'read committed').execute(async (trx) => {
        if (op === 0 || op === 1) {
          // a create: a draft, sometimes its published copy too
          await sql`insert into articles (document_id, locale) values (${`w${w}-${i}`}, ${locale})`.execute(trx)
          if (op === 1) await sql`insert into articles (document_id, locale, published_at) values (${`w${w}-${i}`}, ${locale}, now())`.execute(trx)
          if (repeatable) inserted += op + 1
        } else if (op === 2) {
          // publish: a draft's published copy
          await sql`insert into articles (document_id, locale, published_at) select document_id, locale, now() from articles
            where id = (select min(id) from articles a where a.published_at is null and a.locale = ${locale}
              and not exists (select 1 from articles p where p.document_id = a.document_id and p.locale = a.locale and p.published_at is not null))`.execute(trx)
        } else if (op === 3) {
          // unpublish: a published row goes
          await sql`delete from articles where id = (select max(id) from articles where published_at is not null and locale = ${locale})`.execute(trx)
        } else {
          // delete a document, every row of it
          await sql`delete from articles where document_id = (select max(document_id) from articles where locale = ${locale})`.execute(trx)
        }
        statements += op === 1 ? 2 : 1
        if (rollBack) throw new Error('rollback')
      }).catch((err: Error) => {
        // A rollback on purpose; on PostgreSQL two writers publishing the same draft may meet the version index.
        if (err.message !== 'rollback' && (repeatable || !/version_unique/.test(err.message))) throw err
      })
    }
  }))
  await agree(t, tdb.db, 'articles', 'every key equals count(*)')
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from content_api_row_counts where table_name = 'articles'`.execute(tdb.db)
  const keys = (await actual(tdb.db, 'articles')).length
  // Each READ COMMITTED writer adds to a row of the key no one holds; REPEATABLE READ ones insert.
  t.ok(rows[0].n <= keys * workers.length + inserted,
    `about one row per key and writer (${rows[0].n} rows for ${keys} keys after ${statements} statements, ${inserted} of them REPEATABLE READ inserts)`)
})
