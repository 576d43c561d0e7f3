import t from 'tap'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { build } from '../helpers/build.js'
import { createTestDatabase } from '../helpers/database.js'
import contentApi, { defineContentType, type EmailMessage } from '../../lib/index.js'

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
const USER_NOT_FOUND = { data: null, error: { status: 404, name: 'NotFoundError', message: 'User not found', details: {} } }
const ROLE_NOT_FOUND = { data: null, error: { status: 404, name: 'NotFoundError', message: 'Role not found', details: {} } }
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
    ...options,
    urls: { resetPassword: 'https://app.example.com/reset-password', ...options.urls as Record<string, string> | undefined }
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
  const storedHash = async (): Promise<string> => (await app.contentApi.db.selectFrom('up_users').select('password').where('id', '=', migrated.id).executeTakeFirstOrThrow()).password
  t.strictSame((await login('migrated', 'wrong-password')).json, INVALID_LOGIN, 'a wrong password against a bcrypt hash')
  t.match(await storedHash(), /^\$2[aby]\$10\$/, 'a failed sign-in leaves the bcrypt hash')
  t.equal((await login('migrated', PASSWORD)).status, 200, 'a Strapi bcrypt hash verifies')
  const rehashed = await storedHash()
  t.match(rehashed, /^\$scrypt\$n=32768,r=8,p=1\$/, 'and is replaced by a scrypt hash in the same request')
  t.equal((await login('migrated', PASSWORD)).status, 200, 'the password still works')
  t.equal(await storedHash(), rehashed, 'a scrypt hash is not re-hashed')
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
    const unreadable = await call('GET', populate, undefined, auth)
    t.equal(unreadable.status, 200, 'populating roles needs role.find: without it, left out (Strapi sanitises the users routes\' query)')
    t.notOk('role' in unreadable.json[0])
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
    t.strictSame((await call('PUT', '/api/users/9999', { username: 'ghost' }, auth)).json, USER_NOT_FOUND)
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
    t.strictSame((await call('PUT', `/api/users/${bob!.id}`, { blocked: true }, auth)).json, USER_NOT_FOUND, 'update of another user: as for one that does not exist')
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
  const notAUser = error(400, 'ApplicationError', 'You must be authenticated to reset your password')
  const full = await app.contentApi.apiTokens.create({ name: 'cp-full', type: 'full-access' })
  t.strictSame((await call('POST', '/api/auth/change-password', body, bearer(full.accessKey))).json, notAUser, 'a full-access token holds the action, but is no user')
  const custom = await app.contentApi.apiTokens.create({ name: 'cp-custom', type: 'custom', permissions: [`${UP}.auth.changePassword`] })
  t.strictSame((await call('POST', '/api/auth/change-password', body, bearer(custom.accessKey))).json, notAUser, 'nor is a custom token that lists it')
  const readOnly = await app.contentApi.apiTokens.create({ name: 'cp-read', type: 'read-only' })
  t.strictSame((await call('POST', '/api/auth/change-password', body, bearer(readOnly.accessKey))).json, FORBIDDEN, 'a read-only token lacks the action')
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

