import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'

/**
 * One executed statement: its kind and every table it reads or writes. A statement executed
 * already compiled (`executeQuery(compiledQuery)`: the direct create's, lib/documents/create-direct.ts)
 * reaches plugins only with its result: its kind is `CompiledQuery` and its tables unknown.
 */
export interface Statement { kind: string, tables: string[] }

/** The tables a statement reads or writes, found anywhere in its operation tree (raw SQL included). */
function tablesOf (node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) tablesOf(item, into)
  } else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>
    if (record.kind === 'TableNode') {
      const name = (record.table as { identifier?: { name?: unknown } } | undefined)?.identifier?.name
      if (typeof name === 'string') into.add(name)
    }
    for (const value of Object.values(record)) tablesOf(value, into)
  }
  return into
}

/**
 * The access check reads a role's permissions (and an API token) at most once per cache TTL
 * (lib/auth/permissions.ts, lib/auth/authenticate.ts); such a statement is the auth layer's, not
 * the request's query.
 */
export const isAuthLookup = (statement: Statement): boolean =>
  statement.tables.includes('up_permissions') || statement.tables.includes('strapi_api_tokens')

/**
 * A Kysely plugin that records every statement executed through the Kysely it is plugged into,
 * for tests proving "one SQL statement per request".
 */
export class StatementCounter implements KyselyPlugin {
  readonly #pending = new Map<unknown, Statement>()
  executed: Statement[] = []

  transformQuery (args: PluginTransformQueryArgs): RootOperationNode {
    this.#pending.set(args.queryId, { kind: args.node.kind, tables: [...tablesOf(args.node)].sort() })
    return args.node
  }

  async transformResult (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.executed.push(this.#pending.get(args.queryId) ?? { kind: 'CompiledQuery', tables: [] })
    this.#pending.delete(args.queryId)
    return args.result
  }

  /** The statements `fn` ran, the access check's cached lookups left out. */
  async during (fn: () => Promise<unknown>): Promise<Statement[]> {
    this.executed = []
    await fn()
    return this.executed.filter((s) => !isAuthLookup(s))
  }
}
