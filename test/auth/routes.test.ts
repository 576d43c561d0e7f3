import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/build.js'
import type { EmailMessage } from '../../lib/index.js'

/**
 * Strapi's users-and-permissions routes end to end: register, login, users/me, the users CRUD
 * and count, change/forgot/reset password, email confirmation, roles, i18n locales and rate
 * limiting; every answer of every app in this file is finally checked for leaked secrets
 * (password hashes, reset and confirmation codes, API-token hashes).
 */

const USER = 'plugin::users-permissions.user'
const UP = 'plugin::users-permissions'
const PASSWORD = 'Password123!'

const FORBIDDEN = { data: null, error: { status: 403, name: 'ForbiddenError', message: 'Forbidden', details: {} } }
const NOT_FOUND = { data: null, error: { status: 404, name: 'NotFoundError', message: 'Not Found', details: {} } }
const INVALID_LOGIN = { data: null, error: { status: 400, name: 'ValidationError', message: 'Invalid identifier or password', details: {} } }
const error = (status: number, name: string, message: string, details: Record<string, unknown> = {}) =>
  ({ data: null, error: { status, name, message, details } })
const required = (...keys: string[]) => error(400, 'ValidationError', keys.length === 1 ? `${keys[0]} is a required field` : `${keys.length} errors occurred`, {
  errors: keys.map((key) => ({ path: [key], message: `${key} is a required field`, name: 'ValidationError' }))
})

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const USER_KEYS = ['blocked', 'confirmed', 'createdAt', 'documentId', 'email', 'id', 'provider', 'publishedAt', 'updatedAt', 'username']

interface Answer { status: number, json: any, text: string, headers: Record<string, unknown> }

/** Every answer any app of this file gave, for the final leak check. */
const answers: Array<{ url: string, text: string }> = []
/** Every app of this file, so the leak check can read their stored secrets. */
const apps: FastifyInstance[] = []

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
function client (app: FastifyInstance) {
  return async (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
    answers.push({ url: `${method} ${url}`, text: res.body })
    let json: unknown
    try { json = res.body === '' ? undefined : JSON.parse(res.body) } catch { json = undefined }
    return { status: res.statusCode, json, text: res.body, headers: res.headers }
  }
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

function decodeJwt (jwt: string): { header: Record<string, unknown>, payload: Record<string, unknown> } {
  const [header, payload] = jwt.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')))
  return { header, payload }
}

async function buildApp (options: Record<string, unknown> = {}, plugin: Record<string, unknown> = {}): Promise<{ app: FastifyInstance, call: ReturnType<typeof client>, mail: EmailMessage[] }> {
  const mail: EmailMessage[] = []
  const auth = {
    jwtSecret: 'test-jwt-secret-0123456789',
    apiTokenSalt: 'test-api-token-salt-0123456789',
    rateLimit: false as const,
    email: { send: (message: EmailMessage) => { mail.push(message) }, from: 'no-reply@example.com' },
    urls: { resetPassword: 'https://app.example.com/reset-password' },
    ...options
  }
  // Torn down with the file, not the subtest: the final leak check reads every app's secrets.
  const { app } = await build(t, { models: [], publicAccess: false, auth, ...plugin })
  apps.push(app)
  return { app, call: client(app), mail }
}

const { app, call, mail } = await buildApp()
const users = app.contentApi.documents(USER)

async function register (username: string, email: string, password = PASSWORD): Promise<{ jwt: string, user: Record<string, any> }> {
  const res = await call('POST', '/api/auth/local/register', { username, email, password })
  if (res.status !== 200) throw new Error(`register ${username}: ${res.status} ${res.text}`)
  return res.json
}

const login = async (identifier: string, password: string) => await call('POST', '/api/auth/local', { identifier, password })

t.test('register', async (t) => {
  const res = await call('POST', '/api/auth/local/register', { username: 'alice', email: 'Alice@Example.COM', password: PASSWORD })
  t.equal(res.status, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  t.strictSame(Object.keys(res.json).sort(), ['jwt', 'user'], '{ jwt, user }, not wrapped in data')
  t.strictSame(Object.keys(res.json.user).sort(), USER_KEYS, 'no password, reset or confirmation code, no role')
  t.match(res.json.user, { username: 'alice', email: 'alice@example.com', provider: 'local', confirmed: true, blocked: false })
  t.match(res.json.user.createdAt, ISO)

  const { header, payload } = decodeJwt(res.json.jwt)
  t.strictSame(header, { alg: 'HS256', typ: 'JWT' }, 'HS256')
  t.strictSame(Object.keys(payload).sort(), ['exp', 'iat', 'id'], 'payload { id, iat, exp }')
  t.equal(payload.id, res.json.user.id)
  t.equal((payload.exp as number) - (payload.iat as number), 30 * 24 * 60 * 60, 'expires in 30 days by default')

  const me = await call('GET', '/api/users/me', undefined, bearer(res.json.jwt))
  t.equal(me.status, 200, 'the JWT authenticates')
  t.strictSame(me.json, res.json.user)

  const role = await users.findFirst({ filters: { id: res.json.user.id }, populate: { role: true } } as any)
  t.equal((role?.role as { type: string }).type, 'authenticated', 'the default role')
  const stored = await app.contentApi.db.selectFrom('up_users').select('password').where('id', '=', res.json.user.id).executeTakeFirstOrThrow()
  t.match(stored.password, /^\$scrypt\$n=32768,r=8,p=1\$/, 'the password is stored as a scrypt hash')
})

t.test('register: errors', async (t) => {
  const taken = error(400, 'ApplicationError', 'Email or Username are already taken')
  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'alice', email: 'other@example.com', password: PASSWORD })).json, taken, 'same username')
  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'alice2', email: 'ALICE@example.com', password: PASSWORD })).json, taken, 'same email, other case')

  const bad = await call('POST', '/api/auth/local/register', { username: 'bad_email', email: 'not-an-email', password: PASSWORD })
  t.equal(bad.status, 400)
  t.strictSame(bad.json, error(400, 'ValidationError', 'email must be a valid email', {
    errors: [{ path: ['email'], message: 'email must be a valid email', name: 'ValidationError', value: 'not-an-email' }]
  }))

  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'nopass', email: 'nopass@example.com' })).json, required('password'))
  t.strictSame((await call('POST', '/api/auth/local/register', { email: 'nouser@example.com', password: PASSWORD })).json, required('username'))
  t.strictSame((await call('POST', '/api/auth/local/register', {})).json, required('username', 'email', 'password'))
  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'empty', email: '', password: PASSWORD })).json, required('email'), 'an empty string is missing')

  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'extra', email: 'extra@example.com', password: PASSWORD, role: 1 })).json,
    error(400, 'ValidationError', 'Invalid parameters: role'))
  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'extra', email: 'extra@example.com', password: PASSWORD, role: 1, confirmed: true, blocked: false })).json,
    error(400, 'ValidationError', 'Invalid parameters: role, confirmed, blocked'), 'every extra key, in order')

  const long = 'é'.repeat(37) // 37 characters, 74 bytes
  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'longpass', email: 'long@example.com', password: long })).json,
    error(400, 'ValidationError', 'Password must be less than 73 bytes'), 'bytes, not characters, are counted')
  t.equal((await call('POST', '/api/auth/local/register', { username: 'longpass', email: 'long@example.com', password: 'a'.repeat(72) })).status, 200, '72 bytes are accepted')

  const short = await call('POST', '/api/auth/local/register', { username: 'shortpass', email: 'short@example.com', password: 'a' })
  t.equal(short.status, 400)
  t.equal(short.json.error.name, 'ValidationError')
  const tiny = await call('POST', '/api/auth/local/register', { username: 'ab', email: 'tiny@example.com', password: PASSWORD })
  t.equal(tiny.json.error.message, 'username must be at least 3 characters')

  t.equal(await users.count({ filters: { username: { $in: ['bad_email', 'nopass', 'extra', 'shortpass', 'ab', 'alice2'] } } }), 0, 'nothing was written')
})

