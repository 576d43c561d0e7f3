import { sql, type Kysely } from 'kysely'
import { normalizeType } from './sql-type.js'

/**
 * What the database holds now, read from pg_catalog for the schema new tables go to
 * (`current_schema()`, the first existing schema on the search_path). Tables of other schemas
 * are invisible to sync: an application sharing the database keeps its own schemas to itself.
 */

export interface CurrentColumn {
  readonly name: string
  /** Normalised (`varchar(255)`, `timestamp(3) with time zone`); an integer fed by a sequence is `serial`. */
  readonly type: string
  readonly nullable: boolean
  readonly default: string | null
}

export interface CurrentIndex {
  readonly name: string
  /** Empty for an index on expressions only. */
  readonly columns: readonly string[]
  readonly unique: boolean
  readonly primary: boolean
}

export interface CurrentTable {
  readonly name: string
  readonly columns: ReadonlyMap<string, CurrentColumn>
  readonly indexes: ReadonlyMap<string, CurrentIndex>
  /** Names of the table's foreign-key constraints. */
  readonly foreignKeys: ReadonlySet<string>
}

export type CurrentSchema = ReadonlyMap<string, CurrentTable>

interface ColumnRow { table: string, name: string | null, type: string, nullable: boolean, default: string | null, identity: string }
interface IndexRow { table: string, name: string, columns: string[], unique: boolean, primary: boolean }
interface ConstraintRow { table: string, name: string }

/** `integer` + `nextval(...)` default (what `serial` creates) or an identity column reads as serial. */
function columnType (row: ColumnRow): string {
  const type = normalizeType(row.type)
  const generated = row.identity !== '' || (row.default !== null && row.default.startsWith('nextval('))
  if (!generated) return type
  if (type === 'integer') return 'serial'
  if (type === 'bigint') return 'bigserial'
  return type
}

type MutableTable = { name: string, columns: Map<string, CurrentColumn>, indexes: Map<string, CurrentIndex>, foreignKeys: Set<string> }

/**
 * Reads tables (ordinary and partitioned), columns, indexes and foreign keys of the current schema
 * in three catalog queries, e.g.
 *
 * ```sql
 * select c.relname as "table", a.attname as name, format_type(a.atttypid, a.atttypmod) as type, ...
 * from pg_class c join pg_namespace n on n.oid = c.relnamespace
 * left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped ...
 * where n.nspname = current_schema() and c.relkind in ('r', 'p')
 * ```
 *
 * Pass the transaction that holds the schema lock, so what is read cannot change before the plan runs.
 */
export async function introspectSchema (db: Kysely<any>): Promise<CurrentSchema> {
  const columns = await sql<ColumnRow>`
    select c.relname as "table", a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
      not a.attnotnull as nullable, pg_get_expr(d.adbin, d.adrelid) as "default", a.attidentity::text as identity
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    -- a left join, so that a table without columns still reads as existing
    left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where n.nspname = current_schema() and c.relkind in ('r', 'p')
    order by c.relname, a.attnum`.execute(db)

  const indexes = await sql<IndexRow>`
    select t.relname as "table", i.relname as name, ix.indisunique as "unique", ix.indisprimary as "primary",
      coalesce((
        select json_agg(a.attname order by k.ord)
        from unnest(ix.indkey::int2[]) with ordinality as k(attnum, ord)
        join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
      ), '[]'::json) as columns
    from pg_index ix
    join pg_class i on i.oid = ix.indexrelid
    join pg_class t on t.oid = ix.indrelid
    join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and t.relkind in ('r', 'p')`.execute(db)

  const foreignKeys = await sql<ConstraintRow>`
    select t.relname as "table", c.conname as name
    from pg_constraint c
    join pg_class t on t.oid = c.conrelid
    join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and c.contype = 'f'`.execute(db)

  const tables = new Map<string, MutableTable>()
  const table = (name: string): MutableTable => {
    let found = tables.get(name)
    if (found === undefined) {
      found = { name, columns: new Map(), indexes: new Map(), foreignKeys: new Set() }
      tables.set(name, found)
    }
    return found
  }
  for (const row of columns.rows) {
    const t = table(row.table)
    if (row.name !== null) t.columns.set(row.name, { name: row.name, type: columnType(row), nullable: row.nullable, default: row.default })
  }
  for (const row of indexes.rows) {
    table(row.table).indexes.set(row.name, { name: row.name, columns: row.columns, unique: row.unique, primary: row.primary })
  }
  for (const row of foreignKeys.rows) table(row.table).foreignKeys.add(row.name)
  return tables
}
