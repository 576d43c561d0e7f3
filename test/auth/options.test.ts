import t from 'tap'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import contentApi, { ConfigurationError, type ContentApiOptions } from '../../lib/index.js'
import { createTestDatabase } from '../helpers/database.js'

/**
 * The auth options: production, and every NODE_ENV but development and test, refuses to start
 * without `auth.jwtSecret` and `auth.apiTokenSalt`; development and test start with generated
 * ones, stored in the database so that instances agree (test/schema/stored-secrets.test.ts), and
 * say so in the log. The email flows need what they send: a sender for confirmation, a reset
 * page for the reset link.
 */

const JWT_REQUIRED = 'auth.jwtSecret is required in production'
const SALT_REQUIRED = 'auth.apiTokenSalt is required in production'

/** Runs `fn` with NODE_ENV set, restoring the previous value (or its absence) afterwards. */
async function withNodeEnv<T> (value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const previous = process.env.NODE_ENV
  if (value === undefined) delete process.env.NODE_ENV
  else process.env.NODE_ENV = value
  try {
    return await fn()
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = previous
  }
}

/** An app on a fresh database whose warn-level log lines are collected in `logs`. */
async function start (t: { teardown: (fn: () => Promise<void>) => void }, auth: ContentApiOptions['auth']): Promise<{ app: FastifyInstance, logs: Array<{ level: number, msg: string }> }> {
  const database = await createTestDatabase()
  const logs: Array<{ level: number, msg: string }> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') logs.push(JSON.parse(line))
      done()
    }
  })
  const app = Fastify({ logger: { level: 'warn', stream }, pluginTimeout: 120_000 })
  t.teardown(async () => {
    await app.close()
    await database.drop()
  })
  await app.register(contentApi, { models: [], db: database.db, ...(auth === undefined ? {} : { auth }) })
  await app.ready()
  return { app, logs }
}

async function failure (auth: ContentApiOptions['auth'], env = 'production'): Promise<unknown> {
  return await withNodeEnv(env, async () => {
    const database = await createTestDatabase()
    const app = Fastify({ logger: false, pluginTimeout: 120_000 })
    try {
      await app.register(contentApi, { models: [], db: database.db, ...(auth === undefined ? {} : { auth }) })
      await app.ready()
      return null
    } catch (err) {
      return err
    } finally {
      await app.close().catch(() => {})
      await database.drop()
    }
  })
}

t.test('production: both secrets are required', async (t) => {
  const before = process.env.NODE_ENV
  const err = await failure(undefined)
  t.equal(process.env.NODE_ENV, before, 'NODE_ENV is restored')
  t.type(err, ConfigurationError, 'a ConfigurationError')
  const problems = (err as ConfigurationError).problems
  t.ok(problems.includes(JWT_REQUIRED), 'naming auth.jwtSecret')
  t.ok(problems.includes(SALT_REQUIRED), 'naming auth.apiTokenSalt')
  t.match((err as Error).message, JWT_REQUIRED, 'in the message too')
  t.match((err as Error).message, SALT_REQUIRED)
  t.equal((err as ConfigurationError).code, 'FCA_ERR_CONFIGURATION')

  const withoutSalt = await failure({ jwtSecret: 'production-jwt-secret-0123456789' }) as ConfigurationError
  t.type(withoutSalt, ConfigurationError)
  t.strictSame(withoutSalt.problems, [SALT_REQUIRED], 'only the missing one is named')
  const withoutJwt = await failure({ apiTokenSalt: 'production-api-token-salt-0123456789' }) as ConfigurationError
  t.strictSame(withoutJwt.problems, [JWT_REQUIRED])
  const other = await failure({ rateLimit: false }) as ConfigurationError
  t.strictSame([...other.problems].sort(), [SALT_REQUIRED, JWT_REQUIRED].sort(), 'other auth options do not stand in for the secrets')
})

t.test('any NODE_ENV but development and test: both secrets are required', async (t) => {
  for (const env of ['staging', 'Production', 'prod', 'qa']) {
    const err = await failure(undefined, env) as ConfigurationError
    t.type(err, ConfigurationError, `NODE_ENV=${env}: a ConfigurationError`)
    t.strictSame(err.problems, [
      `auth.jwtSecret is required when NODE_ENV is "${env}" (only development and test generate one)`,
      `auth.apiTokenSalt is required when NODE_ENV is "${env}" (only development and test generate one)`
    ])
  }
  const withJwt = await failure({ jwtSecret: 'staging-jwt-secret-0123456789' }, 'staging') as ConfigurationError
  t.strictSame(withJwt.problems, ['auth.apiTokenSalt is required when NODE_ENV is "staging" (only development and test generate one)'], 'only the missing one')
  const { app } = await withNodeEnv('staging', async () => await start(t, {
    jwtSecret: 'staging-jwt-secret-0123456789', apiTokenSalt: 'staging-api-token-salt-0123456789', rateLimit: false
  }))
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'stage', email: 'stage@example.com', password: 'Password123!' } })).statusCode, 200,
    'starts with both')
})