t.test('change-password finds the caller by id, not by username', async (t) => {
  // One user's email is another's username: a lookup by username would find the first user.
  const first = await users.create({ data: { username: 'cp_first', email: 'cp.shared@example.com', provider: 'local', password: 'FirstPass1!', confirmed: true } })
  // Registration refuses such a username now; users written directly (or before) may have one.
  const role = await app.contentApi.documents(`${UP}.role`).findFirst({ filters: { type: 'authenticated' } })
  const second = await users.create({ data: { username: 'cp.shared@example.com', email: 'cp.second@example.com', provider: 'local', password: PASSWORD, confirmed: true, role: role!.documentId } })
  t.ok(first.id < second.id)
  const { jwt } = (await login('cp.second@example.com', PASSWORD)).json
  const changed = await call('POST', '/api/auth/change-password', { currentPassword: PASSWORD, password: 'SecondNew1!', passwordConfirmation: 'SecondNew1!' }, bearer(jwt))
  t.equal(changed.status, 200, 'the current password is checked against the caller\'s own')
  t.equal(changed.json.user.id, second.id)
  t.equal((await login('cp.second@example.com', 'SecondNew1!')).status, 200, 'the caller\'s password changed')
  t.equal((await login('cp_first', 'FirstPass1!')).status, 200, 'the other user\'s did not')
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

  const resent = await call('POST', '/api/auth/send-email-confirmation', { email: 'GINA@Example.com' })
  t.strictSame(resent.json, { email: 'gina@example.com', sent: true }, 'the stored email, found case-insensitively')
  t.equal(mail.length, 2, 'sent again')
  const second = /confirmation=([0-9a-f]+)/.exec(mail[1].text)![1]
  t.not(second, code, 'with a new code')
  t.strictSame((await call('GET', `/api/auth/email-confirmation?confirmation=${code}`)).json, error(400, 'ValidationError', 'Invalid token'), 'the first code was replaced')

  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', { email: 'Nobody@Example.com' })).json, { email: 'Nobody@Example.com', sent: true }, 'an unknown address: as sent')
  t.equal(mail.length, 2, 'gets nothing')
  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', {})).json, required('email'))

  t.strictSame((await call('GET', '/api/auth/email-confirmation')).json, error(400, 'ValidationError', 'confirmation is a required field'))
  t.strictSame((await call('GET', '/api/auth/email-confirmation?confirmation=nope')).json, error(400, 'ValidationError', 'Invalid token'))

  const confirmed = await call('GET', `/api/auth/email-confirmation?confirmation=${second}`)
  t.equal(confirmed.status, 302, 'without a redirect URL: a redirect to /, as Strapi\'s')
  t.equal(confirmed.headers.location, '/')
  t.equal((await app.contentApi.documents(USER).findFirst({ filters: { username: 'gina' } }))?.confirmed, true)
  t.strictSame((await call('GET', `/api/auth/email-confirmation?confirmation=${second}`)).json, error(400, 'ValidationError', 'Invalid token'), 'a code works once')
  t.equal((await call('POST', '/api/auth/local', { identifier: 'gina', password: PASSWORD })).status, 200, 'signs in once confirmed')
  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', { email: 'gina@example.com' })).json, error(400, 'ApplicationError', 'Already confirmed'))

  const hank = await call('POST', '/api/auth/local/register', { username: 'hank', email: 'hank@example.com', password: PASSWORD })
  await app.contentApi.documents(USER).update({ documentId: hank.json.user.documentId, data: { blocked: true } })
  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', { email: 'hank@example.com' })).json, error(400, 'ApplicationError', 'User blocked'))
  const gina = await app.contentApi.documents(USER).findFirst({ filters: { username: 'gina' } })
  await app.contentApi.documents(USER).update({ documentId: gina!.documentId, data: { blocked: true } })
  t.strictSame((await call('POST', '/api/auth/send-email-confirmation', { email: 'gina@example.com' })).json, error(400, 'ApplicationError', 'Already confirmed'),
    'confirmed is checked before blocked')
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

const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: false },
  attributes: { title: { type: 'string' } }
})

