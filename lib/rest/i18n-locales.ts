import type { FastifyInstance } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import type { ResolvedOptions } from '../options/index.js'
import { BEARER, SECURITY_CONFIG } from '../http/openapi-security.js'
import { documented } from '../route-schema.js'

/**
 * The i18n plugin's `GET /i18n/locales`: the configured `i18n.locales`, as Strapi lists them
 * (`[{ id, name, code, isDefault }]`, names being the codes), behind the
 * `plugin::i18n.locales.listLocales` permission.
 */
export function i18nLocalesRoute (app: FastifyInstance, access: AccessControl, i18n: ResolvedOptions['i18n']): void {
  const body = JSON.stringify(i18n.locales.map((code, i) => ({ id: i + 1, name: code, code, isDefault: code === i18n.defaultLocale })))
  app.route({
    method: 'GET',
    url: '/i18n/locales',
    config: SECURITY_CONFIG,
    schema: documented({
      tags: ['Internationalization'],
      summary: 'The configured locales',
      security: BEARER,
      response: {
        200: {
          type: 'array',
          items: {
            type: 'object',
            properties: { id: { type: 'integer' }, name: { type: 'string' }, code: { type: 'string' }, isDefault: { type: 'boolean' } },
            required: ['id', 'name', 'code', 'isDefault']
          }
        },
        401: { $ref: 'ContentApiError' },
        403: { $ref: 'ContentApiError' }
      }
    }),
    preHandler: async (request) => { request.contentApiGrant = await access.check(request, { action: 'plugin::i18n.locales.listLocales' }) },
    handler: async (_request, reply) => reply.code(200).type('application/json; charset=utf-8').send(body)
  })
}
