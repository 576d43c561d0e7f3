import t from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import sharp from 'sharp'
import contentApi from '../../lib/index.js'
import { UPLOAD_ACTIONS } from '../../lib/upload/routes.js'
import { createTestDatabase } from '../helpers/database.js'
import { article, buildUpload, postUpload, pngPart, type Part } from './helpers.js'
import { startS3rver } from './s3-server.js'

/**
 * The S3 provider against a real S3-protocol server on this machine (s3rver, started here),
 * through the AWS SDK v3: no mocked client.
 */

const { endpoint, credentials, client } = await startS3rver(t, ['media', 'private'])

const s3Options = (bucket: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ provider: 's3', s3: { bucket, endpoint, forcePathStyle: true, credentials, prefix: 'uploads/', ...extra } })

async function keys (bucket: string): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }))
  return (listed.Contents ?? []).map((o) => o.Key!).sort()
}

async function object (bucket: string, key: string): Promise<Buffer> {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
  return Buffer.from(await got.Body!.transformToByteArray())
}

const part = (filename: string, data: Buffer, type: string): Part => ({ name: 'files', filename, type, data })

t.test('upload, read and delete through S3, formats included', async (t) => {
  const { app } = await buildUpload(t, s3Options('media') as never)
  const image = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#c00' } }).png().toBuffer()
  const { status, body } = await postUpload(app, [part('photo.png', image, 'image/png'), part('notes.txt', Buffer.from('hello s3'), 'text/plain')])
  t.equal(status, 201)
  const [photo, notes] = body
  t.match(photo, {
    provider: 'aws-s3',
    url: `${endpoint}/media/uploads/${photo.hash}.png`,
    provider_metadata: { bucket: 'media', key: `uploads/${photo.hash}.png` },
    width: 600,
    height: 400,
    isUrlSigned: false
  })
  t.strictSame(Object.keys(photo.formats).sort(), ['small', 'thumbnail'])
  t.match(photo.formats.thumbnail, { url: `${endpoint}/media/uploads/thumbnail_${photo.hash}.png`, provider_metadata: { bucket: 'media', key: `uploads/thumbnail_${photo.hash}.png` } })
  t.strictSame(await keys('media'), [`uploads/${notes.hash}.txt`, `uploads/${photo.hash}.png`, `uploads/small_${photo.hash}.png`, `uploads/thumbnail_${photo.hash}.png`].sort())
  t.equal((await object('media', `uploads/${notes.hash}.txt`)).toString(), 'hello s3')
  const fetched = await fetch(notes.url)
  t.equal(fetched.status, 200, 'the recorded URL reads the object')
  t.equal(await fetched.text(), 'hello s3')

  t.equal((await app.inject({ method: 'DELETE', url: `/api/upload/files/${photo.id}` })).statusCode, 200)
  t.strictSame(await keys('media'), [`uploads/${notes.hash}.txt`], 'the file and its formats are deleted from the bucket')
  await app.inject({ method: 'DELETE', url: `/api/upload/files/${notes.id}` })
  t.strictSame(await keys('media'), [])
})

t.test('a refused upload stores nothing in the bucket', async (t) => {
  const upload = await buildUpload(t, s3Options('media') as never)
  const { status } = await postUpload(upload.app, [pngPart('ok.png'), part('bad.png', Buffer.from('<html>'), 'image/png')])
  t.equal(status, 400)
  t.strictSame(await keys('media'), [])
  t.equal(await upload.records(), 0)
})

t.test('large files stream as multipart uploads', async (t) => {
  const { app } = await buildUpload(t, { ...s3Options('media', { partSize: 5 * 1024 * 1024 }), sizeLimit: 50 * 1024 * 1024 } as never)
  const data = randomBytes(12 * 1024 * 1024)
  const [file] = (await postUpload(app, [part('blob.bin', data, 'application/octet-stream')])).body
  t.match(file, { ext: '.bin', mime: 'application/octet-stream', size: Math.round(data.length / 10) / 100 })
  t.ok((await object('media', `uploads/${file.hash}.bin`)).equals(data), 'the object holds every byte')
  await app.inject({ method: 'DELETE', url: `/api/upload/files/${file.id}` })
})

