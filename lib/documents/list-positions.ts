import { quoteIdent } from '../model/naming.js'

/**
 * Where a new link goes in the related row's list (the link table's other order column: a new
 * article at the end of its category's list of articles): at `2^31 +` an id drawn from the link
 * table's sequence, which becomes the link's own id. (A document's other version gets the same
 * position in that list: the direct create draws one id per related row for both versions, and
 * publishing copies the draft's links with their positions.)
 *
 * - **Unique without waiting.** The sequence never hands one value out twice, so concurrent
 *   writers appending to one list never meet at one position, and need no lock on the list, nor
 *   its `max`, to stay apart (document-locks.ts: writers linking the same document run side by
 *   side).
 * - **At the end.** A link made later draws a larger id, so it lands after every link appended
 *   before it. It also lands after every position a reordering writes: a list written in its own
 *   order gets its indexes, 1, 2, ... n, and no list holds 2^31 links (a serial id is at most
 *   2^31 - 1). Two writers appending at once are ordered by the ids they drew.
 * - **Exact.** The order columns are `double precision`, which holds every integer up to 2^53.
 *
 * Where one id serves as the row's id and its position, it is drawn where it is computed once per
 * row: in a sub-select's or a materialized CTE's select list (PostgreSQL never merges either into
 * the outer query when it calls a volatile function).
 *
 * ```sql
 * insert into "articles_authors_lnk" ("id", "article_id", "author_id", "author_ord", "article_ord")
 * select s."k", $1::integer, s."target", s."position", 2147483648 + s."k"
 * from (select nextval(pg_get_serial_sequence('"articles_authors_lnk"', 'id'))::integer as "k", v."target", v."position"
 *   from (values ($2::integer, $3::double precision)) as v("target", "position")) as s
 * ```
 */
export const APPENDED_BASE = 2 ** 31

/** The SQL of a new id of `linkTable`'s rows, drawn from its sequence (names come from models, never from requests). */
export function nextLinkId (linkTable: string): string {
  return `nextval(pg_get_serial_sequence('${quoteIdent(linkTable).replaceAll("'", "''")}', 'id'))::integer`
}
