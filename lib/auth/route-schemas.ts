import type { JsonSchema, ModelSchemas } from '../http/openapi-models.js'
import { BEARER, OPTIONAL_BEARER, USER_JWT } from '../http/openapi-security.js'
import type { Registry } from '../model/registry.js'
import { ROLE_UID, USER_UID } from '../model/users-permissions.js'
import type { DocumentedSchema } from '../route-schema.js'

/**
 * The route schemas of the users-and-permissions routes (local-routes.ts, users-routes.ts,
 * roles-routes.ts), for the OpenAPI document. Like the content routes', they describe what the
 * handlers check (requireStrings, checkUserBody, ...): the auth context compiles no schema.
 * Answers are bare, not wrapped in `{ data }`, as in Strapi.
 */

const error: JsonSchema = { $ref: 'ContentApiError' }
const errors = { 400: error, 401: error, 403: error }
const strings = (names: readonly string[], extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  properties: { ...Object.fromEntries(names.map((name) => [name, { type: 'string', minLength: 1 }])), ...extra },
  required: [...names]
})
const ok: JsonSchema = { type: 'object', properties: { ok: { type: 'boolean', enum: [true] } }, required: ['ok'] }
const idParams = (name: string): JsonSchema => ({ type: 'object', properties: { [name]: { type: 'integer', description: 'the row id' } }, required: [name] })
const list = (items: JsonSchema = { type: 'string' }): JsonSchema => ({ anyOf: [{ type: 'string' }, { type: 'array', items }] })

export interface AuthSchemas {
  login: DocumentedSchema
  register: DocumentedSchema
  changePassword: DocumentedSchema
  forgotPassword: DocumentedSchema
  resetPassword: DocumentedSchema
  emailConfirmation: DocumentedSchema
  sendEmailConfirmation: DocumentedSchema
  me: DocumentedSchema
  findUsers: DocumentedSchema
  countUsers: DocumentedSchema
  findUser: DocumentedSchema
  createUser: DocumentedSchema
  updateUser: DocumentedSchema
  deleteUser: DocumentedSchema
  findRoles: DocumentedSchema
  findRole: DocumentedSchema
  createRole: DocumentedSchema
  updateRole: DocumentedSchema
  deleteRole: DocumentedSchema
  permissions: DocumentedSchema
}

