import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import {
  ApplicationError, NotFoundError, RateLimitError, UnauthorizedError, ValidationError, type FieldError
} from '../errors.js'
import type { DocumentService, QueryParams } from '../documents/service.js'
import { verifyPassword } from '../documents/password.js'
import type { EmailMessage, ResolvedOptions } from '../options.js'
import { parseQueryString, type RequestLimits } from '../query/index.js'
import { documented } from '../route-schema.js'
import type { AccessControl } from './access.js'
import type { AccessScope } from '../query/access-scope.js'
import { enabledActions } from './actions.js'
import type { Authenticator, AuthUser } from './authenticate.js'
import { ROLE_UID, USER_UID } from '../model/users-permissions.js'
import type { PermissionStore } from './permissions.js'
import type { UserStore } from './users.js'
import { checkLogin, checkPasswordBytes, registerUser } from './accounts.js'

export interface AuthRoutesOptions {
  access: AccessControl
  credentials: UserStore
  authenticator: Authenticator
  documents: (uid: string) => DocumentService
  permissions: PermissionStore
  options: ResolvedOptions['auth']
  locales: ResolvedOptions['i18n']
  /** The bounds on a request's work, as for content routes. */
  limits: RequestLimits
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

/**
 * A role's type from its name when none is given, as Strapi's `snakeCase(deburr(toLower(name)))`:
 * `'Content Editor'` is `content_editor`, `'Éditeur 2'` is `editeur_2`.
 */
export function roleType (name: string): string {
  return (name.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').match(/[a-z]+|[0-9]+/g) ?? []).join('_')
}

const json = (reply: FastifyReply, status: number, body: unknown): FastifyReply =>
  reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body))

/**
 * Strapi's users-and-permissions routes under the content API prefix. Their answers are not
 * wrapped in `{ data }` (login and register answer `{ jwt, user }`, `/users` a bare array), as in
 * Strapi; errors use the usual envelope. Each route checks its permission through the same
 * access control as content routes; the public role holds the auth actions by default.
 */
