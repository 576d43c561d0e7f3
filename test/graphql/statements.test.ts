import t from 'tap'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { StatementCounter } from '../helpers/statements.js'
import { buildGraphql, FULL_TOKEN } from './helpers.js'

/**
 * "No N+1": a root field is ONE SQL statement whatever the nesting of its selection set, because
 * the selection set becomes the populate tree of one compiled read. Every statement Kysely runs
 * is recorded (the access check's cached permission lookup aside).
 */

for (const format of ['entity', 'flat'] as const) {
  t.test(`${format}: one statement per root field, whatever the nesting`, async (t) => {
    const counter = new StatementCounter()
    // The entity shape's wrappers (data, attributes) take two levels per relation: allow this query's
    // depth, and the rows it may read (about 30,000 estimated from its pages, docs/operations.md).
    const { gql } = await buildGraphql(t, { format, depthLimit: 20, maxRows: 50_000 }, undefined, (db) => db.withPlugin(counter), { maxRows: 50_000 })
    const deep = format === 'entity'
      ? `{ articles(pagination: { limit: 50 }) { data { attributes { title
          category { data { attributes { name articles(pagination: { limit: 5 }) { data { attributes { title
            authors { data { attributes { name articles { data { attributes { title } } } } } } } } } } } }
          authors(sort: "name") { data { attributes { name } } } cover { data { attributes { url } } } seo { metaTitle }
          blocks { ... on ComponentSharedQuote { text } } localizations { data { attributes { locale } } }
        } } meta { pagination { total } } } }`
      : `{ articles_connection(pagination: { limit: 50 }) { nodes { title
          category { name articles(pagination: { limit: 5 }) { title authors { name articles { title } } } }
          authors(sort: "name") { name } a2: authors(sort: "name:desc") { name } authors_connection { nodes { email } }
          cover { url } seo { metaTitle } blocks { ... on ComponentSharedQuote { text } } localizations { locale }
        } pageInfo { total } } }`
    let body: any
    const statements = await counter.during(async () => { body = (await gql(deep)).body })
    t.equal(body.errors, undefined, JSON.stringify(body.errors))
    const list = format === 'entity' ? body.data.articles.data : body.data.articles_connection.nodes
    t.equal(list.length, 50, 'fifty articles, five levels deep')
    t.same(statements.map((s) => s.kind), ['SelectQueryNode'], 'ONE statement, count included')
    for (const table of ['articles', 'categories', 'authors', 'articles_authors_lnk', 'files', 'components_shared_seos', 'components_shared_quotes']) {
      t.ok(statements[0].tables.includes(table), `it reads ${table}`)
    }

    const two = await counter.during(async () => {
      await gql(format === 'entity' ? '{ a: articles { data { id } } c: categories { data { id } } }' : '{ a: articles { title } c: categories { name } }')
    })
    t.equal(two.length, 2, 'two root fields: two statements')

    const mutation = await counter.during(async () => {
      await gql(format === 'entity'
        ? 'mutation { createCategory(data: { name: "Counted" }) { data { attributes { name articles { data { id } } } } } }'
        : 'mutation { createCategory(data: { name: "Counted" }) { name articles { title } } }', undefined, FULL_TOKEN)
    })
    t.equal(mutation.filter((s) => s.kind === 'SelectQueryNode' && s.tables.includes('articles') && s.tables.includes('categories')).length, 1,
      'a mutation answers with one read of the written document')
  })
}

/** Records the rendered JSON (`data`) of every read, as the resolvers parse it. */
class RenderedJson implements KyselyPlugin {
  rendered: unknown[] = []
  transformQuery (args: PluginTransformQueryArgs): RootOperationNode { return args.node }
  async transformResult (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const data = args.result.rows[0]?.data
    if (typeof data === 'string') this.rendered.push(JSON.parse(data))
    return args.result
  }
}

const keysOf = (value: unknown): string[] => Object.keys(value as object).sort()

t.test('a read renders the columns its selection reads, id and documentId only when selected', async (t) => {
  for (const format of ['flat', 'entity'] as const) {
    const recorder = new RenderedJson()
    const { gql } = await buildGraphql(t, { format }, undefined, (db) => db.withPlugin(recorder))
    const read = async (query: string): Promise<any> => {
      recorder.rendered = []
      const { body } = await gql(query)
      t.equal(body.errors, undefined, JSON.stringify(body.errors))
      t.equal(recorder.rendered.length, 1, `${format}: one rendered read`)
      return recorder.rendered[0]
    }
    const titled = format === 'flat'
      ? await read('{ articles(pagination: { limit: 2 }) { title category { name } } }')
      : await read('{ articles(pagination: { limit: 2 }) { data { attributes { title category { data { attributes { name } } } } } } }')
    t.equal(titled.length, 2)
    for (const article of titled) {
      t.same(keysOf(article), ['category', 'title'], `${format}: an article renders title and category, no id or documentId`)
      t.same(keysOf(article.category), ['name'], `${format}: its category renders its name`)
    }
    const identified = format === 'flat'
      ? await read('{ articles(pagination: { limit: 1 }) { documentId title } }')
      : await read('{ articles(pagination: { limit: 1 }) { data { id attributes { title } } } }')
    t.same(keysOf(identified[0]), ['documentId', 'title'], `${format}: the selected document id is rendered (the entity shape's id is the documentId)`)
  }
})
