import type { ContentTypeSchema } from './types.js'

/*
 * The users-and-permissions plugin's content types and Strapi's API tokens: built-in models,
 * registered whatever the application's (./built-ins.ts). They live in model/ so that the
 * registry depends on nothing above it; auth (lib/auth/) reads and writes them.
 */

export const USER_UID = 'plugin::users-permissions.user'
export const ROLE_UID = 'plugin::users-permissions.role'
export const PERMISSION_UID = 'plugin::users-permissions.permission'
export const API_TOKEN_UID = 'admin::api-token'

/** The users-and-permissions user, Strapi's `up_users`. Passwords and tokens never leave the server. */
export const userContentType: ContentTypeSchema = {
  kind: 'collectionType',
  uid: USER_UID,
  collectionName: 'up_users',
  info: { singularName: 'user', pluralName: 'users', displayName: 'User' },
  options: { draftAndPublish: false },
  attributes: {
    username: { type: 'string', required: true, unique: true, minLength: 3 },
    email: { type: 'email', required: true, minLength: 6 },
    provider: { type: 'string' },
    password: { type: 'password', minLength: 6 },
    resetPasswordToken: { type: 'string', private: true },
    confirmationToken: { type: 'string', private: true },
    confirmed: { type: 'boolean', default: false },
    blocked: { type: 'boolean', default: false },
    role: { type: 'relation', relation: 'manyToOne', target: ROLE_UID, inversedBy: 'users' }
  }
}

/** Roles (`public`, `authenticated`, and the application's), Strapi's `up_roles`. */
export const roleContentType: ContentTypeSchema = {
  kind: 'collectionType',
  uid: ROLE_UID,
  collectionName: 'up_roles',
  info: { singularName: 'role', pluralName: 'roles', displayName: 'Role' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', required: true, minLength: 3 },
    description: { type: 'string' },
    type: { type: 'string', unique: true },
    permissions: { type: 'relation', relation: 'oneToMany', target: PERMISSION_UID, mappedBy: 'role' },
    users: { type: 'relation', relation: 'oneToMany', target: USER_UID, mappedBy: 'role' }
  }
}

/**
 * One granted action (`api::article.article.find`) of a role, Strapi's `up_permissions`, plus two
 * columns of our own: `conditions`, a filter every query of the action must also satisfy (row
 * level), and `fields`, the attributes the action may read or write (field level).
 */
export const permissionContentType: ContentTypeSchema = {
  kind: 'collectionType',
  uid: PERMISSION_UID,
  collectionName: 'up_permissions',
  info: { singularName: 'permission', pluralName: 'permissions', displayName: 'Permission' },
  options: { draftAndPublish: false },
  attributes: {
    action: { type: 'string', required: true, index: true },
    conditions: { type: 'json' },
    fields: { type: 'json' },
    role: { type: 'relation', relation: 'manyToOne', target: ROLE_UID, inversedBy: 'permissions' }
  }
}

/**
 * API tokens, Strapi's `strapi_api_tokens`. Only a keyed hash of the key is stored
 * (HMAC-SHA512 with the configured salt), so a leaked table does not leak usable keys.
 */
export const apiTokenContentType: ContentTypeSchema = {
  kind: 'collectionType',
  uid: API_TOKEN_UID,
  collectionName: 'strapi_api_tokens',
  info: { singularName: 'api-token', pluralName: 'api-tokens', displayName: 'API Token' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', required: true, unique: true },
    description: { type: 'text' },
    type: { type: 'enumeration', enum: ['read-only', 'full-access', 'custom'], required: true },
    accessKey: { type: 'string', required: true, private: true, index: true, maxLength: 128 },
    permissions: { type: 'json', private: true },
    lastUsedAt: { type: 'datetime' },
    expiresAt: { type: 'datetime' },
    lifespan: { type: 'biginteger' }
  }
}

export const AUTH_CONTENT_TYPES: readonly ContentTypeSchema[] = [
  userContentType, roleContentType, permissionContentType, apiTokenContentType
]
