import t, { type Test } from 'tap'
import sharp from 'sharp'
import type { UploadProvider } from '../../lib/options/upload-provider.js'
import { LocalProvider } from '../../lib/upload/local-provider.js'
import { buildUpload, multipart, png, pngPart, postUpload, type Part, type UploadApp } from './helpers.js'

/**
 * Every refusal is a 4xx with Strapi's envelope, and leaves nothing behind: no file record, no
 * stored file (not even a partial one) and no staging directory.
 */

async function nothingLeft (t: Test, upload: UploadApp, message: string): Promise<void> {
  t.equal(await upload.records(), 0, `${message}: no record`)
  t.strictSame(await upload.stored(), [], `${message}: no stored file`)
  t.strictSame(await upload.staged(), [], `${message}: no staging directory`)
}

async function refused (t: Test, upload: UploadApp, parts: readonly Part[], expected: { status?: number, name?: string, code?: string, message: string | RegExp }): Promise<void> {
  const { status, body } = await postUpload(upload.app, parts)
  const label = typeof expected.message === 'string' ? expected.message : expected.message.source
  t.equal(status, expected.status ?? 400, `${label}: status`)
  t.equal(body?.data, null, `${label}: envelope`)
  t.equal(body?.error?.name, expected.name ?? 'ValidationError', `${label}: name`)
  t.match(body?.error?.message, expected.message, `${label}: message`)
  await nothingLeft(t, upload, label)
}

const text = (filename: string, content: string | Buffer, type = 'text/plain'): Part =>
  ({ name: 'files', filename, type, data: Buffer.isBuffer(content) ? content : Buffer.from(content) })

t.test('size limit: 413 PayloadTooLargeError, whether the file is alone or among others', async (t) => {
  const upload = await buildUpload(t, { sizeLimit: 1000 })
  await refused(t, upload, [text('big.txt', 'x'.repeat(1001))], { status: 413, name: 'PayloadTooLargeError', message: 'big.txt exceeds the size limit of 1000 bytes' })
  await refused(t, upload, [text('ok.txt', 'fine'), text('big.txt', 'x'.repeat(5000))], { status: 413, name: 'PayloadTooLargeError', message: /big\.txt exceeds/ })
  const exact = await postUpload(upload.app, [text('exact.txt', 'x'.repeat(1000))])
  t.equal(exact.status, 201, 'a file of exactly sizeLimit bytes passes')
  t.equal(upload.app.contentApi.upload!.options.sizeLimit, 1000)
})

t.test('the default size limit is Strapi\'s 1 GB', async (t) => {
  const { app } = await buildUpload(t)
  t.equal(app.contentApi.upload!.options.sizeLimit, 1_000_000_000)
})

t.test('MIME allow-list and deny-list (Strapi\'s security option) on the detected type', async (t) => {
  const upload = await buildUpload(t, { security: { allowedTypes: ['image/*', 'text/plain'], deniedTypes: ['image/gif'] } })
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n')
  await refused(t, upload, [text('doc.pdf', pdf, 'application/pdf')], { message: "File type 'application/pdf' is not allowed" })
  // Declared as text, detected as PDF: the content decides.
  await refused(t, upload, [text('doc.txt', pdf, 'text/plain')], { message: /does not match/ })
  const gif = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#f00' } }).gif().toBuffer()
  await refused(t, upload, [text('a.gif', gif, 'image/gif')], { message: "File type 'image/gif' is not allowed" })
  t.equal((await postUpload(upload.app, [pngPart('ok.png')])).status, 201, 'an allowed type passes')
  t.equal((await postUpload(upload.app, [text('notes.txt', 'hello')])).status, 201)
})

