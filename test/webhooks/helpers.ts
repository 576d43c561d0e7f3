import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { defineContentType } from '../../lib/index.js'

export const ARTICLE = 'api::article.article'

export const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string', required: true },
    secretNote: { type: 'string', private: true }
  }
})

export interface Received { headers: IncomingHttpHeaders, body: string, json: any }

/**
 * A webhook receiver on 127.0.0.1: records every request, answers `answer()`'s status (200 by
 * default). Closed when the test ends.
 */
export class Receiver {
  readonly received: Received[] = []
  answer: (request: Received) => number = () => 200
  /** Never answer (a receiver that hangs): the request is recorded, the socket left open. */
  hang = false
  readonly #server: Server
  #waiters: Array<() => void> = []

  private constructor (server: Server) {
    this.#server = server
  }

  static async start (t: { teardown: (fn: () => Promise<void>) => void }): Promise<Receiver> {
    const server = createServer()
    const receiver = new Receiver(server)
    server.on('request', (req, res) => {
      const chunks: Buffer[] = []
      req.on('error', () => {})
      req.on('data', (chunk: Buffer) => { chunks.push(chunk) })
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        let json: any = null
        try { json = JSON.parse(body) } catch {}
        const request = { headers: req.headers, body, json }
        receiver.received.push(request)
        if (!receiver.hang) {
          res.statusCode = receiver.answer(request)
          res.end('ok')
        }
        for (const wake of receiver.#waiters.splice(0)) wake()
      })
    })
    server.on('clientError', (_err, socket) => { socket.destroy() })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.teardown(async () => { await receiver.close() })
    return receiver
  }

  get url (): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`
  }

  get port (): number {
    return (this.#server.address() as AddressInfo).port
  }

  /** Resolves once `count` requests arrived matching `filter`; rejects after `timeoutMs`. */
  async waitFor (count: number, timeoutMs = 10000, filter: (r: Received) => boolean = () => true): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const matching = this.received.filter(filter)
      if (matching.length >= count) return matching
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`expected ${count} webhook request(s), got ${matching.length}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200))
        this.#waiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
  }

  async close (): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => { resolve() }))
  }
}

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

export const SECRET = 'whsec_test_0123456789abcdef'

/** Short timings, so retries happen within a test's bound. */
export const FAST = { pollIntervalMs: 200, retryDelayMs: 50, maxRetryDelayMs: 200, timeoutMs: 2000 }
