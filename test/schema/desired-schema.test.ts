import t from 'tap'
import { sql } from 'kysely'
import { createRegistry } from '../../lib/model/registry.js'
import { ConfigurationError } from '../../lib/errors.js'
import { desiredSchema, type TableSpec } from '../../lib/schema/desired-schema.js'
import { createTable, createIndex } from '../../lib/schema/ddl.js'
import { introspectSchema } from '../../lib/schema/introspect.js'
import { createTestDatabase } from '../helpers/database.js'
import { article, components, everyType, everyTypeColumns, homepage } from './models.js'

const registry = createRegistry([everyType, article(), homepage], components)
const specs = desiredSchema(registry)
const byName = (name: string): TableSpec => {
  const spec = specs.find((s) => s.name === name)
  if (spec === undefined) throw new Error(`no spec for ${name}`)
  return spec
}
const columnsOf = (spec: TableSpec): Record<string, string> => Object.fromEntries(spec.columns.map((c) => [c.name, c.type]))

t.test('one table per content type (the built-in file type first), one per component, then link tables and the row counts', async (t) => {
  t.same(specs.map((s) => s.name), [
    // the built-in content types first: the upload file and users-and-permissions
    'files', 'up_users', 'up_roles', 'up_permissions', 'strapi_api_tokens',
    'kitchen_sinks', 'articles', 'homepages', 'components_shared_seos',
    // then relation link tables, then the media link table, then the row counts
    'up_users_role_lnk', 'up_permissions_role_lnk', 'files_related_mph', 'content_api_row_counts'
  ])
})

t.test('every scalar type maps to its PostgreSQL type, in model order between the system columns', async (t) => {
  const spec = byName('kitchen_sinks')
  t.same(spec.columns.map((c) => c.name), [
    'id', 'document_id', ...Object.keys(everyTypeColumns), 'created_at', 'updated_at', 'published_at'
  ], 'no locale column on a non-localized type')
  const types = columnsOf(spec)
  for (const [column, type] of Object.entries(everyTypeColumns)) t.equal(types[column], type, column)
})

t.test('system columns: serial id, NOT NULL document id, timestamps defaulting to now()', async (t) => {
  const spec = byName('articles')
  const column = (name: string) => spec.columns.find((c) => c.name === name)
  t.match(column('id'), { type: 'serial', primaryKey: true, nullable: false })
  t.match(column('document_id'), { type: 'varchar(255)', nullable: false })
  t.match(column('created_at'), { type: 'timestamp(3) with time zone', nullable: false, default: 'now()' })
  t.match(column('updated_at'), { type: 'timestamp(3) with time zone', nullable: false, default: 'now()' })
  t.match(column('published_at'), { type: 'timestamp(3) with time zone', nullable: true })
  t.equal(column('published_at')?.default, undefined)
  t.match(column('locale'), { type: 'varchar(255)', nullable: true }, 'localized types get a locale column')
})

t.test('attribute columns are nullable, even required ones', async (t) => {
  const spec = byName('articles')
  t.same(spec.columns.filter((c) => !c.nullable).map((c) => c.name), ['id', 'document_id', 'created_at', 'updated_at'])
  t.equal(spec.columns.find((c) => c.name === 'title')?.nullable, true, 'title is required in the model')
})

t.test('indexes: the version index, and a plain (non-unique) index per unique attribute', async (t) => {
  const replaces = (table: string, other: string) => [`${table}_document_id_locale_published_at_idx`, `${table}_document_id_published_at_idx`, other]
  t.same(byName('articles').indexes, [
    {
      name: 'articles_document_id_locale_version_unique',
      columns: ['document_id', 'locale'],
      expressions: ['("published_at" is null)'],
      unique: true,
      replaces: replaces('articles', 'articles_document_id_version_unique')
    },
    { name: 'articles_slug_idx', columns: ['slug'] }
  ])
  t.same(byName('kitchen_sinks').indexes, [
    {
      name: 'kitchen_sinks_document_id_version_unique',
      columns: ['document_id'],
      expressions: ['("published_at" is null)'],
      unique: true,
      replaces: replaces('kitchen_sinks', 'kitchen_sinks_document_id_locale_version_unique')
    },
    { name: 'kitchen_sinks_a_uid_idx', columns: ['a_uid'] }
  ])
  t.same(byName('homepages').indexes.map((i) => i.name), ['homepages_document_id_version_unique'])
  // Besides the version index, only link tables have unique indexes (a document is linked to another at most once).
  for (const spec of specs.filter((s) => !s.name.endsWith('_lnk'))) {
    for (const index of spec.indexes.slice(1)) t.not(index.unique, true, `${index.name} is not unique`)
  }
})

t.test('a single type gets the same table shape as a collection type', async (t) => {
  t.same(columnsOf(byName('homepages')), {
    id: 'serial',
    document_id: 'varchar(255)',
    heading: 'varchar(255)',
    created_at: 'timestamp(3) with time zone',
    updated_at: 'timestamp(3) with time zone',
    published_at: 'timestamp(3) with time zone'
  })
})

t.test('a component table has an id and its attributes only', async (t) => {
  const spec = byName('components_shared_seos')
  t.same(columnsOf(spec), { id: 'serial', meta_title: 'varchar(255)', meta_description: 'text' })
  t.same(spec.indexes, [])
  t.same(spec.foreignKeys, [])
})

t.test('a component table named like a content-type table is a configuration error', async (t) => {
  const clash = createRegistry([homepage], { 'shared.seo': { collectionName: 'homepages', attributes: {} } })
  t.throws(() => desiredSchema(clash), ConfigurationError)
})

t.test('the specs create tables whose catalog types are exactly the mapped types', async (t) => {
  const tdb = await createTestDatabase()
  t.teardown(() => tdb.drop())
  for (const spec of specs) {
    await sql.raw(createTable(spec)).execute(tdb.db)
    for (const index of spec.indexes) await sql.raw(createIndex(spec.name, index)).execute(tdb.db)
  }
  const current = await introspectSchema(tdb.db)
  const sinks = current.get('kitchen_sinks')
  t.ok(sinks)
  for (const [column, type] of Object.entries(everyTypeColumns)) t.equal(sinks?.columns.get(column)?.type, type, column)
  t.equal(sinks?.columns.get('id')?.type, 'serial', 'an integer fed by a sequence reads as serial')
  t.equal(sinks?.columns.get('created_at')?.type, 'timestamp(3) with time zone')
  t.same(sinks?.indexes.get('kitchen_sinks_a_uid_idx'), { name: 'kitchen_sinks_a_uid_idx', columns: ['a_uid'], unique: false, primary: false })
  t.match(current.get('articles')?.indexes.get('articles_document_id_locale_version_unique'),
    { columns: ['document_id', 'locale'], unique: true }, 'an expression key is not a column')
})

t.test('`index: true` adds a plain btree index on the attribute column', async (t) => {
  const indexed = createRegistry([{
    kind: 'collectionType',
    info: { singularName: 'post', pluralName: 'posts' },
    attributes: { views: { type: 'integer', index: true }, title: { type: 'string' } }
  }])
  const spec = desiredSchema(indexed).find((s) => s.name === 'posts')!
  t.same(spec.indexes.map((i) => ({ columns: i.columns, unique: i.unique ?? false })), [
    { columns: ['document_id'], unique: true },
    { columns: ['views'], unique: false }
  ])
})
