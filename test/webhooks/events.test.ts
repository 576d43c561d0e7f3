import t from 'tap'
import Fastify from 'fastify'
import { sql } from 'kysely'
import contentApi, { ConfigurationError, verifyWebhookSignature, type WebhookEvent } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { buildUpload, pngPart, postUpload } from '../upload/helpers.js'
import { ARTICLE, FAST, Receiver, SECRET, article, sleep } from './helpers.js'

/**
 * Strapi v5's webhook events and bodies, queued in the write's transaction and delivered to a
 * receiver on 127.0.0.1: through REST, the document service and the upload route.
 */

t.setTimeout(60_000)

const ENTRY_EVENTS: WebhookEvent[] = ['entry.create', 'entry.update', 'entry.delete', 'entry.publish', 'entry.unpublish', 'entry.draft-discard']

t.test('entry events through REST and the document service, with Strapi\'s body, signed', async (t) => {
  const receiver = await Receiver.start(t)
  const { app } = await build(t, {
    models: [article],
    webhooks: { endpoints: [{ name: 'site', url: receiver.url, events: ENTRY_EVENTS, headers: { authorization: 'Bearer site' } }], defaultHeaders: { 'x-default': 'yes', authorization: 'Bearer default' }, secret: SECRET, batchSize: 1, ...FAST }
  })
  let seen = 0
  const next = async (names: string[]): Promise<any[]> => {
    const got = (await receiver.waitFor(seen + names.length)).slice(seen)
    seen += names.length
    t.same(got.map((r) => r.json.event), names, `events ${names.join(', ')}`)
    return got.map((r) => r.json)
  }

  const created = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title: 'one', secretNote: 'hidden' } } })
  t.equal(created.statusCode, 200)
  const documentId = JSON.parse(created.body).data.documentId as string
  const [create, publish] = await next(['entry.create', 'entry.publish'])
  t.same(Object.keys(create).sort(), ['createdAt', 'entry', 'event', 'model', 'uid'], 'Strapi\'s body: { event, createdAt, model, uid, entry }')
  t.match(create, { event: 'entry.create', model: 'article', uid: ARTICLE, entry: { documentId, title: 'one', publishedAt: null } })
  t.ok(!Number.isNaN(Date.parse(create.createdAt)), 'createdAt is a date')
  t.notOk('secretNote' in create.entry, 'private attributes are left out, as Strapi sanitizes them')
  t.match(publish, { event: 'entry.publish', entry: { documentId, title: 'one' } })
  t.not(publish.entry.publishedAt, null, 'the published version')

  const first = receiver.received[0]
  t.ok(verifyWebhookSignature(SECRET, first.body, first.headers['x-webhook-signature'] as string), 'the signature verifies')
  t.notOk(verifyWebhookSignature('another-secret-0123456789', first.body, first.headers['x-webhook-signature'] as string), 'not with another secret')
  t.notOk(verifyWebhookSignature(SECRET, first.body.replace('one', 'two'), first.headers['x-webhook-signature'] as string), 'nor for another body')
  t.notOk(verifyWebhookSignature(SECRET, first.body, first.headers['x-webhook-signature'] as string, 300, Date.now() + 3600_000), 'nor an hour later (a replay)')
  t.match(first.headers, { 'content-type': 'application/json', 'x-default': 'yes', authorization: 'Bearer site', 'x-webhook-event': 'entry.create', 'x-webhook-attempt': '1' }, 'Strapi\'s headers: the endpoint\'s over the defaults')
  t.match(first.headers['x-webhook-id'], /^[0-9a-f-]{36}$/)
  t.not(first.headers['x-webhook-id'], receiver.received[1].headers['x-webhook-id'], 'one id per delivery')

  const updated = await app.inject({ method: 'PUT', url: `/api/articles/${documentId}`, payload: { data: { title: 'two' } } })
  t.equal(updated.statusCode, 200)
  const [update] = await next(['entry.update', 'entry.publish'])
  t.match(update.entry, { documentId, title: 'two' }, 'the entry as written, read in the write\'s transaction')

  const articles = app.contentApi.documents(ARTICLE)
  await articles.update({ documentId, data: { title: 'draft edit' }, status: 'draft' })
  t.match((await next(['entry.update']))[0].entry, { title: 'draft edit', publishedAt: null })
  await articles.discardDraft({ documentId })
  t.match((await next(['entry.draft-discard']))[0].entry, { title: 'two', publishedAt: null })
  await articles.unpublish({ documentId })
  const [unpublish] = await next(['entry.unpublish'])
  t.match(unpublish.entry, { documentId, title: 'two' }, 'the version removed, read before removing it')
  t.not(unpublish.entry.publishedAt, null)
  await articles.publish({ documentId })
  await next(['entry.publish'])

  const deleted = await app.inject({ method: 'DELETE', url: `/api/articles/${documentId}` })
  t.equal(deleted.statusCode, 204)
  t.match((await next(['entry.delete']))[0], { model: 'article', uid: ARTICLE, entry: { documentId, title: 'two' } })

  await articles.delete({ documentId: 'no-such-document' })
  await sleep(300)
  t.equal(receiver.received.length, seen, 'deleting nothing sends nothing')

  const log = await app.contentApi.webhooks!.deliveries({ limit: 100 })
  t.equal(log.length, seen, 'one delivery per event in the log')
  t.ok(log.every((d) => d.status === 'delivered' && d.attempts === 1 && d.statusCode === 200 && d.endpoint === 'site'))
  t.match(log[0].log, [{ statusCode: 200, error: null }])
})

