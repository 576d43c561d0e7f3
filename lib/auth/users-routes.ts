import type { FastifyRequest } from 'fastify'
import { ApplicationError, NotFoundError, UnauthorizedError, ValidationError } from '../errors.js'
import type { QueryParams } from '../documents/service.js'
import { parseQueryString } from '../query/index.js'
import { checkPasswordBytes } from './accounts.js'
import type { AuthUser } from './authenticate.js'
import { ROLE_UID, USER_UID } from '../model/users-permissions.js'
import { idParam, isPlainObject, json, requireStrings, scopeOf, type AuthRouteContext } from './routing.js'

/**
 * Strapi's users routes: `GET /users` (a bare array), `/users/count`, `/users/me`,
 * `/users/:id`, `POST /users`, `PUT|DELETE /users/:id`. Reads take the request's query string
 * under the caller's row and field limits, as content routes do.
 */
export function usersRoutes (ctx: AuthRouteContext): void {
  const { access, credentials, documents, limits, options, route, schemas, userJson } = ctx
  const users = documents(USER_UID)
  const roles = documents(ROLE_UID)

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
    method: 'GET',
    url: '/users/me',
    schema: schemas.me,
    action: 'user.me',
    handler: async (request, reply) => json(reply, 200, await readUser(request, (await currentUser(request)).id))
  })

  route({
    method: 'GET',
    url: '/users',
    action: 'user.find',
    schema: schemas.findUsers,
    handler: async (request, reply) => json(reply, 200, await users.findMany(usersQuery(request)))
  })

  route({
    method: 'GET',
    url: '/users/count',
    schema: schemas.countUsers,
    action: 'user.count',
    handler: async (request, reply) => json(reply, 200, await users.count({ filters: parseQueryString(request.url, limits).filters as any, access: scopeOf(request), limits: true }))
  })

  route({
    method: 'GET',
    url: '/users/:id',
    action: 'user.findOne',
    schema: schemas.findUser,
    handler: async (request, reply) => json(reply, 200, await readUser(request, idParam(request)))
  })

  route({
    method: 'POST',
    url: '/users',
    action: 'user.create',
    schema: schemas.createUser,
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
    schema: schemas.updateUser,
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
    schema: schemas.deleteUser,
    handler: async (request, reply) => {
      const existing = await userById(request)
      await users.delete({ documentId: existing.documentId, access: scopeOf(request) })
      return json(reply, 200, existing)
    }
  })
}
