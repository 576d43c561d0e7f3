import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { UPLOAD_ACTIONS } from '../../lib/upload/routes.js'
import { buildUpload, png, pngPart, postUpload } from './helpers.js'

/** Strapi's file record keys, as the upload API answers them (`folderPath` is private). */
const RECORD_KEYS = [
  'alternativeText', 'caption', 'createdAt', 'documentId', 'ext', 'focalPoint', 'formats', 'hash', 'height', 'id', 'isUrlSigned',
  'mime', 'name', 'previewUrl', 'provider', 'provider_metadata', 'publishedAt', 'size', 'updatedAt', 'url', 'width'
]

t.test('POST /api/upload: one file, answered 201 with a bare array of Strapi file records', async (t) => {
  const { app, directory, stored, staged } = await buildUpload(t, { sizeOptimization: false })
  const { status, body } = await postUpload(app, [pngPart('Green Tea.png', [0, 255, 0])])
  t.equal(status, 201)
  t.equal(body.length, 1)
  const [file] = body
  t.strictSame(Object.keys(file).sort(), RECORD_KEYS)
  t.match(file, {
    id: 1,
    name: 'Green Tea.png',
    alternativeText: null,
    caption: null,
    focalPoint: null,
    width: 4,
    height: 4,
    formats: null,
    ext: '.png',
    mime: 'image/png',
    size: 0.07,
    previewUrl: null,
    provider: 'local',
    provider_metadata: null,
    isUrlSigned: false
  })
  t.match(file.hash, /^Green_Tea_[0-9a-f]{10}$/, 'hash: slugged base name and 10 hex digits')
  t.equal(file.url, `/uploads/${file.hash}.png`)
  t.strictSame(await stored(), [`${file.hash}.png`])
  t.strictSame(await readFile(join(directory, `${file.hash}.png`)), png(0, 255, 0), 'stored byte for byte without optimisation')
  t.strictSame(await staged(), [], 'the staging directory is removed')

  const served = await app.inject({ method: 'GET', url: file.url })
  t.equal(served.statusCode, 200, 'served under /uploads')
  t.equal(served.headers['content-type'], 'image/png')
  t.equal(served.headers['x-content-type-options'], 'nosniff')
  t.strictSame(served.rawPayload, png(0, 255, 0))
})

t.test('POST /api/upload: several files with fileInfo aligned by index, in any part order', async (t) => {
  const { app } = await buildUpload(t)
  const fileInfo = JSON.stringify([{ name: 'first.png', alternativeText: 'one' }, { caption: 'two' }])
  const { status, body } = await postUpload(app, [pngPart('a.png'), { name: 'fileInfo', value: fileInfo }, pngPart('b.png', [1, 2, 3])])
  t.equal(status, 201)
  t.match(body, [{ name: 'first.png', alternativeText: 'one', caption: null }, { name: 'b.png', alternativeText: null, caption: 'two' }])
  t.match(body[0].hash, /^first_/, 'the hash follows the given name')

  const repeated = await postUpload(app, [
    { name: 'fileInfo', value: '{"alternativeText":"x"}' }, { name: 'fileInfo', value: '{"alternativeText":"y"}' }, pngPart('c.png'), pngPart('d.png')
  ])
  t.match(repeated.body, [{ name: 'c.png', alternativeText: 'x' }, { name: 'd.png', alternativeText: 'y' }], 'one fileInfo field per file')
})

t.test('GET /api/upload/files: filters, sort, fields and pagination; everything without pagination', async (t) => {
  const { app } = await buildUpload(t)
  for (const name of ['c.png', 'a.png', 'b.png']) await postUpload(app, [{ name: 'fileInfo', value: JSON.stringify({ caption: `cap ${name}` }) }, pngPart(name)])
  const get = async (search: string): Promise<any> => {
    const response = await app.inject({ method: 'GET', url: `/api/upload/files${search}` })
    t.equal(response.statusCode, 200, search)
    t.match(response.headers['content-type'], /^application\/json/)
    return JSON.parse(response.body)
  }
  t.strictSame((await get('')).map((f: any) => f.name), ['c.png', 'a.png', 'b.png'], 'all files, by id')
  t.strictSame((await get('?sort=name:desc')).map((f: any) => f.name), ['c.png', 'b.png', 'a.png'])
  t.strictSame(await get('?filters[name][$eq]=a.png&fields[0]=name&fields[1]=caption'), [
    { id: 2, documentId: (await get('?filters[name][$eq]=a.png'))[0].documentId, name: 'a.png', caption: 'cap a.png', isUrlSigned: false }
  ])
  t.strictSame((await get('?sort=name&pagination[page]=2&pagination[pageSize]=2')).map((f: any) => f.name), ['c.png'])
  t.strictSame((await get('?sort=name&pagination[start]=1&pagination[limit]=1')).map((f: any) => f.name), ['b.png'])
  t.strictSame((await get('?filters[caption][$contains]=b')).map((f: any) => f.name), ['b.png'])
  const invalid = await app.inject({ method: 'GET', url: '/api/upload/files?filters[nope][$eq]=1' })
  t.equal(invalid.statusCode, 400, 'unknown filter keys are a 400')
  t.equal(JSON.parse(invalid.body).error.name, 'ValidationError')
})

