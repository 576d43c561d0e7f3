import t from 'tap'
import { buildUpload, png, postUpload, type Part } from './helpers.js'
import { isActiveType, dispositionOf } from '../../lib/upload/active-types.js'
import { contentDisposition } from '../../lib/upload/content-disposition.js'

/**
 * Uploaded files can never run as the API's origin: every answer under /uploads carries
 * `nosniff` and a sandboxing CSP, and active types are served as attachments unless
 * `upload.inlineTypes` allows them. test/upload/browser.test.ts checks the same in Chromium.
 */

const CSP = "default-src 'none'; sandbox"
const HTML = Buffer.from('<!doctype html><script>document.title = document.cookie</script>')
const SVG = Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="8" height="8" onload="alert(1)"><script>alert(document.domain)</script><rect width="8" height="8" fill="red"/></svg>')
const part = (filename: string, data: Buffer, type: string): Part => ({ name: 'files', filename, type, data })

t.test('active types', async (t) => {
  for (const type of ['text/html', 'text/html; charset=utf-8', 'application/xhtml+xml', 'image/svg+xml', 'text/xml', 'application/xml',
    'application/rss+xml', 'application/xslt+xml', 'text/xsl', 'text/javascript', 'application/javascript', 'application/x-javascript',
    'text/x-component', 'message/rfc822', 'multipart/related', 'application/x-shockwave-flash', 'TEXT/HTML']) {
    t.ok(isActiveType(type), type)
  }
  for (const type of ['image/png', 'image/jpeg', 'application/pdf', 'text/plain', 'application/json', 'text/csv', 'video/mp4', 'audio/mpeg',
    'application/octet-stream', 'font/woff2', 'text/css', 'application/node', 'application/xml-dtd']) {
    t.notOk(isActiveType(type), type)
  }
  t.equal(dispositionOf('image/svg+xml', []), 'attachment')
  t.equal(dispositionOf('image/svg+xml', ['image/svg+xml']), 'inline')
  t.equal(dispositionOf('image/svg+xml', ['image/*']), 'inline')
  t.equal(dispositionOf('text/html', ['image/*']), 'attachment')
  t.equal(dispositionOf('image/png', []), 'inline')
})

t.test('Content-Disposition values: RFC 6266 with an RFC 8187 filename*, ASCII only, nothing to inject', async (t) => {
  t.equal(contentDisposition('attachment', 'logo_3f9a1c0b2e.svg'), 'attachment; filename="logo_3f9a1c0b2e.svg"')
  t.equal(contentDisposition('attachment', 'Résumé "final".html'),
    'attachment; filename="R_sum_ _final_.html"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%22final%22.html')
  t.equal(contentDisposition('inline', "it's (100%)*.svg"), 'inline; filename="it\'s (100_)*.svg"; filename*=UTF-8\'\'it%27s%20%28100%25%29%2A.svg')
  const hostile = contentDisposition('attachment', 'a\r\nSet-Cookie: x=1\\"; filename=evil.html\ud800')
  t.match(hostile, /^[\x20-\x7e]+$/, 'printable ASCII only: no CR, LF or other control character')
  t.equal(hostile.split('"').length, 3, 'one quoted string: the name cannot close it')
  t.match(hostile, /filename\*=UTF-8''a%0D%0ASet-Cookie%3A%20x%3D1%5C%22%3B%20filename%3Devil\.html%EF%BF%BD$/, 'the exact name, percent-encoded (a lone surrogate as U+FFFD)')
})

t.test('HTML, SVG, XML and JavaScript are served as attachments, with nosniff and the sandboxing CSP', async (t) => {
  const { app } = await buildUpload(t)
  const files = [
    part('page.html', HTML, 'text/html'),
    part('logo.svg', SVG, 'image/svg+xml'),
    part('feed.xml', Buffer.from('<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="x.xsl"?><a/>'), 'application/xml'),
    part('app.js', Buffer.from('alert(document.cookie)'), 'text/javascript'),
    part('page.xhtml', Buffer.from('<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'), 'application/xhtml+xml')
  ]
  const { status, body } = await postUpload(app, files)
  t.equal(status, 201)
  const expected = ['text/html', 'image/svg+xml', 'application/xml', 'text/javascript', 'application/xhtml+xml']
  t.strictSame(body.map((f: any) => f.mime), expected, 'recorded with the type of their extension')
  for (const [i, file] of body.entries()) {
    const served = await app.inject({ method: 'GET', url: file.url })
    t.equal(served.statusCode, 200, file.name)
    t.equal(String(served.headers['content-type']).split(';')[0], expected[i], `${file.name}: served with the recorded type`)
    t.equal(served.headers['content-disposition'], `attachment; filename="${file.hash}${file.ext}"`, `${file.name}: an attachment`)
    t.equal(served.headers['x-content-type-options'], 'nosniff')
    t.equal(served.headers['content-security-policy'], CSP)
    t.strictSame(served.rawPayload, (files[i] as { data: Buffer }).data, 'the bytes as uploaded')
  }
})

