import { ApplicationError, ValidationError } from '../errors.js'
import type { Document, DocumentService } from '../documents/service.js'
import { hashPassword, needsRehash, verifyNothing, verifyPassword } from '../documents/password.js'
import type { ResolvedOptions } from '../options/index.js'
import { ROLE_UID, USER_UID } from '../model/users-permissions.js'
import type { Credentials, UserStore } from '../documents/user-credentials.js'

/**
 * Strapi's local-account rules, shared by the REST auth routes and the GraphQL `login` and
 * `register` mutations so the two answer alike.
 */
export interface AccountDeps {
  credentials: UserStore
  documents: (uid: string) => DocumentService
  options: ResolvedOptions['auth']
}

/** The user an identifier and password sign in, or Strapi's errors (the same one for a wrong password and an unknown user). */
export async function checkLogin (deps: AccountDeps, identifier: string, password: string): Promise<Credentials> {
  const found = await deps.credentials.findCredentials(identifier)
  const matches = found?.password == null ? await verifyNothing(password) : await verifyPassword(password, found.password)
  if (found === null || !matches) {
    throw new ValidationError('Invalid identifier or password')
  }
  if (deps.options.register.emailConfirmation && !found.confirmed) throw new ApplicationError('Your account email is not confirmed')
  if (found.blocked) throw new ApplicationError('Your account has been blocked by an administrator')
  // A bcrypt hash migrated from Strapi becomes scrypt while the password is at hand.
  if (needsRehash(found.password!)) await deps.credentials.setPasswordHash(found.id, await hashPassword(password))
  return found
}

/** Strapi refuses passwords longer than bcrypt reads: 72 bytes (bytes, not characters). */
export function checkPasswordBytes (password: string): void {
  if (Buffer.byteLength(password) > 72) throw new ValidationError('Password must be less than 73 bytes')
}

/**
 * Creates a registered user with the default role: the password limit, a lower-cased email,
 * email and username not yet taken by a user of any provider. `extra` carries the
 * `register.allowedFields` values.
 */
export async function registerUser (
  deps: AccountDeps, input: { username: string, email: string, password: string, extra?: Record<string, unknown> }, confirmed: boolean
): Promise<Document> {
  checkPasswordBytes(input.password)
  const email = input.email.toLowerCase()
  // Strapi's check, across providers (its `unique_email` default): neither value may be another
  // user's email or username.
  const candidates = [email, input.username]
  if (await deps.credentials.isTaken({ emails: candidates, usernames: candidates })) {
    throw new ApplicationError('Email or Username are already taken')
  }
  const role = await deps.documents(ROLE_UID).findFirst({ filters: { type: deps.options.register.defaultRole } })
  if (role === null) throw new ApplicationError('Impossible to find the default role')
  return await deps.documents(USER_UID).create({
    data: { ...input.extra, username: input.username, email, password: input.password, provider: 'local', confirmed, blocked: false, role: role.documentId }
  })
}