t.test('GET /api/upload/files/:id: by id or documentId; 404 file.notFound', async (t) => {
  const { app } = await buildUpload(t)
  const [file] = (await postUpload(app, [pngPart('a.png')])).body
  for (const key of [file.id, file.documentId]) {
    const response = await app.inject({ method: 'GET', url: `/api/upload/files/${key}` })
    t.equal(response.statusCode, 200)
    t.strictSame(JSON.parse(response.body), file)
  }
  const fields = await app.inject({ method: 'GET', url: `/api/upload/files/${file.id}?fields[0]=mime` })
  t.strictSame(JSON.parse(fields.body), { id: file.id, documentId: file.documentId, mime: 'image/png', isUrlSigned: false })
  for (const id of ['99999', 'abc', '0', '-1', '1.5']) {
    const response = await app.inject({ method: 'GET', url: `/api/upload/files/${id}` })
    t.equal(response.statusCode, 404, id)
    t.strictSame(JSON.parse(response.body), { data: null, error: { status: 404, name: 'NotFoundError', message: 'file.notFound', details: {} } })
  }
})

t.test('DELETE /api/upload/files/:id: answers the deleted record, removes the stored file', async (t) => {
  const { app, stored, records } = await buildUpload(t)
  const [file, other] = (await postUpload(app, [pngPart('a.png'), pngPart('b.png')])).body
  const response = await app.inject({ method: 'DELETE', url: `/api/upload/files/${file.id}` })
  t.equal(response.statusCode, 200)
  t.strictSame(JSON.parse(response.body), file)
  t.equal(await records(), 1)
  t.strictSame(await stored(), [`${other.hash}.png`])
  t.equal((await app.inject({ method: 'GET', url: file.url })).statusCode, 404, 'no longer served')
  const again = await app.inject({ method: 'DELETE', url: `/api/upload/files/${file.id}` })
  t.equal(again.statusCode, 404)
  t.equal(JSON.parse(again.body).error.message, 'file.notFound')
})

t.test('POST /api/upload?id=: updates fileInfo (multipart or JSON); null keeps a value', async (t) => {
  const { app } = await buildUpload(t)
  const [file] = (await postUpload(app, [{ name: 'fileInfo', value: '{"alternativeText":"alt","caption":"cap"}' }, pngPart('a.png')])).body
  const multipartUpdate = await postUpload(app, [{ name: 'fileInfo', value: '{"name":"renamed.png","caption":null}' }], `?id=${file.id}`)
  t.equal(multipartUpdate.status, 200)
  t.match(multipartUpdate.body, { id: file.id, name: 'renamed.png', alternativeText: 'alt', caption: 'cap', url: file.url, hash: file.hash })
  const json = await app.inject({ method: 'POST', url: `/api/upload?id=${file.id}`, payload: { fileInfo: { alternativeText: 'new alt' } } })
  t.equal(json.statusCode, 200)
  t.match(JSON.parse(json.body), { name: 'renamed.png', alternativeText: 'new alt', caption: 'cap' })
  const missing = await app.inject({ method: 'POST', url: '/api/upload?id=404', payload: { fileInfo: { caption: 'x' } } })
  t.equal(missing.statusCode, 404)
  const badName = await app.inject({ method: 'POST', url: `/api/upload?id=${file.id}`, payload: { fileInfo: { name: '../x.png' } } })
  t.equal(badName.statusCode, 400)
  t.equal(JSON.parse(badName.body).error.message, 'File name contains invalid characters')
})

