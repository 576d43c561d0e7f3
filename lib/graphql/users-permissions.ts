import type { GraphQLFieldResolver } from 'graphql'
import type { FastifyRequest } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import type { Authenticator } from '../auth/authenticate.js'
import { checkLogin, registerUser } from '../auth/accounts.js'
import { USER_UID } from '../model/users-permissions.js'
import type { UserStore } from '../documents/user-credentials.js'
import type { DocumentService } from '../documents/service.js'
import { ApplicationError, UnauthorizedError } from '../errors.js'
import type { ResolvedOptions } from '../options/index.js'
import type { DefaultAuth } from './wrap.js'

type Resolver = GraphQLFieldResolver<any, any, any>
type Json = Record<string, unknown>

const UP = 'plugin::users-permissions'

/** Types of the users-and-permissions and i18n operations, the same in every shape (Strapi's). */
export const USERS_PERMISSIONS_TYPES = `
type UsersPermissionsMeRole { id: ID! name: String! description: String type: String }
type UsersPermissionsMe { id: ID! documentId: ID! username: String! email: String confirmed: Boolean blocked: Boolean role: UsersPermissionsMeRole }
type UsersPermissionsLoginPayload { jwt: String user: UsersPermissionsMe! }
input UsersPermissionsLoginInput { identifier: String! password: String! provider: String! = "local" }
input UsersPermissionsRegisterInput { username: String! email: String! password: String! }
type I18NLocale { name: String code: String isDefault: Boolean }
`

export const USERS_PERMISSIONS_QUERIES = ['me: UsersPermissionsMe', 'i18NLocales: [I18NLocale]!']
export const USERS_PERMISSIONS_MUTATIONS = [
  'login(input: UsersPermissionsLoginInput!): UsersPermissionsLoginPayload!',
  'register(input: UsersPermissionsRegisterInput!): UsersPermissionsLoginPayload!'
]

/** The permission each of these operations needs, as the REST routes of the same actions. */
export const USERS_PERMISSIONS_AUTH = new Map<string, DefaultAuth>([
  ['Query.me', { action: `${UP}.user.me` }],
  ['Query.i18NLocales', { action: 'plugin::i18n.locales.listLocales' }],
  ['Mutation.login', { action: `${UP}.auth.callback` }],
  ['Mutation.register', { action: `${UP}.auth.register` }]
])

export interface UsersPermissionsDeps {
  access: AccessControl
  authenticator: Authenticator
  credentials: UserStore
  documents: (uid: string) => DocumentService
  options: ResolvedOptions
}

/**
 * `me`, `login`, `register` (Strapi's users-and-permissions GraphQL operations) and `i18NLocales`.
 * Login and registration apply the same rules as `POST /api/auth/local` and
 * `/api/auth/local/register` (lib/auth/local-routes.ts): both go through lib/auth/accounts.ts. As the recorded Strapi does, the user in a login or register payload comes
 * without its role; `me` has it.
 */
export function usersPermissionsResolvers (deps: UsersPermissionsDeps): { Query: Record<string, Resolver>, Mutation: Record<string, Resolver> } {
  const users = deps.documents(USER_UID)
  const auth = deps.options.auth
  const accounts = { credentials: deps.credentials, documents: deps.documents, options: auth }
  const payloadUser = async (id: number): Promise<Json> => ({ ...await users.findFirst({ filters: { id } }), role: null })

  return {
    Query: {
      me: async (_root, _args, context) => {
        const principal = await deps.access.principal(context.reply.request as FastifyRequest)
        if (principal.kind !== 'user') throw new UnauthorizedError()
        return await users.findFirst({ filters: { id: principal.user.id }, populate: { role: true } })
      },
      i18NLocales: () => deps.options.i18n.locales.map((code) => ({ name: code, code, isDefault: code === deps.options.i18n.defaultLocale }))
    },
    Mutation: {
      login: async (_root, { input }: { input: Json }) => {
        const { identifier, password } = input as { identifier: string, password: string }
        const found = await checkLogin(accounts, identifier, password)
        return { jwt: deps.authenticator.issue(found), user: await payloadUser(found.id) }
      },
      register: async (_root, { input }: { input: Json }) => {
        if (!auth.register.enabled) throw new ApplicationError('Register action is currently disabled')
        const { username, email, password } = input as { username: string, email: string, password: string }
        if (auth.register.emailConfirmation) {
          // Confirmation mails are the REST flow's (it holds the templates and codes): register there.
          throw new ApplicationError('Registration with email confirmation goes through POST /api/auth/local/register')
        }
        const created = await registerUser(accounts, { username, email, password }, true)
        return { jwt: deps.authenticator.issue(created), user: await payloadUser(created.id) }
      }
    }
  }
}
