import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { UPLOAD_ACTIONS } from '../../lib/upload/routes.js'
import { contentActions } from '../helpers/build.js'
import { ARTICLE, buildUpload, pngPart, postUpload, type Part } from './helpers.js'

/**
 * Media fields end to end: files uploaded with `ref`/`refId`/`field` are linked to an entry's
 * media attribute, and content reads populate them with the file record's shape.
 */

/** The file record as populated on content: no `isUrlSigned`, `folderPath` private. */
const POPULATED_KEYS = [
  'alternativeText', 'caption', 'createdAt', 'documentId', 'ext', 'focalPoint', 'formats', 'hash', 'height', 'id',
  'mime', 'name', 'previewUrl', 'provider', 'provider_metadata', 'publishedAt', 'size', 'updatedAt', 'url', 'width'
]

async function createArticle (app: FastifyInstance, title: string, status?: 'draft'): Promise<{ id: number, documentId: string }> {
  const response = await app.inject({ method: 'POST', url: `/api/articles${status === undefined ? '' : '?status=draft'}`, payload: { data: { title } } })
  return JSON.parse(response.body).data
}

async function read (app: FastifyInstance, documentId: string, search = 'populate=*'): Promise<any> {
  const response = await app.inject({ method: 'GET', url: `/api/articles/${documentId}?${search}` })
  return JSON.parse(response.body).data
}

const link = (refId: number | string, field: string, ref = ARTICLE): Part[] =>
  [{ name: 'ref', value: ref }, { name: 'refId', value: String(refId) }, { name: 'field', value: field }]

t.test('populate=cover: a media field holds the file record, as the upload API shows it', async (t) => {
  const { app } = await buildUpload(t)
  const [file] = (await postUpload(app, [{ name: 'fileInfo', value: '{"alternativeText":"alt","caption":"cap"}' }, pngPart('cover.png')])).body
  const created = JSON.parse((await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'A', cover: file.id } } })).body).data
  const doc = await read(app, created.documentId, 'populate=cover')
  t.strictSame(Object.keys(doc.cover).sort(), POPULATED_KEYS)
  const { isUrlSigned: _, ...record } = file
  t.strictSame(doc.cover, record, 'the same values as the upload answer')
  const fields = await read(app, created.documentId, 'fields[0]=title&populate[cover][fields][0]=name&populate[cover][fields][1]=mime')
  t.strictSame(fields, { id: created.id, documentId: created.documentId, title: 'A', cover: { id: file.id, documentId: file.documentId, name: 'cover.png', mime: 'image/png' } })
  const filtered = await app.inject({ method: 'GET', url: '/api/articles?filters[cover][id][$notNull]=true&fields[0]=title' })
  t.equal(JSON.parse(filtered.body).data.length, 1)
})

t.test('ref/refId/field: single media replaced, multiple appended, on both versions of a draft & publish entry', async (t) => {
  const { app } = await buildUpload(t)
  const article = await createArticle(app, 'A')
  const events: unknown[] = []
  app.contentApi.documents(ARTICLE).onChange((event) => { events.push(event) })
  const first = await postUpload(app, [...link(article.id, 'cover'), pngPart('one.png')])
  t.equal(first.status, 201)
  t.same(events, [{ uid: ARTICLE, action: 'update', documentId: article.documentId, origin: 'local' }], 'a link is an update of the entry, for onChange listeners')
  t.equal((await read(app, article.documentId)).cover.name, 'one.png')
  const draft = JSON.parse((await app.inject({ method: 'GET', url: `/api/articles/${article.documentId}?status=draft&populate=cover` })).body).data
  t.equal(draft.cover.name, 'one.png', 'the draft holds the link too')

  await postUpload(app, [...link(article.id, 'cover'), pngPart('two.png')])
  t.equal((await read(app, article.documentId)).cover.name, 'two.png', 'a single media attribute takes the new file')

  await postUpload(app, [...link(article.id, 'gallery'), pngPart('g1.png'), pngPart('g2.png')])
  await postUpload(app, [...link(article.id, 'gallery'), pngPart('g3.png')])
  t.strictSame((await read(app, article.documentId)).gallery.map((f: any) => f.name), ['g1.png', 'g2.png', 'g3.png'], 'a multiple one appends, in order')

  // Publishing copies the draft's links: the uploaded files survive it.
  await app.inject({ method: 'PUT', url: `/api/articles/${article.documentId}`, payload: { data: { title: 'A2' } } })
  const republished = await read(app, article.documentId)
  t.equal(republished.cover.name, 'two.png')
  t.equal(republished.gallery.length, 3)

  const files = JSON.parse((await app.inject({ method: 'GET', url: '/api/upload/files?sort=id' })).body)
  t.equal(files.length, 5, 'the replaced cover file stays in the library')
  await app.inject({ method: 'DELETE', url: `/api/upload/files/${files[3].id}` })
  t.strictSame((await read(app, article.documentId)).gallery.map((f: any) => f.name), ['g1.png', 'g3.png'], 'deleting a file removes its links')
})