t.test('POST /api/upload?id= with a file: replaces the content, keeps the URL', async (t) => {
  const { app, directory, stored } = await buildUpload(t, { sizeOptimization: false })
  const [file] = (await postUpload(app, [{ name: 'fileInfo', value: '{"alternativeText":"alt"}' }, pngPart('a.png', [255, 0, 0])])).body
  const replaced = await postUpload(app, [pngPart('b.png', [0, 0, 255], 8)], `?id=${file.id}`)
  t.equal(replaced.status, 200)
  t.match(replaced.body, { id: file.id, documentId: file.documentId, name: 'b.png', alternativeText: 'alt', width: 8, height: 8, url: file.url, hash: file.hash })
  t.strictSame(await stored(), [`${file.hash}.png`])
  t.strictSame(await readFile(join(directory, `${file.hash}.png`)), png(0, 0, 255, 8, 8))
  const several = await postUpload(app, [pngPart('c.png'), pngPart('d.png')], `?id=${file.id}`)
  t.equal(several.status, 400)
  t.equal(several.body.error.message, 'Cannot replace a file with multiple ones')
  const unknown = await postUpload(app, [pngPart('c.png')], '?id=999')
  t.equal(unknown.status, 404)
  t.strictSame(await stored(), [`${file.hash}.png`], 'nothing stored for a refused replacement')
})

t.test('permissions: each route checks its plugin::upload.content-api action', async (t) => {
  const { app } = await buildUpload(t, {}, { grants: [UPLOAD_ACTIONS.find] })
  const upload = await postUpload(app, [pngPart('a.png')])
  t.equal(upload.status, 403)
  t.strictSame(upload.body, { data: null, error: { status: 403, name: 'ForbiddenError', message: 'Forbidden', details: {} } })
  t.equal((await app.inject({ method: 'GET', url: '/api/upload/files' })).statusCode, 200, 'find granted')
  t.equal((await app.inject({ method: 'GET', url: '/api/upload/files/1' })).statusCode, 403, 'findOne not granted')
  t.equal((await app.inject({ method: 'DELETE', url: '/api/upload/files/1' })).statusCode, 403, 'destroy not granted')
  const token = await app.contentApi.apiTokens.create({ name: 'ro', type: 'read-only' })
  const readOnly = await postUpload(app, [pngPart('a.png')], '', { authorization: `Bearer ${token.accessKey}` })
  t.equal(readOnly.status, 403, 'a read-only token cannot upload')
  const full = await app.contentApi.apiTokens.create({ name: 'full', type: 'full-access' })
  const allowed = await postUpload(app, [pngPart('a.png')], '', { authorization: `Bearer ${full.accessKey}` })
  t.equal(allowed.status, 201, 'a full-access token can')
  const bad = await postUpload(app, [pngPart('a.png')], '', { authorization: 'Bearer nope' })
  t.equal(bad.status, 401)
})

t.test('app.contentApi.upload: the same service for application code', async (t) => {
  const { app, stored } = await buildUpload(t)
  const upload = app.contentApi.upload!
  t.equal(upload.provider.name, 'local')
  const [file] = await upload.upload({ name: 'seed.png', type: 'image/png', buffer: png(9, 9, 9) }, { fileInfo: { caption: 'seeded' } })
  t.match(file, { name: 'seed.png', caption: 'seeded', width: 4, isUrlSigned: false })
  t.match(await upload.findOne(file.id), { id: file.id })
  t.match(await upload.findMany({ filters: { caption: 'seeded' } }), [{ id: file.id }])
  t.match(await upload.updateFileInfo(file.id, { alternativeText: 'a' }), { alternativeText: 'a', caption: 'seeded' })
  t.match(await upload.replace(file.documentId, { name: 'other.png', buffer: png(1, 1, 1, 6, 6) }), { width: 6, url: file.url })
  t.match(await upload.remove(file.id), { id: file.id })
  t.equal(await upload.findOne(file.id), null)
  t.equal(await upload.remove(file.id), null)
  t.strictSame(await stored(), [])
})

t.test('upload.enabled: false leaves the routes out', async (t) => {
  const { app } = await buildUpload(t, { enabled: false })
  t.equal(app.contentApi.upload, null)
  t.equal((await app.inject({ method: 'GET', url: '/api/upload/files' })).statusCode, 404)
})
