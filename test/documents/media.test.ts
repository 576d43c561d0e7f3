import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ValidationError, type Document, type QueryParams } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { ARTICLE, FILE, countRows, createFile, openAccess, relationOptions, tableRows } from '../fixtures/relations.js'

/**
 * Media attributes: file records (`plugin::upload.file`, table `files`) linked through Strapi's
 * polymorphic `files_related_mph` (`file_id, related_id, related_type, field, order`). Written by
 * file id, `{ id }` or an array of them; `allowedTypes` checked against each file's mime type.
 * File records are created through the built-in file type's document service (the upload API is
 * a later issue).
 */

type ReadParams = QueryParams & { documentId: string }

/** Strapi's file record, in its key order; `folderPath` is private. */
const FILE_KEYS = [
  'id', 'documentId', 'name', 'alternativeText', 'caption', 'focalPoint', 'width', 'height', 'formats', 'hash', 'ext',
  'mime', 'size', 'url', 'previewUrl', 'provider', 'provider_metadata', 'createdAt', 'updatedAt', 'publishedAt'
]

interface Files { png: Document, jpg: Document, mp4: Document, pdf: Document, mp3: Document }

async function setup (t: Parameters<typeof build>[0]): Promise<{ app: FastifyInstance, files: Files, read: (documentId: string, status?: 'draft' | 'published') => Promise<Document> }> {
  const { app } = await build(t, relationOptions)
  await openAccess(app)
  const files: Files = {
    png: await createFile(app, 'red.png', 'image/png', {
      width: 4,
      height: 4,
      alternativeText: 'A red square',
      caption: 'Red',
      focalPoint: { x: 1, y: 2 },
      formats: { thumbnail: { url: '/uploads/thumbnail_red.png', width: 2, height: 2 } },
      provider_metadata: { bucket: 'b' },
      folderPath: '/1'
    }),
    jpg: await createFile(app, 'photo.jpg', 'image/jpeg'),
    mp4: await createFile(app, 'clip.mp4', 'video/mp4'),
    pdf: await createFile(app, 'doc.pdf', 'application/pdf'),
    mp3: await createFile(app, 'song.mp3', 'audio/mpeg')
  }
  const read = async (documentId: string, status: 'draft' | 'published' = 'published'): Promise<Document> => {
    const params: ReadParams = {
      documentId, status, fields: ['title'], populate: { cover: { fields: ['name'] }, gallery: { fields: ['name'] }, attachments: { fields: ['name'] } }
    }
    const doc = await app.contentApi.documents(ARTICLE).findOne(params)
    if (doc === null) throw new Error(`no ${status} version of ${documentId}`)
    return doc
  }
  return { app, files, read }
}

async function validationError (promise: Promise<unknown>): Promise<ValidationError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof ValidationError) return err
    throw err
  }
  throw new Error('expected a ValidationError')
}

const names = (doc: Document): Record<string, unknown> => ({
  cover: (doc.cover as { name: string } | null)?.name ?? null,
  gallery: (doc.gallery as Array<{ name: string }>).map((f) => f.name),
  attachments: (doc.attachments as Array<{ name: string }>).map((f) => f.name)
})