t.test('a rolled-back write sends nothing; an event nobody listens to is not queued', async (t) => {
  const receiver = await Receiver.start(t)
  const { app, database } = await build(t, {
    models: [article],
    webhooks: { endpoints: [{ name: 'creates', url: receiver.url, events: ['entry.create'] }], ...FAST }
  })
  // Fails the transaction at its commit, after every statement of the write (the outbox's insert included) ran.
  await sql.raw(`create function reject_boom() returns trigger language plpgsql as $$ begin
      if new.title = 'boom' then raise exception 'rejected at commit'; end if; return null; end $$`).execute(database.db)
  await sql.raw('create constraint trigger reject_boom after insert on articles deferrable initially deferred for each row execute function reject_boom()').execute(database.db)
  await t.rejects(app.contentApi.documents(ARTICLE).create({ data: { title: 'boom' } }), /rejected at commit/)
  const kept = await app.contentApi.documents(ARTICLE).create({ data: { title: 'kept' } })
  const [request] = await receiver.waitFor(1)
  t.equal(request.json.entry.documentId, kept.documentId)
  await app.contentApi.documents(ARTICLE).update({ documentId: kept.documentId, data: { title: 'renamed' } })
  await sleep(300)
  t.equal(receiver.received.length, 1, 'only the committed create: the rolled-back one and the update nobody listens to send nothing')
  t.equal((await app.contentApi.webhooks!.deliveries()).length, 1, 'and only it was queued')
})

t.test('media.create through the upload route', async (t) => {
  const receiver = await Receiver.start(t)
  const { app } = await buildUpload(t, {}, { webhooks: { endpoints: [{ name: 'media', url: receiver.url, events: ['media.create', 'media.update', 'media.delete'] }], ...FAST } })
  const uploaded = await postUpload(app, [pngPart('photo.png')])
  t.equal(uploaded.status, 201)
  const [request] = await receiver.waitFor(1)
  t.same(Object.keys(request.json).sort(), ['createdAt', 'event', 'media'], 'Strapi\'s media body: { event, createdAt, media }')
  t.match(request.json.media, { id: uploaded.body[0].id, documentId: uploaded.body[0].documentId, name: 'photo.png', mime: 'image/png' })
  const removed = await app.inject({ method: 'DELETE', url: `/api/upload/files/${uploaded.body[0].id as number}` })
  t.equal(removed.statusCode, 200)
  const [, deleted] = await receiver.waitFor(2)
  t.match(deleted.json, { event: 'media.delete', media: { id: uploaded.body[0].id, name: 'photo.png' } })
})

t.test('without webhooks: no outbox table, no API', async (t) => {
  const { app, database } = await build(t, { models: [article] })
  t.equal(app.contentApi.webhooks, null)
  const { rows } = await sql<{ name: string | null }>`select to_regclass('content_api_webhook_deliveries')::text as name`.execute(database.db)
  t.equal(rows[0].name, null, 'the table is only created with a webhooks option')
})

t.test('webhook options are validated before anything connects', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  const err = await app.register(contentApi, {
    models: [article],
    webhooks: {
      endpoints: [
        { name: 'a', url: 'ftp://example.com', events: ['entry.create'] },
        { name: 'a', url: 'https://example.com', events: ['entry.created' as WebhookEvent] }
      ],
      secret: 'short',
      retryDelayMs: 0
    }
  }).then(() => null, (e: unknown) => e)
  t.type(err, ConfigurationError)
  const problems = (err as ConfigurationError).problems.join('\n')
  t.match(problems, /webhooks\.endpoints\.0\.url/)
  t.match(problems, /webhooks\.endpoints\.1\.events\.0: must be one of entry\.create/)
  t.match(problems, /webhooks\.secret/)
  t.match(problems, /webhooks\.retryDelayMs/)
})

t.test('GraphQL mutations send the same events', async (t) => {
  const receiver = await Receiver.start(t)
  const { app } = await build(t, { models: [article], webhooks: { endpoints: [{ name: 'site', url: receiver.url, events: ['entry.create', 'entry.delete'] }], batchSize: 1, ...FAST } })
  const gql = async (query: string): Promise<any> => JSON.parse((await app.inject({ method: 'POST', url: '/graphql', payload: { query } })).body)
  // The default GraphQL shape is Strapi v4's (docs/graphql.md): `data { id }`, the id being the documentId.
  const created = await gql('mutation { createArticle(data: { title: "from graphql" }) { data { id } } }')
  const id = created.data.createArticle.data.id as string
  const [create] = await receiver.waitFor(1)
  t.match(create.json, { event: 'entry.create', model: 'article', uid: ARTICLE, entry: { title: 'from graphql' } })
  const documentId = create.json.entry.documentId as string
  await gql(`mutation { deleteArticle(id: "${id}") { data { id } } }`)
  const [, deleted] = await receiver.waitFor(2)
  t.match(deleted.json, { event: 'entry.delete', entry: { documentId, title: 'from graphql' } })
})