t.test('roles', async (t) => {
  const { app, call } = await buildApp({}, { models: [article] })
  const { permissions } = app.contentApi
  const ROLES = '/api/users-permissions/roles'
  const routes: Array<[Method, string, unknown?]> = [
    ['GET', ROLES], ['GET', `${ROLES}/1`], ['POST', ROLES, { name: 'Nobody' }], ['PUT', `${ROLES}/2`, { name: 'Renamed' }],
    ['DELETE', `${ROLES}/2`], ['GET', '/api/users-permissions/permissions']
  ]
  const signUp = async (username: string): Promise<{ jwt: string, user: Record<string, any> }> =>
    (await call('POST', '/api/auth/local/register', { username, email: `${username}@example.com`, password: PASSWORD })).json
  const sam = await signUp('sam')
  await signUp('tess')

  t.test('none of the actions is granted by default', async (t) => {
    const readOnly = await app.contentApi.apiTokens.create({ name: 'roles-read', type: 'read-only' })
    for (const [method, url, payload] of routes) {
      t.strictSame((await call(method, url, payload)).json, FORBIDDEN, `public: ${method} ${url}`)
      t.strictSame((await call(method, url, payload, bearer(sam.jwt))).json, FORBIDDEN, `authenticated: ${method} ${url}`)
      const expected = method === 'GET' && url !== '/api/users-permissions/permissions' ? 200 : 403
      t.equal((await call(method, url, payload, bearer(readOnly.accessKey))).status, expected, `read-only token: ${method} ${url}`)
    }
    t.strictSame((await permissions.listRoles()).map((r) => r.name), ['Public', 'Authenticated'], 'nothing was created, renamed or deleted')
  })

  const admin = bearer((await app.contentApi.apiTokens.create({ name: 'roles-admin', type: 'full-access' })).accessKey)
  const roleByType = async (type: string): Promise<Record<string, any>> =>
    (await call('GET', ROLES, undefined, admin)).json.roles.find((r: { type: string }) => r.type === type)

  t.test('GET /roles: sorted by name, with nb_users', async (t) => {
    const list = await call('GET', ROLES, undefined, admin)
    t.equal(list.status, 200)
    t.strictSame(Object.keys(list.json), ['roles'])
    t.strictSame(list.json.roles.map((r: Record<string, unknown>) => [r.name, r.type, r.nb_users]), [['Authenticated', 'authenticated', 2], ['Public', 'public', 0]])
    t.strictSame(Object.keys(list.json.roles[0]).sort(), ['createdAt', 'description', 'documentId', 'id', 'name', 'nb_users', 'publishedAt', 'type', 'updatedAt'])
  })

  t.test('GET /roles/:id: the role with its permission tree', async (t) => {
    const authenticated = await roleByType('authenticated')
    const one = await call('GET', `${ROLES}/${authenticated.id as number}`, undefined, admin)
    t.equal(one.status, 200)
    t.strictSame(Object.keys(one.json), ['role'])
    const { permissions: tree, ...role } = one.json.role
    t.strictSame(role, (({ nb_users: _, ...rest }) => rest)(authenticated), 'the role')
    t.strictSame(tree['plugin::users-permissions'].controllers.user.me, { enabled: true, policy: '' }, 'a grant of the role: plugin::users-permissions.user.me')
    t.strictSame(tree['plugin::users-permissions'].controllers.auth.changePassword, { enabled: true, policy: '' })
    t.strictSame(tree['plugin::users-permissions'].controllers.user.find, { enabled: false, policy: '' }, 'a known action it lacks')
    t.strictSame(tree['api::article'].controllers.article, Object.fromEntries(['find', 'findOne', 'findDrafts', 'create', 'update', 'delete'].map((a) => [a, { enabled: false, policy: '' }])),
      'api::article.article.<action> as type, controller, action')
    t.strictSame(Object.keys(tree['plugin::users-permissions'].controllers).sort(), ['auth', 'permissions', 'role', 'user'])
    const publicRole = (await call('GET', `${ROLES}/${(await roleByType('public')).id as number}`, undefined, admin)).json.role
    t.strictSame(publicRole.permissions['plugin::users-permissions'].controllers.auth.register, { enabled: true, policy: '' })
    t.strictSame(publicRole.permissions['plugin::users-permissions'].controllers.auth.connect, { enabled: true, policy: '' },
      'a grant without a route (Strapi\'s default auth.connect) is listed too')
    t.strictSame((await call('GET', `${ROLES}/999`, undefined, admin)).json, ROLE_NOT_FOUND)
    t.strictSame((await call('GET', `${ROLES}/abc`, undefined, admin)).json, ROLE_NOT_FOUND)
  })

  t.test('GET /users-permissions/permissions: every action, none enabled', async (t) => {
    const res = await call('GET', '/api/users-permissions/permissions', undefined, admin)
    t.equal(res.status, 200)
    t.strictSame(Object.keys(res.json), ['permissions'])
    const actions: string[] = []
    for (const [type, { controllers }] of Object.entries(res.json.permissions as Record<string, { controllers: Record<string, Record<string, { enabled: boolean }>> }>)) {
      for (const [controller, entries] of Object.entries(controllers)) {
        for (const [action, entry] of Object.entries(entries)) {
          actions.push(`${type}.${controller}.${action}`)
          if (entry.enabled) t.fail(`${type}.${controller}.${action} is enabled`)
        }
      }
    }
    for (const action of ['api::article.article.find', `${UP}.user.me`, `${UP}.role.createRole`, `${UP}.permissions.getPermissions`, 'plugin::upload.content-api.upload', 'plugin::i18n.locales.listLocales']) {
      t.ok(actions.includes(action), action)
    }
    t.notOk(actions.includes(`${UP}.auth.connect`), 'only actions that exist')
    // The same set a custom API token may list.
    t.equal((await app.contentApi.apiTokens.create({ name: 'every-action', type: 'custom', permissions: actions })).permissions.length, actions.length)
  })

  const articles = app.contentApi.documents('api::article.article')
  const post = await articles.create({ data: { title: 'Hello' } })
  const editorTree = (enabled: string[]): Record<string, unknown> => ({
    'api::article': { controllers: { article: Object.fromEntries(['find', 'create', 'update', 'delete'].map((a) => [a, { enabled: enabled.includes(a), policy: '' }])) } }
  })
  const actionsOf = async (type: string): Promise<string[]> => [...(await permissions.forRole(type)).keys()].sort()
  const status = async (method: Method, url: string, payload?: unknown): Promise<number> => (await call(method, url, payload, bearer(sam.jwt))).status

  t.test('POST /roles', async (t) => {
    t.strictSame((await call('POST', ROLES, {}, admin)).json, error(400, 'ValidationError', 'Request body cannot be empty'))
    t.strictSame((await call('POST', ROLES, undefined, admin)).json, error(400, 'ValidationError', 'Request body cannot be empty'), 'no body')
    t.strictSame((await call('POST', ROLES, { name: 'Broken', permissions: 5 }, admin)).json,
      error(400, 'ValidationError', 'Invalid permissions: permissions must be an object', { path: 'permissions' }))
    t.strictSame((await call('POST', ROLES, { name: 'Broken', permissions: { 'api::article': { controllers: { article: { find: true } } } } }, admin)).json,
      error(400, 'ValidationError', 'Invalid permissions: permissions.api::article.controllers.article.find must be an object', { path: 'permissions.api::article.controllers.article.find' }))
    t.equal((await call('POST', ROLES, { description: 'no name' }, admin)).status, 400, 'a name is required')
    t.strictSame((await permissions.listRoles()).map((r) => r.type), ['public', 'authenticated'], 'nothing was created')

    const created = await call('POST', ROLES, { name: 'Content Editor', description: 'Edits articles', permissions: editorTree(['find', 'update']) }, admin)
    t.equal(created.status, 200)
    t.strictSame(created.json, { ok: true })
    const editor = await roleByType('content_editor')
    t.match(editor, { name: 'Content Editor', description: 'Edits articles', nb_users: 0 }, 'type: the snake_case of the name')
    t.strictSame(await actionsOf('content_editor'), ['api::article.article.find', 'api::article.article.update'], 'the enabled actions, no others')

    t.equal((await call('POST', ROLES, { name: 'Content Editor' }, admin)).json.error.name, 'ValidationError', 'a type that exists is refused')
    t.equal((await call('POST', ROLES, { name: 'Writers', type: 'writer' }, admin)).status, 200, 'a type given')
    t.equal((await call('POST', ROLES, { name: 'Éditeur 2' }, admin)).status, 200)
    t.strictSame((await permissions.listRoles()).map((r) => r.type), ['public', 'authenticated', 'content_editor', 'writer', 'editeur_2'])

    await app.contentApi.documents(USER).update({ documentId: sam.user.documentId, data: { role: editor.documentId } })
    t.equal(await status('GET', '/api/articles'), 200, 'a user of the role holds its actions')
    t.equal(await status('PUT', `/api/articles/${post.documentId}`, { data: { title: 'Edited' } }), 200)
    t.equal(await status('DELETE', `/api/articles/${post.documentId}`), 403, 'and only those')
    t.equal((await roleByType('content_editor')).nb_users, 1)
  })

  t.test('PUT /roles/:role', async (t) => {
    const editor = await roleByType('content_editor')
    const url = `${ROLES}/${editor.id as number}`
    t.strictSame((await call('PUT', url, {}, admin)).json, error(400, 'ValidationError', 'Request body cannot be empty'))
    t.strictSame((await call('PUT', `${ROLES}/999`, { name: 'Ghost' }, admin)).json, ROLE_NOT_FOUND)
    t.equal((await call('PUT', url, { permissions: [] }, admin)).status, 400, 'a tree that is not one')

    // A grant's row and field limits survive an update that keeps it enabled.
    await permissions.grant('content_editor', ['api::article.article.find'], { fields: ['title'] })
    const updated = await call('PUT', url, { name: 'Content Editors', description: 'Writes articles', type: 'ignored', permissions: editorTree(['find', 'create']) }, admin)
    t.strictSame(updated.json, { ok: true })
    t.match(await roleByType('content_editor'), { name: 'Content Editors', description: 'Writes articles' }, 'name and description; the type stays')
    t.strictSame(await actionsOf('content_editor'), ['api::article.article.create', 'api::article.article.find'], 'exactly the enabled actions')
    t.strictSame((await permissions.forRole('content_editor')).get('api::article.article.find')?.fields, ['title'], 'the kept grant keeps its fields')
    t.equal(await status('PUT', `/api/articles/${post.documentId}`, { data: { title: 'Again' } }), 403, 'at once: update was revoked')
    t.equal(await status('POST', '/api/articles', { data: { title: 'New' } }), 200, 'and create granted')

    t.strictSame((await call('PUT', url, { name: 'Editors' }, admin)).json, { ok: true })
    t.strictSame(await actionsOf('content_editor'), ['api::article.article.create', 'api::article.article.find'], 'without a tree the grants stay')
  })

  t.test('DELETE /roles/:role', async (t) => {
    const publicRole = await roleByType('public')
    t.strictSame((await call('DELETE', `${ROLES}/${publicRole.id as number}`, undefined, admin)).json, error(400, 'ApplicationError', 'Cannot delete public role'))
    t.strictSame((await call('DELETE', `${ROLES}/999`, undefined, admin)).json, ROLE_NOT_FOUND)

    await permissions.grant('public', ['api::article.article.delete'])
    t.equal(await status('DELETE', `/api/articles/${post.documentId}`), 403, 'the user is an editor, who may not delete')
    const editor = await roleByType('content_editor')
    t.strictSame((await call('DELETE', `${ROLES}/${editor.id as number}`, undefined, admin)).json, { ok: true })
    t.notOk((await permissions.listRoles()).some((r) => r.type === 'content_editor'), 'the role is gone')
    const moved = await app.contentApi.documents(USER).findFirst({ filters: { id: sam.user.id }, populate: { role: true } } as any)
    t.equal((moved?.role as { type: string }).type, 'public', 'its users moved to the public role, as in Strapi')
    t.equal((await roleByType('public')).nb_users, 1)
    t.equal(await status('DELETE', `/api/articles/${post.documentId}`), 204, 'at once: the user now holds the public role\'s grants')
    const left = await app.contentApi.db.selectFrom('up_permissions').select('action').where('action', 'like', 'api::article.%').execute()
    t.strictSame(left.map((row) => row.action), ['api::article.article.delete'], 'the role\'s grants were deleted, the public role\'s stay')
  })
})

