import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { RateLimitError } from '../errors.js'
import type { ResolvedOptions } from '../options/index.js'

/**
 * Strapi's limiter on the credential routes (login, register, the password and
 * email-confirmation flows): `max` requests per `timeWindow` milliseconds per client IP and
 * route, answered with Strapi's 429 envelope. Registered in the auth plugin's own context with
 * `global: false`, so it applies to the routes given the returned config only; with
 * `auth.rateLimit: false` nothing is registered and the config is empty.
 *
 * @example
 * const limited = await registerRateLimit(app, { max: 10, timeWindow: 60000 })
 * app.route({ method: 'POST', url: '/auth/local', config: limited, handler })
 */
export async function registerRateLimit (app: FastifyInstance, options: ResolvedOptions['auth']['rateLimit']): Promise<FastifyContextConfig> {
  if (options === false) return {}
  await app.register(rateLimit, {
    global: false,
    // Per client and path, as Strapi keys its limiter.
    keyGenerator: (request) => `${request.ip}:${request.routeOptions.url ?? request.url}`,
    errorResponseBuilder: () => new RateLimitError()
  })
  return { rateLimit: { max: options.max, timeWindow: options.timeWindow } }
}