t.test('register: disabled', async (t) => {
  const { call } = await buildApp({ register: { enabled: false } })
  const res = await call('POST', '/api/auth/local/register', { username: 'nobody', email: 'nobody@example.com', password: PASSWORD })
  t.equal(res.status, 400)
  t.strictSame(res.json, error(400, 'ApplicationError', 'Register action is currently disabled'))
})

t.test('login', async (t) => {
  for (const identifier of ['alice@example.com', 'ALICE@EXAMPLE.COM', 'Alice@Example.com']) {
    const res = await login(identifier, PASSWORD)
    t.equal(res.status, 200, `email matches case-insensitively: ${identifier}`)
    t.strictSame(Object.keys(res.json).sort(), ['jwt', 'user'])
    t.strictSame(Object.keys(res.json.user).sort(), USER_KEYS)
    t.equal(res.json.user.username, 'alice')
  }
  t.equal((await login('alice', PASSWORD)).status, 200, 'username')
  t.strictSame((await login('Alice', PASSWORD)).json, INVALID_LOGIN, 'the username matches exactly')

  const wrongPassword = await login('alice', 'wrong-password')
  const unknownUser = await login('nobody', 'wrong-password')
  const unknownEmail = await login('nobody@example.com', PASSWORD)
  t.equal(wrongPassword.status, 400)
  t.strictSame(wrongPassword.json, INVALID_LOGIN)
  t.equal(unknownUser.status, wrongPassword.status)
  t.equal(unknownUser.text, wrongPassword.text, 'an unknown user gets the very same answer as a wrong password')
  t.equal(unknownEmail.text, wrongPassword.text)

  const missing = await call('POST', '/api/auth/local', { password: PASSWORD })
  t.equal(missing.status, 400)
  t.strictSame(missing.json, required('identifier'), "yup's message with details")
  t.strictSame((await call('POST', '/api/auth/local', { identifier: 'alice' })).json, required('password'))
  t.strictSame((await call('POST', '/api/auth/local', {})).json, required('identifier', 'password'))
  t.strictSame((await call('POST', '/api/auth/local', { identifier: 42, password: PASSWORD })).json, required('identifier'), 'a non-string identifier')
  t.strictSame((await call('POST', '/api/auth/local')).json, required('identifier', 'password'), 'no body')

  const bob = await register('bobby', 'bob@example.com')
  await users.update({ documentId: bob.user.documentId, data: { blocked: true } })
  t.strictSame((await login('bobby', PASSWORD)).json, error(400, 'ApplicationError', 'Your account has been blocked by an administrator'), 'blocked user')
  t.strictSame((await login('bobby', 'wrong-password')).json, INVALID_LOGIN, 'a blocked user with a wrong password learns nothing more')
  await users.update({ documentId: bob.user.documentId, data: { blocked: false } })
  t.equal((await login('bobby', PASSWORD)).status, 200, 'unblocked')

  const provider = await users.create({ data: { username: 'github_user', email: 'gh@example.com', provider: 'github', password: PASSWORD } })
  t.strictSame((await login('github_user', PASSWORD)).json, INVALID_LOGIN, 'only local users sign in with a password')
  await users.delete({ documentId: provider.documentId })

  const migrated = await users.create({ data: { username: 'migrated', email: 'migrated@example.com', provider: 'local' } })
  // A bcrypt hash as Strapi stores it (cost 10), written directly as a migration would.
  const bcrypt = (await import('bcryptjs')).default
  await app.contentApi.db.updateTable('up_users').set({ password: await bcrypt.hash(PASSWORD, 10) }).where('id', '=', migrated.id).execute()
  t.equal((await login('migrated', PASSWORD)).status, 200, 'a Strapi bcrypt hash verifies')
  t.strictSame((await login('migrated', 'wrong-password')).json, INVALID_LOGIN)
  t.strictSame((await login('migrated@example.com', '')).json, required('password'))
})

