import { sql, type Kysely } from 'kysely'
import { WEBHOOKS_TABLE } from '../model/naming.js'

/**
 * The statements of the webhook outbox (lib/schema/webhook-outbox.ts has the table; the document
 * service queues in the writer's transaction, lib/documents/webhook-events.ts): claim due rows without two instances ever claiming the same one,
 * record each attempt, list, redeliver. Every value is a parameter.
 */

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One row of the delivery log, as `app.contentApi.webhooks.deliveries()` answers it. */
export interface WebhookDelivery {
  /** The delivery's id, sent as `x-webhook-id`: the same on every attempt, for the receiver to drop repeats. */
  id: string
  endpoint: string
  event: string
  /** The JSON body sent, exactly. */
  payload: string
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: Date
  createdAt: Date
  deliveredAt: Date | null
  /** The last attempt's HTTP status (null: no answer), duration and error. */
  statusCode: number | null
  durationMs: number | null
  error: string | null
  /** Every attempt, oldest first (the last 50). */
  log: AttemptLog[]
}

export interface AttemptLog { at: string, statusCode: number | null, durationMs: number, error: string | null }

/** A claimed delivery: what the worker sends. */
export interface ClaimedDelivery { id: string, endpoint: string, event: string, payload: string, attempts: number }

const LOG_KEPT = 50

/**
 * Claims up to `limit` due deliveries of `endpoints`: each claimed row's next attempt moves
 * `leaseMs` ahead (the lease: past it, a delivery whose instance died is due again) and its
 * attempt is counted. `skip locked`: rows another instance is claiming at the same moment are
 * left to it, so one delivery is never attempted by two instances at once.
 *
 * ```sql
 * update "content_api_webhook_deliveries" as d set "attempts" = d."attempts" + 1,
 *   "next_attempt_at" = now() + $1 * interval '1 millisecond'
 * where d."id" in (select "id" from "content_api_webhook_deliveries" where "status" = 'pending'
 *   and "next_attempt_at" <= now() and "endpoint" = any($2) order by "next_attempt_at", "seq" limit $3 for update skip locked)
 * returning d."id", d."endpoint", d."event", d."payload", d."attempts"
 * ```
 */
export async function claimDue (db: Kysely<any>, endpoints: readonly string[], limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedDelivery>`update ${sql.table(WEBHOOKS_TABLE)} as d set "attempts" = d."attempts" + 1,
    "next_attempt_at" = now() + ${leaseMs}::double precision * interval '1 millisecond'
    where d."id" in (select "id" from ${sql.table(WEBHOOKS_TABLE)} where "status" = 'pending' and "next_attempt_at" <= now()
      and "endpoint" = any(${[...endpoints]}::varchar[]) order by "next_attempt_at", "seq" limit ${limit} for update skip locked)
    returning d."id", d."endpoint", d."event", d."payload", d."attempts"`.execute(db)
  return rows
}

/**
 * In how many ms the next pending delivery of `endpoints` is due (0 when one is due now; a
 * claimed one counts at the end of its lease), or Infinity when none is pending.
 *
 * ```sql
 * select (extract(epoch from min("next_attempt_at") - now()) * 1000)::double precision as "ms"
 * from "content_api_webhook_deliveries" where "status" = 'pending' and "endpoint" = any($1)
 * ```
 */
export async function nextDueInMs (db: Kysely<any>, endpoints: readonly string[]): Promise<number> {
  const { rows } = await sql<{ ms: number | null }>`select (extract(epoch from min("next_attempt_at") - now()) * 1000)::double precision as "ms"
    from ${sql.table(WEBHOOKS_TABLE)} where "status" = 'pending' and "endpoint" = any(${[...endpoints]}::varchar[])`.execute(db)
  const ms = rows[0]?.ms
  return ms === null || ms === undefined ? Infinity : Math.max(0, Number(ms))
}

/** How an attempt ended: `retryInMs` null once it is delivered or has failed for good. */
export interface AttemptResult {
  ok: boolean
  statusCode: number | null
  durationMs: number
  error: string | null
  /** Failed and to be tried again in this many ms; null: delivered, or no attempt left (`failed`). */
  retryInMs: number | null
}