t.test('users/me and users/:id take the query string as /users does', async (t) => {
  const { app, call } = await buildApp()
  const { permissions } = app.contentApi
  const nina = (await call('POST', '/api/auth/local/register', { username: 'nina', email: 'nina@example.com', password: PASSWORD })).json
  const auth = bearer(nina.jwt)
  const me = async (query: string) => await call('GET', `/api/users/me${query}`, undefined, auth)
  const invalid = (key: string) => ({ status: 400, name: 'ValidationError', message: `Invalid key ${key}` })

  t.strictSame(Object.keys((await me('?fields[0]=username')).json).sort(), ['documentId', 'id', 'username'], 'fields')
  t.strictSame(Object.keys((await me('?fields=email')).json).sort(), ['documentId', 'email', 'id'])
  t.match((await me('?fields[0]=password')).json.error, invalid('password'), 'the same 400s')
  t.match((await me('?fields[0]=nope')).json.error, invalid('nope'))
  const unreadable = await me('?populate=role')
  t.equal(unreadable.status, 200, 'populating the role needs role.find: without it the role is left out, as Strapi answers')
  t.notOk('role' in unreadable.json)
  t.notOk('role' in (await me('?populate=*')).json, 'populate=* leaves it out')

  await permissions.grant('authenticated', [`${UP}.role.find`])
  const withRole = await me('?populate=role')
  t.equal(withRole.status, 200)
  t.equal(withRole.json.role.type, 'authenticated', 'populate=role with role.find')
  t.strictSame(Object.keys((await me('?populate[role][fields][0]=name')).json.role).sort(), ['documentId', 'id', 'name'])
  t.equal((await me('?filters[username]=someone-else')).status, 404, 'filters narrow the read, as in Strapi\'s fetch(id, query)')

  await permissions.grant('authenticated', [`${UP}.user.findOne`])
  const url = `/api/users/${nina.user.id as number}`
  t.strictSame(Object.keys((await call('GET', `${url}?fields[0]=email`, undefined, auth)).json).sort(), ['documentId', 'email', 'id'], 'findOne: fields')
  t.equal((await call('GET', `${url}?populate=role`, undefined, auth)).json.role.type, 'authenticated', 'findOne: populate')
  t.match((await call('GET', `${url}?fields[0]=confirmationToken`, undefined, auth)).json.error, invalid('confirmationToken'))

  // The caller's field limits apply as on /users.
  await permissions.grant('authenticated', [`${UP}.user.me`], { fields: ['username'] })
  t.strictSame(Object.keys((await me('')).json).sort(), ['createdAt', 'documentId', 'id', 'publishedAt', 'updatedAt', 'username'], 'a field-limited grant')
  t.match((await me('?fields[0]=email')).json.error, invalid('email'))
  await permissions.revoke('authenticated', [`${UP}.role.find`])
  t.notOk('role' in (await call('GET', `${url}?populate=role`, undefined, auth)).json, 'revoked: at once')
})

