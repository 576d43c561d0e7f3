import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { defineContentType } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import {
  ARTICLE, AUTHOR, CATEGORY, TAG, createFile, openAccess, relationComponents, relationModels, relationOptions
} from '../fixtures/relations.js'

/**
 * `populate`, and filters and sort through relations, through the REST API (`app.inject`):
 * every populate syntax Strapi v5 accepts, per-parent windows, counts, dynamic-zone fragments,
 * the request's status applied to draft & publish targets, LEFT JOIN semantics of relation
 * filters (with no duplicate rows and right totals), and the v4 response format.
 *
 * The data (published unless said otherwise):
 *
 * | article | category | tags      | author | reviewers  | parent | other                                  |
 * |---------|----------|-----------|--------|------------|--------|----------------------------------------|
 * | A1      | Tech     | X, Y      | U1     | U2, U3     | -      | seo + og + links, sections, blocks, cover, related [A2, A4] |
 * | A2      | Food     | Y         | U2     | -          | A1     | seo, blocks [quote]                     |
 * | A3      | -        | -         | -      | -          | A1     |                                        |
 * | A4      | Tech     | Z, X, Y   | U1     | -          | -      |                                        |
 * | D1      | Food     | Z         | -      | -          | -      | a draft, never published               |
 *
 * U3 is a draft-only author; U2's draft has unpublished edits ("U2 draft"). Category Empty has no
 * article.
 */

interface Data {
  app: FastifyInstance
  id: Record<string, string>
}

async function setup (t: Parameters<typeof build>[0]): Promise<Data> {
  const { app } = await build(t, relationOptions)
  await openAccess(app)
  const id: Record<string, string> = {}
  const create = async (uid: string, name: string, data: Record<string, unknown>, status: 'draft' | 'published' = 'published'): Promise<void> => {
    id[name] = (await app.contentApi.documents(uid).create({ data, status })).documentId
  }
  await create(CATEGORY, 'Tech', { name: 'Tech', rank: 2 })
  await create(CATEGORY, 'Food', { name: 'Food', rank: 1 })
  await create(CATEGORY, 'Empty', { name: 'Empty', rank: 3 })
  for (const name of ['X', 'Y', 'Z']) await create(TAG, name, { name })
  await create(AUTHOR, 'U1', { name: 'U1', email: 'u1@example.com', internal: 'secret 1' })
  await create(AUTHOR, 'U2', { name: 'U2' })
  await app.contentApi.documents(AUTHOR).update({ documentId: id.U2, data: { name: 'U2 draft' }, status: 'draft' })
  await create(AUTHOR, 'U3', { name: 'U3' }, 'draft')
  const cover = await createFile(app, 'red.png', 'image/png', { width: 4, height: 4 })
  id.cover = String(cover.id)

  await create(ARTICLE, 'A1', {
    title: 'A1',
    views: 10,
    category: id.Tech,
    tags: [id.X, id.Y],
    author: id.U1,
    reviewers: [id.U2, id.U3],
    cover: cover.id,
    seo: { metaTitle: 'Seo A1', og: { ogTitle: 'OG A1' }, links: [{ url: '/a' }, { url: '/b' }] },
    sections: [{ heading: 'S1', position: 2 }, { heading: 'S2', position: 1 }],
    blocks: [{ __component: 'content.quote', text: 'Q1', by: 'Someone' }, { __component: 'content.cta', label: 'Go', target: { url: '/go' } }]
  })
  await create(ARTICLE, 'A2', { title: 'A2', views: 20, category: id.Food, tags: [id.Y], author: id.U2, parent: id.A1, seo: { metaTitle: 'Seo A2' }, blocks: [{ __component: 'content.quote', text: 'Q2' }] })
  await create(ARTICLE, 'A3', { title: 'A3', views: 30, parent: id.A1 })
  await create(ARTICLE, 'A4', { title: 'A4', views: 40, category: id.Tech, tags: [id.Z, id.X, id.Y], author: id.U1 })
  await create(ARTICLE, 'D1', { title: 'D1', category: id.Food, tags: [id.Z] }, 'draft')
  await app.contentApi.documents(ARTICLE).update({ documentId: id.A1, data: { related: [id.A2, id.A4] } })
  return { app, id }
}