t.test('passive types stay inline, and every answer under /uploads carries nosniff and the CSP', async (t) => {
  const { app } = await buildUpload(t, { sizeOptimization: false })
  const { body } = await postUpload(app, [
    part('photo.png', png(1, 2, 3), 'image/png'),
    // HTML in a text file is text: with nosniff a browser never renders it.
    part('notes.txt', HTML, 'text/plain')
  ])
  for (const [file, type] of [[body[0], 'image/png'], [body[1], 'text/plain; charset=utf-8']]) {
    const served = await app.inject({ method: 'GET', url: file.url })
    t.equal(served.headers['content-type'], type, file.name)
    t.equal(served.headers['content-disposition'], undefined, `${file.name}: inline`)
    t.equal(served.headers['x-content-type-options'], 'nosniff')
    t.equal(served.headers['content-security-policy'], CSP)
  }
  const cached = await app.inject({ method: 'GET', url: body[0].url, headers: { 'if-none-match': (await app.inject({ method: 'GET', url: body[0].url })).headers.etag as string } })
  t.equal(cached.statusCode, 304)
  t.equal(cached.headers['content-security-policy'], CSP, 'a 304 too')
  const head = await app.inject({ method: 'HEAD', url: body[0].url })
  t.equal(head.headers['content-security-policy'], CSP, 'a HEAD too')
  const missing = await app.inject({ method: 'GET', url: '/uploads/nothing_0123456789.html' })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers['x-content-type-options'], 'nosniff', 'a 404 too')
  t.equal(missing.headers['content-security-policy'], CSP)
  const other = await app.inject({ method: 'GET', url: '/api/upload/files' })
  t.equal(other.headers['content-security-policy'], undefined, 'the headers stay under /uploads')
})

t.test('an active type is refused to a script or a worker (Sec-Fetch-Dest), which Content-Disposition does not stop', async (t) => {
  const { app } = await buildUpload(t, { inlineTypes: ['application/xml'] })
  const uploaded = await postUpload(app, [
    part('app.js', Buffer.from('alert(1)'), 'text/javascript'), part('logo.svg', SVG, 'image/svg+xml'), part('feed.xml', Buffer.from('<?xml version="1.0"?><a/>'), 'application/xml')
  ])
  t.equal(uploaded.status, 201, JSON.stringify(uploaded.body))
  const [script, svg, xml] = uploaded.body
  const get = async (url: string, destination: string): Promise<number> =>
    (await app.inject({ method: 'GET', url, headers: { 'sec-fetch-dest': destination } })).statusCode
  for (const destination of ['script', 'worker', 'sharedworker', 'serviceworker', 'audioworklet', 'paintworklet']) {
    t.equal(await get(script.url, destination), 403, `app.js as ${destination}`)
  }
  t.equal(await get(svg.url, 'xslt'), 403, 'logo.svg as an XSLT stylesheet')
  t.equal(await get(svg.url, 'image'), 200, 'logo.svg as an image')
  t.equal(await get(script.url, 'document'), 200, 'app.js opened (a download)')
  t.equal(await get(xml.url, 'xslt'), 200, 'a type allowed inline is not refused')
})

t.test('upload.inlineTypes serves an allow-listed active type inline, still sandboxed', async (t) => {
  const { app } = await buildUpload(t, { inlineTypes: ['image/svg+xml'] })
  const { body } = await postUpload(app, [part('logo.svg', SVG, 'image/svg+xml'), part('page.html', HTML, 'text/html')])
  const svg = await app.inject({ method: 'GET', url: body[0].url })
  t.equal(svg.headers['content-type'], 'image/svg+xml')
  t.equal(svg.headers['content-disposition'], undefined, 'inline')
  t.equal(svg.headers['content-security-policy'], CSP)
  const html = await app.inject({ method: 'GET', url: body[1].url })
  t.match(html.headers['content-disposition'], /^attachment;/, 'types the list does not name stay attachments')
})

t.test('the recorded and served types follow the bytes and the stored extension, never the declared type', async (t) => {
  const { app } = await buildUpload(t, { sizeOptimization: false })
  const { status, body } = await postUpload(app, [
    // An extension no type is known for, declared as HTML.
    part('page.weird', HTML, 'text/html'),
    // No extension: the declared type names the stored extension, and both follow it.
    part('page', HTML, 'text/html'),
    // No extension, a PNG declared as HTML: the bytes win.
    part('picture', png(9, 9, 9), 'text/html'),
    // JavaScript declared with a legacy type: recorded and served as the extension's type.
    part('app.js', Buffer.from('1'), 'application/x-javascript')
  ])
  t.equal(status, 201)
  t.match(body[0], { ext: '.weird', mime: 'application/octet-stream' })
  t.match(body[1], { ext: '.html', mime: 'text/html' })
  t.match(body[2], { ext: '.png', mime: 'image/png' })
  t.match(body[3], { ext: '.js', mime: 'text/javascript' })
  for (const file of body) {
    const served = await app.inject({ method: 'GET', url: file.url })
    t.equal(String(served.headers['content-type']).split(';')[0], file.mime, `${file.name}: served as recorded`)
  }
})

t.test('security.deniedTypes refuses active types at upload instead', async (t) => {
  const { app, stored } = await buildUpload(t, { security: { deniedTypes: ['text/html', 'image/svg+xml'] } })
  const { status, body } = await postUpload(app, [part('logo.svg', SVG, 'image/svg+xml')])
  t.equal(status, 400)
  t.match(body.error, { name: 'ValidationError', message: "File type 'image/svg+xml' is not allowed" })
  t.strictSame(await stored(), [])
})
