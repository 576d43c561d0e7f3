import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { ApplicationError, PolicyError, type ContentApiOptions } from '../../lib/index.js'
import { contentActions } from '../helpers/build.js'
import { createTestDatabase } from '../helpers/database.js'
import { article, homepage } from '../fixtures/models.js'

/**
 * `rest.routes` (Strapi's core router config and core controllers) and
 * `app.contentApi.routes.protect()`: `auth: false`, named and function policies, middlewares,
 * routes left out for the application's own, a replaced controller calling the core one, and a
 * custom route refused in Strapi's envelope.
 */

const ARTICLE = 'api::article.article'
const ARTICLES = '/api/articles'

/**
 * An app with the content API on its own database; `after` adds the application's own routes
 * once `app.contentApi` exists. `grant`: the public role's permissions (none by default here).
 */
async function build (t: Test, options: Omit<ContentApiOptions, 'db' | 'models'>, after?: (app: FastifyInstance) => void, grant: string[] | 'all' = []): Promise<FastifyInstance> {
  const database = await createTestDatabase()
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, {
    ...options,
    models: [article, homepage],
    auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false },
    db: database.db
  })
  after?.(app)
  await app.ready()
  const actions = grant === 'all' ? contentActions(app) : grant
  if (actions.length > 0) await app.contentApi.permissions.grant('public', actions)
  return app
}

async function createArticle (app: FastifyInstance, title: string): Promise<string> {
  const doc = await app.contentApi.documents(ARTICLE).create({ data: { title } })
  return doc.documentId as string
}

const envelope = (status: number, name: string, message: string, details: Record<string, unknown> = {}): unknown =>
  ({ data: null, error: { status, name, message, details } })

t.test('auth: false makes a route public without a grant; the others stay closed', async (t) => {
  const app = await build(t, { rest: { routes: { [ARTICLE]: { config: { find: { auth: false } } } } } })
  const id = await createArticle(app, 'Open')
  const list = await app.inject({ url: ARTICLES })
  t.equal(list.statusCode, 200)
  t.same(list.json().data.map((d: any) => d.title), ['Open'])
  const one = await app.inject({ url: `${ARTICLES}/${id}` })
  t.equal(one.statusCode, 403)
  t.same(one.json(), envelope(403, 'ForbiddenError', 'Forbidden'))
  // Credentials that are wrong are still refused: the caller is identified for policies.
  const bad = await app.inject({ url: ARTICLES, headers: { authorization: 'Bearer nope' } })
  t.equal(bad.statusCode, 401)
})

t.test('policies: named with config, functions returning false, throwing ones; in the envelope', async (t) => {
  const seen: unknown[] = []
  const app = await build(t, {
    policies: {
      'has-header': (ctx: any, config: any) => {
        seen.push({ type: ctx.type, koa: ctx.is('koa'), uid: ctx.uid, action: ctx.action, user: ctx.state.user, params: ctx.params })
        return ctx.request.headers[config.header] === config.value
      }
    },
    rest: {
      routes: {
        [ARTICLE]: {
          config: {
            findOne: { policies: [{ name: 'has-header', config: { header: 'x-pass', value: 'yes' } }] },
            create: { policies: [() => false] },
            update: { policies: [() => { throw new PolicyError('Only editors may edit', { policy: 'editors' }) }] },
            delete: { policies: [() => true, async () => { throw new ApplicationError('Not today') }] }
          }
        }
      }
    }
  }, undefined, 'all')
  const id = await createArticle(app, 'Guarded')
  const refused = await app.inject({ url: `${ARTICLES}/${id}` })
  t.equal(refused.statusCode, 403)
  t.same(refused.json(), envelope(403, 'PolicyError', 'Policy Failed'))
  const passed = await app.inject({ url: `${ARTICLES}/${id}`, headers: { 'x-pass': 'yes' } })
  t.equal(passed.statusCode, 200)
  t.equal(passed.json().data.title, 'Guarded')
  t.same(seen[0], { type: 'koa', koa: true, uid: ARTICLE, action: 'findOne', user: null, params: { documentId: id } })

  const created = await app.inject({ method: 'POST', url: ARTICLES, payload: { data: { title: 'x' } } })
  t.same([created.statusCode, created.json()], [403, envelope(403, 'PolicyError', 'Policy Failed')])
  const updated = await app.inject({ method: 'PUT', url: `${ARTICLES}/${id}`, payload: { data: { title: 'y' } } })
  t.same([updated.statusCode, updated.json()], [403, envelope(403, 'PolicyError', 'Only editors may edit', { policy: 'editors' })])
  const deleted = await app.inject({ method: 'DELETE', url: `${ARTICLES}/${id}` })
  t.same([deleted.statusCode, deleted.json()], [400, envelope(400, 'ApplicationError', 'Not today')])
  // Nothing was written by the refused calls.
  t.equal((await app.contentApi.documents(ARTICLE).findOne({ documentId: id }))?.title, 'Guarded')
  t.equal(await app.contentApi.documents(ARTICLE).count(), 1)
})