t.test('PUT and POST /users: Strapi\'s checks', async (t) => {
  const { app, call } = await buildApp()
  const users = app.contentApi.documents(USER)
  const admin = bearer((await app.contentApi.apiTokens.create({ name: 'users-admin', type: 'full-access' })).accessKey)
  const signUp = async (username: string) => (await call('POST', '/api/auth/local/register', { username, email: `${username}@example.com`, password: PASSWORD })).json.user
  const pat = await signUp('pat')
  await signUp('quinn')
  const octo = await users.create({ data: { username: 'octo', email: 'octo@example.com', provider: 'github' } })
  const put = async (id: number | string, body: unknown) => await call('PUT', `/api/users/${id}`, body, admin)
  const stored = async () => await app.contentApi.db.selectFrom('up_users').selectAll().where('id', '=', pat.id).executeTakeFirstOrThrow()
  const before = await stored()

  t.strictSame((await put(9999, { password: '' })).json, USER_NOT_FOUND, 'an unknown user first, whatever the body')
  t.strictSame((await put('abc', {})).json, USER_NOT_FOUND)
  t.strictSame((await put(pat.id, { password: '' })).json, error(400, 'ValidationError', 'password.notNull'), 'an empty password')
  t.strictSame((await put(pat.id, { password: null })).json, error(400, 'ValidationError', 'password.notNull'), 'a null password')
  t.strictSame((await put(pat.id, { password: 'é'.repeat(37) })).json, error(400, 'ValidationError', 'Password must be less than 73 bytes'))
  t.strictSame((await put(pat.id, { username: 'quinn' })).json, error(400, 'ApplicationError', 'Username already taken'))
  t.strictSame((await put(pat.id, { username: 'octo' })).json, error(400, 'ApplicationError', 'Username already taken'), 'by a user of another provider')
  t.strictSame((await put(pat.id, { email: 'QUINN@example.com' })).json, error(400, 'ApplicationError', 'Email already taken'), 'an email taken in another case')
  t.strictSame((await put(pat.id, { email: 'octo@example.com' })).json, error(400, 'ApplicationError', 'Email already taken'))
  for (const key of ['resetPasswordToken', 'confirmationToken']) {
    t.strictSame((await put(pat.id, { [key]: 'f'.repeat(64) })).json, error(400, 'ValidationError', `Invalid key ${key}`, { key, source: 'body' }),
      `${key} cannot be set: a caller could set a code it knows`)
    t.strictSame((await call('POST', '/api/users', { username: 'mallory', email: 'mallory@example.com', password: PASSWORD, [key]: 'f'.repeat(64) }, admin)).json,
      error(400, 'ValidationError', `Invalid key ${key}`, { key, source: 'body' }), `nor on POST: ${key}`)
  }
  t.strictSame(await stored(), before, 'none of those wrote anything')
  t.equal(await users.count({ filters: { username: 'mallory' } }), 0)

  t.equal((await put(pat.id, { username: 'pat' })).status, 200, 'one\'s own username')
  const moved = await put(pat.id, { email: 'Pat.New@Example.com' })
  t.equal(moved.status, 200)
  t.equal(moved.json.email, 'pat.new@example.com', 'the email is stored lower-cased')
  t.equal((await put(pat.id, { email: 'PAT.NEW@example.com' })).status, 200, 'one\'s own email in another case')
  t.equal((await put(pat.id, { password: 'a'.repeat(72) })).status, 200, '72 bytes')
  t.equal((await call('POST', '/api/auth/local', { identifier: 'pat', password: 'a'.repeat(72) })).status, 200, 'the new password works')
  t.equal((await put(octo.id, { password: null })).status, 200, 'a provider user may have no password')

  t.strictSame((await call('POST', '/api/users', { username: 'octo2', email: 'OCTO@example.com', password: PASSWORD }, admin)).json,
    error(400, 'ApplicationError', 'Email already taken'), 'POST: an email of any provider')
  t.strictSame((await call('POST', '/api/users', { username: 'octo', email: 'octo3@example.com', password: PASSWORD }, admin)).json,
    error(400, 'ApplicationError', 'Username already taken'), 'POST: a username of any provider')
  t.strictSame((await call('POST', '/api/users', { username: 'longpw', email: 'longpw@example.com', password: 'é'.repeat(37) }, admin)).json,
    error(400, 'ValidationError', 'Password must be less than 73 bytes'), 'POST: the password limit')
})