t.test('write forms: file id, { id }, arrays; null and [] clear', async (t) => {
  const { app, files, read } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: { title: 'A', cover: files.png.id, gallery: [files.mp4.id, { id: files.jpg.id }], attachments: [{ id: files.pdf.id }] } })
  t.same(names(await read(created.documentId)), { cover: 'red.png', gallery: ['clip.mp4', 'photo.jpg'], attachments: ['doc.pdf'] }, 'in the order given')

  await articles.update({ documentId: created.documentId, data: { cover: { id: files.jpg.id }, gallery: [{ id: files.jpg.id }, files.png.id, files.mp4.id] } })
  t.same(names(await read(created.documentId)), { cover: 'photo.jpg', gallery: ['photo.jpg', 'red.png', 'clip.mp4'], attachments: ['doc.pdf'] },
    'an update replaces the files of the attributes it names, and keeps the others')
  await articles.update({ documentId: created.documentId, data: { cover: [files.png.id], gallery: files.png.id, attachments: String(files.mp3.id) } })
  t.same(names(await read(created.documentId)), { cover: 'red.png', gallery: ['red.png'], attachments: ['song.mp3'] },
    'a one-item array for a single file, a bare id for a multiple one, a numeric string')

  await articles.update({ documentId: created.documentId, data: { cover: null, gallery: [], attachments: null } })
  t.same(names(await read(created.documentId)), { cover: null, gallery: [], attachments: [] }, 'null and [] clear')
  t.equal(await countRows(app, 'files_related_mph'), 0, 'and remove the links')
  t.equal(await countRows(app, 'files'), 5, 'never the files')

  await articles.update({ documentId: created.documentId, data: { gallery: [files.png.id, files.jpg.id] } })
  const links = (await tableRows(app, 'files_related_mph')).map((r) => ({ file: r.file_id, type: r.related_type, field: r.field, order: r.order }))
  t.same(links.filter((l) => l.field === 'gallery').length, 4, 'a link per version (draft and published) and file')
  t.ok(links.every((l) => l.type === ARTICLE), 'links name the owner\'s uid')
  t.same(links.slice(0, 2).map((l) => [l.file, l.order]), [[files.png.id, 1], [files.jpg.id, 2]], 'with the order given')
})

t.test('errors: unknown files, wrong types, several files for a single media; nothing written', async (t) => {
  const { app, files, read } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: { title: 'A', cover: files.png.id, gallery: [files.jpg.id] } })
  const before = await read(created.documentId)
  const update = async (data: Record<string, unknown>) => await validationError(articles.update({ documentId: created.documentId, data: { title: 'Changed', ...data } }))

  const unknown = await update({ cover: 987654 })
  const missing = (n: number) => `${n} relation(s) of type plugin::upload.file associated with this entity do not exist`
  t.equal(unknown.message, missing(1), 'an unknown file id: Strapi\'s entity-validator message, counting the ids')
  t.same(unknown.details.errors, [{ path: [], message: missing(1), name: 'ValidationError' }], 'at the payload\'s root')
  const unknownInList = await update({ gallery: [files.png.id, 987654, 987655, 987654] })
  t.equal(unknownInList.message, missing(2), 'each id that names nothing counted once')

  const notImage = await update({ cover: files.pdf.id })
  t.match(notImage.details.errors, [{ path: ['cover'], value: files.pdf.id }], 'allowedTypes [images] rejects a pdf')
  t.match(notImage.message, /images/)
  const notImageOrVideo = await update({ gallery: [files.png.id, files.mp3.id] })
  t.match(notImageOrVideo.message, /images, videos/, 'allowedTypes [images, videos] rejects an audio file')
  t.equal((await update({ cover: files.mp4.id })).status, 400, 'a video is not an image')

  const several = await update({ cover: [files.png.id, files.jpg.id] })
  t.match(several.details.errors, [{ path: ['cover'] }], 'a single media takes one file')
  for (const value of ['abc', { documentId: files.png.documentId }, -1, 0, true, [{}]]) {
    t.equal((await update({ gallery: value })).status, 400, `gallery: ${JSON.stringify(value)}`)
  }

  t.same(await read(created.documentId), before, 'the document and its files are unchanged')
  t.equal((await articles.findOne({ documentId: created.documentId, status: 'draft' }))?.title, 'A', 'the scalar change was rolled back')

  const post = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'B', cover: 987654 } } })
  t.equal(post.statusCode, 400)
  t.match(post.json().error, { name: 'ValidationError', details: { errors: [{ path: [] }] } })
  t.equal(await countRows(app, 'articles'), 2, 'no document created')
})

t.test('allowedTypes: files (or none) accepts every type', async (t) => {
  const { app, files, read } = await setup(t)
  const created = await app.contentApi.documents(ARTICLE).create({
    data: { title: 'A', attachments: [files.pdf.id, files.png.id, files.mp4.id, files.mp3.id, files.jpg.id] }
  })
  t.same(names(await read(created.documentId)).attachments, ['doc.pdf', 'red.png', 'clip.mp4', 'song.mp3', 'photo.jpg'])
})