t.test('objects of active types are stored as attachments with their type: S3 serves them as downloads', async (t) => {
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
  const html = Buffer.from('<!doctype html><script>alert(document.cookie)</script>')
  const { app } = await buildUpload(t, s3Options('media') as never)
  const { status, body } = await postUpload(app, [
    part('logo.svg', svg, 'image/svg+xml'), part('resume.html', html, 'text/html'), part('notes.txt', html, 'text/plain'),
    { name: 'fileInfo', value: JSON.stringify([{}, { name: 'Résumé "final".html' }, {}]) }
  ])
  t.equal(status, 201)
  const [logo, page, notes] = body
  const head = async (file: { hash: string, ext: string }): Promise<{ type?: string, disposition?: string }> => {
    const got = await client.send(new HeadObjectCommand({ Bucket: 'media', Key: `uploads/${file.hash}${file.ext}` }))
    return { type: got.ContentType, disposition: got.ContentDisposition }
  }
  t.strictSame(await head(logo), { type: 'image/svg+xml', disposition: 'attachment; filename="logo.svg"' })
  t.strictSame(await head(page), {
    type: 'text/html',
    disposition: 'attachment; filename="R_sum_ _final_.html"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%22final%22.html'
  }, 'the record\'s name, RFC 8187-encoded')
  t.strictSame(await head(notes), { type: 'text/plain', disposition: undefined }, 'a passive type stays inline')
  const served = await fetch(logo.url)
  t.equal(served.headers.get('content-type'), 'image/svg+xml')
  t.equal(served.headers.get('content-disposition'), 'attachment; filename="logo.svg"', 'the bucket answers with them')

  const inline = await buildUpload(t, { ...s3Options('media'), inlineTypes: ['image/svg+xml'] } as never)
  const [allowed] = (await postUpload(inline.app, [part('logo.svg', svg, 'image/svg+xml')])).body
  t.strictSame(await head(allowed), { type: 'image/svg+xml', disposition: undefined }, 'upload.inlineTypes applies to S3 too')
  for (const file of body) await app.inject({ method: 'DELETE', url: `/api/upload/files/${file.id}` })
  await inline.app.inject({ method: 'DELETE', url: `/api/upload/files/${allowed.id}` })
  t.strictSame(await keys('media'), [])
})

t.test('private buckets: answers carry signed URLs', async (t) => {
  const { app } = await buildUpload(t, s3Options('private', { private: true, signedUrlExpires: 60 }) as never)
  const image = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#0c0' } }).png().toBuffer()
  const [file] = (await postUpload(app, [part('secret.png', image, 'image/png')])).body
  t.equal(file.isUrlSigned, true)
  t.match(file.url, new RegExp(`^${endpoint}/private/uploads/${file.hash}\\.png\\?.*X-Amz-Signature=`))
  t.match(file.formats.thumbnail.url, /X-Amz-Signature=/)
  const signed = await fetch(file.url)
  t.equal(signed.status, 200)
  t.ok(Buffer.from(await signed.arrayBuffer()).equals(await object('private', `uploads/${file.hash}.png`)))
  const listed = JSON.parse((await app.inject({ method: 'GET', url: '/api/upload/files' })).body)
  t.match(listed, [{ isUrlSigned: true, url: /X-Amz-Signature=/ }])
  const stored = await app.contentApi.documents('plugin::upload.file').findFirst({})
  t.equal(stored?.url, `${endpoint}/private/uploads/${file.hash}.png`, 'the record keeps the unsigned URL')
})

t.test('two application instances share one database and one bucket', async (t) => {
  const database = await createTestDatabase()
  const apps: FastifyInstance[] = []
  t.teardown(async () => {
    for (const app of apps) await app.close()
    await database.drop()
  })
  for (const db of [database.db, database.connectAgain()]) {
    const app = Fastify({ logger: false, pluginTimeout: 120_000 })
    apps.push(app)
    await app.register(contentApi, {
      models: [article],
      db,
      auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789' },
      upload: s3Options('media') as never
    })
    await app.ready()
  }
  await apps[0].contentApi.permissions.grant('public', Object.values(UPLOAD_ACTIONS))
  const [a, b] = apps
  const [file] = (await postUpload(a, [part('shared.txt', Buffer.from('one store'), 'text/plain')])).body
  const seen = JSON.parse((await b.inject({ method: 'GET', url: `/api/upload/files/${file.id}` })).body)
  t.equal(seen.url, file.url, 'the other instance reads the same record')
  t.equal(await (await fetch(seen.url)).text(), 'one store')
  t.equal((await b.inject({ method: 'DELETE', url: `/api/upload/files/${file.id}` })).statusCode, 200)
  t.strictSame(await keys('media'), [], 'and deletes the object the first one stored')
})
