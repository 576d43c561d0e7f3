import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ServiceUnavailableError } from './errors.js'

export interface ShutdownOptions {
  /** How long in-flight requests may take to finish once `app.close()` is called. */
  timeoutMs: number
  /** Whether a request is the content API's (answered 503 in the envelope while closing). */
  isContentRequest: (request: FastifyRequest) => boolean
  /** Closes the database, letting its work in progress finish for `graceMs` before cutting it. */
  closeDatabase: (graceMs: number) => Promise<void>
}

/**
 * `app.close()`, gracefully and within `timeoutMs`:
 *
 * 1. New work stops. Fastify stops accepting connections, and with `return503OnClosing` (its
 *    default) answers requests arriving on open keep-alive connections itself, with a 503 in its
 *    own format, before any hook runs: a plugin cannot change that answer. With
 *    `return503OnClosing: false`, the content API's routes answer here instead, 503
 *    `ServiceUnavailableError` in Strapi's envelope, with `Retry-After` and `Connection: close`.
 * 2. In-flight requests finish. Their responses carry `Connection: close`, so that keep-alive
 *    clients let their connections go and `server.close()` completes as soon as they are
 *    answered (otherwise it waits for idle connections to time out, 72 s by Fastify's default);
 *    connections left idle by responses already under way are closed as they finish.
 * 3. The database closes once no request is in flight (requests made with `inject()`, which
 *    `server.close()` does not wait for, included), and only then: a write in progress commits.
 * 4. At `timeoutMs`, what is left is cut: the HTTP connections still open are closed and the
 *    database connections still in use destroyed. Their transactions roll back, so a write is
 *    either acknowledged and committed, or neither.
 */
export function gracefulShutdown (app: FastifyInstance, options: ShutdownOptions): void {
  let closing = false
  let deadline = 0
  let inFlight = 0
  let drained: (() => void) | null = null
  let timer: NodeJS.Timeout | undefined

  const finished = (): void => {
    inFlight--
    if (inFlight === 0 && drained !== null) drained()
  }

  // These three run on every request of the app: callback hooks, so that an open server pays no
  // promise for them (an async hook costs Fastify a promise and its continuations).
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (closing && options.isContentRequest(request)) {
      const error = new ServiceUnavailableError()
      // Sent here, the request goes no further (Fastify ends the hook chain on a sent reply).
      reply.code(503).header('retry-after', String(error.retryAfter)).header('connection', 'close')
        .type('application/json; charset=utf-8').send(JSON.stringify(error.toEnvelope()))
      return
    }
    inFlight++
    // 'close' follows the response, or a connection lost before it: each request once.
    reply.raw.once('close', finished)
    done()
  })

  app.addHook('onSend', (_request, reply, payload, done) => {
    // HTTP/2 has no Connection header: its sessions are closed by Fastify.
    if (closing && reply.request.raw.httpVersionMajor === 1) reply.header('connection', 'close')
    done(null, payload)
  })

  app.addHook('onResponse', (_request, _reply, done) => {
    // A response whose headers left before close began kept its connection alive; once it is
    // idle, it is closed rather than left to time out.
    if (closing) setImmediate(() => { app.server.closeIdleConnections() })
    done()
  })

  const begin = (): void => {
    if (closing) return
    closing = true
    deadline = Date.now() + options.timeoutMs
  }

  app.addHook('preClose', async () => {
    begin()
    // What still holds an HTTP connection then is cut, so that `server.close()` can complete
    // (a server that never listened has none).
    timer = setTimeout(() => {
      if (inFlight > 0) app.log.warn({ inFlight }, `fastify-content-api: ${inFlight} request(s) still in flight after shutdown.timeoutMs; their connections are closed`)
      app.server.closeAllConnections()
    }, options.timeoutMs)
    timer.unref()
  })

  app.addHook('onClose', async () => {
    // Without preClose: the app closed before it was ready.
    begin()
    if (inFlight > 0) {
      const remaining = Math.max(0, deadline - Date.now())
      app.log.info({ inFlight }, `fastify-content-api: waiting up to ${remaining} ms for requests in flight`)
      await new Promise<void>((resolve) => {
        const waited = setTimeout(resolve, remaining)
        drained = () => { clearTimeout(waited); resolve() }
      })
      if (inFlight > 0) app.log.warn({ inFlight }, `fastify-content-api: ${inFlight} request(s) still in flight after shutdown.timeoutMs; the database closes under them`)
    }
    clearTimeout(timer)
    await options.closeDatabase(Math.max(0, deadline - Date.now()))
  })
}
