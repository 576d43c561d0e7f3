import { connect } from '../db/connect.js'
import { createRegistry } from '../model/registry.js'
import { resolveOptions } from '../options/index.js'
import { describeStatement } from '../schema/describe-statement.js'
import { ownTables } from '../own-tables.js'
import { syncSchema, type SchemaPlan, type SchemaSyncResult } from '../schema/sync.js'
import type { CliGroup, CliIo } from './command.js'
import { loadOptions } from './config.js'

/**
 * The plan as a person reviews it: a line per change, its SQL indented below; `+` adds or
 * loosens, `!` is destructive (with why, and whether it was applied).
 *
 * ```
 * + add column articles.views integer
 *     alter table "articles" add column "views" integer
 * ! drop column articles.subtitle (destructive: column is no longer in the model; dropping it deletes its data)
 *     alter table "articles" drop column "subtitle"
 * ```
 */
function printPlan (plan: SchemaPlan, io: CliIo): void {
  for (const statement of plan.statements) io.out(`+ ${describeStatement(statement)}\n    ${statement}`)
  for (const change of plan.destructive) {
    const why = change.description.slice(change.description.indexOf(': ') + 2)
    io.out(`! ${describeStatement(change.sql)} (destructive: ${why})\n    ${change.sql}`)
  }
}

/** Runs schema sync in `mode` with the application's options, on a connection of its own, closed after. */
async function sync (config: string, mode: 'dryRun' | 'apply', io: CliIo): Promise<{ result: SchemaSyncResult, allowDestructive: boolean }> {
  const options = resolveOptions(await loadOptions(config))
  const registry = createRegistry(options.models, options.components)
  const handle = connect(options.db, options.pool, { warn: (_obj, msg) => { io.err(`fastify-content-api: ${msg}`) } })
  try {
    const { allowDestructive } = options.schemaSync
    const result = await handle.admin(async (db) => await syncSchema(db, registry, { mode, allowDestructive }, undefined, ownTables(options)))
    return { result, allowDestructive }
  } finally {
    await handle.close()
  }
}

/**
 * `schema plan` and `schema apply`: schema sync run on its own, whatever `schemaSync.mode` the
 * application starts with (`off` when deployments apply the schema beforehand). Neither boots
 * the content API. Exit codes: 0 when the database matches the models (after `apply`), 2 when
 * changes are pending (`plan`: any; `apply`: destructive ones `schemaSync.allowDestructive`
 * does not allow), 1 on an error.
 */
export const schemaCommands: CliGroup = {
  usage: [
    'schema plan     the changes schema sync would make, one line each with its SQL (exit code 2 when some are pending)',
    'schema apply    make them; destructive ones only with schemaSync.allowDestructive (exit code 2 when some are left)'
  ],
  options: {},
  async run ({ command, config, values, io }) {
    if (command !== 'plan' && command !== 'apply') return null
    const { result, allowDestructive } = await sync(config, command === 'plan' ? 'dryRun' : 'apply', io)
    const { statements, destructive } = result
    const pending = command === 'plan' ? statements.length + destructive.length : allowDestructive ? 0 : destructive.length
    if (values.json === true) {
      io.out(JSON.stringify({ statements, destructive, applied: result.applied }, null, 2))
      return pending === 0 ? 0 : 2
    }
    if (statements.length + destructive.length === 0) {
      io.out('The database matches the models: nothing to do.')
      return 0
    }
    printPlan(result, io)
    const left = `${destructive.length} destructive change(s) ${allowDestructive ? '' : 'not '}allowed by schemaSync.allowDestructive`
    if (command === 'plan') {
      io.out(`Plan: ${statements.length} change(s), ${left}. Apply with: fastify-content-api schema apply`)
    } else {
      const ran = statements.length + (allowDestructive ? destructive.length : 0)
      io.out(`Applied ${ran} change(s)${destructive.length === 0 || allowDestructive ? '' : `; left ${destructive.length} destructive change(s): set schemaSync.allowDestructive: true to apply them, or apply them yourself`}.`)
    }
    return pending === 0 ? 0 : 2
  }
}
