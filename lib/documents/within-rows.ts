import type { CompiledQuery } from 'kysely'
import type { QueryRunner } from '../db/connect.js'
import { overLimit } from '../query/index.js'

const tooManyRows = (max: number): Error => overLimit('maxRows', max, `The response would have more than ${max} rows, populated rows included`)

/**
 * Runs a read under its row budget (lib/compiler/row-budget.ts): its probe first when it has one
 * of its own, refusing past `max` before the read runs; then the read, refused past `max` when it
 * counted its rows inline (it rendered nothing then). Without `max`, just the read.
 */
export async function withinRows<R extends { rows?: number } | undefined> (
  db: QueryRunner, probe: CompiledQuery<{ n: number }> | null, max: number | undefined, read: () => Promise<R>
): Promise<R> {
  if (max === undefined) return await read()
  if (probe !== null && (await db.executeQuery(probe)).rows[0].n > max) throw tooManyRows(max)
  const row = await read()
  checkRows(row, max)
  return row
}

/** Refuses a read's row past `max` when the read counted its rows inline (it rendered nothing then). */
export function checkRows (row: { rows?: number } | undefined, max: number): void {
  if (row?.rows !== undefined && row.rows > max) throw tooManyRows(max)
}
