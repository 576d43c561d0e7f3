import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import {
  ApplicationError, NotFoundError, RateLimitError, UnauthorizedError, ValidationError, type FieldError
} from '../errors.js'
import type { DocumentService } from '../documents/service.js'
import { verifyPassword } from '../documents/password.js'
import type { EmailMessage, ResolvedOptions } from '../options.js'
import { parseQueryString } from '../query/index.js'
import type { AccessControl, AccessScope } from './access.js'
import type { Authenticator, AuthUser } from './authenticate.js'
import { ROLE_UID, USER_UID } from './models.js'
import type { UserStore } from './users.js'
import { checkLogin, registerUser } from './accounts.js'

export interface AuthRoutesOptions {
  access: AccessControl
  credentials: UserStore
  authenticator: Authenticator
  documents: (uid: string) => DocumentService
  options: ResolvedOptions['auth']
  locales: ResolvedOptions['i18n']
}

const UP = 'plugin::users-permissions'
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** yup's "x is a required field" for each missing string, as Strapi's auth validators answer. */
function requireStrings (body: unknown, keys: readonly string[]): Record<string, string> {
  const data = isPlainObject(body) ? body : {}
  const errors: FieldError[] = keys
    .filter((key) => typeof data[key] !== 'string' || data[key] === '')
    .map((key) => ({ path: [key], message: `${key} is a required field`, name: 'ValidationError' }))
  if (errors.length > 0) throw ValidationError.fromFieldErrors(errors)
  return data as Record<string, string>
}

const json = (reply: FastifyReply, status: number, body: unknown): FastifyReply =>
  reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body))

/**
 * Strapi's users-and-permissions routes under the content API prefix. Their answers are not
 * wrapped in `{ data }` (login and register answer `{ jwt, user }`, `/users` a bare array), as in
 * Strapi; errors use the usual envelope. Each route checks its permission through the same
 * access control as content routes; the public role holds the auth actions by default.
 */
