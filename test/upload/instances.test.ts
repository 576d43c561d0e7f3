import t, { type Test } from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import contentApi, { LocalProvider, type UploadOptions } from '../../lib/index.js'
import { UPLOAD_ACTIONS } from '../../lib/upload/routes.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { article, postUpload, type Part } from './helpers.js'
import { startS3rver } from './s3-server.js'

/**
 * Media with several instances: two apps (A and B) on one database, each its own connections
 * (on PGlite, two apps on the one embedded database). With the S3 provider on one bucket, a file
 * uploaded through A is listed and served through B, and one deleted through B is gone for A.
 * The local provider keeps files on the disk of the instance that received them: B has the
 * record but not the file, which is why several instances need S3 (docs/upload.md).
 */
t.setTimeout(60_000)

const { endpoint, credentials, client } = await startS3rver(t, ['shared'])
const s3 = { provider: 's3', s3: { bucket: 'shared', endpoint, forcePathStyle: true, credentials, prefix: 'media/' } } as const

async function keys (): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'shared' }))
  return (listed.Contents ?? []).map((o) => o.Key!).sort()
}

/** An app on `database` (a connection of its own), with `upload` options; closed with the test. */
async function instance (t: Test, database: TestDatabase, upload: UploadOptions, db = database.connectAgain()): Promise<FastifyInstance> {
  const staging = await mkdtemp(join(tmpdir(), 'fca-instances-staging-'))
  const app = Fastify({ pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await rm(staging, { recursive: true, force: true })
  })
  await app.register(contentApi, {
    models: [article],
    i18n: { locales: ['en'], defaultLocale: 'en' },
    auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false },
    upload: { tmpDir: staging, ...upload },
    db
  })
  await app.ready()
  return app
}

async function database (t: Test): Promise<TestDatabase> {
  const created = await createTestDatabase()
  t.teardown(async () => { await created.drop() })
  return created
}

const text = (filename: string, body: string): Part => ({ name: 'files', filename, type: 'text/plain', data: Buffer.from(body) })

t.test('S3: a file uploaded through A is listed and served through B; deleted through B, gone for A', async (t) => {
  const db = await database(t)
  const a = await instance(t, db, s3, db.db)
  const b = await instance(t, db, s3)
  await a.contentApi.permissions.grant('public', Object.values(UPLOAD_ACTIONS))

  const { status, body } = await postUpload(a, [text('notes.txt', 'written through A')])
  t.equal(status, 201)
  const [file] = body
  t.equal(file.url, `${endpoint}/shared/media/${file.hash}.txt`)

  const listed = await b.inject('/api/upload/files')
  t.equal(listed.statusCode, 200)
  t.strictSame(listed.json().map((f: { id: number }) => f.id), [file.id], 'B lists it')
  const one = await b.inject(`/api/upload/files/${file.id}`)
  t.equal(one.statusCode, 200)
  t.equal(one.json().url, file.url, 'B answers the same record, the same URL')
  const served = await fetch(one.json().url)
  t.equal(served.status, 200)
  t.equal(await served.text(), 'written through A', 'the URL B gives serves the bytes A received')

  t.equal((await b.inject({ method: 'DELETE', url: `/api/upload/files/${file.id}` })).statusCode, 200)
  t.equal((await a.inject(`/api/upload/files/${file.id}`)).statusCode, 404, 'A no longer finds the record')
  t.strictSame((await a.inject('/api/upload/files')).json(), [])
  t.strictSame(await keys(), [], 'the object is gone from the bucket')
  t.equal((await fetch(file.url)).status, 404, 'its URL no longer serves it')
})

t.test('local provider: the file stays on the disk of the instance that received it', async (t) => {
  const db = await database(t)
  const disks = await Promise.all([mkdtemp(join(tmpdir(), 'fca-instance-a-')), mkdtemp(join(tmpdir(), 'fca-instance-b-'))])
  t.teardown(async () => { for (const disk of disks) await rm(disk, { recursive: true, force: true }) })
  // LocalProvider from the package's entry, as an application passes its own provider.
  const a = await instance(t, db, { provider: new LocalProvider({ directory: disks[0], baseUrl: '/uploads' }) }, db.db)
  const b = await instance(t, db, { local: { directory: disks[1] } })
  await a.contentApi.permissions.grant('public', Object.values(UPLOAD_ACTIONS))

  const [file] = (await postUpload(a, [text('notes.txt', 'only on A')])).body
  t.equal((await a.inject(file.url)).body, 'only on A', 'A serves it')
  t.equal((await b.inject(`/api/upload/files/${file.id}`)).statusCode, 200, 'B has the record (one database)')
  t.equal((await b.inject(file.url)).statusCode, 404, 'but not the file: B answers 404 for it')
})