t.test('an unknown policy name or content type is refused at start-up', async (t) => {
  await t.rejects(build(t, { rest: { routes: { [ARTICLE]: { config: { find: { policies: ['nope'] } } } } } }), /no policy "nope" in the policies option/)
  await t.rejects(build(t, { rest: { routes: { 'api::nope.nope': { except: ['find'] } } } }), /no content type "api::nope.nope"/)
  await t.rejects(build(t, { rest: { routes: { 'api::homepage.homepage': { except: ['findOne'] } } } }), /unknown action "findOne"/)
})

t.test('middlewares run after the access check and the policies, in order, and may answer', async (t) => {
  const order: string[] = []
  const app = await build(t, {
    rest: {
      routes: {
        [ARTICLE]: {
          config: {
            find: {
              policies: [() => { order.push('policy'); return true }],
              middlewares: [
                (_request, reply) => { order.push('first'); reply.header('x-middleware', 'yes') },
                async (request, reply) => {
                  order.push('second')
                  if (request.headers['x-block'] === '1') reply.code(418).send({ blocked: true })
                }
              ]
            }
          }
        }
      }
    }
  }, undefined, 'all')
  await createArticle(app, 'A')
  const res = await app.inject({ url: ARTICLES })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-middleware'], 'yes')
  t.same(order, ['policy', 'first', 'second'])
  const blocked = await app.inject({ url: ARTICLES, headers: { 'x-block': '1' } })
  t.same([blocked.statusCode, blocked.json()], [418, { blocked: true }])
  // The access check comes first: without the grant neither policies nor middlewares run.
  await app.contentApi.permissions.revoke('public', [`${ARTICLE}.find`])
  order.length = 0
  const refused = await app.inject({ url: ARTICLES })
  t.equal(refused.statusCode, 403)
  t.same(order, [])
})

