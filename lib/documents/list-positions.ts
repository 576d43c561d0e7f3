import { quoteIdent } from '../model/naming.js'

/**
 * Where a new link goes in the related row's list (the link table's other order column: a new
 * article at the end of its category's list of articles): at `2^31 + its own id`.
 *
 * - **Unique without waiting.** Link ids come from the table's sequence, which never hands one
 *   value out twice, so concurrent writers appending to one list never meet at one position, and
 *   need no lock on the list, nor its `max`, to stay apart (document-locks.ts: writers linking the
 *   same document run side by side).
 * - **At the end.** A link made later has a larger id, so it lands after every link appended
 *   before it; and after every position a reordering writes: a list written in its own order
 *   gets positions 1, 2, ... n, all below 2^31 (a serial id is at most 2^31 - 1). Two writers
 *   appending at once are ordered by the ids they drew.
 * - **Exact.** The order columns are `double precision`, which holds every integer up to 2^53.
 *
 * The id is drawn in a sub-select and used twice, for the row and for its position: a sub-select
 * whose select list calls a volatile function is computed once per row, never merged into the
 * outer query.
 *
 * ```sql
 * insert into "articles_authors_lnk" ("id", "article_id", "author_id", "author_ord", "article_ord")
 * select s."k", s."source", s."target", s."position", 2147483648 + s."k"
 * from (select nextval(pg_get_serial_sequence('"articles_authors_lnk"', 'id'))::integer as "k", ... ) as s
 * ```
 */
export const APPENDED_BASE = 2 ** 31

/** The SQL of a new id of `linkTable`'s rows, drawn from its sequence (names come from models, never from requests). */
export function nextLinkId (linkTable: string): string {
  return `nextval(pg_get_serial_sequence('${quoteIdent(linkTable).replaceAll("'", "''")}', 'id'))::integer`
}