t.test('own-account updates: the condition picks the account, the fields what may change', async (t) => {
  const { app, call } = await buildApp()
  const { permissions } = app.contentApi
  const signUp = async (username: string) => (await call('POST', '/api/auth/local/register', { username, email: `${username}@example.com`, password: PASSWORD })).json
  const wes = await signUp('wes')
  const xena = await signUp('xena')
  const own = `/api/users/${wes.user.id as number}`
  const auth = bearer(wes.jwt)
  await permissions.grant('authenticated', [`${UP}.user.update`], { conditions: { id: { $eq: '$user.id' } } })
  t.strictSame((await call('PUT', `/api/users/${xena.user.id as number}`, { username: 'x' }, auth)).json, USER_NOT_FOUND, 'another account')
  const unsafe = await call('PUT', own, { provider: 'github', confirmed: false }, auth)
  t.equal(unsafe.status, 200, 'without fields, a user may write their own provider and confirmed (as docs/auth.md warns)')
  t.match(unsafe.json, { provider: 'github', confirmed: false })

  await permissions.grant('authenticated', [`${UP}.user.update`], { conditions: { id: { $eq: '$user.id' } }, fields: ['username', 'email', 'password'] })
  t.equal((await call('PUT', own, { username: 'wesley' }, auth)).status, 200, 'the listed fields')
  for (const key of ['role', 'confirmed', 'blocked', 'provider']) {
    t.match((await call('PUT', own, { [key]: key === 'role' ? 1 : key === 'provider' ? 'local' : true }, auth)).json.error, { status: 400, message: `Invalid key ${key}` }, `not ${key}`)
  }
  t.match(await app.contentApi.documents(USER).findFirst({ filters: { id: wes.user.id } }), { username: 'wesley', blocked: false, provider: 'github' }, 'nothing else was written')
})

