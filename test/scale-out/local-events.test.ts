import t from 'tap'
import Fastify from 'fastify'
import contentApi, { ConfigurationError, type ChangeEvent } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { post, tag } from '../reliability/helpers.js'

/**
 * One instance (PGlite by default; a Kysely given on PostgreSQL with DATABASE_URL): change events
 * are delivered in-process, once each, after the commit, with no listening connection and no
 * notification statement.
 */

const POST = 'api::post.post'
const AUTH = { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false as const }

t.test('onChange hears every write of this instance, as local', async (t) => {
  const { app } = await build(t, { models: [post], components: { 'shared.tag': tag }, auth: AUTH })
  const events: ChangeEvent[] = []
  const legacy: number[] = []
  for (const uid of [POST, 'plugin::users-permissions.role', 'plugin::users-permissions.user', 'admin::api-token']) {
    app.contentApi.documents(uid).onChange((event) => { events.push(event) })
  }
  // The listener signature before events: still called.
  app.contentApi.documents(POST).onChange(() => { legacy.push(1) })

  const posts = app.contentApi.documents(POST)
  const doc = await posts.create({ data: { title: 'one', tags: [] } })
  await posts.update({ documentId: doc.documentId, data: { title: 'two' }, status: 'draft' })
  await posts.discardDraft({ documentId: doc.documentId })
  await posts.unpublish({ documentId: doc.documentId })
  await posts.publish({ documentId: doc.documentId })
  await posts.delete({ documentId: doc.documentId })
  t.same(events.filter((e) => e.uid === POST), ['create', 'update', 'discardDraft', 'unpublish', 'publish', 'delete'].map((action) => ({ uid: POST, action, documentId: doc.documentId, origin: 'local' })))
  t.equal(legacy.length, 6, 'a listener taking no argument is called too')

  events.length = 0
  await app.contentApi.permissions.grant('public', [`${POST}.find`])
  await app.contentApi.permissions.revoke('public', [`${POST}.find`])
  const token = await app.contentApi.apiTokens.create({ name: 'reader', type: 'read-only' })
  await app.contentApi.apiTokens.regenerate('reader')
  await app.contentApi.apiTokens.revoke('reader')
  t.same(events.map((e) => [e.uid, e.action]), [
    ['plugin::users-permissions.role', 'update'],
    ['plugin::users-permissions.role', 'update'],
    ['admin::api-token', 'create'],
    ['admin::api-token', 'update'],
    ['admin::api-token', 'delete']
  ], 'grants and API tokens are events of their built-in types')
  t.equal(events[2].documentId, token.documentId)

  events.length = 0
  t.equal(await app.contentApi.apiTokens.revoke('reader'), false, 'revoking a token that is gone')
  await t.rejects(app.contentApi.permissions.deleteRole('no-such-role'))
  await t.rejects(posts.create({ data: { tags: [] } }), 'an invalid create')
  t.same(events, [], 'nothing written, nothing heard')
})

t.test('a listener that throws is logged and does not fail the write', async (t) => {
  const { app } = await build(t, { models: [post], components: { 'shared.tag': tag }, auth: AUTH })
  const logged: string[] = []
  app.log.error = ((obj: unknown, msg: string) => { logged.push(msg) }) as typeof app.log.error
  app.contentApi.documents(POST).onChange(() => { throw new Error('listener bug') })
  const doc = await app.contentApi.documents(POST).create({ data: { title: 'kept', tags: [] } })
  t.ok(await app.contentApi.documents(POST).findOne({ documentId: doc.documentId }), 'the write stands')
  t.same(logged, ['fastify-content-api: an onChange listener threw'])
})

t.test('notifications with embedded PGlite: a configuration error', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  await t.rejects(async () => { await app.register(contentApi, { models: [post], components: { 'shared.tag': tag }, notifications: { channel: 'events' } }) }, ConfigurationError)
})
