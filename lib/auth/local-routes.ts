import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApplicationError, ValidationError } from '../errors.js'
import { verifyPassword } from '../documents/password.js'
import type { EmailMessage } from '../options/index.js'
import { checkLogin, registerUser } from './accounts.js'
import { USER_UID } from '../model/users-permissions.js'
import { isPlainObject, json, requireStrings, type AuthRouteContext } from './routing.js'

/** Reset and confirmation codes are stored hashed: a leaked row cannot be replayed. */
const digest = (code: string): string => createHash('sha256').update(code).digest('hex')

/**
 * Strapi's local-account routes: `POST /auth/local` (login), `/auth/local/register`,
 * `/auth/change-password`, `/auth/forgot-password`, `/auth/reset-password`,
 * `/auth/send-email-confirmation` and `GET /auth/email-confirmation`. Login and register answer
 * `{ jwt, user }`; the routes that take credentials or send email are rate limited.
 */
export function localRoutes (app: FastifyInstance, ctx: AuthRouteContext): void {
  const { access, credentials, authenticator, documents, options, route, schemas, userJson } = ctx
  const users = documents(USER_UID)
  const accounts = { credentials, documents, options }

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
    url: '/auth/local',
    schema: schemas.login,
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
    schema: schemas.register,
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
    method: 'POST',
    url: '/auth/change-password',
    schema: schemas.changePassword,
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

  route({
    method: 'POST',
    url: '/auth/forgot-password',
    schema: schemas.forgotPassword,
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
    schema: schemas.resetPassword,
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
    schema: schemas.emailConfirmation,
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
    schema: schemas.sendEmailConfirmation,
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
}