t.test('an unknown user is refused in the time a wrong password takes', async (t) => {
  // Without the decoy derivation an unknown user is refused ~50x faster (one indexed lookup
  // against one scrypt run); the bound leaves room for a noisy machine.
  const elapsed = async (identifier: string): Promise<number> => {
    const start = process.hrtime.bigint()
    t.strictSame((await login(identifier, 'wrong-password')).json, INVALID_LOGIN)
    return Number(process.hrtime.bigint() - start) / 1e6
  }
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 5; i++) {
    known.push(await elapsed('alice'))
    unknown.push(await elapsed(`nobody_${i}`))
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[2]
  t.ok(median(unknown) > median(known) / 2, `unknown ${median(unknown).toFixed(1)} ms vs wrong password ${median(known).toFixed(1)} ms`)
})

t.test('login: unconfirmed user with email confirmation on', async (t) => {
  const { call, app } = await buildApp({ register: { emailConfirmation: true } })
  const res = await call('POST', '/api/auth/local/register', { username: 'carol', email: 'carol@example.com', password: PASSWORD })
  t.equal(res.status, 200)
  const unconfirmed = await call('POST', '/api/auth/local', { identifier: 'carol', password: PASSWORD })
  t.equal(unconfirmed.status, 400)
  t.strictSame(unconfirmed.json, error(400, 'ApplicationError', 'Your account email is not confirmed'))
  t.strictSame((await call('POST', '/api/auth/local', { identifier: 'carol', password: 'wrong-password' })).json, INVALID_LOGIN, 'the password is checked first')
  await app.contentApi.documents(USER).update({ documentId: res.json.user.documentId, data: { confirmed: true } })
  t.equal((await call('POST', '/api/auth/local', { identifier: 'carol', password: PASSWORD })).status, 200)
})

t.test('users/me', async (t) => {
  const alice = (await login('alice', PASSWORD)).json
  const me = await call('GET', '/api/users/me', undefined, bearer(alice.jwt))
  t.equal(me.status, 200)
  t.strictSame(me.json, alice.user, 'a bare user object')
  t.equal((await call('GET', '/api/users/me', undefined, { authorization: `bearer ${alice.jwt as string}` })).status, 200, 'the scheme is case-insensitive')

  const anonymous = await call('GET', '/api/users/me')
  t.equal(anonymous.status, 403, 'no credentials: the public role lacks user.me')
  t.strictSame(anonymous.json, FORBIDDEN)

  const token = await app.contentApi.apiTokens.create({ name: 'me-full', type: 'full-access' })
  const withToken = await call('GET', '/api/users/me', undefined, bearer(token.accessKey))
  t.equal(withToken.status, 401, 'an API token is no user')
  t.strictSame(withToken.json, error(401, 'UnauthorizedError', 'Unauthorized'))

  const bad = await call('GET', '/api/users/me', undefined, bearer('eyJhbGciOiJIUzI1NiJ9.e30.bad'))
  t.equal(bad.status, 401)
  t.strictSame(bad.json, error(401, 'UnauthorizedError', 'Missing or invalid credentials'))

  await app.contentApi.permissions.revoke('authenticated', [`${UP}.user.me`])
  t.strictSame((await call('GET', '/api/users/me', undefined, bearer(alice.jwt))).json, FORBIDDEN, 'user.me is a permission like any other')
  await app.contentApi.permissions.grant('authenticated', [`${UP}.user.me`])
  t.equal((await call('GET', '/api/users/me', undefined, bearer(alice.jwt))).status, 200)
})