t.test('POST /users under a field-limited grant: the server\'s own values are not the caller\'s writes', async (t) => {
  const { app, call } = await buildApp()
  const { permissions } = app.contentApi
  const yara = (await call('POST', '/api/auth/local/register', { username: 'yara', email: 'yara@example.com', password: PASSWORD })).json
  await permissions.grant('authenticated', [`${UP}.user.create`], { fields: ['username', 'email', 'password'] })
  await permissions.grant('authenticated', [`${UP}.user.find`])
  const created = await call('POST', '/api/users', { username: 'zed', email: 'zed@example.com', password: PASSWORD }, bearer(yara.jwt))
  t.equal(created.status, 201, 'provider, confirmed and the default role are set by the server, without role.find or a field grant')
  t.match(created.json, { username: 'zed', provider: 'local', confirmed: true })
  const stored = await app.contentApi.documents(USER).findFirst({ filters: { username: 'zed' }, populate: ['role'] })
  t.equal((stored!.role as { type: string }).type, 'authenticated', 'in the same write: the default role')
  t.match((await call('POST', '/api/users', { username: 'zoe', email: 'zoe@example.com', password: PASSWORD, confirmed: false }, bearer(yara.jwt))).json.error,
    { status: 400, message: 'Invalid key confirmed' }, 'what the caller sends is under its field limits')
  t.equal(await app.contentApi.documents(USER).count({ filters: { username: 'zoe' } }), 0)
})

t.test('register: taken by a user of any provider', async (t) => {
  const { app, call } = await buildApp()
  await app.contentApi.documents(USER).create({ data: { username: 'octo', email: 'octo@example.com', provider: 'github' } })
  const taken = error(400, 'ApplicationError', 'Email or Username are already taken')
  const attempt = async (username: string, email: string) => (await call('POST', '/api/auth/local/register', { username, email, password: PASSWORD })).json
  t.strictSame(await attempt('octo2', 'OCTO@example.com'), taken, 'the email of a GitHub user')
  t.strictSame(await attempt('octo', 'other@example.com'), taken, 'the username of a GitHub user')
  t.strictSame(await attempt('octo@example.com', 'third@example.com'), taken, 'a username that is another user\'s email')
  t.equal(await app.contentApi.documents(USER).count(), 1, 'nothing was created')
  t.equal((await call('POST', '/api/auth/local/register', { username: 'newbie', email: 'newbie@example.com', password: PASSWORD })).status, 200)
})

