import t from 'tap'
import { describeStatement } from '../../lib/schema/describe-statement.js'
import { addColumn, addForeignKey, alterColumnType, alterNullability, createIndex, createTable, dropColumn, dropIndex } from '../../lib/schema/ddl.js'
import { countTriggers, createCountFunction, tuneCountsTable } from '../../lib/schema/row-counts.js'
import { createRegistry } from '../../lib/model/registry.js'
import { article, components } from './models.js'

/** Every statement a plan holds, as the few words of its log line and of the CLI's plan. */

t.test('the DDL of a plan', async (t) => {
  const column = { name: 'views', type: 'integer', nullable: true }
  t.equal(describeStatement(createTable({ name: 'articles', columns: [column], indexes: [], foreignKeys: [] })), 'create table articles')
  t.equal(describeStatement(addColumn('articles', column)), 'add column articles.views integer')
  t.equal(describeStatement(addColumn('articles', { name: 'state', type: 'varchar(255)', nullable: false, default: "'draft'" })),
    'add column articles.state varchar(255) not null default \'draft\'')
  t.equal(describeStatement(dropColumn('articles', 'subtitle')), 'drop column articles.subtitle')
  t.equal(describeStatement(alterColumnType('articles', 'views', 'varchar(255)')), 'alter column articles.views type varchar(255)')
  t.equal(describeStatement(alterNullability('articles', 'title', true)), 'alter column articles.title drop not null')
  t.equal(describeStatement(alterNullability('articles', 'title', false)), 'alter column articles.title set not null')
  t.equal(describeStatement(createIndex('articles', { name: 'articles_slug_idx', columns: ['slug'] })), 'create index articles_slug_idx on articles')
  t.equal(describeStatement(createIndex('articles', { name: 'articles_v', columns: ['document_id'], expressions: ['("published_at" is null)'], unique: true })),
    'create unique index articles_v on articles')
  t.equal(describeStatement(dropIndex('articles_old_idx')), 'drop index articles_old_idx')
  t.equal(describeStatement(addForeignKey('articles_cmps', { name: 'articles_cmps_entity_fk', columns: ['entity_id'], references: { table: 'articles', columns: ['id'] }, onDelete: 'cascade' })),
    'add foreign key articles_cmps_entity_fk articles_cmps(entity_id) -> articles')
  t.equal(describeStatement(createTable({ name: 'odd "name"', columns: [column], indexes: [], foreignKeys: [] })), 'create table odd "name"', 'a quoted quote')
})

t.test('the row counts\' statements', async (t) => {
  t.equal(describeStatement(createCountFunction()), 'create function content_api_count_rows')
  t.equal(describeStatement(tuneCountsTable()), 'tune storage of content_api_row_counts')
  const model = createRegistry([article()], components).contentTypes.get('api::article.article')!
  t.same(countTriggers(model, new Set(['content_api_row_counts_insert'])).map(describeStatement), [
    'drop trigger content_api_row_counts_insert on articles',
    'create trigger content_api_row_counts_insert on articles',
    'create trigger content_api_row_counts_update on articles',
    'create trigger content_api_row_counts_delete on articles',
    'create trigger content_api_row_counts_truncate on articles',
    'clear content_api_row_counts of articles',
    'count rows of articles into content_api_row_counts'
  ])
})

t.test('any other text: its first words', async (t) => {
  t.equal(describeStatement('vacuum analyze "articles"'), 'vacuum analyze "articles"')
  t.equal(describeStatement('comment on column "articles"."title" is \'The title\''), 'comment on column "articles"."title" is \'The ...')
})