t.test('users CRUD and count', async (t) => {
  const alice = (await login('alice', PASSWORD)).json
  const routes: Array<[Method, string, unknown?]> = [
    ['GET', '/api/users'],
    ['GET', '/api/users/count'],
    ['GET', `/api/users/${alice.user.id as number}`],
    ['POST', '/api/users', { username: 'dave', email: 'dave@example.com', password: PASSWORD }],
    ['PUT', `/api/users/${alice.user.id as number}`, { username: 'alicia' }],
    ['DELETE', `/api/users/${alice.user.id as number}`]
  ]

  t.test('without permission', async (t) => {
    for (const [method, url, payload] of routes) {
      t.strictSame((await call(method, url, payload)).json, FORBIDDEN, `public: ${method} ${url}`)
      t.strictSame((await call(method, url, payload, bearer(alice.jwt))).json, FORBIDDEN, `authenticated: ${method} ${url}`)
    }
    const readOnly = await app.contentApi.apiTokens.create({ name: 'users-read', type: 'read-only' })
    t.equal((await call('GET', '/api/users', undefined, bearer(readOnly.accessKey))).status, 200, 'a read-only token may find')
    t.equal((await call('GET', `/api/users/${alice.user.id as number}`, undefined, bearer(readOnly.accessKey))).status, 200, 'and findOne')
    t.strictSame((await call('GET', '/api/users/count', undefined, bearer(readOnly.accessKey))).json, FORBIDDEN, 'but not count (its action is not find or findOne)')
    for (const [method, url, payload] of routes.slice(3)) {
      t.strictSame((await call(method, url, payload, bearer(readOnly.accessKey))).json, FORBIDDEN, `read-only token: ${method} ${url}`)
    }
    t.equal(await users.count({ filters: { username: 'dave' } }), 0)
    t.equal((await users.findFirst({ filters: { id: alice.user.id } }))?.username, 'alice', 'nothing changed')
  })

  t.test('with permission', async (t) => {
    await app.contentApi.permissions.grant('authenticated', ['find', 'count', 'findOne', 'create', 'update', 'destroy'].map((a) => `${UP}.user.${a}`))
    const auth = bearer(alice.jwt)

    const list = await call('GET', '/api/users?sort=username', undefined, auth)
    t.equal(list.status, 200)
    t.ok(Array.isArray(list.json), 'a bare array')
    t.strictSame(list.json.map((u: { username: string }) => u.username), ['alice', 'bobby', 'longpass', 'migrated'])
    for (const user of list.json) t.strictSame(Object.keys(user).sort(), USER_KEYS)
    t.strictSame((await call('GET', '/api/users?filters[username][$startsWith]=b&fields[0]=username', undefined, auth)).json.map((u: Record<string, unknown>) => Object.keys(u).sort()),
      [['documentId', 'id', 'username']], 'filters and fields')
    const populate = '/api/users?filters[username]=alice&populate=role'
    t.equal((await call('GET', populate, undefined, auth)).json.error.message, 'Invalid key role', 'populating roles needs role.find')
    const full = await app.contentApi.apiTokens.create({ name: 'users-full', type: 'full-access' })
    t.equal((await call('GET', populate, undefined, bearer(full.accessKey))).json[0].role.type, 'authenticated', 'populate')
    for (const key of ['password', 'resetPasswordToken', 'confirmationToken']) {
      t.equal((await call('GET', `/api/users?filters[${key}][$null]=false`, undefined, auth)).json.error.message, `Invalid key ${key}`, `no filtering on ${key}`)
      t.equal((await call('GET', `/api/users?sort=${key}`, undefined, auth)).json.error.message, `Invalid key ${key}`, `no sorting on ${key}`)
      t.equal((await call('GET', `/api/users?fields[0]=${key}`, undefined, auth)).json.error.message, `Invalid key ${key}`, `no selecting ${key}`)
    }

    const count = await call('GET', '/api/users/count', undefined, auth)
    t.equal(count.status, 200)
    t.equal(count.text, '4', 'a bare number')
    t.equal((await call('GET', '/api/users/count?filters[username][$startsWith]=a', undefined, auth)).json, 1, 'with filters')

    const one = await call('GET', `/api/users/${alice.user.id as number}`, undefined, auth)
    t.strictSame(one.json, alice.user, 'findOne: a bare object')
    t.strictSame((await call('GET', '/api/users/9999', undefined, auth)).json, NOT_FOUND)
    t.strictSame((await call('GET', '/api/users/abc', undefined, auth)).json, NOT_FOUND)

    const created = await call('POST', '/api/users', { username: 'dave', email: 'dave@example.com', password: PASSWORD }, auth)
    t.equal(created.status, 201)
    t.strictSame(Object.keys(created.json).sort(), USER_KEYS)
    t.match(created.json, { username: 'dave', email: 'dave@example.com', provider: 'local', confirmed: true, blocked: false })
    t.equal((await login('dave', PASSWORD)).status, 200, 'the created user signs in: the password was hashed')
    const daveRole = await users.findFirst({ filters: { username: 'dave' }, populate: { role: true } } as any)
    t.equal((daveRole?.role as { type: string }).type, 'authenticated', 'the default role')
    const duplicate = await call('POST', '/api/users', { username: 'dave', email: 'dave2@example.com', password: PASSWORD }, auth)
    t.equal(duplicate.status, 400, 'a taken username')

    const updated = await call('PUT', `/api/users/${created.json.id as number}`, { username: 'david', password: 'Changed123!' }, auth)
    t.equal(updated.status, 200)
    t.equal(updated.json.username, 'david')
    t.strictSame(Object.keys(updated.json).sort(), USER_KEYS)
    t.equal((await login('david', 'Changed123!')).status, 200, 'a new password is hashed')
    t.strictSame((await login('david', PASSWORD)).json, INVALID_LOGIN, 'the old one no longer works')
    t.strictSame((await call('PUT', '/api/users/9999', { username: 'ghost' }, auth)).json, NOT_FOUND)
    t.equal((await call('PUT', `/api/users/${created.json.id as number}`, { email: 'not-an-email' }, auth)).status, 400, 'validated')

    const deleted = await call('DELETE', `/api/users/${created.json.id as number}`, undefined, auth)
    t.equal(deleted.status, 200)
    t.equal(deleted.json.username, 'david', 'answers the deleted user')
    t.strictSame(Object.keys(deleted.json).sort(), USER_KEYS)
    t.strictSame((await call('GET', `/api/users/${created.json.id as number}`, undefined, auth)).json, NOT_FOUND)
    t.strictSame((await call('DELETE', `/api/users/${created.json.id as number}`, undefined, auth)).json, NOT_FOUND)
    t.strictSame((await login('david', 'Changed123!')).json, INVALID_LOGIN)
  })

  t.test('create: Strapi\'s checks on POST /users', async (t) => {
    const auth = bearer(alice.jwt)
    const upper = await call('POST', '/api/users', { username: 'erin', email: 'Erin@Example.com', password: PASSWORD }, auth)
    t.equal(upper.status, 201)
    t.equal(upper.json.email, 'erin@example.com', 'the email is lower-cased, as register does')
    const sameEmail = await call('POST', '/api/users', { username: 'frank', email: 'ALICE@example.com', password: PASSWORD }, auth)
    t.strictSame(sameEmail.json, error(400, 'ApplicationError', 'Email already taken'), 'a taken email (unique_email)')
    const noPassword = await call('POST', '/api/users', { username: 'grace', email: 'grace@example.com' }, auth)
    t.strictSame(noPassword.json, required('password'), 'a password is required')
    for (const username of ['erin', 'frank', 'grace']) {
      const user = await users.findFirst({ filters: { username } })
      if (user !== null) await users.delete({ documentId: user.documentId })
    }
  })

  t.test('row conditions apply to every users route', async (t) => {
    await app.contentApi.permissions.grant('authenticated', ['find', 'count', 'findOne', 'update', 'destroy'].map((a) => `${UP}.user.${a}`), {
      conditions: { id: { $eq: '$user.id' } }
    })
    const auth = bearer(alice.jwt)
    const bob = await users.findFirst({ filters: { username: 'bobby' } })
    t.strictSame((await call('GET', '/api/users', undefined, auth)).json.map((u: { username: string }) => u.username), ['alice'], 'find sees only the caller')
    t.equal((await call('GET', '/api/users/count', undefined, auth)).json, 1, 'count counts only the caller')
    t.strictSame((await call('GET', `/api/users/${alice.user.id as number}`, undefined, auth)).json, alice.user, 'findOne of oneself')
    t.strictSame((await call('GET', `/api/users/${bob!.id}`, undefined, auth)).json, NOT_FOUND, 'findOne of another user')
    t.strictSame((await call('PUT', `/api/users/${bob!.id}`, { blocked: true }, auth)).json, NOT_FOUND, 'update of another user')
    t.strictSame((await call('DELETE', `/api/users/${bob!.id}`, undefined, auth)).json, NOT_FOUND, 'delete of another user')
    const after = await users.findFirst({ filters: { username: 'bobby' } })
    t.match(after, { blocked: false }, 'the other user is untouched')
    if (after?.blocked === true) await users.update({ documentId: after.documentId, data: { blocked: false } })
    if (after === null) await register('bobby', 'bob@example.com')
  })

  t.test('revoked again', async (t) => {
    await app.contentApi.permissions.revoke('authenticated', ['find', 'count', 'findOne', 'create', 'update', 'destroy'].map((a) => `${UP}.user.${a}`))
    for (const [method, url, payload] of routes) {
      t.strictSame((await call(method, url, payload, bearer(alice.jwt))).json, FORBIDDEN, `${method} ${url}`)
    }
  })
})

