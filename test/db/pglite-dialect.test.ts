import t from 'tap'
import { sql } from 'kysely'
import { createTestDatabase, dialectName } from '../helpers/database.js'

/**
 * PGliteDialect answers as Kysely's PostgreSQL dialect over node-postgres does: these run on the
 * suite's database, PGlite's dialect by default, node-postgres with DATABASE_URL, and expect the
 * same of both.
 */
t.test(`a text without parameters may hold several statements, and answers no rows (${dialectName})`, async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  const script = await sql.raw<{ x: number }>('create table a (x int)\n;\ninsert into a values (1), (2)\n;\nselect x from a order by x').execute(tdb.db)
  t.same(script.rows, [])
  const { rows } = await sql.raw<{ x: number }>('select x from a order by x').execute(tdb.db)
  t.same(rows, [{ x: 1 }, { x: 2 }], 'every statement of the script ran; one statement answers its rows')
  const inserted = await sql`insert into a values (${3})`.execute(tdb.db)
  t.equal(inserted.numAffectedRows, 1n, 'a statement with parameters still counts the rows it wrote')
  const deleted = await sql.raw('delete from a where x < 3').execute(tdb.db)
  t.equal(deleted.numAffectedRows, 2n, 'as does one without')
  await t.rejects(sql`select ${1}; select ${2}`.execute(tdb.db), /multiple commands/, 'with parameters, one statement only')
})

t.test('a script that fails inside a transaction leaves nothing of its statements', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  await t.rejects(tdb.db.transaction().execute(async (trx) => {
    await sql.raw('create table b (x int)\n;\ninsert into b values (1)\n;\nselect 1 / 0').execute(trx)
  }), /division by zero/)
  const { rows } = await sql<{ present: boolean }>`select to_regclass('b') is not null as present`.execute(tdb.db)
  t.same(rows, [{ present: false }])
})
