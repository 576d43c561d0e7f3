import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import contentApi, { type WebhookOptions } from '../../lib/index.js'
import { build, contentActions } from '../helpers/build.js'
import { createTestDatabase, embeddedOnly } from '../helpers/database.js'
import { ARTICLE, FAST, Receiver, article, sleep } from './helpers.js'

/**
 * Delivery: retries with backoff, the log, redelivery, restarts with deliveries pending, two
 * instances on one database, and shutdown.
 */

t.setTimeout(60_000)

const AUTH = { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false as const }

async function instance (db: Kysely<any> | { dataDir: string }, webhooks: WebhookOptions, shutdownMs = 10000): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  await app.register(contentApi, { models: [article], auth: AUTH, db, webhooks, shutdown: { timeoutMs: shutdownMs } })
  await app.ready()
  return app
}

t.test('retried while the receiver answers 500, then delivered; the log has every attempt', async (t) => {
  const receiver = await Receiver.start(t)
  receiver.answer = () => receiver.received.length <= 2 ? 500 : 200
  const { app } = await build(t, { models: [article], webhooks: { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create'] }], ...FAST } })
  const doc = await app.contentApi.documents(ARTICLE).create({ data: { title: 'retried' } })
  const requests = await receiver.waitFor(3)
  t.same(requests.map((r) => r.headers['x-webhook-attempt']), ['1', '2', '3'])
  t.equal(new Set(requests.map((r) => r.headers['x-webhook-id'])).size, 1, 'one delivery id on every attempt: the receiver\'s idempotency key')
  t.ok(requests.every((r) => r.json.entry.documentId === doc.documentId))
  await sleep(100)
  const [delivery] = await app.contentApi.webhooks!.deliveries()
  t.match(delivery, { status: 'delivered', attempts: 3, statusCode: 200, error: null, endpoint: 'site', event: 'entry.create' })
  t.same(delivery.log.map((a) => a.statusCode), [500, 500, 200])
  t.equal(delivery.log[0].error, 'HTTP 500')
  t.ok(delivery.deliveredAt instanceof Date)
  await sleep(300)
  t.equal(receiver.received.length, 3, 'not sent again once delivered')
})

t.test('failed after maxAttempts; redeliver(id) sends it again, with the same id and body', async (t) => {
  const receiver = await Receiver.start(t)
  receiver.answer = () => 503
  const { app } = await build(t, { models: [article], webhooks: { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create'] }], ...FAST, maxAttempts: 2 } })
  await app.contentApi.documents(ARTICLE).create({ data: { title: 'failing' } })
  await receiver.waitFor(2)
  await sleep(400)
  t.equal(receiver.received.length, 2, 'no attempt past maxAttempts')
  const [failed] = await app.contentApi.webhooks!.deliveries({ status: 'failed' })
  t.match(failed, { status: 'failed', attempts: 2, statusCode: 503 })

  receiver.answer = () => 200
  t.equal(await app.contentApi.webhooks!.redeliver(failed.id), true)
  const [, , again] = await receiver.waitFor(3)
  t.equal(again.headers['x-webhook-id'], failed.id)
  t.equal(again.body, receiver.received[0].body, 'the same body')
  await sleep(100)
  t.match((await app.contentApi.webhooks!.deliveries({ status: 'delivered' }))[0], { id: failed.id, attempts: 1 })
  t.equal(await app.contentApi.webhooks!.redeliver(failed.id), true, 'a delivered one too')
  await receiver.waitFor(4)
  await sleep(150)
  t.equal(await app.contentApi.webhooks!.redeliver('00000000-0000-0000-0000-000000000000'), false, 'no such delivery')
  t.equal(await app.contentApi.webhooks!.redeliver('not an id'), false)
  t.same(await app.contentApi.webhooks!.deliveries({ status: 'pending' }), [])
})

t.test('a receiver that is down: pending deliveries survive a restart, and the new app delivers them', async (t) => {
  const receiver = await Receiver.start(t)
  receiver.answer = () => 503
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const webhooks = { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create' as const] }], ...FAST }
  const first = await instance(database.db, webhooks)
  const docs = []
  for (let i = 0; i < 3; i++) docs.push(await first.contentApi.documents(ARTICLE).create({ data: { title: `pending ${i}` } }))
  await receiver.waitFor(3)
  await first.close()
  const before = receiver.received.length
  await sleep(300)
  t.equal(receiver.received.length, before, 'no request after close')

  receiver.answer = () => 200
  const second = await instance(database.connectAgain(), webhooks)
  t.teardown(async () => { await second.close() })
  const ok = await receiver.waitFor(3, 10000, (r) => receiver.received.indexOf(r) >= before)
  t.same(new Set(ok.map((r) => r.json.entry.documentId)), new Set(docs.map((d) => d.documentId)), 'every pending event delivered by the new app')
  await sleep(200)
  t.same((await second.contentApi.webhooks!.deliveries({ status: 'pending' })), [], 'none left')
})

t.test('embedded PGlite with a dataDir: delivered after the app restarts', { skip: embeddedOnly }, async (t) => {
  const receiver = await Receiver.start(t)
  const dataDir = await mkdtemp(join(tmpdir(), 'fca-webhooks-'))
  t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  const webhooks = { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create' as const] }], ...FAST, deliver: true }
  receiver.answer = () => 503
  const first = await instance({ dataDir }, webhooks)
  const doc = await first.contentApi.documents(ARTICLE).create({ data: { title: 'on disk' } })
  await receiver.waitFor(1)
  await first.close()
  receiver.answer = () => 200
  const second = await instance({ dataDir }, webhooks)
  t.teardown(async () => { await second.close() })
  const delivered = await receiver.waitFor(1, 20000, (r) => r.headers['x-webhook-attempt'] !== '1')
  t.equal(delivered[0].json.entry.documentId, doc.documentId)
})

t.test('two instances on one database deliver each event exactly once', async (t) => {
  const receiver = await Receiver.start(t)
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const webhooks = { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create' as const] }], ...FAST, pollIntervalMs: 50, batchSize: 3 }
  const a = await instance(database.db, webhooks)
  const b = await instance(database.connectAgain(), webhooks)
  t.teardown(async () => { await a.close(); await b.close() })
  await a.contentApi.permissions.grant('public', contentActions(a))
  const N = 30
  await Promise.all(Array.from({ length: N }, async (_, i) => {
    const app = i % 2 === 0 ? a : b
    await app.contentApi.documents(ARTICLE).create({ data: { title: `doc ${i}` } })
  }))
  const got = await receiver.waitFor(N, 20000)
  await sleep(500)
  t.equal(receiver.received.length, N, 'no event sent twice')
  t.equal(new Set(got.map((r) => r.headers['x-webhook-id'])).size, N, 'every delivery once')
  t.equal(new Set(got.map((r) => r.json.entry.title)).size, N, 'every event once')
  const byA = await a.contentApi.webhooks!.deliveries({ status: 'delivered', limit: 1000 })
  t.equal(byA.length, N)
})

t.test('app.close() with a delivery in flight: closed within the bound, the delivery given back', async (t) => {
  const receiver = await Receiver.start(t)
  receiver.hang = true
  const database = await createTestDatabase()
  t.teardown(async () => { await database.drop() })
  const app = await instance(database.db, { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create'] }], ...FAST, timeoutMs: 30000 }, 1000)
  await app.contentApi.documents(ARTICLE).create({ data: { title: 'in flight' } })
  await receiver.waitFor(1)
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 5000, `closed in ${Date.now() - started} ms`)
  receiver.hang = false
  const after = await instance(database.connectAgain(), { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create'] }], ...FAST, deliver: false })
  t.teardown(async () => { await after.close() })
  const [pending] = await after.contentApi.webhooks!.deliveries()
  t.match(pending, { status: 'pending', attempts: 0 }, 'the aborted attempt is not counted; due again')
})