t.test('change-password', async (t) => {
  const erin = await register('erin_cp', 'erin.cp@example.com')
  const auth = bearer(erin.jwt)
  const body = { currentPassword: PASSWORD, password: 'NewPassword1!', passwordConfirmation: 'NewPassword1!' }

  t.strictSame((await call('POST', '/api/auth/change-password', body)).json, FORBIDDEN, 'no credentials: 403, the public role lacks the action')
  const token = await app.contentApi.apiTokens.create({ name: 'cp-full', type: 'full-access' })
  t.strictSame((await call('POST', '/api/auth/change-password', body, bearer(token.accessKey))).json, error(401, 'UnauthorizedError', 'Unauthorized'), 'an API token is no user')
  t.strictSame((await call('POST', '/api/auth/change-password', body, bearer('not-a-token'))).json, error(401, 'UnauthorizedError', 'Missing or invalid credentials'))

  t.strictSame((await call('POST', '/api/auth/change-password', {}, auth)).json, required('currentPassword', 'password', 'passwordConfirmation'))
  t.strictSame((await call('POST', '/api/auth/change-password', { currentPassword: PASSWORD, password: 'x1234567' }, auth)).json, required('passwordConfirmation'))
  t.strictSame((await call('POST', '/api/auth/change-password', { ...body, passwordConfirmation: 'Different1!' }, auth)).json,
    error(400, 'ValidationError', 'Passwords do not match'))
  t.strictSame((await call('POST', '/api/auth/change-password', { ...body, currentPassword: 'not-my-password' }, auth)).json,
    error(400, 'ValidationError', 'The provided current password is invalid'))
  t.strictSame((await call('POST', '/api/auth/change-password', { currentPassword: PASSWORD, password: PASSWORD, passwordConfirmation: PASSWORD }, auth)).json,
    error(400, 'ValidationError', 'Your new password must be different than your current password'))
  t.equal((await login('erin_cp', PASSWORD)).status, 200, 'none of those changed the password')

  const changed = await call('POST', '/api/auth/change-password', body, auth)
  t.equal(changed.status, 200)
  t.strictSame(Object.keys(changed.json).sort(), ['jwt', 'user'])
  t.strictSame(Object.keys(changed.json.user).sort(), USER_KEYS)
  t.equal(changed.json.user.id, erin.user.id)
  t.equal((await call('GET', '/api/users/me', undefined, bearer(changed.json.jwt))).status, 200, 'the new JWT works')
  t.strictSame((await login('erin_cp', PASSWORD)).json, INVALID_LOGIN, 'the old password stops working')
  t.equal((await login('erin_cp', 'NewPassword1!')).status, 200, 'the new one works')
  t.equal((await call('GET', '/api/users/me', undefined, auth)).status, 200, 'JWTs issued before the change stay valid until they expire, as in Strapi')
  t.strictSame((await call('POST', '/api/auth/change-password', body, auth)).json, error(400, 'ValidationError', 'The provided current password is invalid'),
    'changing again from the old password fails')
})