/**
 * Records an attempt in the row: delivered, failed for good, or pending again at its retry time.
 *
 * ```sql
 * update "content_api_webhook_deliveries" set "status" = $1, "status_code" = $2, "duration_ms" = $3, "error" = $4,
 *   "delivered_at" = case when $1 = 'delivered' then now() end,
 *   "next_attempt_at" = case when $5::double precision is null then "next_attempt_at" else now() + $5 * interval '1 millisecond' end,
 *   "log" = (case when jsonb_array_length("log") >= 50 then "log" - 0 else "log" end) || $6::jsonb
 * where "id" = $7
 * ```
 */
export async function recordAttempt (db: Kysely<any>, id: string, result: AttemptResult): Promise<void> {
  const status: DeliveryStatus = result.ok ? 'delivered' : result.retryInMs === null ? 'failed' : 'pending'
  const entry: AttemptLog = { at: new Date().toISOString(), statusCode: result.statusCode, durationMs: result.durationMs, error: result.error }
  await sql`update ${sql.table(WEBHOOKS_TABLE)} set "status" = ${status}, "status_code" = ${result.statusCode}::integer,
    "duration_ms" = ${result.durationMs}::integer, "error" = ${result.error}::text,
    "delivered_at" = case when ${status}::varchar = 'delivered' then now() end,
    "next_attempt_at" = case when ${result.retryInMs}::double precision is null then "next_attempt_at"
      else now() + ${result.retryInMs}::double precision * interval '1 millisecond' end,
    "log" = (case when jsonb_array_length("log") >= ${LOG_KEPT}::integer then "log" - 0 else "log" end) || ${JSON.stringify([entry])}::jsonb
    where "id" = ${id}`.execute(db)
}

/**
 * Gives back a claimed delivery that was not attempted to its end (the app is closing): due now
 * again, its attempt not counted.
 *
 * ```sql
 * update "content_api_webhook_deliveries" set "attempts" = greatest("attempts" - 1, 0), "next_attempt_at" = now() where "id" = $1 and "status" = 'pending'
 * ```
 */
export async function release (db: Kysely<any>, id: string): Promise<void> {
  await sql`update ${sql.table(WEBHOOKS_TABLE)} set "attempts" = greatest("attempts" - 1, 0), "next_attempt_at" = now()
    where "id" = ${id} and "status" = 'pending'`.execute(db)
}

/**
 * Due again now, with a fresh count of attempts, whatever its state (a delivered one is sent
 * again, with the same id and body). False when there is no such delivery.
 *
 * ```sql
 * update "content_api_webhook_deliveries" set "status" = 'pending', "attempts" = 0, "next_attempt_at" = now(), "delivered_at" = null where "id" = $1
 * ```
 */
export async function redeliver (db: Kysely<any>, id: string): Promise<boolean> {
  const result = await sql`update ${sql.table(WEBHOOKS_TABLE)} set "status" = 'pending', "attempts" = 0, "next_attempt_at" = now(), "delivered_at" = null
    where "id" = ${id}`.execute(db)
  return Number(result.numAffectedRows ?? 0) > 0
}

/**
 * The delivery log, newest first.
 *
 * ```sql
 * select * from "content_api_webhook_deliveries" where "status" = $1 order by "seq" desc limit $2
 * ```
 */
export async function listDeliveries (db: Kysely<any>, filter: { status?: DeliveryStatus, endpoint?: string, limit: number }): Promise<WebhookDelivery[]> {
  let query = db.selectFrom(WEBHOOKS_TABLE).selectAll()
  if (filter.status !== undefined) query = query.where('status', '=', filter.status)
  if (filter.endpoint !== undefined) query = query.where('endpoint', '=', filter.endpoint)
  const rows = await query.orderBy('seq', 'desc').limit(filter.limit).execute()
  return rows.map((row: Record<string, any>) => ({
    id: row.id,
    endpoint: row.endpoint,
    event: row.event,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: new Date(row.next_attempt_at),
    createdAt: new Date(row.created_at),
    deliveredAt: row.delivered_at === null ? null : new Date(row.delivered_at),
    statusCode: row.status_code,
    durationMs: row.duration_ms,
    error: row.error,
    log: typeof row.log === 'string' ? JSON.parse(row.log) : row.log
  }))
}