t.test('ref/refId/field refusals: nothing is stored', async (t) => {
  const upload = await buildUpload(t)
  const { app } = upload
  const article = await createArticle(app, 'A')
  const cases: Array<[Part[], RegExp]> = [
    [[...link(article.id, 'cover'), pngPart('a.png'), pngPart('b.png')], /cover accepts a single file/],
    [[...link(article.id, 'gallery'), { name: 'files', filename: 'a.txt', type: 'text/plain', data: Buffer.from('hi') }], /gallery only accepts images \(a\.txt is text\/plain\)/],
    [[...link(article.id, 'title'), pngPart('a.png')], /has no media attribute "title"/],
    [[...link(article.id, 'cover', 'api::nope.nope'), pngPart('a.png')], /Unknown content type "api::nope\.nope"/],
    [[...link(999, 'cover'), pngPart('a.png')], /No api::article\.article entry has id 999/],
    [[...link('abc', 'cover'), pngPart('a.png')], /refId must be an entry id/],
    [[{ name: 'ref', value: ARTICLE }, pngPart('a.png')], /ref, refId and field go together/]
  ]
  for (const [parts, message] of cases) {
    const { status, body } = await postUpload(app, parts)
    t.equal(status, 400, message.source)
    t.match(body.error, { name: 'ValidationError', message })
  }
  t.equal(await upload.records(), 0)
  t.strictSame(await upload.stored(), [])
})

t.test('linking needs the update permission on the entry\'s type (beyond Strapi)', async (t) => {
  const { app } = await buildUpload(t, {}, { grants: Object.values(UPLOAD_ACTIONS) })
  const article = await createArticle(app, 'A')
  await app.contentApi.permissions.revoke('public', contentActions(app).filter((a) => a.endsWith('.update')))
  const denied = await postUpload(app, [...link(article.id, 'cover'), pngPart('a.png')])
  t.equal(denied.status, 403)
  t.equal((await postUpload(app, [pngPart('a.png')])).status, 201, 'a plain upload does not need it')
})

t.test('app.contentApi.upload links too, and files in other locales stay apart', async (t) => {
  const { app } = await buildUpload(t)
  const article = await createArticle(app, 'A')
  const fr = JSON.parse((await app.inject({ method: 'PUT', url: `/api/articles/${article.documentId}?locale=fr`, payload: { data: { title: 'A fr' } } })).body).data
  await app.contentApi.upload!.upload({ name: 'fr.png', buffer: (await import('./helpers.js')).png(1, 1, 1) }, { ref: ARTICLE, refId: fr.id, field: 'cover' })
  t.equal((await read(app, article.documentId, 'populate=cover&locale=fr')).cover.name, 'fr.png')
  t.equal((await read(app, article.documentId, 'populate=cover')).cover, null, 'the en version is untouched')
})