t.test('forgot and reset password', async (t) => {
  await register('frank_rp', 'frank.rp@example.com')
  mail.length = 0

  const unknown = await call('POST', '/api/auth/forgot-password', { email: 'nobody@example.com' })
  t.equal(unknown.status, 200)
  t.strictSame(unknown.json, { ok: true }, 'an unknown address gets the same answer')
  t.equal(mail.length, 0, 'and nothing is sent')
  t.strictSame((await call('POST', '/api/auth/forgot-password', {})).json, required('email'))

  const forgot = await call('POST', '/api/auth/forgot-password', { email: 'Frank.RP@example.com' })
  t.strictSame(forgot.json, { ok: true })
  t.equal(mail.length, 1, 'one email')
  const message = mail[0]
  t.equal(message.to, 'frank.rp@example.com')
  t.equal(message.from, 'no-reply@example.com')
  t.equal(message.subject, 'Reset password')
  const link = /https:\/\/app\.example\.com\/reset-password\?code=([0-9a-f]+)/.exec(message.text)
  t.ok(link, 'the text links to auth.urls.resetPassword with the code')
  const code = link![1]
  t.equal(code.length, 128, '64 random bytes')
  t.match(message.html, `?code=${code}`, 'so does the html')

  const stored = await app.contentApi.db.selectFrom('up_users').select('reset_password_token').where('username', '=', 'frank_rp').executeTakeFirstOrThrow()
  t.type(stored.reset_password_token, 'string')
  t.not(stored.reset_password_token, code, 'only a digest of the code is stored')

  const reset = { code, password: 'Reset123!', passwordConfirmation: 'Reset123!' }
  await call('POST', '/api/auth/forgot-password', { email: 'frank.rp@example.com' })
  const replacing = /\?code=([0-9a-f]+)/.exec(mail[1].text)![1]
  t.strictSame((await call('POST', '/api/auth/reset-password', { ...reset, code })).json, error(400, 'ValidationError', 'Incorrect code provided'),
    'a second request replaces the first code')
  reset.code = replacing
  t.strictSame((await call('POST', '/api/auth/reset-password', { ...reset, code: 'f'.repeat(128) })).json, error(400, 'ValidationError', 'Incorrect code provided'), 'a wrong code')
  t.strictSame((await call('POST', '/api/auth/reset-password', { ...reset, code: stored.reset_password_token })).json,
    error(400, 'ValidationError', 'Incorrect code provided'), 'the stored digest is not a code')
  t.strictSame((await call('POST', '/api/auth/reset-password', { ...reset, passwordConfirmation: 'Other123!' })).json, error(400, 'ValidationError', 'Passwords do not match'))
  t.strictSame((await call('POST', '/api/auth/reset-password', { code })).json, required('password', 'passwordConfirmation'))
  t.equal((await login('frank_rp', PASSWORD)).status, 200, 'the password is unchanged so far')

  const done = await call('POST', '/api/auth/reset-password', reset)
  t.equal(done.status, 200)
  t.strictSame(Object.keys(done.json).sort(), ['jwt', 'user'])
  t.equal(done.json.user.username, 'frank_rp')
  t.equal((await call('GET', '/api/users/me', undefined, bearer(done.json.jwt))).status, 200)
  t.equal((await login('frank_rp', 'Reset123!')).status, 200, 'the code from the email reset the password')
  t.strictSame((await login('frank_rp', PASSWORD)).json, INVALID_LOGIN, 'the old password stops working')
  t.strictSame((await call('POST', '/api/auth/reset-password', { ...reset, password: 'Again123!', passwordConfirmation: 'Again123!' })).json,
    error(400, 'ValidationError', 'Incorrect code provided'), 'a code works once')

  const frank = await users.findFirst({ filters: { username: 'frank_rp' } })
  await users.update({ documentId: frank!.documentId, data: { blocked: true } })
  mail.length = 0
  t.strictSame((await call('POST', '/api/auth/forgot-password', { email: 'frank.rp@example.com' })).json, { ok: true })
  t.equal(mail.length, 0, 'a blocked user gets no reset email')
  await users.update({ documentId: frank!.documentId, data: { blocked: false } })
})

t.test('forgot password without an email sender', async (t) => {
  const { call } = await buildApp({ email: undefined })
  await call('POST', '/api/auth/local/register', { username: 'nomail', email: 'nomail@example.com', password: PASSWORD })
  t.strictSame((await call('POST', '/api/auth/forgot-password', { email: 'nomail@example.com' })).json, { ok: true })
})