t.test('the email flows need what they send', async (t) => {
  const secrets = { jwtSecret: 'production-jwt-secret-0123456789', apiTokenSalt: 'production-api-token-salt-0123456789' }
  const noSender = await failure({ ...secrets, register: { emailConfirmation: true } }) as ConfigurationError
  t.type(noSender, ConfigurationError)
  t.strictSame(noSender.problems, ['auth.register.emailConfirmation needs auth.email.send'], 'email confirmation without a sender')
  const send = async (): Promise<void> => {}
  const noPage = await failure({ ...secrets, email: { send } }) as ConfigurationError
  t.strictSame(noPage.problems, ['auth.email needs auth.urls.resetPassword (the page the reset-password email links to)'], 'a sender without the reset page')
  const all = await failure({ register: { emailConfirmation: true }, jwtSecret: 'short' }) as ConfigurationError
  t.strictSame([...all.problems].sort(), [
    'auth.jwtSecret: must NOT have fewer than 16 characters', 'auth.register.emailConfirmation needs auth.email.send', SALT_REQUIRED
  ].sort(), 'listed with every other problem, in one error')
  const { app } = await withNodeEnv('development', async () => await start(t, {
    ...secrets, rateLimit: false, register: { emailConfirmation: true }, email: { send }, urls: { resetPassword: 'https://app.example.com/reset' }
  }))
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'mailed', email: 'mailed@example.com', password: 'Password123!' } })).statusCode, 200,
    'both given: starts')
})

t.test('production: starts with both secrets, without a warning', async (t) => {
  const { app, logs } = await withNodeEnv('production', async () => await start(t, {
    jwtSecret: 'production-jwt-secret-0123456789', apiTokenSalt: 'production-api-token-salt-0123456789', rateLimit: false
  }))
  t.strictSame(logs.filter((l) => l.msg.includes('auth.')), [], 'no warning about secrets')
  const register = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'prod', email: 'prod@example.com', password: 'Password123!' } })
  t.equal(register.statusCode, 200)
  const me = await app.inject({ method: 'GET', url: '/api/users/me', headers: { authorization: `Bearer ${JSON.parse(register.body).jwt as string}` } })
  t.equal(me.statusCode, 200)
})

t.test('secrets shorter than 16 characters are refused everywhere', async (t) => {
  const err = await withNodeEnv('development', async () => {
    try {
      await start(t, { jwtSecret: 'short', apiTokenSalt: 'short' })
      return null
    } catch (err) {
      return err
    }
  })
  t.type(err, ConfigurationError)
  t.equal((err as ConfigurationError).problems.length, 2)
  t.match((err as ConfigurationError).problems.join('\n'), /auth\.jwtSecret/)
  t.match((err as ConfigurationError).problems.join('\n'), /auth\.apiTokenSalt/)
})

t.test('development and test: start with secrets stored in the database, and a warning', async (t) => {
  for (const env of ['development', 'test', undefined]) {
    const { app, logs } = await withNodeEnv(env, async () => await start(t, { rateLimit: false }))
    const warnings = logs.filter((l) => l.level === 40 && l.msg.includes('stored in the database'))
    t.equal(warnings.length, 1, `NODE_ENV=${String(env)}: one warning`)
    t.match(warnings[0]?.msg, /auth\.jwtSecret/, 'naming auth.jwtSecret')
    t.match(warnings[0]?.msg, /auth\.apiTokenSalt/, 'and auth.apiTokenSalt')

    const register = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'dev', email: 'dev@example.com', password: 'Password123!' } })
    t.equal(register.statusCode, 200, 'auth works with the generated secrets')
    const jwt = JSON.parse(register.body).jwt as string
    t.equal((await app.inject({ method: 'GET', url: '/api/users/me', headers: { authorization: `Bearer ${jwt}` } })).statusCode, 200)
    const token = await app.contentApi.apiTokens.create({ name: 'dev', type: 'full-access' })
    t.equal((await app.inject({ method: 'GET', url: '/api/users', headers: { authorization: `Bearer ${token.accessKey}` } })).statusCode, 200)
  }

  const { logs } = await withNodeEnv('development', async () => await start(t, { jwtSecret: 'development-jwt-secret-0123456789', rateLimit: false }))
  const warning = logs.find((l) => l.msg.includes('stored in the database'))
  t.match(warning?.msg, /auth\.apiTokenSalt/, 'one missing secret: named')
  t.notMatch(warning?.msg, /auth\.jwtSecret/, 'the given one is not')
})

t.test('development: each database has its own secrets', async (t) => {
  const first = await withNodeEnv('development', async () => await start(t, { rateLimit: false }))
  const second = await withNodeEnv('development', async () => await start(t, { rateLimit: false }))
  const register = await first.app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'one', email: 'one@example.com', password: 'Password123!' } })
  const jwt = JSON.parse(register.body).jwt as string
  await second.app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username: 'one', email: 'one@example.com', password: 'Password123!' } })
  const me = await second.app.inject({ method: 'GET', url: '/api/users/me', headers: { authorization: `Bearer ${jwt}` } })
  t.equal(me.statusCode, 401, 'a JWT of one database is not valid on another (the same user id exists in both)')
})