t.test('only/except leave routes out, and their paths to the application', async (t) => {
  // Without `except`, the application's own route on the same path collides.
  await t.rejects(build(t, {}, (app) => { app.get(`${ARTICLES}/:documentId`, async () => ({ own: true })) }), /FST_ERR_DUPLICATED_ROUTE|already declared/)

  const app = await build(t, { rest: { routes: { [ARTICLE]: { except: ['findOne', 'delete'] }, 'api::homepage.homepage': { only: ['find'] } } } }, (app) => {
    app.get(`${ARTICLES}/:documentId`, async (request) => ({ own: (request.params as { documentId: string }).documentId }))
  }, 'all')
  const id = await createArticle(app, 'Mine')
  const own = await app.inject({ url: `${ARTICLES}/${id}` })
  t.same([own.statusCode, own.json()], [200, { own: id }])
  const put = await app.inject({ method: 'PUT', url: `${ARTICLES}/${id}`, payload: { data: { title: 'Still routed' } } })
  t.equal(put.statusCode, 200)
  // The left-out DELETE is no route, not a 405; PATCH still answers 405 with what remains.
  const del = await app.inject({ method: 'DELETE', url: `${ARTICLES}/${id}` })
  t.equal(del.statusCode, 404)
  const patch = await app.inject({ method: 'PATCH', url: `${ARTICLES}/${id}` })
  t.same([patch.statusCode, patch.headers.allow], [405, 'PUT'])
  t.equal((await app.inject({ url: ARTICLES })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/homepage' })).statusCode, 404, 'find is kept (no document yet)')
  const homePut = await app.inject({ method: 'PUT', url: '/api/homepage', payload: { data: { title: 'x' } } })
  t.equal(homePut.statusCode, 404, 'update is left out')
})

t.test('a replaced controller calls the core one and changes its answer', async (t) => {
  const app = await build(t, {
    rest: {
      routes: {
        [ARTICLE]: {
          controllers: {
            find: async (_request, _reply, core) => {
              const answer = await core()
              return { data: (answer!.data as any[]).map((d) => ({ ...d, title: String(d.title).toUpperCase() })), meta: { ...answer!.meta, extra: 'added' } }
            },
            findOne: async (request, reply, core) => {
              if ((request.params as { documentId: string }).documentId === 'teapot') {
                reply.code(418).send({ short: 'and stout' })
                return null
              }
              return await core()
            },
            delete: async (_request, _reply, core) => { await core() }
          }
        }
      }
    }
  }, undefined, 'all')
  const id = await createArticle(app, 'loud')
  const list = await app.inject({ url: ARTICLES })
  t.equal(list.statusCode, 200)
  t.same(list.json().data.map((d: any) => d.title), ['LOUD'])
  t.equal(list.json().meta.extra, 'added')
  t.same(list.json().meta.pagination, { page: 1, pageSize: 25, pageCount: 1, total: 1 })
  const one = await app.inject({ url: `${ARTICLES}/${id}` })
  t.same([one.statusCode, one.json().data.title], [200, 'loud'])
  const missing = await app.inject({ url: `${ARTICLES}/nosuchdocumentid00000000` })
  t.same([missing.statusCode, missing.json().error.name], [404, 'NotFoundError'], "the core's errors keep their envelope")
  const teapot = await app.inject({ url: `${ARTICLES}/teapot` })
  t.same([teapot.statusCode, teapot.json()], [418, { short: 'and stout' }])
  const del = await app.inject({ method: 'DELETE', url: `${ARTICLES}/${id}` })
  t.equal(del.statusCode, 204)
  t.equal(await app.contentApi.documents(ARTICLE).count(), 0)
})

t.test("the application's own route: protect() answers refusals in Strapi's envelope", async (t) => {
  const app = await build(t, { policies: { never: () => false } }, (app) => {
    app.get('/custom/articles-count', { preHandler: app.contentApi.routes.protect({ uid: ARTICLE, action: 'find' }) },
      async (request) => ({ count: await app.contentApi.documents(ARTICLE).count({ access: request.contentApiGrant!.scope }) }))
    app.get('/custom/never', { preHandler: app.contentApi.routes.protect({ uid: ARTICLE, action: 'find', policies: ['never'] }) }, async () => ({ reached: true }))
    app.get('/custom/public', { preHandler: app.contentApi.routes.protect({ action: 'anything', auth: false }) }, async (request) => ({ who: request.contentApiGrant!.principal.kind }))
    // Without protect(), the access check's 403 is thrown to the application's error handler:
    // the content API's gives the envelope too.
    app.register(async (child) => {
      child.setErrorHandler(app.contentApi.routes.errorHandler)
      child.get('/custom/checked', async (request) => {
        await app.contentApi.access.check(request, { uid: ARTICLE, action: 'findOne' })
        return { ok: true }
      })
    })
  })
  await createArticle(app, 'A')
  const refused = await app.inject({ url: '/custom/articles-count' })
  t.same([refused.statusCode, refused.headers['content-type'], refused.json()], [403, 'application/json; charset=utf-8', envelope(403, 'ForbiddenError', 'Forbidden')])
  const checked = await app.inject({ url: '/custom/checked' })
  t.same([checked.statusCode, checked.json()], [403, envelope(403, 'ForbiddenError', 'Forbidden')])
  const unauthorized = await app.inject({ url: '/custom/articles-count', headers: { authorization: 'Bearer nope' } })
  t.same([unauthorized.statusCode, unauthorized.json().error.name], [401, 'UnauthorizedError'])
  t.same((await app.inject({ url: '/custom/public' })).json(), { who: 'public' })

  await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`, `${ARTICLE}.findOne`])
  const allowed = await app.inject({ url: '/custom/articles-count' })
  t.same([allowed.statusCode, allowed.json()], [200, { count: 1 }])
  t.same((await app.inject({ url: '/custom/checked' })).json(), { ok: true })
  const never = await app.inject({ url: '/custom/never' })
  t.same([never.statusCode, never.json()], [403, envelope(403, 'PolicyError', 'Policy Failed')])
})

t.test('GraphQL resolversConfig names the policies option too', async (t) => {
  const app = await build(t, { policies: { never: () => false } }, (app) => {
    app.contentApi.graphql!.use(() => ({ resolversConfig: { 'Query.articles': { policies: ['never'] } } }))
  }, 'all')
  const res = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ articles { data { id } } }' } })
  t.equal(res.json().errors[0].extensions.code, 'FORBIDDEN', res.body)
})

t.test("a signed-in user reaches the policy as state.user, with the role's grant in state.auth", async (t) => {
  const users: unknown[] = []
  const app = await build(t, {
    policies: { 'is-authenticated': (ctx: any) => { users.push(ctx.state.user); return ctx.state.user !== null } },
    rest: { routes: { [ARTICLE]: { config: { find: { policies: ['is-authenticated'] } } } } }
  })
  await app.contentApi.permissions.grant('authenticated', [`${ARTICLE}.find`])
  await app.contentApi.permissions.grant('public', [`${ARTICLE}.find`])
  const registered = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'reader', email: 'reader@example.com', password: 'Password123' } })
  t.equal(registered.statusCode, 200, registered.body)
  const { jwt } = registered.json()
  t.equal((await app.inject({ url: ARTICLES })).statusCode, 403, 'the public caller is refused by the policy')
  const res = await app.inject({ url: ARTICLES, headers: { authorization: `Bearer ${jwt}` } })
  t.equal(res.statusCode, 200)
  t.match(users.at(-1), { username: 'reader', roleType: 'authenticated' })
  t.equal(res.headers['cache-control'], 'private, no-cache')
})