t.test('email confirmation', async (t) => {
  const { app, call, mail } = await buildApp({ register: { emailConfirmation: true } })
  const res = await call('POST', '/api/auth/local/register', { username: 'gina', email: 'Gina@example.com', password: PASSWORD })
  t.equal(res.status, 200)
  t.strictSame(Object.keys(res.json), ['user'], '{ user } only: no JWT before confirmation')
  t.strictSame(Object.keys(res.json.user).sort(), USER_KEYS)
  t.equal(res.json.user.confirmed, false)
  t.equal(mail.length, 1, 'a confirmation email')
  t.equal(mail[0].to, 'gina@example.com')
  t.equal(mail[0].subject, 'Account confirmation')
  const code = /confirmation=([0-9a-f]+)/.exec(mail[0].text)![1]
  t.equal(code.length, 40, '20 random bytes')
  const stored = await app.contentApi.db.selectFrom('up_users').select('confirmation_token').where('username', '=', 'gina').executeTakeFirstOrThrow()
  t.not(stored.confirmation_token, code, 'only a digest of the code is stored')

  t.strictSame((await call('POST', '/api/auth/local', { identifier: 'gina', password: PASSWORD })).json, error(400, 'ApplicationError', 'Your account email is not confirmed'))

  const resent = await call('POST', '/api/auth/send-email-confirmation', { email: 'gina@example.com' })
  t.strictSame(resent.json, { email: 'gina@example.com', sent: true })
  t.equal(mail.length, 2, 'sent again')
  const second = /confirmation=([0-9a-f]+)/.exec(mail[1].text)![1]
  t.not(second, code, 'with a new code')
  t.strictSame((await call('GET', `/api/auth/email-confirmation?confirmation=${code}`)).json, error(400, 'ValidationError', 'Invalid token'), 'the first code was replaced')

  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', { email: 'nobody@example.com' })).json, { email: 'nobody@example.com', sent: true }, 'an unknown address')
  t.equal(mail.length, 2, 'gets nothing')
  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', {})).json, required('email'))

  t.strictSame((await call('GET', '/api/auth/email-confirmation')).json, error(400, 'ValidationError', 'confirmation is a required field'))
  t.strictSame((await call('GET', '/api/auth/email-confirmation?confirmation=nope')).json, error(400, 'ValidationError', 'Invalid token'))

  const confirmed = await call('GET', `/api/auth/email-confirmation?confirmation=${second}`)
  t.equal(confirmed.status, 200, 'without a redirect URL: the JWT and the user')
  t.equal(confirmed.json.user.confirmed, true)
  t.equal((await call('GET', '/api/users/me', undefined, bearer(confirmed.json.jwt))).status, 200)
  t.strictSame((await call('GET', `/api/auth/email-confirmation?confirmation=${second}`)).json, error(400, 'ValidationError', 'Invalid token'), 'a code works once')
  t.equal((await call('POST', '/api/auth/local', { identifier: 'gina', password: PASSWORD })).status, 200, 'signs in once confirmed')
  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', { email: 'gina@example.com' })).json, error(400, 'ApplicationError', 'Already confirmed'))

  const hank = await call('POST', '/api/auth/local/register', { username: 'hank', email: 'hank@example.com', password: PASSWORD })
  await app.contentApi.documents(USER).update({ documentId: hank.json.user.documentId, data: { blocked: true } })
  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', { email: 'hank@example.com' })).json, error(400, 'ApplicationError', 'blocked.user'))
})

t.test('email confirmation with a redirect', async (t) => {
  const { call, mail } = await buildApp({ register: { emailConfirmation: true }, urls: { emailConfirmationRedirect: 'https://app.example.com/welcome' } })
  await call('POST', '/api/auth/local/register', { username: 'ivan', email: 'ivan@example.com', password: PASSWORD })
  const code = /confirmation=([0-9a-f]+)/.exec(mail[0].text)![1]
  const res = await call('GET', `/api/auth/email-confirmation?confirmation=${code}`)
  t.equal(res.status, 302)
  t.equal(res.headers.location, 'https://app.example.com/welcome')
  t.equal((await call('POST', '/api/auth/local', { identifier: 'ivan', password: PASSWORD })).status, 200)
})

t.test('the confirmation email links to the confirmation route', async (t) => {
  const { call, mail } = await buildApp({ register: { emailConfirmation: true }, urls: { emailConfirmationRedirect: 'https://app.example.com/welcome' } })
  await call('POST', '/api/auth/local/register', { username: 'jane', email: 'jane@example.com', password: PASSWORD })
  t.match(mail[0].text, /\/api\/auth\/email-confirmation\?confirmation=[0-9a-f]{40}/,
    'Strapi links to <server>/api/auth/email-confirmation, which then redirects to email_confirmation_redirection')
})

t.test('the confirmation link starts with urls.server, whatever the request\'s Host', async (t) => {
  const { call, mail } = await buildApp({ register: { emailConfirmation: true }, urls: { server: 'https://api.example.com/' } })
  await call('POST', '/api/auth/local/register', { username: 'kate', email: 'kate@example.com', password: PASSWORD }, { host: 'evil.example.net' })
  t.match(mail[0].text, /https:\/\/api\.example\.com\/api\/auth\/email-confirmation\?confirmation=[0-9a-f]{40}/)
  t.notMatch(mail[0].text, /evil/)
})