t.test('content that does not match the extension', async (t) => {
  const upload = await buildUpload(t)
  const html = '<html><body><script>alert(1)</script></body></html>'
  await refused(t, upload, [text('evil.png', html, 'image/png')], { message: 'The content of evil.png does not match its extension .png' })
  await refused(t, upload, [text('photo.jpg', png(1, 2, 3), 'image/jpeg')], { message: /photo\.jpg does not match/ })
  await refused(t, upload, [text('archive.zip', 'PK? not really', 'application/zip')], { message: /does not match/ })
  await refused(t, upload, [text('notes.txt', png(1, 2, 3))], { message: /notes\.txt does not match/ })

  const jpeg = await sharp({ create: { width: 3, height: 2, channels: 3, background: '#0f0' } }).jpeg().toBuffer()
  const accepted = await postUpload(upload.app, [text('photo.jpeg', jpeg, 'image/jpeg'), text('page.svg', '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="20"></svg>', 'image/svg+xml'), text('data.csv', 'a,b\n1,2\n', 'text/csv')])
  t.equal(accepted.status, 201)
  t.match(accepted.body, [
    { ext: '.jpeg', mime: 'image/jpeg', width: 3, height: 2 },
    { ext: '.svg', mime: 'image/svg+xml', width: 10, height: 20 },
    { ext: '.csv', mime: 'text/csv', width: null, height: null }
  ])
  const noExtension = await postUpload(upload.app, [text('picture', png(1, 1, 1), 'application/octet-stream')])
  t.match(noExtension.body, [{ name: 'picture', ext: '.png', mime: 'image/png' }], 'no extension: taken from the content')
})

t.test('corrupt images and zero-byte files', async (t) => {
  const upload = await buildUpload(t)
  // A PNG cut in the middle of its image data: the header reads, the pixels do not (sharp decodes them).
  const broken = png(1, 2, 3, 64, 64).subarray(0, 45)
  await refused(t, upload, [text('broken.png', broken, 'image/png')], { message: 'File is not a valid image' })
  await refused(t, upload, [text('empty.txt', '')], { message: 'empty.txt is empty' })
})

t.test('names: path traversal, separators and control characters are refused, never trimmed', async (t) => {
  const upload = await buildUpload(t)
  for (const filename of ['../../etc/passwd.png', '..\\..\\win.png', 'dir/a.png', 'a\u0001b.png', '..', 'x'.repeat(300) + '.png']) {
    await refused(t, upload, [pngPart(filename)], { message: 'File name contains invalid characters' })
  }
  await refused(t, upload, [{ name: 'fileInfo', value: '{"name":"../x.png"}' }, pngPart('ok.png')], { message: 'File name contains invalid characters' })
  const unicode = await postUpload(upload.app, [pngPart('Crème brûlée ☕.png')])
  t.equal(unicode.status, 201)
  t.match(unicode.body[0], { name: 'Crème brûlée ☕.png', hash: /^Creme_brulee_[0-9a-f]{10}$/ })
})

t.test('too many files, a file in another field, and malformed bodies', async (t) => {
  const upload = await buildUpload(t, { maxFiles: 2 })
  await refused(t, upload, [pngPart('a.png'), pngPart('b.png'), pngPart('c.png')], { message: 'Too many files: at most 2 per request' })
  await refused(t, upload, [{ name: 'file', filename: 'a.png', type: 'image/png', data: png(1, 1, 1) }], {
    message: 'Unexpected file field "file": files are sent in the "files" field'
  })
  await refused(t, upload, [pngPart('a.png'), { name: 'avatar', filename: 'b.png', data: png(1, 1, 1) }], { message: /Unexpected file field "avatar"/ })

  const form = multipart([pngPart('a.png')])
  const truncated = await upload.app.inject({ method: 'POST', url: '/api/upload', payload: form.payload.subarray(0, form.payload.length - 40), headers: form.headers })
  t.equal(truncated.statusCode, 400, 'a truncated body')
  t.match(JSON.parse(truncated.body).error, { name: 'ValidationError', message: /Invalid multipart body/ })
  await nothingLeft(t, upload, 'truncated body')
  const fields = Array.from({ length: 120 }, (_, i) => ({ name: `f${i}`, value: 'x' }))
  await refused(t, upload, [...fields, pngPart('a.png')], { message: /Too many multipart fields/ })
  await refused(t, upload, [{ name: 'fileInfo', value: 'x'.repeat(1024 * 1024 + 1) }, pngPart('a.png')], { message: /longer than/ })
})

