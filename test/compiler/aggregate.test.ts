import t from 'tap'
import { compiler } from '../helpers/sql-compiler.js'
import { compileAggregate } from '../../lib/compiler/aggregate.js'
import { compileFilter, createFilterContext } from '../../lib/compiler/filters.js'
import { sortExpression } from '../../lib/compiler/sort.js'
import { createRegistry } from '../../lib/model/registry.js'
import { parseAggregate } from '../../lib/query/aggregate.js'
import { parseFilters } from '../../lib/query/filters.js'
import { parseQuery } from '../../lib/query/index.js'
import { parseSort } from '../../lib/query/sort.js'
import { oracleComponents, oracleModels } from '../fixtures/oracle/models.js'

/**
 * The SQL of aggregations and of relation counts in sort and filters: one statement, every value
 * a parameter. What they answer is asserted end to end in test/rest/aggregations.test.ts.
 */

const registry = createRegistry(oracleModels, oracleComponents)
const article = registry.get('api::article.article')!
const category = registry.get('api::category.category')!
const OPTIONS = { escapeLikeWildcards: false }
const I18N = { locales: ['en', 'fr'], defaultLocale: 'en' }

function aggregate (raw: Record<string, unknown>): { sql: string, parameters: readonly unknown[] } {
  const tree = parseQuery(article, raw, { registry, limits: { defaultLimit: 25, maxLimit: 100, withCount: true }, i18n: I18N, allowAllLocales: true })
  const spec = parseAggregate(article, raw, registry, null, null, 100)
  const { sql, parameters } = compileAggregate(compiler, article, tree, spec, OPTIONS).compile()
  return { sql, parameters }
}

t.test('no groupBy: one row of aggregates over the scope', async (t) => {
  t.same(aggregate({ sum: 'views', avg: 'rating', max: 'publishDate' }), {
    sql: 'select coalesce(json_agg(json_build_object($1::text, json_build_object(), $2::text, "g"."n", $3::text, json_build_object($4::text, "g"."m0"), ' +
      '$5::text, json_build_object($6::text, "g"."m1"::float8), $7::text, json_build_object($8::text, "g"."m2"::text))), \'[]\')::text as "data", count(*)::int as "groups" ' +
      'from (select count(*)::int as "n", sum("t"."views") as "m0", avg("t"."rating") as "m1", max("t"."publish_date") as "m2" ' +
      'from "articles" as "t" where ("t"."published_at" is not null and "t"."locale" = $9)) as "g"',
    parameters: ['group', 'count', 'sum', 'views', 'avg', 'rating', 'max', 'publishDate', 'en']
  })
})

t.test('groupBy a field and a to-one relation\'s field: grouped by position, bounded', async (t) => {
  const { sql, parameters } = aggregate({ count: 'false', sum: 'views', groupBy: ['kind', 'category.name'], filters: { views: { $gt: 3 } }, status: 'draft' })
  t.equal(sql, 'select coalesce(json_agg(json_build_object($1::text, json_build_object($2::text, "g"."g0", $3::text, "g"."g1"), $4::text, json_build_object($5::text, "g"."m0")) ' +
    'order by "g"."g0", "g"."g1"), \'[]\')::text as "data", count(*)::int as "groups" ' +
    'from (select "t"."kind" as "g0", (select "r1"."name" from "categories" as "r1" join "articles_category_lnk" as "l2" on "l2"."category_id" = "r1"."id" ' +
    'where "l2"."article_id" = "t"."id" order by "l2"."id" asc limit 1) as "g1", sum("t"."views") as "m0" ' +
    'from "articles" as "t" where ("t"."published_at" is null and "t"."locale" = $6 and "t"."views" > $7) group by 1, 2 order by 1, 2 limit 101) as "g"')
  t.same(parameters, ['group', 'kind', 'category.name', 'sum', 'views', 'en', 3])
})

t.test('sort by a relation\'s count: a count sub-select in the request\'s status', async (t) => {
  const [term] = parseSort(category, 'articles:count:desc', registry)
  const compiled = compiler.selectFrom('categories as t').select('t.id')
    .orderBy(sortExpression(term, 't', createFilterContext(OPTIONS, 'published')), term.direction).compile()
  t.equal(compiled.sql, 'select "t"."id" from "categories" as "t" order by (select count(*)::int from "articles" as "r1" join "articles_category_lnk" as "l2" ' +
    'on "l2"."article_id" = "r1"."id" where "l2"."category_id" = "t"."id" and "r1"."published_at" is not null) desc')
})

t.test('filter by a relation\'s count: the child compares the count\'s column', async (t) => {
  const node = parseFilters(category, { articles: { $count: { $gt: 3 } } }, registry)!
  const compiled = compiler.selectFrom('categories as t').select('t.id').where(compileFilter(node, 't', createFilterContext(OPTIONS, 'draft'))).compile()
  t.equal(compiled.sql, 'select "t"."id" from "categories" as "t" where exists (select 1 from (select count(*)::int as n from "articles" as "r1" ' +
    'join "articles_category_lnk" as "l2" on "l2"."article_id" = "r1"."id" where "l2"."category_id" = "t"."id" and "r1"."published_at" is null) as "c3" where "c3"."n" > $1)')
  t.same(compiled.parameters, [3])
})