/** Every auth route's schema; `allowedFields` are the user attributes registration also takes. */
export function authSchemas (schemas: ModelSchemas, registry: Registry, allowedFields: readonly string[]): AuthSchemas {
  const users = registry.get(USER_UID)!
  const user = schemas.ref(USER_UID, 'document')
  const role = schemas.ref(ROLE_UID, 'document')
  const session: JsonSchema = { type: 'object', properties: { jwt: { type: 'string' }, user }, required: ['jwt', 'user'] }
  const userQuery: JsonSchema = {
    type: 'object',
    properties: { fields: list({ type: 'string', enum: users.defaultFields.map((f) => f.name) }), populate: schemas.ref(USER_UID, 'populate') },
    style: 'deepObject',
    explode: true
  }
  const userList: JsonSchema = {
    type: 'object',
    properties: {
      ...(userQuery.properties as Record<string, JsonSchema>),
      filters: schemas.ref(USER_UID, 'filters'),
      sort: list(),
      pagination: { type: 'object', properties: { start: { type: 'integer', minimum: 0 }, limit: { type: 'integer' } }, additionalProperties: false }
    },
    style: 'deepObject',
    explode: true
  }
  const tags = ['Users-Permissions - Auth']
  const userTags = ['Users-Permissions - Users']
  const roleTags = ['Users-Permissions - Roles']
  // What `/users` writes: no private attribute (the reset and confirmation codes).
  const userBody = (required: readonly string[]): JsonSchema => schemas.inlineInput(users, { omit: (_name, attribute) => attribute.private === true, required })
  const registration: JsonSchema = allowedFields.length === 0
    ? { ...strings(['username', 'email', 'password']), additionalProperties: false }
    : {
        ...strings(['username', 'email', 'password'], Object.fromEntries(allowedFields.map((name) => [name, { description: `a ${USER_UID} attribute (auth.register.allowedFields)` }]))),
        additionalProperties: false
      }
  const roleBody = (withType: boolean): JsonSchema => ({
    type: 'object',
    properties: {
      name: { type: 'string' },
      description: { type: 'string' },
      ...(withType ? { type: { type: 'string', minLength: 1, description: 'defaults to the name in snake case' } } : {}),
      permissions: { type: 'object', additionalProperties: true, description: 'Strapi\'s permission tree: `{ "api::article": { "controllers": { "article": { "find": { "enabled": true } } } } }`' }
    },
    minProperties: 1
  })

  return {
    login: { tags, summary: 'Log in with an email or username and a password', security: OPTIONAL_BEARER, body: strings(['identifier', 'password']), response: { 200: session, ...errors, 429: error } },
    register: {
      tags,
      summary: 'Register a user',
      description: 'Answers `{ user }` without a JWT when email confirmation is on.',
      security: OPTIONAL_BEARER,
      body: registration,
      response: { 200: { type: 'object', properties: { jwt: { type: 'string' }, user }, required: ['user'] }, ...errors, 429: error }
    },
    changePassword: { tags, summary: 'Change the signed-in user\'s password', security: USER_JWT, body: strings(['currentPassword', 'password', 'passwordConfirmation']), response: { 200: session, ...errors, 429: error } },
    forgotPassword: { tags, summary: 'Send a password reset email', security: OPTIONAL_BEARER, body: strings(['email']), response: { 200: ok, ...errors, 429: error } },
    resetPassword: { tags, summary: 'Reset a password with the emailed code', security: OPTIONAL_BEARER, body: strings(['code', 'password', 'passwordConfirmation']), response: { 200: session, ...errors, 429: error } },
    emailConfirmation: {
      tags,
      summary: 'Confirm an email address (the emailed link)',
      security: OPTIONAL_BEARER,
      querystring: { type: 'object', properties: { confirmation: { type: 'string', minLength: 1 } }, required: ['confirmation'] },
      response: { 302: { description: 'Redirects to auth.urls.emailConfirmationRedirect', type: 'null' }, ...errors }
    },
    sendEmailConfirmation: {
      tags,
      summary: 'Send the confirmation email again',
      security: OPTIONAL_BEARER,
      body: strings(['email']),
      response: { 200: { type: 'object', properties: { email: { type: 'string' }, sent: { type: 'boolean' } }, required: ['email', 'sent'] }, ...errors, 429: error }
    },
    me: { tags: userTags, summary: 'The signed-in user', security: USER_JWT, querystring: userQuery, response: { 200: user, ...errors } },
    findUsers: { tags: userTags, summary: 'List users (a bare array)', security: BEARER, querystring: userList, response: { 200: { type: 'array', items: user }, ...errors } },
    countUsers: { tags: userTags, summary: 'Count users', security: BEARER, querystring: { type: 'object', properties: { filters: schemas.ref(USER_UID, 'filters') }, style: 'deepObject', explode: true }, response: { 200: { type: 'integer' }, ...errors } },
    findUser: { tags: userTags, summary: 'Get a user', security: BEARER, params: idParams('id'), querystring: userQuery, response: { 200: user, ...errors, 404: error } },
    createUser: { tags: userTags, summary: 'Create a user', security: BEARER, body: userBody(['username', 'email', 'password']), response: { 201: user, ...errors } },
    updateUser: { tags: userTags, summary: 'Update a user', security: BEARER, params: idParams('id'), body: userBody([]), response: { 200: user, ...errors, 404: error } },
    deleteUser: { tags: userTags, summary: 'Delete a user (answers the deleted user)', security: BEARER, params: idParams('id'), response: { 200: user, ...errors, 404: error } },
    findRoles: {
      tags: roleTags,
      summary: 'List roles, with their number of users',
      security: BEARER,
      response: { 200: { type: 'object', properties: { roles: { type: 'array', items: { allOf: [role, { type: 'object', properties: { nb_users: { type: 'integer' } } }] } } }, required: ['roles'] }, ...errors }
    },
    findRole: {
      tags: roleTags,
      summary: 'Get a role and its permission tree',
      security: BEARER,
      params: idParams('id'),
      response: { 200: { type: 'object', properties: { role: { allOf: [role, { type: 'object', properties: { permissions: { type: 'object', additionalProperties: true } } }] } }, required: ['role'] }, ...errors, 404: error }
    },
    createRole: { tags: roleTags, summary: 'Create a role', security: BEARER, body: roleBody(true), response: { 200: ok, ...errors } },
    updateRole: { tags: roleTags, summary: 'Update a role: name, description, permission tree', security: BEARER, params: idParams('role'), body: roleBody(false), response: { 200: ok, ...errors, 404: error } },
    deleteRole: { tags: roleTags, summary: 'Delete a role', security: BEARER, params: idParams('role'), response: { 200: ok, ...errors, 404: error } },
    permissions: { tags: roleTags, summary: 'Every permission, as Strapi\'s tree', security: BEARER, response: { 200: { type: 'object', properties: { permissions: { type: 'object', additionalProperties: true } }, required: ['permissions'] }, ...errors } }
  }
}
