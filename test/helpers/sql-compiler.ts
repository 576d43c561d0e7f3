import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'

/**
 * A Kysely that only compiles (PostgreSQL dialect, no connection): the compiler tests assert a
 * statement's SQL text and parameters with it before running the statement on a real database.
 */
export const compiler = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler()
  }
})