export async function authRoutes (app: FastifyInstance, { access, credentials, authenticator, documents, options, locales }: AuthRoutesOptions): Promise<void> {
  const users = documents(USER_UID)
  const accounts = { credentials, documents, options }
  const limited = options.rateLimit === false ? {} : { rateLimit: { max: options.rateLimit.max, timeWindow: options.rateLimit.timeWindow } }
  if (options.rateLimit !== false) {
    await app.register(rateLimit, {
      global: false,
      // Per client and path, as Strapi keys its limiter.
      keyGenerator: (request) => `${request.ip}:${request.routeOptions.url ?? request.url}`,
      errorResponseBuilder: () => new RateLimitError()
    })
  }

  const guard = (action: string) => async (request: FastifyRequest): Promise<void> => {
    request.contentApiGrant = await access.check(request, { action: `${UP}.${action}` })
  }
  const route = (options: RouteOptions & { action: string, limit?: boolean }): void => {
    const { action, limit, ...rest } = options
    app.route({ ...rest, preHandler: guard(action), config: { ...(limit === true ? limited : {}) }, schema: { hide: true, ...rest.schema } })
  }

  async function userJson (id: number): Promise<Record<string, unknown>> {
    const user = await users.findFirst({ filters: { id } })
    if (user === null) throw new NotFoundError()
    return user
  }

  /**
   * The user named by the `:id` route parameter (users keep numeric ids in Strapi's routes), as
   * the caller's permission sees it: a row condition that excludes it makes it a 404.
   */
  async function userById (request: FastifyRequest): Promise<Record<string, unknown> & { id: number, documentId: string }> {
    const id = Number((request.params as { id: string }).id)
    const user = Number.isSafeInteger(id) ? await users.findFirst({ filters: { id }, access: scopeOf(request) }) : null
    if (user === null) throw new NotFoundError()
    return user
  }

  const scopeOf = (request: FastifyRequest): AccessScope | undefined => request.contentApiGrant?.scope

  async function currentUser (request: FastifyRequest): Promise<AuthUser> {
    const principal = await access.principal(request)
    if (principal.kind !== 'user') throw new UnauthorizedError()
    return principal.user
  }

  route({
    method: 'POST',
    url: '/auth/local',
    action: 'auth.callback',
    limit: true,
    handler: async (request, reply) => {
      const { identifier, password } = requireStrings(request.body, ['identifier', 'password'])
      const found = await checkLogin(accounts, identifier, password)
      return json(reply, 200, { jwt: authenticator.issue(found), user: await userJson(found.id) })
    }
  })

  route({
    method: 'POST',
    url: '/auth/local/register',
    action: 'auth.register',
    limit: true,
    handler: async (request, reply) => {
      if (!options.register.enabled) throw new ApplicationError('Register action is currently disabled')
      const body = isPlainObject(request.body) ? request.body : {}
      const allowed = new Set(['username', 'email', 'password', ...options.register.allowedFields])
      const extra = Object.keys(body).filter((key) => !allowed.has(key))
      if (extra.length > 0) throw new ValidationError(`Invalid parameters: ${extra.join(', ')}`)
      const { username, email, password } = requireStrings(body, ['username', 'email', 'password'])
      const confirmed = !options.register.emailConfirmation
      const created = await registerUser(accounts, { username, email, password, extra: body }, confirmed)
      if (!confirmed) {
        await sendConfirmation(request, created.id, email.toLowerCase())
        return json(reply, 200, { user: await userJson(created.id) })
      }
      return json(reply, 200, { jwt: authenticator.issue(created), user: await userJson(created.id) })
    }
  })

  route({
    method: 'GET',
    url: '/users/me',
    action: 'user.me',
    handler: async (request, reply) => json(reply, 200, await userJson((await currentUser(request)).id))
  })

  route({
    method: 'GET',
    url: '/users',
    action: 'user.find',
    handler: async (request, reply) => {
      const query = parseQueryString(request.url)
      return json(reply, 200, await users.findMany({ ...query, access: request.contentApiGrant!.scope } as any))
    }
  })

  route({
    method: 'GET',
    url: '/users/count',
    action: 'user.count',
    handler: async (request, reply) => json(reply, 200, await users.count({ filters: parseQueryString(request.url).filters as any, access: scopeOf(request) }))
  })

  route({
    method: 'GET',
    url: '/users/:id',
    action: 'user.findOne',
    handler: async (request, reply) => json(reply, 200, await userById(request))
  })

  route({
    method: 'POST',
    url: '/users',
    action: 'user.create',
    handler: async (request, reply) => {
      const body = isPlainObject(request.body) ? request.body : {}
      // Strapi's create-user rules: a password, a lower-cased email, unique email and username, the local provider.
      const { username, email } = requireStrings(body, ['username', 'email', 'password'])
      const lowered = email.toLowerCase()
      if (await credentials.findCredentials(lowered) !== null) throw new ApplicationError('Email already taken')
      if (await credentials.findCredentials(username) !== null) throw new ApplicationError('Username already taken')
      const role = body.role ?? (await documents(ROLE_UID).findFirst({ filters: { type: options.register.defaultRole } }))?.documentId
      const created = await users.create({ data: { confirmed: true, ...body, email: lowered, provider: 'local', role }, access: scopeOf(request) })
      return json(reply, 201, await userJson(created.id))
    }
  })

  route({
    method: 'PUT',
    url: '/users/:id',
    action: 'user.update',
    handler: async (request, reply) => {
      const existing = await userById(request)
      await users.update({ documentId: existing.documentId, data: isPlainObject(request.body) ? request.body : {}, access: scopeOf(request) })
      return json(reply, 200, await userJson(existing.id))
    }
  })

  route({
    method: 'DELETE',
    url: '/users/:id',
    action: 'user.destroy',
    handler: async (request, reply) => {
      const existing = await userById(request)
      await users.delete({ documentId: existing.documentId, access: scopeOf(request) })
      return json(reply, 200, existing)
    }
  })

  route({
    method: 'POST',
    url: '/auth/change-password',
    action: 'auth.changePassword',
    limit: true,
    handler: async (request, reply) => {
      const user = await currentUser(request)
      const { currentPassword, password, passwordConfirmation } = requireStrings(request.body, ['currentPassword', 'password', 'passwordConfirmation'])
      if (password !== passwordConfirmation) throw new ValidationError('Passwords do not match')
      const found = await credentials.findCredentials(user.username)
      if (found?.password == null || !(await verifyPassword(currentPassword, found.password))) {
        throw new ValidationError('The provided current password is invalid')
      }
      if (currentPassword === password) throw new ValidationError('Your new password must be different than your current password')
      await users.update({ documentId: user.documentId, data: { password } })
      return json(reply, 200, { jwt: authenticator.issue(user), user: await userJson(user.id) })
    }
  })

  /** Reset and confirmation codes are stored hashed: a leaked row cannot be replayed. */
  const digest = (code: string): string => createHash('sha256').update(code).digest('hex')

  async function send (message: Omit<EmailMessage, 'from'>): Promise<void> {
    if (options.email === undefined) return
    await options.email.send({ ...message, from: options.email.from })
  }

  /**
   * The confirmation link points at this API's confirmation route, which then redirects (as
   * Strapi's). Without `urls.server` the request's own Host header names the server, which the
   * client chooses: a proxy that does not pass it through unchecked keeps that safe.
   */
  async function sendConfirmation (request: FastifyRequest, id: number, email: string): Promise<void> {
    const code = randomBytes(20).toString('hex')
    await credentials.setSecret(id, 'confirmationToken', digest(code))
    const server = options.urls.server?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`
    const link = `${server}${app.prefix}/auth/email-confirmation?confirmation=${code}`
    await send({ to: email, subject: 'Account confirmation', text: `Confirm your account: ${link}`, html: `<p>Confirm your account: <a href="${link}">${link}</a></p>` })
  }

  route({
    method: 'POST',
    url: '/auth/forgot-password',
    action: 'auth.forgotPassword',
    limit: true,
    handler: async (request, reply) => {
      const { email } = requireStrings(request.body, ['email'])
      const found = await credentials.findCredentials(email.toLowerCase())
      // The same answer whether or not the address exists: no user enumeration.
      if (found !== null && !found.blocked && options.email !== undefined) {
        const code = randomBytes(64).toString('hex')
        await credentials.setSecret(found.id, 'resetPasswordToken', digest(code))
        const link = `${options.urls.resetPassword ?? ''}?code=${code}`
        await send({ to: found.email, subject: 'Reset password', text: `Reset your password: ${link}`, html: `<p>Reset your password: <a href="${link}">${link}</a></p>` })
      }
      return json(reply, 200, { ok: true })
    }
  })

  route({
    method: 'POST',
    url: '/auth/reset-password',
    action: 'auth.resetPassword',
    limit: true,
    handler: async (request, reply) => {
      const { code, password, passwordConfirmation } = requireStrings(request.body, ['code', 'password', 'passwordConfirmation'])
      if (password !== passwordConfirmation) throw new ValidationError('Passwords do not match')
      const found = await credentials.findBySecret('resetPasswordToken', digest(code))
      if (found === null) throw new ValidationError('Incorrect code provided')
      await users.update({ documentId: found.documentId, data: { password } })
      await credentials.setSecret(found.id, 'resetPasswordToken', null)
      return json(reply, 200, { jwt: authenticator.issue(found), user: await userJson(found.id) })
    }
  })

  route({
    method: 'GET',
    url: '/auth/email-confirmation',
    action: 'auth.emailConfirmation',
    handler: async (request, reply) => {
      const code = (request.query as { confirmation?: unknown }).confirmation
      if (typeof code !== 'string' || code === '') throw new ValidationError('confirmation is a required field')
      const found = await credentials.findBySecret('confirmationToken', digest(code))
      if (found === null) throw new ValidationError('Invalid token')
      await users.update({ documentId: found.documentId, data: { confirmed: true } })
      await credentials.setSecret(found.id, 'confirmationToken', null)
      const target = options.urls.emailConfirmationRedirect
      return target === undefined ? json(reply, 200, { jwt: authenticator.issue(found), user: await userJson(found.id) }) : reply.redirect(target)
    }
  })

  route({
    method: 'POST',
    url: '/auth/send-email-confirmation',
    action: 'auth.sendEmailConfirmation',
    limit: true,
    handler: async (request, reply) => {
      const { email } = requireStrings(request.body, ['email'])
      const found = await credentials.findCredentials(email.toLowerCase())
      if (found !== null && found.blocked) throw new ApplicationError('blocked.user')
      if (found !== null && found.confirmed) throw new ApplicationError('Already confirmed')
      if (found !== null) await sendConfirmation(request, found.id, found.email)
      return json(reply, 200, { email, sent: true })
    }
  })

  route({
    method: 'GET',
    url: '/users-permissions/roles',
    action: 'role.find',
    handler: async (_request, reply) => json(reply, 200, { roles: await documents(ROLE_UID).findMany({ sort: 'id' }) })
  })

  route({
    method: 'GET',
    url: '/users-permissions/roles/:id',
    action: 'role.findOne',
    handler: async (request, reply) => {
      const id = Number((request.params as { id: string }).id)
      const role = Number.isSafeInteger(id) ? await documents(ROLE_UID).findFirst({ filters: { id } }) : null
      if (role === null) throw new NotFoundError()
      return json(reply, 200, { role })
    }
  })

  app.route({
    method: 'GET',
    url: '/i18n/locales',
    schema: { hide: true },
    preHandler: async (request) => { request.contentApiGrant = await access.check(request, { action: 'plugin::i18n.locales.listLocales' }) },
    handler: async (_request, reply) => json(reply, 200, locales.locales.map((code, i) => ({
      id: i + 1, name: code, code, isDefault: code === locales.defaultLocale
    })))
  })
}
