import type { FastifyRequest } from 'fastify'
import { NotFoundError, ValidationError } from '../errors.js'
import { enabledActions } from './actions.js'
import { ROLE_UID } from '../model/users-permissions.js'
import { idParam, isPlainObject, json, type AuthRouteContext } from './routing.js'

/**
 * A role's type from its name when none is given, as Strapi's `snakeCase(deburr(toLower(name)))`:
 * `'Content Editor'` is `content_editor`, `'Éditeur 2'` is `editeur_2`.
 */
export function roleType (name: string): string {
  return (name.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').match(/[a-z]+|[0-9]+/g) ?? []).join('_')
}

const nonEmptyBody = (body: unknown): Record<string, unknown> => {
  if (!isPlainObject(body) || Object.keys(body).length === 0) throw new ValidationError('Request body cannot be empty')
  return body
}

/**
 * Strapi's roles and permissions routes: `GET|POST /users-permissions/roles`,
 * `GET /users-permissions/roles/:id`, `PUT|DELETE /users-permissions/roles/:role` and
 * `GET /users-permissions/permissions`. A role's grants are written as Strapi's permission tree
 * (lib/auth/actions.ts) and keyed by the role's type.
 */
export function rolesRoutes (ctx: AuthRouteContext): void {
  const { documents, permissions, route, schemas } = ctx
  const roles = documents(ROLE_UID)

  /** The role named by a route parameter, or Strapi's 404. */
  async function roleById (request: FastifyRequest, name: string): Promise<Record<string, unknown> & { id: number, documentId: string, type: string }> {
    const id = idParam(request, name)
    const role = id === null ? null : await roles.findFirst({ filters: { id } })
    if (role === null) throw new NotFoundError('Role not found')
    return role as Record<string, unknown> & { id: number, documentId: string, type: string }
  }

  route({
    method: 'GET',
    url: '/users-permissions/roles',
    action: 'role.find',
    schema: schemas.findRoles,
    handler: async (_request, reply) => {
      const counts = await permissions.userCounts()
      const list = await roles.findMany({ sort: ['name', 'id'] })
      return json(reply, 200, { roles: list.map((role) => ({ ...role, nb_users: counts.get(role.id) ?? 0 })) })
    }
  })

  route({
    method: 'GET',
    url: '/users-permissions/roles/:id',
    schema: schemas.findRole,
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
    schema: schemas.createRole,
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
    schema: schemas.updateRole,
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
    schema: schemas.deleteRole,
    handler: async (request, reply) => {
      const role = await roleById(request, 'role')
      await permissions.deleteRole(role.type)
      return json(reply, 200, { ok: true })
    }
  })

  route({
    method: 'GET',
    url: '/users-permissions/permissions',
    schema: schemas.permissions,
    action: 'permissions.getPermissions',
    handler: async (_request, reply) => json(reply, 200, { permissions: await permissions.tree() })
  })
}