t.test('roles', async (t) => {
  t.strictSame((await call('GET', '/api/users-permissions/roles')).json, FORBIDDEN, 'not granted by default')
  t.strictSame((await call('GET', '/api/users-permissions/roles/1')).json, FORBIDDEN)
  await app.contentApi.permissions.grant('public', [`${UP}.role.find`, `${UP}.role.findOne`])
  const list = await call('GET', '/api/users-permissions/roles')
  t.equal(list.status, 200)
  t.strictSame(list.json.roles.map((r: { type: string, name: string }) => [r.type, r.name]), [['public', 'Public'], ['authenticated', 'Authenticated']])
  t.match(list.json.roles[0], { description: 'Default role given to unauthenticated user.' })
  await app.contentApi.permissions.createRole({ name: 'Editor', type: 'editor', description: 'Edits' })
  t.strictSame((await call('GET', '/api/users-permissions/roles')).json.roles.map((r: { type: string }) => r.type), ['public', 'authenticated', 'editor'], 'a created role is listed')
  const one = await call('GET', `/api/users-permissions/roles/${list.json.roles[1].id as number}`)
  t.equal(one.status, 200)
  t.equal(one.json.role.type, 'authenticated', '{ role }')
  t.strictSame((await call('GET', '/api/users-permissions/roles/999')).json, NOT_FOUND)
  t.strictSame((await call('GET', '/api/users-permissions/roles/abc')).json, NOT_FOUND)
  t.strictSame((await app.contentApi.permissions.listRoles()).map((r) => r.type), ['public', 'authenticated', 'editor'])
  await app.contentApi.permissions.revoke('public', [`${UP}.role.find`, `${UP}.role.findOne`])
  t.strictSame((await call('GET', '/api/users-permissions/roles')).json, FORBIDDEN)
})

t.test('i18n locales', async (t) => {
  const { call, app } = await buildApp()
  t.strictSame((await call('GET', '/api/i18n/locales')).json, FORBIDDEN, 'not granted by default (recorded: i18n-locales)')
  await app.contentApi.permissions.grant('public', ['plugin::i18n.locales.listLocales'])
  const res = await call('GET', '/api/i18n/locales')
  t.equal(res.status, 200)
  t.strictSame(res.json, [{ id: 1, name: 'en', code: 'en', isDefault: true }])
})

t.test('i18n locales: the configured ones', async (t) => {
  const { app, call } = await buildApp({}, { i18n: { locales: ['en', 'fr', 'de'], defaultLocale: 'fr' } })
  const token = await app.contentApi.apiTokens.create({ name: 'locales', type: 'full-access' })
  const res = await call('GET', '/api/i18n/locales', undefined, bearer(token.accessKey))
  t.strictSame(res.json.map((l: { code: string, isDefault: boolean }) => [l.code, l.isDefault]), [['en', false], ['fr', true], ['de', false]])
})

t.test('rate limiting', async (t) => {
  const { call } = await buildApp({ rateLimit: { max: 2, timeWindow: 60000 } })
  await call('POST', '/api/auth/local/register', { username: 'kate', email: 'kate@example.com', password: PASSWORD })
  const first = await call('POST', '/api/auth/local', { identifier: 'kate', password: PASSWORD })
  t.equal(first.status, 200)
  t.equal(first.headers['x-ratelimit-limit'], '2')
  const second = await call('POST', '/api/auth/local', { identifier: 'kate', password: 'wrong-password' })
  t.equal(second.status, 400, 'failures count too')
  const third = await call('POST', '/api/auth/local', { identifier: 'someone-else', password: PASSWORD })
  t.equal(third.status, 429, 'the third login in the window, whatever its identifier')
  t.match(third.headers['content-type'], /^application\/json/)
  t.strictSame(third.json, error(429, 'RateLimitError', 'Too many requests, please try again later.'))
  t.ok(Number(third.headers['retry-after']) > 0, 'Retry-After')
  t.equal((await call('POST', '/api/auth/local', { identifier: 'kate', password: PASSWORD })).status, 429, 'a correct password too')

  // kate's registration was the first request to this route.
  t.equal((await call('POST', '/api/auth/local/register', { username: 'liam', email: 'liam@example.com', password: PASSWORD })).status, 200, 'another route has its own budget')
  t.equal((await call('POST', '/api/auth/local/register', { username: 'liam', email: 'liam@example.com', password: PASSWORD })).status, 429, 'register is limited')
  for (const [url, body] of [['/api/auth/forgot-password', { email: 'kate@example.com' }], ['/api/auth/reset-password', { code: 'x', password: 'a', passwordConfirmation: 'a' }],
    ['/api/auth/send-email-confirmation', { email: 'kate@example.com' }], ['/api/auth/change-password', {}]] as const) {
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await call('POST', url, body)).status)
    t.equal(statuses[2], 429, `${url} is limited`)
    t.not(statuses[0], 429)
  }
  const me = []
  for (let i = 0; i < 4; i++) me.push((await call('GET', '/api/users/me')).status)
  t.strictSame(me, [403, 403, 403, 403], 'other routes are not limited')
})

t.test('no answer carries a password, a reset or confirmation code, or an API-token hash', async (t) => {
  t.ok(answers.length > 100, `${answers.length} answers checked`)
  const secrets = new Set<string>()
  for (const instance of apps) {
    const users = await instance.contentApi.db.selectFrom('up_users').select(['password', 'reset_password_token', 'confirmation_token']).execute()
    for (const row of users) for (const value of Object.values(row)) if (typeof value === 'string') secrets.add(value)
    const tokens = await instance.contentApi.db.selectFrom('strapi_api_tokens').select('access_key').execute()
    for (const row of tokens) secrets.add(row.access_key as string)
  }
  t.ok(secrets.size > 10, `${secrets.size} stored secrets`)
  const keys = /"(password|resetPasswordToken|confirmationToken|accessKey|access_key|reset_password_token|confirmation_token)"\s*:/
  for (const { url, text } of answers) {
    const key = keys.exec(text)
    if (key !== null) t.fail(`${url} answered a "${key[1]}" key: ${text.slice(0, 200)}`)
    for (const secret of secrets) if (text.includes(secret)) t.fail(`${url} answered a stored secret`)
    if (/\$scrypt\$|\$2[aby]\$/.test(text)) t.fail(`${url} answered a password hash`)
  }
})
