/**
 * Strapi's query syntax, serialized in the bracket form its REST API (and `qs`) reads:
 * `{ filters: { title: { $eq: 'a' } }, fields: ['title'] }` is
 * `filters[title][$eq]=a&fields[0]=title`. Our own, so that the client carries no dependency:
 * arrays by index, `undefined` and empty arrays left out, `null` as an empty value, a Date as its
 * ISO string. Keys keep their brackets readable; each key segment and each value is
 * percent-encoded.
 *
 * @example
 * toQueryString({ populate: { category: { fields: ['name'] } }, pagination: { page: 2 } })
 * // 'populate[category][fields][0]=name&pagination[page]=2'
 */
export function toQueryString (params: Record<string, unknown>): string {
  const pairs: string[] = []
  for (const [key, value] of Object.entries(params)) add(pairs, encodeKey(key), value)
  return pairs.join('&')
}

function add (pairs: string[], key: string, value: unknown): void {
  if (value === undefined || typeof value === 'function') return
  if (value === null) {
    pairs.push(`${key}=`)
  } else if (value instanceof Date) {
    pairs.push(`${key}=${encodeURIComponent(value.toISOString())}`)
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => { add(pairs, `${key}[${index}]`, item) })
  } else if (typeof value === 'object') {
    for (const [child, item] of Object.entries(value)) add(pairs, `${key}[${encodeKey(child)}]`, item)
  } else {
    pairs.push(`${key}=${encodeURIComponent(String(value))}`)
  }
}

/** A key segment percent-encoded, but for `$`, so that operators stay readable (`[$eq]`): qs reads both. */
const encodeKey = (key: string): string => encodeURIComponent(key).replace(/%24/g, '$')
