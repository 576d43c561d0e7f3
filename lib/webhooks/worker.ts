import type { Kysely } from 'kysely'
import type { ResolvedWebhookOptions, WebhookEndpoint } from '../options/webhooks.js'
import { send } from './deliver.js'
import { claimDue, nextDueInMs, recordAttempt, release, type ClaimedDelivery } from './outbox.js'

/** Where the worker's errors go (a database that is away for a while): logged, never thrown. */
export interface WorkerLogger {
  warn (obj: object, msg: string): void
  error (obj: object, msg: string): void
}

/**
 * The delivery loop of one app: claims due deliveries (outbox.ts's `claimDue`, `for update skip
 * locked`, so instances on one database share the work and never send one delivery at once),
 * sends them, records each attempt. It runs while there is work, then sleeps until woken (a
 * commit with events, here or, through LISTEN/NOTIFY, in another instance), until the next
 * pending delivery is due (a retry), or `pollIntervalMs` at most: the poll is the safety net for
 * what no wake-up announced (a notification lost with its connection). Memory is bounded by
 * `batchSize` deliveries in flight.
 */
export class WebhookWorker {
  readonly #db: Kysely<any>
  readonly #options: ResolvedWebhookOptions
  readonly #log: WorkerLogger
  readonly #endpoints: ReadonlyMap<string, WebhookEndpoint>
  readonly #abort = new AbortController()
  #stopping = false
  #wake: (() => void) | null = null
  #woken = false
  #loop: Promise<void> | null = null

  constructor (db: Kysely<any>, options: ResolvedWebhookOptions, log: WorkerLogger) {
    this.#db = db
    this.#options = options
    this.#log = log
    this.#endpoints = new Map(options.endpoints.filter((e) => e.enabled).map((e) => [e.name, e]))
  }

  start (): void {
    if (this.#loop !== null || this.#endpoints.size === 0) return
    // Nothing in the loop is meant to throw; if something does, the worker stops, the process does not.
    this.#loop = this.#run().catch((err: unknown) => { this.#log.error({ err }, 'fastify-content-api: the webhook worker stopped') })
  }

  /** Something may be due: look now (or right after the current batch). */
  wake (): void {
    this.#woken = true
    this.#wake?.()
  }

  /**
   * Claims nothing more; waits up to `graceMs` for the deliveries in flight, then aborts them
   * (they are given back to the outbox, uncounted, for the next instance or start).
   */
  async stop (graceMs: number): Promise<void> {
    this.#stopping = true
    this.#wake?.()
    if (this.#loop === null) return
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs) })
    await Promise.race([this.#loop, grace])
    clearTimeout(timer)
    this.#abort.abort()
    await this.#loop
  }

  async #run (): Promise<void> {
    while (!this.#stopping) {
      this.#woken = false
      let claimed: ClaimedDelivery[] = []
      try {
        claimed = await claimDue(this.#db, [...this.#endpoints.keys()], this.#options.batchSize, this.#leaseMs())
      } catch (err) {
        if (!this.#stopping) this.#log.warn({ err }, 'fastify-content-api: webhook deliveries could not be claimed; trying again')
      }
      if (claimed.length > 0) await Promise.all(claimed.map(async (delivery) => { await this.#deliver(delivery) }))
      if (this.#stopping) break
      // A full batch may have left more due; a wake-up during the batch may have queued more.
      if (claimed.length === this.#options.batchSize || this.#woken) continue
      await this.#sleep()
    }
  }

  /** Long enough that a live worker's attempt (its timeout) and recording it always end first. */
  #leaseMs (): number {
    return this.#options.timeoutMs * 2 + 5000
  }

  async #deliver (delivery: ClaimedDelivery): Promise<void> {
    const endpoint = this.#endpoints.get(delivery.endpoint)!
    const attempt = await send(endpoint, delivery, {
      defaultHeaders: this.#options.defaultHeaders, secret: this.#options.secret, timeoutMs: this.#options.timeoutMs, signal: this.#abort.signal
    })
    try {
      if (this.#abort.signal.aborted && !attempt.ok) {
        await release(this.#db, delivery.id)
        return
      }
      const retryInMs = attempt.ok || delivery.attempts >= this.#options.maxAttempts ? null : this.#backoff(delivery.attempts)
      await recordAttempt(this.#db, delivery.id, { ...attempt, retryInMs })
      if (!attempt.ok && retryInMs === null) {
        this.#log.error({ id: delivery.id, endpoint: delivery.endpoint, event: delivery.event, attempts: delivery.attempts, error: attempt.error }, 'fastify-content-api: a webhook delivery failed for good')
      }
    } catch (err) {
      // The lease brings the delivery back: it is attempted again, at least once more.
      this.#log.warn({ err, id: delivery.id }, 'fastify-content-api: a webhook attempt could not be recorded')
    }
  }

  /** `retryDelayMs * 2^(attempts - 1)`, at most `maxRetryDelayMs`, plus up to 25% jitter (so failed receivers are not hit in step). */
  #backoff (attempts: number): number {
    const base = Math.min(this.#options.maxRetryDelayMs, this.#options.retryDelayMs * 2 ** Math.min(attempts - 1, 40))
    return Math.round(base * (1 + Math.random() * 0.25))
  }

  async #sleep (): Promise<void> {
    let due = Infinity
    try {
      due = await nextDueInMs(this.#db, [...this.#endpoints.keys()])
    } catch {
      // The claim's warning says it; the poll interval is the wait.
    }
    if (this.#woken || this.#stopping) return
    const ms = Math.max(0, Math.min(this.#options.pollIntervalMs, due))
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done (): void { clearTimeout(timer); resolve() }
      this.#wake = done
    })
    this.#wake = null
  }
}
