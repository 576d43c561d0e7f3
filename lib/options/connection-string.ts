/**
 * Whether a connection string is one PostgreSQL's driver reads as meant: a `postgres://` or
 * `postgresql://` URL, pg's `socket:` URL, or a Unix socket directory (`/var/run/postgresql dbname`). pg takes
 * anything else as a URL relative to `postgres://base`, so `mysql://db/app` would be tried as
 * PostgreSQL on host `db` and `app.db` would fail later as `getaddrinfo ENOTFOUND base`: both
 * are refused here, by the option's name, with the scheme (never the string, which may hold a
 * password).
 *
 * @example
 * connectionStringProblem('mysql://root@db/app', 'db') // 'db: mysql:// is not a PostgreSQL connection string (expected postgres:// or postgresql://)'
 * connectionStringProblem('postgres://app@db/app', 'db') // null
 */
export function connectionStringProblem (value: string, option: string): string | null {
  if (value.startsWith('/')) return null
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1].toLowerCase()
  if (scheme === 'postgres' || scheme === 'postgresql' || scheme === 'socket') return null
  const expected = '(expected postgres:// or postgresql://, e.g. postgres://user:password@host:5432/database)'
  if (scheme === undefined) return `${option}: not a PostgreSQL connection string, it has no scheme ${expected}`
  return `${option}: ${scheme}${value.slice(scheme.length + 1, scheme.length + 3) === '//' ? '://' : ':'} is not a PostgreSQL connection string ${expected}`
}