t.test('register: a confirmation email that cannot be sent', async (t) => {
  const lines: Array<{ level: number, msg: string, err?: { message: string } }> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    }
  })
  const database = await createTestDatabase()
  const app = Fastify({ logger: { level: 'error', stream }, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, {
    models: [],
    db: database.db,
    auth: {
      jwtSecret: 'test-jwt-secret-0123456789',
      apiTokenSalt: 'test-api-token-salt-0123456789',
      rateLimit: false,
      register: { emailConfirmation: true },
      email: { send: async () => { throw new Error('SMTP server unreachable') } },
      urls: { resetPassword: 'https://app.example.com/reset-password' }
    }
  })
  await app.ready()
  const call = client(app)
  const res = await call('POST', '/api/auth/local/register', { username: 'uma', email: 'uma@example.com', password: PASSWORD })
  t.strictSame(res.json, error(400, 'ApplicationError', 'Error sending confirmation email'))
  t.match(await app.contentApi.documents(USER).findFirst({ filters: { username: 'uma' } }), { email: 'uma@example.com', confirmed: false }, 'the user stays created, as in Strapi')
  t.ok(lines.some((line) => line.level === 50 && line.err?.message === 'SMTP server unreachable'), 'the error is logged')
  t.strictSame((await call('POST', '/api/auth/local/register', { username: 'uma', email: 'uma@example.com', password: PASSWORD })).json,
    error(400, 'ApplicationError', 'Email or Username are already taken'))
})

t.test('with email confirmation, the JWT of an unconfirmed user is refused', async (t) => {
  const { app, call, mail } = await buildApp({ register: { emailConfirmation: true } })
  const users = app.contentApi.documents(USER)
  const registered = (await call('POST', '/api/auth/local/register', { username: 'rita', email: 'rita@example.com', password: PASSWORD })).json
  const code = /confirmation=([0-9a-f]+)/.exec(mail[0].text)![1]
  await users.update({ documentId: registered.user.documentId, data: { confirmed: true } })
  const { jwt } = (await call('POST', '/api/auth/local', { identifier: 'rita', password: PASSWORD })).json
  t.equal((await call('GET', '/api/users/me', undefined, bearer(jwt))).status, 200, 'confirmed: accepted (and the caller remembered)')
  await users.update({ documentId: registered.user.documentId, data: { confirmed: false } })
  t.strictSame((await call('GET', '/api/users/me', undefined, bearer(jwt))).json, error(401, 'UnauthorizedError', 'Invalid credentials'),
    'unconfirmed: 401, as Strapi\'s strategy answers, although the credentials were cached')
  t.equal((await call('GET', '/api/users/me', undefined, bearer(jwt))).status, 401, 'again')
  t.equal((await call('GET', `/api/auth/email-confirmation?confirmation=${code}`)).status, 302)
  t.equal((await call('GET', '/api/users/me', undefined, bearer(jwt))).status, 200, 'confirmed through the link: accepted at once')

  const off = await buildApp()
  const olly = (await off.call('POST', '/api/auth/local/register', { username: 'olly', email: 'olly@example.com', password: PASSWORD })).json
  await off.app.contentApi.documents(USER).update({ documentId: olly.user.documentId, data: { confirmed: false } })
  t.equal((await off.call('GET', '/api/users/me', undefined, bearer(olly.jwt))).status, 200, 'without email confirmation, `confirmed` does not matter')
})

t.test('forgot-password matches the email only', async (t) => {
  const { call, mail } = await buildApp()
  await call('POST', '/api/auth/local/register', { username: 'vera.alias@example.com', email: 'Vera@Example.com', password: PASSWORD })
  t.strictSame((await call('POST', '/api/auth/forgot-password', { email: 'vera.alias@example.com' })).json, { ok: true })
  t.equal(mail.length, 0, 'a username, even one that looks like an email, finds nobody')
  t.strictSame((await call('POST', '/api/auth/forgot-password', { email: 'VERA@example.com' })).json, { ok: true })
  t.equal(mail.length, 1, 'the email, in any case')
  t.equal(mail[0].to, 'vera@example.com')
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