async function get (app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<{ status: number, body: any }> {
  const res = await app.inject({ method: 'GET', url, headers })
  return { status: res.statusCode, body: res.json() }
}

const titles = (body: { data: Array<{ title: string }> }): string[] => body.data.map((d) => d.title)
const namesOf = (list: Array<{ name?: string, title?: string }> | null): Array<string | undefined> | null => list === null ? null : list.map((x) => x.name ?? x.title)

/** A request's answer when it names a populate key that may not be populated: Strapi's 400. */
function invalid (key: string, path: string = key): { status: number, body: unknown } {
  return {
    status: 400,
    body: {
      data: null,
      error: { status: 400, name: 'ValidationError', message: key === path ? `Invalid key ${key}` : `Invalid key ${key} at ${path}`, details: { key, path, source: 'query', param: 'populate' } }
    }
  }
}

t.test('populate syntaxes', async (t) => {
  const { app, id } = await setup(t)

  t.test('nothing is populated by default', async (t) => {
    const { body } = await get(app, '/api/articles')
    t.same(Object.keys(body.data[0]), ['id', 'documentId', 'title', 'views', 'createdAt', 'updatedAt', 'publishedAt'])
    const one = await get(app, `/api/articles/${id.A1}`)
    for (const key of ['category', 'tags', 'cover', 'seo', 'blocks']) t.notOk(key in one.body.data, `${key} is absent`)
  })

  t.test('populate=* : every relation, media, component and dynamic zone, one level deep', async (t) => {
    const { status, body } = await get(app, `/api/articles/${id.A1}?populate=*`)
    t.equal(status, 200)
    const data = body.data
    t.same(Object.keys(data), [
      'id', 'documentId', 'title', 'views', 'createdAt', 'updatedAt', 'publishedAt',
      'sidebar', 'spotlight', 'category', 'reviewers', 'author', 'tags', 'labels', 'related', 'parent', 'children',
      'cover', 'gallery', 'attachments', 'seo', 'sections', 'blocks'
    ], 'in model order, after the scalars')
    t.same(Object.keys(data.category), ['id', 'documentId', 'name', 'rank', 'createdAt', 'updatedAt', 'publishedAt'], 'a related document with its default fields')
    t.notOk('articles' in data.category, 'and nothing of its own populated')
    t.same(Object.keys(data.author), ['id', 'documentId', 'name', 'email', 'createdAt', 'updatedAt', 'publishedAt'], 'private attributes are never shown')
    t.same(namesOf(data.tags), ['X', 'Y'])
    t.same(namesOf(data.children), ['A2', 'A3'])
    t.equal(data.sidebar, null, 'an empty to-one relation is null')
    t.same(data.gallery, [], 'an empty to-many is []')
    t.same(Object.keys(data.seo), ['id', 'metaTitle', 'metaDescription'], 'components one level deep')
    t.same(data.blocks.map((b: { __component: string }) => b.__component), ['content.quote', 'content.cta'])
    t.notOk('target' in data.blocks[1], 'a component inside a dynamic-zone item is not populated by *')

    const list = await get(app, '/api/articles?populate=*&fields[0]=title')
    t.equal(list.status, 200)
    t.same(Object.keys(list.body.data[0]).slice(0, 3), ['id', 'documentId', 'title'], 'with fields')
    t.ok(list.body.data.every((d: object) => 'blocks' in d && 'category' in d))
    const arrayStar = await get(app, '/api/articles?populate[0]=*&fields[0]=title')
    t.same(arrayStar.body, list.body, 'populate[0]=* is populate=*')
  })

  t.test('one attribute, a list, an array', async (t) => {
    const one = await get(app, '/api/articles?populate=category&fields[0]=title&sort=title')
    t.same(one.body.data.map((d: { category: { name: string } | null }) => d.category?.name ?? null), ['Tech', 'Food', null, 'Tech'])
    t.same(Object.keys(one.body.data[0]), ['id', 'documentId', 'title', 'category'])
    const comma = await get(app, '/api/articles?populate=category,tags&fields[0]=title&sort=title')
    t.same(Object.keys(comma.body.data[0]), ['id', 'documentId', 'title', 'category', 'tags'], 'populate=a,b')
    const array = await get(app, '/api/articles?populate[0]=category&populate[1]=tags&fields[0]=title&sort=title')
    t.same(array.body, comma.body, 'populate[0]=a&populate[1]=b')
    const object = await get(app, '/api/articles?populate[category]=true&populate[tags]=true&fields[0]=title&sort=title')
    t.same(object.body, comma.body, 'populate[a]=true&populate[b]=true')
    for (const spelling of ['t', '1']) {
      const flagged = await get(app, `/api/articles?populate[category]=${spelling}&populate[tags]=true&fields[0]=title&sort=title`)
      t.same(flagged.body, comma.body, `populate[a]=${spelling}`)
    }
    const reversed = await get(app, '/api/articles?populate=tags,category&fields[0]=title&sort=title')
    t.same(Object.keys(reversed.body.data[0]), ['id', 'documentId', 'title', 'tags', 'category'], 'populated attributes come in request order')
  })

  t.test('populate[x]=false leaves x out', async (t) => {
    const { body } = await get(app, '/api/articles?populate[category]=false&populate[tags]=true&fields[0]=title')
    t.notOk('category' in body.data[0])
    t.ok('tags' in body.data[0])
    const all = await get(app, '/api/articles?populate[category]=false&populate[tags]=0&fields[0]=title&pagination[pageSize]=2')
    t.same(Object.keys(all.body.data[0]), ['id', 'documentId', 'title'], 'populate-category-false')
  })

  t.test('dot paths populate nested levels', async (t) => {
    const { body } = await get(app, `/api/articles/${id.A1}?populate=category.articles&fields[0]=title`)
    t.same(Object.keys(body.data.category), ['id', 'documentId', 'name', 'rank', 'createdAt', 'updatedAt', 'publishedAt', 'articles'])
    t.same(namesOf(body.data.category.articles), ['A1', 'A4'])
    const deep = await get(app, `/api/articles/${id.A1}?populate=category.articles.tags,tags&fields[0]=title`)
    t.same(deep.body.data.category.articles.map((a: { tags: Array<{ name: string }> }) => namesOf(a.tags)), [['X', 'Y'], ['Z', 'X', 'Y']], 'three levels')
    t.same(namesOf(deep.body.data.tags), ['X', 'Y'])
    const merged = await get(app, `/api/articles/${id.A1}?populate[0]=category.articles&populate[1]=category&fields[0]=title`)
    t.ok(Array.isArray(merged.body.data.category.articles), 'a shorter path does not undo a longer one')
    const components = await get(app, `/api/articles/${id.A1}?populate=seo.og,seo.links,blocks&fields[0]=title`)
    t.match(components.body.data.seo, { metaTitle: 'Seo A1', og: { ogTitle: 'OG A1' }, links: [{ url: '/a' }, { url: '/b' }] }, 'through components')
  })

  t.test('object form: fields, filters, sort, nested populate', async (t) => {
    const fields = await get(app, `/api/articles/${id.A1}?populate[category][fields][0]=name&fields[0]=title`)
    t.same(fields.body.data.category, { id: fields.body.data.category.id, documentId: id.Tech, name: 'Tech' }, 'id and documentId always come with fields')
    const fieldsString = await get(app, `/api/articles/${id.A1}?populate[category][fields]=name,rank&fields[0]=title`)
    t.same(Object.keys(fieldsString.body.data.category), ['id', 'documentId', 'name', 'rank'])

    const filtered = await get(app, `/api/articles/${id.A4}?populate[tags][filters][name][$ne]=X&populate[tags][fields][0]=name`)
    t.same(namesOf(filtered.body.data.tags), ['Z', 'Y'], 'filters select the related rows')
    const filteredOne = await get(app, `/api/articles/${id.A1}?populate[category][filters][name][$eq]=Food`)
    t.equal(filteredOne.body.data.category, null, 'a to-one relation filtered out is null')

    const sorted = await get(app, `/api/articles/${id.A4}?populate[tags][sort]=name:desc&populate[tags][fields][0]=name`)
    t.same(namesOf(sorted.body.data.tags), ['Z', 'Y', 'X'], 'sort orders the related rows')
    const sortedArray = await get(app, `/api/articles/${id.A4}?populate[tags][sort][0]=name&populate[tags][fields][0]=name`)
    t.same(namesOf(sortedArray.body.data.tags), ['X', 'Y', 'Z'])
    const sortedObject = await get(app, `/api/articles/${id.A1}?populate[sections][sort][position]=asc`)
    t.same(sortedObject.body.data.sections.map((s: { heading: string }) => s.heading), ['S2', 'S1'], 'sorting a repeatable component')

    const nested = await get(app, `/api/articles/${id.A1}?fields[0]=title&populate[category][fields][0]=name&populate[category][populate][articles][fields][0]=title&populate[category][populate][articles][sort]=title:desc&populate[category][populate][articles][populate][tags][fields][0]=name`)
    t.same(nested.body.data.category, {
      id: nested.body.data.category.id,
      documentId: id.Tech,
      name: 'Tech',
      articles: [
        { id: nested.body.data.category.articles[0].id, documentId: id.A4, title: 'A4', tags: nested.body.data.category.articles[0].tags },
        { id: nested.body.data.category.articles[1].id, documentId: id.A1, title: 'A1', tags: nested.body.data.category.articles[1].tags }
      ]
    }, 'populate-nested')
    t.same(nested.body.data.category.articles.map((a: { tags: Array<{ name: string }> }) => namesOf(a.tags)), [['Z', 'X', 'Y'], ['X', 'Y']])
    const nestedStar = await get(app, `/api/articles/${id.A2}?populate[category][populate]=*&fields[0]=title`)
    t.same(namesOf(nestedStar.body.data.category.articles), ['A2'], 'populate[x][populate]=*: every association of x, one level')
    const starValue = await get(app, `/api/articles/${id.A2}?populate[category]=*&fields[0]=title`)
    t.same(starValue.body, nestedStar.body, 'populate[x]=* means populate[x][populate]=*')
    const relationFilter = await get(app, `/api/categories/${id.Tech}?populate[articles][filters][tags][name][$eq]=Z&populate[articles][fields][0]=title`)
    t.same(namesOf(relationFilter.body.data.articles), ['A4'], 'a populate filter through another relation')
  })

  t.test('populated relations keep their stored order', async (t) => {
    const { body } = await get(app, `/api/articles/${id.A4}?populate[tags][fields][0]=name`)
    t.same(namesOf(body.data.tags), ['Z', 'X', 'Y'], 'the order written, not ids or names')
    await app.contentApi.documents(ARTICLE).update({ documentId: id.A4, data: { tags: { connect: [{ documentId: id.Y, position: { before: id.Z } }] } } })
    const moved = await get(app, `/api/articles/${id.A4}?populate[tags][fields][0]=name`)
    t.same(namesOf(moved.body.data.tags), ['Y', 'Z', 'X'])
    await app.contentApi.documents(ARTICLE).update({ documentId: id.A4, data: { tags: [id.Z, id.X, id.Y] } })
    const related = await get(app, `/api/articles/${id.A1}?populate[related][fields][0]=title`)
    t.same(namesOf(related.body.data.related), ['A2', 'A4'])
    const inverse = await get(app, `/api/categories/${id.Tech}?populate[articles][fields][0]=title`)
    t.same(namesOf(inverse.body.data.articles), ['A1', 'A4'], 'the inverse side too')
  })

  t.test('count', async (t) => {
    const { body } = await get(app, '/api/categories?populate[articles][count]=true&sort=name')
    t.same(body.data.map((c: { name: string, articles: unknown }) => [c.name, c.articles]), [['Empty', { count: 0 }], ['Food', { count: 1 }], ['Tech', { count: 2 }]],
      'populate-count: published articles only')
    const drafts = await get(app, '/api/categories?populate[articles][count]=true&sort=name&status=draft')
    t.same(drafts.body.data.map((c: { articles: unknown }) => c.articles), [{ count: 0 }, { count: 2 }, { count: 2 }], 'status=draft counts the drafts')
    const filtered = await get(app, '/api/categories?populate[articles][count]=true&populate[articles][filters][views][$gt]=15&sort=name')
    t.same(filtered.body.data.map((c: { articles: unknown }) => c.articles), [{ count: 0 }, { count: 1 }, { count: 1 }], 'count with filters')
    const many = await get(app, `/api/articles/${id.A1}?populate[tags][count]=true&populate[related][count]=1&populate[category][count]=true&populate[gallery][count]=true`)
    t.same([many.body.data.tags, many.body.data.related, many.body.data.category, many.body.data.gallery], [{ count: 2 }, { count: 2 }, { count: 1 }, { count: 0 }],
      'to-many, to-one and media counts')
    const dz = await get(app, `/api/articles/${id.A1}?populate[blocks][count]=true`)
    t.equal(dz.status, 200, 'count is accepted on a dynamic zone')
  })

  t.test('start and limit apply per parent row', async (t) => {
    const limit = await get(app, '/api/categories?populate[articles][limit]=1&populate[articles][sort]=title:desc&populate[articles][fields][0]=title&sort=name')
    t.same(limit.body.data.map((c: { articles: Array<{ title: string }> }) => namesOf(c.articles)), [[], ['A2'], ['A4']],
      'each category gets its own first article (Strapi would apply the limit to all categories together)')
    const start = await get(app, '/api/categories?populate[articles][start]=1&populate[articles][fields][0]=title&sort=name')
    t.same(start.body.data.map((c: { articles: unknown[] }) => namesOf(c.articles as Array<{ title: string }>)), [[], [], ['A4']], 'start skips per parent')
    const window = await get(app, `/api/articles/${id.A4}?populate[tags][start]=1&populate[tags][limit]=1&populate[tags][fields][0]=name`)
    t.same(namesOf(window.body.data.tags), ['X'], 'start and limit together, in stored order')
    const page = await get(app, `/api/articles/${id.A4}?populate[tags][page]=2&populate[tags][pageSize]=2&populate[tags][fields][0]=name`)
    t.same(namesOf(page.body.data.tags), ['Y'], 'page and pageSize')
    const nestedLimit = await get(app, '/api/articles?fields[0]=title&sort=title&populate[category][populate][articles][limit]=1&populate[category][populate][articles][fields][0]=title')
    t.same(nestedLimit.body.data.map((a: { category: { articles: Array<{ title: string }> } | null }) => a.category === null ? null : namesOf(a.category.articles)),
      [['A1'], ['A2'], null, ['A1']], 'nested: per parent at every level')
    const mixed = await get(app, '/api/categories?populate[articles][start]=1&populate[articles][page]=1')
    t.equal(mixed.status, 400, 'page and offset windows cannot be mixed')
    const negative = await get(app, '/api/categories?populate[articles][limit]=-1')
    t.equal(negative.status, 400, 'a negative limit')
    // Integers all, but past what a row count in the statement can be: 400s, not the compiler's refusal (a 500).
    const huge = await get(app, '/api/categories?populate[articles][limit]=1e29')
    t.same([huge.status, huge.body.error.message], [400, 'Invalid populate limit: "1e29" is more than 9007199254740991'], 'a limit past 2^53')
    const hugePage = await get(app, `/api/articles/${id.A4}?populate[tags][pageSize]=99999999999999999999`)
    t.same([hugePage.status, hugePage.body.error.message], [400, 'Invalid populate pageSize: "99999999999999999999" is more than 9007199254740991'], 'a page size past 2^53')
    const farStart = await get(app, `/api/articles/${id.A4}?populate[tags][start]=100000000000000000&populate[tags][fields][0]=name`)
    t.same([farStart.status, farStart.body.data?.tags], [200, []], 'a start is a parameter: past 2^53, as far as PostgreSQL counts, it is an empty window')
    const lastSafe = await get(app, `/api/articles/${id.A4}?populate[tags][limit]=9007199254740991&populate[tags][fields][0]=name`)
    t.same([lastSafe.status, namesOf(lastSafe.body.data.tags)], [200, ['Z', 'X', 'Y']], 'the largest exact integer is a limit like any other')
  })

  t.test('dynamic zones: all items, or fragments with on', async (t) => {
    const all = await get(app, `/api/articles/${id.A1}?populate[blocks]=true&fields[0]=title`)
    t.match(all.body.data.blocks, [
      { __component: 'content.quote', id: Number, text: 'Q1', by: 'Someone' },
      { __component: 'content.cta', id: Number, label: 'Go' }
    ], 'populate-dynamiczone')
    const on = await get(app, `/api/articles/${id.A1}?populate[blocks][on][content.quote][fields][0]=text&fields[0]=title`)
    t.same(on.body.data.blocks.map((b: Record<string, unknown>) => Object.keys(b).sort()), [['__component', 'id', 'text']],
      'only the fragments named, with their own fields')
    const both = await get(app, `/api/articles/${id.A1}?populate[blocks][on][content.quote]=true&populate[blocks][on][content.cta][populate][target]=true&fields[0]=title`)
    t.match(both.body.data.blocks, [{ __component: 'content.quote', text: 'Q1' }, { __component: 'content.cta', label: 'Go', target: { url: '/go' } }],
      'a fragment may populate the component\'s own components; items keep their order')
    const star = await get(app, `/api/articles/${id.A1}?populate[blocks][populate]=*&fields[0]=title`)
    t.match(star.body.data.blocks[1], { __component: 'content.cta', target: { url: '/go' } }, 'populate[zone][populate]=*')
    const off = await get(app, `/api/articles/${id.A1}?populate[blocks][on][content.quote]=false&populate[blocks][on][content.cta]=true&fields[0]=title`)
    t.same(off.body.data.blocks.map((b: { __component: string }) => b.__component), ['content.cta'], 'a fragment set to false is left out')

    t.equal((await get(app, '/api/articles?populate[blocks][on][shared.link]=true')).status, 400, 'a component the zone does not allow')
    t.equal((await get(app, '/api/articles?populate[blocks][fields][0]=label')).status, 400, 'fields directly on a dynamic zone')
    t.equal((await get(app, '/api/articles?populate[blocks][populate][target]=true')).status, 400, 'a named populate directly on a dynamic zone')
    t.equal((await get(app, '/api/articles?populate[category][on][content.quote]=true')).status, 400, 'fragments on a relation')
  })

  t.test('errors', async (t) => {
    t.same(await get(app, '/api/articles?populate=nope'), invalid('nope'), 'an unknown attribute')
    t.same(await get(app, `/api/articles/${id.A1}?populate=nope`), invalid('nope'), 'on a single document (get-one-invalid-populate)')
    t.same(await get(app, '/api/articles?populate[nope]=true'), invalid('nope'), 'in the object form')
    t.same(await get(app, '/api/articles?populate[0]=category&populate[1]=nope'), invalid('nope'), 'in an array')
    t.same(await get(app, '/api/articles?populate=**'), invalid('**'), '** (populate-double-star)')
    t.same(await get(app, '/api/articles?populate=title'), invalid('title'), 'a scalar attribute')
    t.same(await get(app, '/api/articles?populate[views]=true'), invalid('views'), 'a scalar attribute in the object form')
    t.same(await get(app, '/api/articles?populate[category][populate]=nope'), invalid('nope'), 'nested (populate-unknown-nested)')
    t.same(await get(app, '/api/articles?populate[category][populate][name]=true'), invalid('name'), 'a scalar of the target')
    t.same(await get(app, '/api/articles?populate=category.nope'), invalid('nope'), 'in a dot path')
    t.same(await get(app, '/api/articles?populate[category][nope]=1'), invalid('nope', 'category.nope'), 'an unknown option of a populated relation')
    t.equal((await get(app, '/api/articles?populate[author][fields][0]=internal')).status, 400, 'a private field of the target')

    const value = await get(app, '/api/articles?populate[category]=yes')
    t.equal(value.status, 400, 'a value that is neither a boolean, * nor an object')
    t.equal((await get(app, '/api/articles?populate[category][fields][0]=nope')).status, 400, 'unknown fields of the target')
    t.equal((await get(app, '/api/articles?populate[tags][filters][nope][$eq]=1')).status, 400, 'unknown filters of the target')
    t.equal((await get(app, '/api/articles?populate[tags][sort]=nope')).status, 400, 'unknown sort of the target')
  })
})

t.test('populate follows the request\'s status for draft & publish targets', async (t) => {
  const { app, id } = await setup(t)
  const published = await get(app, `/api/articles/${id.A1}?populate[reviewers][fields][0]=name&populate[author][fields][0]=name&fields[0]=title`)
  t.same(namesOf(published.body.data.reviewers), ['U2'], 'the draft-only U3 is not in a published read; U2 shows its published version')
  const drafts = await get(app, `/api/articles/${id.A1}?status=draft&populate[reviewers][fields][0]=name&fields[0]=title`)
  t.same(namesOf(drafts.body.data.reviewers), ['U2 draft', 'U3'], 'status=draft reads the drafts of the targets too')
  const inverse = await get(app, `/api/categories/${id.Food}?populate[articles][fields][0]=title`)
  t.same(namesOf(inverse.body.data.articles), ['A2'], 'the draft D1 is not among the published articles')
  const inverseDrafts = await get(app, `/api/categories/${id.Food}?status=draft&populate[articles][fields][0]=title&populate[articles][fields][1]=publishedAt`)
  t.same(inverseDrafts.body.data.articles.map((a: { title: string, publishedAt: null }) => [a.title, a.publishedAt]), [['A2', null], ['D1', null]],
    'status=draft on a type without draft & publish still picks the targets\' drafts')
  const put = await app.inject({
    method: 'PUT', url: `/api/categories/${id.Food}?status=draft&populate[articles][fields][0]=title`, payload: { data: { rank: 1 } }
  })
  t.same(put.statusCode === 200 ? namesOf(put.json().data.articles) : put.statusCode, ['A2', 'D1'], 'a write answers with the populate a read with the same query gives')
  const tags = await get(app, '/api/tags?populate[articles][fields][0]=title&sort=name')
  t.same(tags.body.data.map((tag: { articles: Array<{ title: string }> }) => namesOf(tag.articles)), [['A1', 'A4'], ['A1', 'A2', 'A4'], ['A4']])
})

t.test('filters through relations, components and media', async (t) => {
  const { app, id } = await setup(t)
  const list = async (query: string): Promise<{ titles: string[], total: number, status: number, body: any }> => {
    const { status, body } = await get(app, `/api/articles?fields[0]=title&sort=title&${query}`)
    return { titles: status === 200 ? titles(body) : [], total: status === 200 ? body.meta.pagination.total : -1, status, body }
  }

  t.same((await list('filters[category][name][$eq]=Tech')).titles, ['A1', 'A4'], 'filters[category][name][$eq]')
  t.same((await list('filters[category][name]=Tech')).titles, ['A1', 'A4'], 'implicit $eq')
  t.same((await list(`filters[category][documentId]=${id.Food}`)).titles, ['A2'], 'by the related documentId')
  const techRow = (await get(app, `/api/categories/${id.Tech}`)).body.data.id as number
  t.same((await list(`filters[category]=${techRow}`)).titles, ['A1', 'A4'], 'a bare value compares the related row id')
  t.same((await list(`filters[category][$in][0]=${techRow}`)).titles, ['A1', 'A4'], 'operators directly on the relation compare its id')
  t.same((await list('filters[category][articles][tags][name][$eq]=Z')).titles, ['A1', 'A4'], 'through two levels: category.articles.tags')
  t.same((await list('filters[parent][category][name]=Tech')).titles, ['A2', 'A3'], 'through a self-relation')
  t.same((await list('filters[children][title]=A3')).titles, ['A1'], 'through the inverse side')

  const m2m = await list('filters[tags][name][$in][0]=X&filters[tags][name][$in][1]=Y')
  t.same(m2m.titles, ['A1', 'A2', 'A4'], 'manyToMany: a document matching through several related rows appears once')
  t.equal(m2m.total, 3, 'and is counted once')
  const paged = await list('filters[tags][name][$in][0]=X&filters[tags][name][$in][1]=Y&pagination[pageSize]=2')
  t.same(paged.titles, ['A1', 'A2'])
  t.same(paged.body.meta.pagination, { page: 1, pageSize: 2, pageCount: 2, total: 3 }, 'totals stay right with pagination')
  t.same((await list('filters[tags][name]=X&filters[tags][name]=Y')).titles, ['A1', 'A2', 'A4'], 'a repeated key is an implicit $in (qs array)')
  t.same((await list('filters[$and][0][tags][name]=X&filters[$and][1][tags][name]=Z')).titles, ['A4'], '$and over two related rows')

  t.same((await list('filters[$or][0][category][name]=Food&filters[$or][1][tags][name]=Z')).titles, ['A2', 'A4'], '$or across relations')
  t.same((await list('filters[category][$or][0][name]=Food&filters[category][$or][1][rank][$gt]=1')).titles, ['A1', 'A2', 'A4'], '$or inside a relation')
  t.same((await list('filters[category][$not][name][$eq]=Tech')).titles, ['A2'], '$not inside a relation: documents without a category do not match (LEFT JOIN)')
  t.same((await list('filters[category][name][$ne]=Tech')).titles, ['A2'], '$ne on a related field excludes documents without a category')
  const rootNot = await list('filters[$not][category][name][$eq]=Tech')
  t.same(rootNot.titles, ['A2'], '$not around a relation filter: NOT (category.name = Tech) is unknown for A3, which has no category')
  t.ok(rootNot.titles.includes('A2') && !rootNot.titles.includes('A1') && !rootNot.titles.includes('A4'), '$not around a relation filter excludes the matching documents')

  t.same((await list('filters[category][$null]=true')).titles, ['A3'], '$null on the relation: no related document')
  t.same((await list('filters[category][$notNull]=true')).titles, ['A1', 'A2', 'A4'])
  t.same((await list('filters[category][id][$null]=true')).titles, ['A3'], '$null on its id (filter-relation-null)')
  t.same((await list('filters[category][id][$notNull]=true')).titles, ['A1', 'A2', 'A4'])
  t.same((await list('filters[category][name][$null]=true')).titles, ['A3'], '$null on a related field: the missing row\'s NULLs match')
  t.same((await list('filters[tags][$null]=true')).titles, ['A3'], '$null on a to-many relation')
  t.same((await list('filters[category][$null]=false')).titles, ['A1', 'A2', 'A4'], '$null: false')
  t.same((await list('filters[$or][0][category][$null]=true&filters[$or][1][category][name]=Food')).titles, ['A2', 'A3'], '$null inside $or')

  t.same((await list('filters[reviewers][name]=U3')).titles, [], 'a draft & publish target is matched in the request\'s status')
  const draftMatch = await get(app, '/api/articles?status=draft&fields[0]=title&filters[reviewers][name]=U3')
  t.same(titles(draftMatch.body), ['A1'], 'status=draft matches its drafts')
  t.same((await list('filters[reviewers][name]=U2%20draft')).titles, [], 'a published read does not see a target\'s unpublished edits')

  t.same((await list('filters[seo][metaTitle][$eq]=Seo A1')).titles, ['A1'], 'a component field (filter-component-field)')
  t.same((await list('filters[seo][og][ogTitle][$containsi]=og')).titles, ['A1'], 'a component nested in a component')
  t.same((await list('filters[sections][heading]=S2')).titles, ['A1'], 'a repeatable component')
  t.same((await list('filters[seo][$null]=true')).titles, ['A3', 'A4'], '$null on a component')
  t.same((await list('filters[cover][name][$eq]=red.png')).titles, ['A1'], 'a media field')
  t.same((await list('filters[cover][$null]=true')).titles, ['A2', 'A3', 'A4'], '$null on a media')
  t.same((await list('filters[cover][id][$notNull]=true')).titles, ['A1'], 'populate-media-fields\' filter')

  const dz = await list('filters[blocks][text][$eq]=Q1')
  t.equal(dz.status, 400, 'a dynamic zone cannot be filtered')
  t.match(dz.body.error, { name: 'ValidationError', message: 'Invalid key blocks', details: { key: 'blocks', param: 'filters' } })
  const privateField = await list('filters[author][internal][$eq]=secret%201')
  t.equal(privateField.status, 400, 'a private attribute of a related model')
  t.match(privateField.body.error, { message: 'Invalid key internal at author.internal', details: { key: 'internal', path: 'author.internal', source: 'query', param: 'filters' } },
    'filter-private-field-relation')
  const unknown = await list('filters[category][nope][$eq]=1')
  t.match(unknown.body.error, { message: 'Invalid key nope at category.nope' })
  const mixed = await list('filters[category][$null]=true&filters[category][name]=Tech')
  t.equal(mixed.status, 400, 'operators and attributes cannot be mixed at a relation')
  t.match(mixed.body.error.message, /cannot be mixed/)
})

t.test('sort through relations', async (t) => {
  const { app } = await setup(t)
  const sorted = async (query: string): Promise<string[]> => titles((await get(app, `/api/articles?fields[0]=title&${query}`)).body)
  t.same(await sorted('sort=category.name:desc'), ['A3', 'A1', 'A4', 'A2'], 'sort=category.name:desc (NULLs first descending, as PostgreSQL orders them)')
  t.same(await sorted('sort=category.name:asc'), ['A2', 'A1', 'A4', 'A3'], 'ascending: NULLs last')
  t.same(await sorted('sort[category][name]=asc'), ['A2', 'A1', 'A4', 'A3'], 'sort[category][name]=asc')
  t.same(await sorted('sort[0][category][rank]=desc&sort[1]=title:desc'), ['A3', 'A4', 'A1', 'A2'], 'an object in an array, then a second key')
  t.same(await sorted('sort[0]=category.name:desc&sort[1]=title:desc'), ['A3', 'A4', 'A1', 'A2'], 'sort-relation-no-populate')
  t.same(await sorted('sort=parent.title,title:desc'), ['A3', 'A2', 'A4', 'A1'], 'through a self-relation')
  t.same(await sorted('sort=seo.metaTitle:asc'), ['A1', 'A2', 'A3', 'A4'], 'through a component')
  t.same(await sorted('sort=tags.name:desc,title'), ['A3', 'A4', 'A2', 'A1'], 'a to-many relation sorts by its first related row in stored order (A1: X, A2: Y, A4: Z)')
  const data = (await get(app, '/api/articles?sort=category.name:desc&populate[category][fields][0]=name&fields[0]=title&pagination[pageSize]=2')).body
  t.same(data.data.map((a: { category: { name: string } | null }) => a.category?.name ?? null), [null, 'Tech'], 'sorting does not change what is populated')
  t.same(data.meta.pagination.total, 4, 'nor the total')
  t.equal((await get(app, '/api/articles?sort=blocks.text')).status, 400, 'not through a dynamic zone')
  t.equal((await get(app, '/api/articles?sort=author.internal')).status, 400, 'not by a private attribute of a related model')
  t.equal((await get(app, '/api/articles?sort=category.nope')).status, 400, 'not by an unknown attribute')
})

t.test('sort through a relation inside populate', async (t) => {
  const { app, id } = await setup(t)
  const { status, body } = await get(app, `/api/categories/${id.Tech}?populate[articles][sort]=author.name:desc&populate[articles][fields][0]=title`)
  t.equal(status, 200, 'populate[articles][sort]=author.name is accepted')
  if (status === 200) t.same(namesOf(body.data.articles), ['A1', 'A4'])
  await app.contentApi.documents(ARTICLE).update({ documentId: id.A4, data: { parent: id.A2 } })
  const parent = await get(app, `/api/categories/${id.Tech}?populate[articles][sort]=parent.title:asc&populate[articles][fields][0]=title`)
  t.equal(parent.status, 200)
  t.same(namesOf(parent.body.data.articles), ['A4', 'A1'], 'sorted by the parent\'s title (A4\'s parent is A2; A1 has none: NULLs last)')
})

t.test('private relations', async (t) => {
  const note = defineContentType({
    kind: 'collectionType',
    collectionName: 'notes',
    info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
    options: { draftAndPublish: false },
    attributes: {
      text: { type: 'string' },
      owner: { type: 'relation', relation: 'manyToOne', target: AUTHOR, private: true },
      topic: { type: 'relation', relation: 'manyToOne', target: TAG }
    }
  })
  const { app } = await build(t, { ...relationOptions, models: [...relationModels, note], components: relationComponents })
  await openAccess(app)
  const author = await app.contentApi.documents(AUTHOR).create({ data: { name: 'Owner' } })
  await app.contentApi.documents('api::note.note').create({ data: { text: 'n', owner: author.documentId } })
  t.same(await get(app, '/api/notes?populate=owner'), invalid('owner'), 'a private relation cannot be populated')
  t.equal((await get(app, '/api/notes?filters[owner][name]=Owner')).status, 400, 'nor filtered')
  const star = await get(app, '/api/notes?populate=*')
  t.equal(star.status, 200, 'populate=* leaves a private relation out')
  t.notOk(star.status === 200 && 'owner' in star.body.data[0], 'and does not show it')
})

t.test('Strapi-Response-Format: v4', async (t) => {
  const { app, id } = await setup(t)
  const v4 = { 'strapi-response-format': 'v4' }
  const url = `/api/articles/${id.A1}?fields[0]=title&populate[category][fields][0]=name&populate[tags][fields][0]=name&populate[sidebar]=true&populate[cover][fields][0]=name&populate[gallery]=true&populate[seo][populate]=*&populate[blocks][populate]=*`
  const { status, body } = await get(app, url, v4)
  t.equal(status, 200)
  const plain = (await get(app, url)).body.data
  t.same(body.data.id, plain.id)
  t.same(body.data.documentId, id.A1)
  t.same(Object.keys(body.data), ['id', 'documentId', 'attributes'])
  const attributes = body.data.attributes
  t.same(attributes.title, 'A1')
  t.same(attributes.category, { data: { id: plain.category.id, documentId: id.Tech, attributes: { name: 'Tech' } } }, 'a to-one relation: { data: { id, documentId, attributes } }')
  t.same(attributes.tags, { data: plain.tags.map((tag: { id: number, documentId: string, name: string }) => ({ id: tag.id, documentId: tag.documentId, attributes: { name: tag.name } })) },
    'a to-many relation: { data: [...] }')
  t.same(attributes.sidebar, { data: null }, 'an empty to-one relation: { data: null }')
  t.same(attributes.cover, { data: { id: Number(id.cover), documentId: plain.cover.documentId, attributes: { name: 'red.png' } } }, 'media likewise')
  t.same(attributes.gallery, { data: [] })
  t.same(attributes.seo, plain.seo, 'components stay flat, nested components too')
  t.same(attributes.blocks, plain.blocks, 'dynamic-zone items stay flat')

  const list = await get(app, '/api/categories?populate[articles][fields][0]=title&populate[articles][populate][category][fields][0]=name&sort=name', v4)
  const tech = list.body.data.find((c: { attributes: { name: string } }) => c.attributes.name === 'Tech')
  t.same(tech.attributes.articles.data.map((a: { attributes: { title: string, category: unknown } }) => [a.attributes.title, a.attributes.category]),
    [['A1', { data: { id: tech.id, documentId: id.Tech, attributes: { name: 'Tech' } } }], ['A4', { data: { id: tech.id, documentId: id.Tech, attributes: { name: 'Tech' } } }]],
    'nested relations are wrapped at every level')
  t.same(list.body.meta.pagination, { page: 1, pageSize: 25, pageCount: 1, total: 3 }, 'meta is unchanged')
})
