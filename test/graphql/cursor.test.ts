import t from 'tap'
import { buildGraphql } from './helpers.js'

/**
 * Cursor pagination in GraphQL: `pagination: { after, before }` on root lists, `pageInfo { next
 * previous }` on `<plural>_connection` (and `meta { pagination }` in the entity shape), the same
 * walk as REST's, the same refusals.
 */

const { gql } = await buildGraphql(t, { format: 'flat' })

interface Connection { nodes: Array<{ documentId: string, title: string }>, pageInfo: { next: string | null, previous: string | null, pageSize: number, total?: number } }

async function page (args: string, select = 'pageInfo { pageSize next previous }'): Promise<Connection> {
  const res = await gql(`{ articles_connection(sort: ["views:desc", "title"], ${args}) { nodes { documentId title } ${select} } }`)
  if (res.body.errors !== undefined) throw new Error(JSON.stringify(res.body.errors))
  return res.body.data.articles_connection
}

t.test('walking the connection both ways gives the offset order', async (t) => {
  const offset = await gql('{ articles(sort: ["views:desc", "title"], pagination: { limit: 1000 }) { documentId } }')
  const expected = offset.body.data.articles.map((a: { documentId: string }) => a.documentId)
  t.ok(expected.length > 10, 'enough articles for several pages')
  for (const backwards of [false, true]) {
    const pages: string[][] = []
    let cursor = ''
    for (let n = 0; n < 100; n++) {
      const current = await page(`pagination: { ${backwards ? 'before' : 'after'}: ${JSON.stringify(cursor)}, pageSize: 4 }`)
      pages.push(current.nodes.map((a) => a.documentId))
      const following = backwards ? current.pageInfo.previous : current.pageInfo.next
      if (following === null) break
      cursor = following
    }
    t.same((backwards ? pages.reverse() : pages).flat(), expected, backwards ? 'backwards' : 'forwards')
  }
})

t.test('pageInfo: cursors, the total only when selected, the root list too', async (t) => {
  const first = await page('pagination: { after: "", pageSize: 3 }', 'pageInfo { pageSize next previous total pageCount page }')
  t.equal(first.pageInfo.previous, null)
  t.type(first.pageInfo.next, 'string')
  t.ok((first.pageInfo.total ?? 0) > 3, 'total when selected')
  const variables = await gql('query ($p: PaginationArg) { articles(sort: ["views:desc", "title"], pagination: $p) { documentId } }', { p: { after: first.pageInfo.next, pageSize: 3 } })
  const second = await page(`pagination: { after: ${JSON.stringify(first.pageInfo.next)}, pageSize: 3 }`)
  t.same(variables.body.data.articles.map((a: { documentId: string }) => a.documentId), second.nodes.map((a) => a.documentId), 'a root list takes the cursor as a variable')
  const populated = await gql(`{ articles_connection(sort: ["views:desc", "title"], pagination: { after: ${JSON.stringify(first.pageInfo.next)}, pageSize: 3 }) { nodes { documentId authors { name } category { name } } pageInfo { next } } }`)
  t.same(populated.body.data.articles_connection.nodes.map((a: { documentId: string }) => a.documentId), second.nodes.map((a) => a.documentId), 'with relations read in the same statement')
})

t.test('refusals', async (t) => {
  const first = await page('pagination: { after: "", pageSize: 3 }')
  const cases: Array<[string, string]> = [
    ['forged', '{ articles(pagination: { after: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }) { title } }'],
    ['another sort', `{ articles(sort: ["title"], pagination: { after: ${JSON.stringify(first.pageInfo.next)} }) { title } }`],
    ['with page', '{ articles(pagination: { after: "", page: 2 }) { title } }'],
    ['on a relation', '{ articles { authors(pagination: { after: "" }) { name } } }']
  ]
  for (const [name, query] of cases) {
    const res = await gql(query)
    t.ok(res.body.errors?.length > 0, name)
    t.match(res.body.errors[0].extensions?.error?.name, /^(ValidationError|PaginationError)$/, name)
  }
})