t.test('populate shows the file record in Strapi\'s shape', async (t) => {
  const { app, files } = await setup(t)
  const created = await app.contentApi.documents(ARTICLE).create({ data: { title: 'A', cover: files.png.id, gallery: [files.png.id, files.jpg.id] } })

  const res = await app.inject(`/api/articles/${created.documentId}?populate[0]=cover&populate[1]=gallery`)
  t.equal(res.statusCode, 200)
  const { cover, gallery } = res.json().data
  t.same(Object.keys(cover), FILE_KEYS, 'every file attribute, in Strapi\'s order; folderPath is private')
  t.same(cover, {
    id: files.png.id,
    documentId: files.png.documentId,
    name: 'red.png',
    alternativeText: 'A red square',
    caption: 'Red',
    focalPoint: { x: 1, y: 2 },
    width: 4,
    height: 4,
    formats: { thumbnail: { url: '/uploads/thumbnail_red.png', width: 2, height: 2 } },
    hash: files.png.hash,
    ext: '.png',
    mime: 'image/png',
    size: 1.5,
    url: files.png.url,
    previewUrl: null,
    provider: 'local',
    provider_metadata: { bucket: 'b' },
    createdAt: files.png.createdAt,
    updatedAt: files.png.updatedAt,
    publishedAt: files.png.publishedAt
  })
  t.same(gallery.map((f: { name: string }) => f.name), ['red.png', 'photo.jpg'], 'a multiple media is an array, in stored order')
  t.same(Object.keys(gallery[1]), FILE_KEYS)

  const empty = await app.contentApi.documents(ARTICLE).create({ data: { title: 'B' } })
  const none = await app.inject(`/api/articles/${empty.documentId}?populate=cover,gallery`)
  t.same([none.json().data.cover, none.json().data.gallery], [null, []], 'no file: null, or an empty array')

  const plain = await app.inject(`/api/articles/${created.documentId}`)
  t.notOk('cover' in plain.json().data, 'media are not returned unless populated')

  const fields = await app.inject(`/api/articles/${created.documentId}?populate[cover][fields][0]=name&populate[cover][fields][1]=mime`)
  t.same(fields.json().data.cover, { id: files.png.id, documentId: files.png.documentId, name: 'red.png', mime: 'image/png' }, 'populate-media-fields')
  const folder = await app.inject(`/api/articles/${created.documentId}?populate[cover][fields][0]=folderPath`)
  t.equal(folder.statusCode, 400, 'the private folderPath cannot be selected')
  const count = await app.inject(`/api/articles/${created.documentId}?populate[gallery][count]=true`)
  t.same(count.json().data.gallery, { count: 2 }, 'count on a multiple media')
})

t.test('publishing copies the media links; deleting the file or the document removes them', async (t) => {
  const { app, files, read } = await setup(t)
  const articles = app.contentApi.documents(ARTICLE)
  const created = await articles.create({ data: { title: 'A', cover: files.png.id, gallery: [files.jpg.id] } })
  await articles.update({ documentId: created.documentId, status: 'draft', data: { cover: files.jpg.id, gallery: [files.png.id, files.mp4.id] } })
  t.same(names(await read(created.documentId)), { cover: 'red.png', gallery: ['photo.jpg'], attachments: [] }, 'a draft-only edit leaves the published files')
  t.same(names(await read(created.documentId, 'draft')), { cover: 'photo.jpg', gallery: ['red.png', 'clip.mp4'], attachments: [] })
  await articles.publish({ documentId: created.documentId })
  t.same(names(await read(created.documentId)), { cover: 'photo.jpg', gallery: ['red.png', 'clip.mp4'], attachments: [] }, 'publishing carries them, in order')

  await app.contentApi.documents(FILE).delete({ documentId: files.png.documentId })
  t.same(names(await read(created.documentId)).gallery, ['clip.mp4'], 'a deleted file leaves every media attribute')
  await articles.delete({ documentId: created.documentId })
  t.equal(await countRows(app, 'files_related_mph'), 0, 'deleting the document removes its media links')
  t.equal(await countRows(app, 'files'), 4, 'the files stay')
})