export async function authRoutes (app: FastifyInstance, { access, credentials, authenticator, documents, permissions, options, locales, limits }: AuthRoutesOptions): Promise<void> {
  const users = documents(USER_UID)
  const roles = documents(ROLE_UID)
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
    app.route({ ...rest, preHandler: guard(action), config: { ...(limit === true ? limited : {}) }, schema: documented({ hide: true, ...rest.schema }) })
  }

  async function userJson (id: number): Promise<Record<string, unknown>> {
    const user = await users.findFirst({ filters: { id } })
    if (user === null) throw new NotFoundError()
    return user
  }

  /** A numeric id route parameter (users and roles keep numeric ids in Strapi's routes), or null. */
  const idParam = (request: FastifyRequest, name = 'id'): number | null => {
    const id = Number((request.params as Record<string, string>)[name])
    return Number.isSafeInteger(id) ? id : null
  }

  /**
   * The user named by the `:id` route parameter, as the caller's permission sees it: a row
   * condition that excludes it makes it a 404, as for a user that does not exist.
   */
  async function userById (request: FastifyRequest, message?: string): Promise<Record<string, unknown> & { id: number, documentId: string }> {
    const id = idParam(request)
    const user = id === null ? null : await users.findFirst({ filters: { id }, access: scopeOf(request) })
    if (user === null) throw new NotFoundError(message)
    return user
  }

  const scopeOf = (request: FastifyRequest): AccessScope | undefined => request.contentApiGrant?.scope

  /**
   * The read of `GET /users`, `/users/:id` and `/users/me`: the request's query string (`fields`,
   * `populate`, `filters`, `sort`, pagination) under the caller's row and field limits, validated
   * by the document service with its usual 400s, narrowed to one user when `id` is given (as
   * Strapi's `fetch(id, query)` ANDs the id into the query's filters).
   */
  function usersQuery (request: FastifyRequest, id?: number): QueryParams {
    const query = parseQueryString(request.url, limits) as QueryParams
    // As Strapi's users controllers sanitise their query: a relation the caller may not read is
    // left out of the answer (`/users/me?populate=role` without role.find), not a 400.
    const read = { access: scopeOf(request), omitUnreadable: true, limits: true }
    if (id === undefined) return { ...query, ...read }
    return { ...query, filters: query.filters === undefined ? { id } : { $and: [query.filters, { id }] }, ...read }
  }

  /**
   * Strapi's body rules for `POST` and `PUT /users`: private attributes (the reset and
   * confirmation codes) are not writable, or a caller could set a code it knows and use it; a
   * password fits in 72 bytes; a lower-cased email; email and username not another user's.
   */
  async function checkUserBody (body: Record<string, unknown>, exceptId?: number): Promise<Record<string, unknown>> {
    for (const key of Object.keys(body)) {
      if (users.model.attributes[key]?.private === true) throw ValidationError.invalidKey(key, { source: 'body' })
    }
    if (typeof body.password === 'string') checkPasswordBytes(body.password)
    if (typeof body.username === 'string' && await credentials.isTaken({ usernames: [body.username] }, exceptId)) {
      throw new ApplicationError('Username already taken')
    }
    if (typeof body.email !== 'string') return body
    if (await credentials.isTaken({ emails: [body.email] }, exceptId)) throw new ApplicationError('Email already taken')
    return { ...body, email: body.email.toLowerCase() }
  }

  /** One user read with the request's query string (`/users/me`, `/users/:id`), or 404. */
  async function readUser (request: FastifyRequest, id: number | null): Promise<unknown> {
    const user = id === null ? null : await users.findFirst(usersQuery(request, id))
    if (user === null) throw new NotFoundError()
    return user
  }

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
        try {
          await sendConfirmation(request, created.id, email.toLowerCase())
        } catch (err) {
          // The user stays created, as in Strapi: send-email-confirmation can try again.
          request.log.error({ err }, 'fastify-content-api: sending the confirmation email failed')
          throw new ApplicationError('Error sending confirmation email')
        }
        return json(reply, 200, { user: await userJson(created.id) })
      }
      return json(reply, 200, { jwt: authenticator.issue(created), user: await userJson(created.id) })
    }
  })

  route({
    method: 'GET',
    url: '/users/me',
    action: 'user.me',
    handler: async (request, reply) => json(reply, 200, await readUser(request, (await currentUser(request)).id))
  })

  route({
    method: 'GET',
    url: '/users',
    action: 'user.find',
    handler: async (request, reply) => json(reply, 200, await users.findMany(usersQuery(request)))
  })

  route({
    method: 'GET',
    url: '/users/count',
    action: 'user.count',
    handler: async (request, reply) => json(reply, 200, await users.count({ filters: parseQueryString(request.url, limits).filters as any, access: scopeOf(request), limits: true }))
  })

  route({
    method: 'GET',
    url: '/users/:id',
    action: 'user.findOne',
    handler: async (request, reply) => json(reply, 200, await readUser(request, idParam(request)))
  })

  route({
    method: 'POST',
    url: '/users',
    action: 'user.create',
    handler: async (request, reply) => {
      // Strapi's create-user rules: a password, a lower-cased email, unique email and username, the local provider.
      requireStrings(request.body, ['username', 'email', 'password'])
      const body = await checkUserBody(request.body as Record<string, unknown>)
      // The server's choices, not the caller's writes: they need neither a field grant nor role.find.
      const trusted: Record<string, unknown> = { provider: 'local' }
      if (body.confirmed === undefined) trusted.confirmed = true
      if (body.role === undefined) {
        const role = await roles.findFirst({ filters: { type: options.register.defaultRole } })
        if (role !== null) trusted.role = role.documentId
      }
      const created = await users.create({ data: body, trusted, access: scopeOf(request), limits: true })
      return json(reply, 201, await userJson(created.id))
    }
  })

  route({
    method: 'PUT',
    url: '/users/:id',
    action: 'user.update',
    handler: async (request, reply) => {
      // Strapi's order: an unknown user first, then the body.
      const existing = await userById(request, 'User not found')
      const body = isPlainObject(request.body) ? request.body : {}
      if (Object.hasOwn(body, 'password') && (body.password === null || body.password === '')) {
        // Read apart from the caller's field limits, which may hide `provider`.
        const { provider } = (await users.findFirst({ filters: { id: existing.id }, fields: ['provider'] }))!
        if (provider === 'local' || provider == null) throw new ValidationError('password.notNull')
      }
      const data = await checkUserBody(body, existing.id)
      await users.update({ documentId: existing.documentId, data, access: scopeOf(request), limits: true })
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
      // An API token that holds the action gets here: it is no user, as Strapi answers.
      const principal = await access.principal(request)
      if (principal.kind !== 'user') throw new ApplicationError('You must be authenticated to reset your password')
      const { user } = principal
      const { currentPassword, password, passwordConfirmation } = requireStrings(request.body, ['currentPassword', 'password', 'passwordConfirmation'])
      if (password !== passwordConfirmation) throw new ValidationError('Passwords do not match')
      const found = await credentials.findById(user.id)
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
      const found = await credentials.findByEmail(email)
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
      return reply.redirect(options.urls.emailConfirmationRedirect ?? '/')
    }
  })

  route({
    method: 'POST',
    url: '/auth/send-email-confirmation',
    action: 'auth.sendEmailConfirmation',
    limit: true,
    handler: async (request, reply) => {
      const { email } = requireStrings(request.body, ['email'])
      const found = await credentials.findByEmail(email)
      if (found === null) return json(reply, 200, { email, sent: true })
      if (found.confirmed) throw new ApplicationError('Already confirmed')
      if (found.blocked) throw new ApplicationError('User blocked')
      await sendConfirmation(request, found.id, found.email)
      return json(reply, 200, { email: found.email, sent: true })
    }
  })

  /** The role named by a route parameter, or Strapi's 404. */
  async function roleById (request: FastifyRequest, name: string): Promise<Record<string, unknown> & { id: number, documentId: string, type: string }> {
    const id = idParam(request, name)
    const role = id === null ? null : await roles.findFirst({ filters: { id } })
    if (role === null) throw new NotFoundError('Role not found')
    return role as Record<string, unknown> & { id: number, documentId: string, type: string }
  }

  const nonEmptyBody = (body: unknown): Record<string, unknown> => {
    if (!isPlainObject(body) || Object.keys(body).length === 0) throw new ValidationError('Request body cannot be empty')
    return body
  }

  route({
    method: 'GET',
    url: '/users-permissions/roles',
    action: 'role.find',
    handler: async (_request, reply) => {
      const counts = await permissions.userCounts()
      const list = await roles.findMany({ sort: ['name', 'id'] })
      return json(reply, 200, { roles: list.map((role) => ({ ...role, nb_users: counts.get(role.id) ?? 0 })) })
    }
  })

  route({
    method: 'GET',
    url: '/users-permissions/roles/:id',
    action: 'role.findOne',
    handler: async (request, reply) => {
      const role = await roleById(request, 'id')
      return json(reply, 200, { role: { ...role, permissions: await permissions.tree(role.type) } })
    }
  })

  route({
    method: 'POST',
    url: '/users-permissions/roles',
    action: 'role.createRole',
    handler: async (request, reply) => {
      const body = nonEmptyBody(request.body)
      // The tree is checked before the role exists, so a bad tree creates nothing.
      const actions = body.permissions === undefined ? [] : enabledActions(body.permissions)
      const type = body.type ?? (typeof body.name === 'string' ? roleType(body.name) : undefined)
      // Grants are keyed by the role's type: a role must have one.
      if (type !== undefined && (typeof type !== 'string' || type === '')) {
        throw ValidationError.fromFieldErrors([{ path: ['type'], message: 'type must be a non-empty string', name: 'ValidationError', value: type }])
      }
      const data = Object.fromEntries(Object.entries({ name: body.name, description: body.description, type }).filter(([, value]) => value !== undefined))
      const role = await roles.create({ data })
      await permissions.setActions(role.type as string, actions)
      return json(reply, 200, { ok: true })
    }
  })

  route({
    method: 'PUT',
    url: '/users-permissions/roles/:role',
    action: 'role.updateRole',
    handler: async (request, reply) => {
      const body = nonEmptyBody(request.body)
      const role = await roleById(request, 'role')
      const actions = body.permissions === undefined ? null : enabledActions(body.permissions)
      const data = Object.fromEntries(Object.entries(body).filter(([key]) => key === 'name' || key === 'description'))
      if (Object.keys(data).length > 0) await roles.update({ documentId: role.documentId, data })
      if (actions !== null) await permissions.setActions(role.type, actions)
      return json(reply, 200, { ok: true })
    }
  })

  route({
    method: 'DELETE',
    url: '/users-permissions/roles/:role',
    action: 'role.deleteRole',
    handler: async (request, reply) => {
      const role = await roleById(request, 'role')
      await permissions.deleteRole(role.type)
      return json(reply, 200, { ok: true })
    }
  })

  route({
    method: 'GET',
    url: '/users-permissions/permissions',
    action: 'permissions.getPermissions',
    handler: async (_request, reply) => json(reply, 200, { permissions: await permissions.tree() })
  })

  app.route({
    method: 'GET',
    url: '/i18n/locales',
    schema: documented({ hide: true }),
    preHandler: async (request) => { request.contentApiGrant = await access.check(request, { action: 'plugin::i18n.locales.listLocales' }) },
    handler: async (_request, reply) => json(reply, 200, locales.locales.map((code, i) => ({
      id: i + 1, name: code, code, isDefault: code === locales.defaultLocale
    })))
  })
}
