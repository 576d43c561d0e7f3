import t from 'tap'
import { compiler } from '../helpers/sql-compiler.js'
import { compileFilter, createFilterContext } from '../../lib/compiler/filters.js'
import { createRegistry } from '../../lib/model/registry.js'
import { parseFilters } from '../../lib/query/filters.js'
import { ARTICLE, relationComponents, relationModels } from '../fixtures/relations.js'

/**
 * The SQL of filters inside a dynamic zone (`filters[blocks][on][<uid>]...`) and through nested
 * components: one EXISTS per hop over the owner's `_cmps` join table, values as parameters.
 * The rows they select are asserted end to end in test/rest/dynamic-zone-filters.test.ts.
 */

const registry = createRegistry(relationModels, relationComponents)
const article = registry.get(ARTICLE)!

function where (raw: unknown, status: 'published' | 'draft' = 'published'): { sql: string, parameters: readonly unknown[] } {
  const node = parseFilters(article, raw, registry)!
  const compiled = compiler.selectFrom('articles as t').select('t.id').where(compileFilter(node, 't', createFilterContext({ escapeLikeWildcards: false }, status))).compile()
  return { sql: compiled.sql.replace('select "t"."id" from "articles" as "t" where ', ''), parameters: compiled.parameters }
}

const QUOTES = 'select 1 from "components_content_quotes" as "r1" join "articles_cmps" as "l2" on "l2"."cmp_id" = "r1"."id" ' +
  'where "l2"."entity_id" = "t"."id" and "l2"."component_type" = $1 and "l2"."field" = $2'

t.test('one component type of a dynamic zone', async (t) => {
  t.same(where({ blocks: { on: { 'content.quote': { text: { $containsi: 'hello' } } } } }), {
    sql: `exists (${QUOTES} and lower("r1"."text"::text) like lower($3))`,
    parameters: ['content.quote', 'blocks', '%hello%']
  })
})

t.test('a component inside a dynamic-zone item: one more EXISTS over the component\'s join table', async (t) => {
  t.same(where({ blocks: { on: { 'content.cta': { target: { url: '/buy' } } } } }), {
    sql: 'exists (select 1 from "components_content_ctas" as "r1" join "articles_cmps" as "l2" on "l2"."cmp_id" = "r1"."id" ' +
      'where "l2"."entity_id" = "t"."id" and "l2"."component_type" = $1 and "l2"."field" = $2 and ' +
      'exists (select 1 from "components_shared_links" as "r3" join "components_content_ctas_cmps" as "l4" on "l4"."cmp_id" = "r3"."id" ' +
      'where "l4"."entity_id" = "r1"."id" and "l4"."component_type" = $3 and "l4"."field" = $4 and "r3"."url" = $5))',
    parameters: ['content.cta', 'blocks', 'shared.link', 'target', '/buy']
  })
})

t.test('$not of an on condition is two-valued: NOT EXISTS', async (t) => {
  t.same(where({ blocks: { $not: { on: { 'content.quote': { by: 'Ann' } } } } }), {
    sql: `not (exists (${QUOTES} and "r1"."by" = $3))`,
    parameters: ['content.quote', 'blocks', 'Ann']
  })
})

t.test('$null on the type: some matching item, or none of the type at all', async (t) => {
  t.same(where({ blocks: { on: { 'content.quote': { $null: true } } } }), {
    sql: `(exists (${QUOTES} and "r1"."id" is null) or not exists (${QUOTES.replace('$1', '$3').replace('$2', '$4')}))`,
    parameters: ['content.quote', 'blocks', 'content.quote', 'blocks']
  })
})

t.test('the status does not change component reads: components belong to their owner row', async (t) => {
  t.same(where({ blocks: { on: { 'content.quote': { by: 'Ann' } } } }, 'draft'), where({ blocks: { on: { 'content.quote': { by: 'Ann' } } } }))
})
