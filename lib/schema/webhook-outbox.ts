import { WEBHOOKS_TABLE, indexName } from '../model/naming.js'
import type { TableSpec } from './desired-schema.js'

/**
 * The webhook outbox (lib/webhooks/outbox.ts): one row per event and endpoint, inserted in the
 * transaction of the write that made the event, so that the event exists exactly when the change
 * does. The row is also the delivery log: its state, the count of attempts, the last attempt's
 * status code, duration and error, and `log`, every attempt (the last 50). `seq` orders
 * deliveries due at the same time as their events were queued.
 *
 * ```sql
 * create table "content_api_webhook_deliveries" ("id" varchar(36) primary key, "seq" bigserial not null,
 *   "endpoint" varchar(255) not null, "event" varchar(64) not null, "payload" text not null,
 *   "status" varchar(16) not null default 'pending', "attempts" integer not null default 0,
 *   "next_attempt_at" timestamp(3) with time zone not null default now(),
 *   "created_at" timestamp(3) with time zone not null default now(),
 *   "delivered_at" timestamp(3) with time zone, "status_code" integer, "duration_ms" integer,
 *   "error" text, "log" jsonb not null default '[]')
 * create index "content_api_webhook_deliveries_status_next_attempt_at_idx" on "content_api_webhook_deliveries" ("status", "next_attempt_at")
 * ```
 */
export const webhookOutboxTable: TableSpec = {
  name: WEBHOOKS_TABLE,
  columns: [
    { name: 'id', type: 'varchar(36)', nullable: false, primaryKey: true },
    { name: 'seq', type: 'bigserial', nullable: false },
    { name: 'endpoint', type: 'varchar(255)', nullable: false },
    { name: 'event', type: 'varchar(64)', nullable: false },
    { name: 'payload', type: 'text', nullable: false },
    { name: 'status', type: 'varchar(16)', nullable: false, default: '\'pending\'' },
    { name: 'attempts', type: 'integer', nullable: false, default: '0' },
    { name: 'next_attempt_at', type: 'timestamp(3) with time zone', nullable: false, default: 'now()' },
    { name: 'created_at', type: 'timestamp(3) with time zone', nullable: false, default: 'now()' },
    { name: 'delivered_at', type: 'timestamp(3) with time zone', nullable: true },
    { name: 'status_code', type: 'integer', nullable: true },
    { name: 'duration_ms', type: 'integer', nullable: true },
    { name: 'error', type: 'text', nullable: true },
    { name: 'log', type: 'jsonb', nullable: false, default: '\'[]\'::jsonb' }
  ],
  indexes: [{ name: indexName(WEBHOOKS_TABLE, ['status', 'next_attempt_at'], 'idx'), columns: ['status', 'next_attempt_at'] }],
  foreignKeys: []
}
