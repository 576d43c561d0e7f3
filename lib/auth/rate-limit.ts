import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { ConfigurationError, RateLimitError } from '../errors.js'
import type { RedisClient, ResolvedOptions } from '../options/index.js'

type RateLimitOptions = Exclude<ResolvedOptions['auth']['rateLimit'], false>

/**
 * Strapi's limiter on the credential routes (login, register, the password and
 * email-confirmation flows): `max` requests per `timeWindow` milliseconds per client IP and
 * route, answered with Strapi's 429 envelope. Registered in the auth plugin's own context with
 * `global: false`, so it applies to the routes given the returned config only; with
 * `auth.rateLimit: false` nothing is registered and the config is empty.
 *
 * The counts live in this process's memory, or with `redis` in Redis, where every instance
 * counts against one limit: each request runs one Lua script (`INCR` and `PEXPIRE` of the key
 * `<nameSpace><method><route>-<ip>:<route>`). When Redis cannot answer, the request is let
 * through (`skipOnError`) and the outage is logged: the limiter slows password guessing, and a
 * login that answered 500 or 503 whenever Redis was down would make Redis a hard dependency of
 * every sign-in (docs/auth.md#rate-limits).
 *
 * @example
 * const limited = await registerRateLimit(app, { max: 10, timeWindow: 60000, nameSpace: 'blog:' })
 * app.route({ method: 'POST', url: '/auth/local', config: limited, handler })
 */
export async function registerRateLimit (app: FastifyInstance, options: ResolvedOptions['auth']['rateLimit']): Promise<FastifyContextConfig> {
  if (options === false) return {}
  const redis = options.redis === undefined ? undefined : await redisStore(app, options)
  await app.register(rateLimit, {
    global: false,
    // Per client and path, as Strapi keys its limiter.
    keyGenerator: (request) => `${request.ip}:${request.routeOptions.url ?? request.url}`,
    errorResponseBuilder: () => new RateLimitError(),
    ...(redis === undefined ? {} : { redis, nameSpace: options.nameSpace, skipOnError: true })
  })
  return { rateLimit: { max: options.max, timeWindow: options.timeWindow } }
}

/**
 * The client the Redis store counts through: the application's own, or one made from the URL.
 * Both are watched, so that an outage is logged once when it starts and once when it ends
 * rather than per request; a client the plugin made is closed with the app.
 */
async function redisStore (app: FastifyInstance, options: RateLimitOptions): Promise<RedisClient> {
  const owned = typeof options.redis === 'string'
  const client = typeof options.redis === 'string' ? await connectRedis(options.redis) : options.redis!
  let down = false
  const onError = (err: Error): void => {
    if (down) return
    down = true
    app.log.warn({ err: { message: err.message, code: (err as { code?: string }).code } },
      'fastify-content-api: Redis is unreachable; auth rate limits are not enforced until it is back')
  }
  const onReady = (): void => {
    if (!down) return
    down = false
    app.log.info('fastify-content-api: Redis is back; auth rate limits are enforced again')
  }
  client.on('error', onError)
  client.on('ready', onReady)
  // Counted from the first request: start-up waits (a bounded time) for the plugin's own client.
  if (owned) await ready(client)
  app.addHook('onClose', async () => {
    if (owned) await closeRedis(client as OwnedClient)
    client.off('error', onError)
    client.off('ready', onReady)
  })
  return client
}

interface OwnedClient extends RedisClient {
  quit: () => Promise<unknown>
  disconnect: () => void
}

/**
 * A client of the plugin's own. Its options bound what a login waits for Redis: no offline
 * queue (while disconnected a count fails at once instead of waiting for the reconnection),
 * one retry, and a command timeout for a Redis that accepts connections but does not answer.
 * Start-up waits for it up to the connect timeout; past that it keeps connecting in the
 * background, and counts fail open until it is ready, as during an outage.
 */
async function connectRedis (url: string): Promise<OwnedClient> {
  let Redis: new (url: string, options: Record<string, unknown>) => OwnedClient
  try {
    const mod = await import('ioredis') as unknown as { default: typeof Redis }
    Redis = mod.default
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err
    throw new ConfigurationError(['auth.rateLimit.redis: a URL needs the ioredis package (npm install ioredis), or pass an ioredis client'])
  }
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    // The default backoff (up to 2 s between attempts) is kept: a limiter that fails open needs no faster return.
    connectionName: 'fastify-content-api-rate-limit'
  })
}

/** Longest a login waits for its count on the plugin's own client before it is let through. */
export const REDIS_COMMAND_TIMEOUT_MS = 500
const REDIS_CONNECT_TIMEOUT_MS = 2000

/** Resolves when the client is ready, has failed once, or after the connect timeout. */
async function ready (client: RedisClient): Promise<void> {
  if (client.status === 'ready') return
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      client.off('ready', done)
      client.off('error', done)
      resolve()
    }
    const timer = setTimeout(done, REDIS_CONNECT_TIMEOUT_MS)
    client.on('ready', done)
    client.on('error', done)
  })
}

/** `QUIT` when connected (pending counts finish first), otherwise just stop reconnecting. */
async function closeRedis (client: OwnedClient): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => {})
  client.disconnect()
}