t.test('bodies that are not multipart: "Files are empty", as in Strapi', async (t) => {
  const upload = await buildUpload(t)
  const empty = { data: null, error: { status: 400, name: 'ValidationError', message: 'Files are empty', details: {} } }
  const json = await upload.app.inject({ method: 'POST', url: '/api/upload', payload: { files: 'x' } })
  t.equal(json.statusCode, 400)
  t.strictSame(JSON.parse(json.body), empty)
  const plain = await upload.app.inject({ method: 'POST', url: '/api/upload', payload: 'files=x', headers: { 'content-type': 'text/plain' } })
  t.strictSame(JSON.parse(plain.body), empty)
  const none = await upload.app.inject({ method: 'POST', url: '/api/upload' })
  t.strictSame(JSON.parse(none.body), empty)
  const noFiles = await postUpload(upload.app, [{ name: 'fileInfo', value: '{}' }])
  t.strictSame(noFiles.body, empty, 'multipart without files')
  const badJson = await upload.app.inject({ method: 'POST', url: '/api/upload', payload: '{"files":', headers: { 'content-type': 'application/json' } })
  t.equal(badJson.statusCode, 400)
  await nothingLeft(t, upload, 'non-multipart bodies')
})

t.test('fileInfo: only name, alternativeText and caption, as JSON', async (t) => {
  const upload = await buildUpload(t)
  await refused(t, upload, [{ name: 'fileInfo', value: '{"name":"a.png","folder":3}' }, pngPart('a.png')], { message: 'fileInfo field has unspecified keys: folder' })
  await refused(t, upload, [{ name: 'fileInfo', value: '{not json' }, pngPart('a.png')], { message: 'fileInfo must be a JSON object' })
  await refused(t, upload, [{ name: 'fileInfo', value: '{"caption":3}' }, pngPart('a.png')], { message: /fileInfo\.caption must be a `string` type/ })
  await refused(t, upload, [{ name: 'fileInfo', value: '{"caption":"x"}' }, pngPart('a.png'), pngPart('b.png')], { message: /must be an array/ })
})

t.test('all or nothing: one bad file among good ones stores none of them', async (t) => {
  const upload = await buildUpload(t)
  await refused(t, upload, [pngPart('a.png'), pngPart('b.png'), text('c.png', 'not a png')], { message: /c\.png does not match/ })
})

t.test('a provider failing half-way: what was stored and recorded is removed, the answer is a 500', async (t) => {
  const root = await import('node:os').then((os) => os.tmpdir())
  const local = new LocalProvider({ directory: `${root}/fca-flaky-${process.pid}-${Date.now()}`, baseUrl: '/uploads' })
  let calls = 0
  const flaky: UploadProvider = {
    name: 'flaky',
    async upload (file) {
      calls++
      if (calls === 2) throw new Error('disk full')
      return await local.upload(file)
    },
    async delete (file) { await local.delete(file) }
  }
  const upload = await buildUpload(t, { provider: flaky })
  t.teardown(async () => { await (await import('node:fs/promises')).rm(local.directory, { recursive: true, force: true }) })
  const { status, body } = await postUpload(upload.app, [pngPart('a.png'), pngPart('b.png')])
  t.equal(status, 500)
  t.strictSame(body, { data: null, error: { status: 500, name: 'InternalServerError', message: 'Internal Server Error', details: {} } })
  t.equal(await upload.records(), 0, 'the first record is removed')
  t.strictSame(await (await import('node:fs/promises')).readdir(local.directory), [], 'the first file is removed')
  t.strictSame(await upload.staged(), [])
})
