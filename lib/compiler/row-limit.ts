import { sql, type RawBuilder } from 'kysely'

/**
 * A row limit written into the statement's text (`limit 25`), the one request value the compiler
 * does not pass as a parameter. Reads run as named statements (lib/db/prepared-statements.ts),
 * and PostgreSQL keeps one plan for all their executions (a generic plan) only when its estimated
 * cost is close to that of a plan made for the values at hand. With `limit $1` it assumes a
 * tenth of the table, and a page's generic plan then joins every row (a list of 25 articles of
 * 10,000 with their category and authors: 4.6 ms a run), so each execution was planned anew:
 * 0.45 ms of that statement's 1.45 ms. With the limit known, the generic plan is the custom one,
 * and it is kept.
 *
 * Only an integer is written, checked here (page sizes and limits are validated integers, bounded
 * by `rest.maxLimit` or `graphql.amountLimit`), so a statement differs by its page size at most.
 * An offset takes any value, so it stays a parameter, and PostgreSQL plans a later page anew at
 * each execution; a first page has none (find.ts `pageRows`), and most reads are first pages.
 */
export function rowLimit (n: number): RawBuilder<number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`a row limit must be a non-negative integer, not ${String(n)}`)
  return sql.lit(n)
}
