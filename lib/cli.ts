import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { CliGroup, CliIo, CliRun } from './cli/command.js'
import { configPath, DEFAULT_CONFIGS } from './cli/config.js'
import { schemaCommands } from './cli/schema.js'
import { tokenCommands } from './cli/token.js'
import { typesCommands } from './cli/types.js'

export type { CliIo } from './cli/command.js'

/** The command groups, by their first word: a new one is a module of lib/cli/ and a line here. */
const GROUPS: Record<string, CliGroup> = {
  token: tokenCommands,
  schema: schemaCommands,
  types: typesCommands
}

const groupOf = (name: string | undefined): CliGroup | undefined => name !== undefined && Object.hasOwn(GROUPS, name) ? GROUPS[name] : undefined

/** The options every group takes. */
const COMMON: NonNullable<ParseArgsConfig['options']> = {
  config: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false }
}

const USAGE = `Usage: fastify-content-api <command> [options]

Commands:
${Object.values(GROUPS).flatMap((group) => group.usage).map((line) => `  ${line}`).join('\n')}

Options:
  --config PATH   module whose default export is the plugin's options (models, db, auth...),
                  or a function returning them; JavaScript or TypeScript (run through tsx);
                  default ./${DEFAULT_CONFIGS.join(', ./')}, the first found
  --json          print JSON
`

/**
 * The CLI: the first word names a group of commands (GROUPS), which runs one command with the
 * application's own config module. Returns the exit code: 0 done, 1 failed (the error on
 * stderr), 2 usage printed (or, for `schema`, changes pending).
 */
export async function main (argv: string[], io: CliIo = { out: console.log, err: console.error }): Promise<number> {
  let parsed
  try {
    // Every group's options first, to find the group; then only its own and the common ones.
    const all = Object.assign({}, COMMON, ...Object.values(GROUPS).map((group) => group.options))
    const group = groupOf(parseArgs({ args: argv, allowPositionals: true, options: all }).positionals[0])
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...COMMON, ...group?.options } })
  } catch (err) {
    io.err(`fastify-content-api: ${(err as Error).message}`)
    io.out(USAGE)
    return 1
  }
  const { values, positionals: [name, command, ...args] } = parsed
  const group = groupOf(name)
  if (values.help === true || group === undefined) {
    io.out(USAGE)
    return values.help === true ? 0 : 2
  }
  try {
    const code = await group.run({ command, args, values: values as CliRun['values'], config: configPath(values.config as string | undefined), io })
    if (code !== null) return code
    io.out(USAGE)
    return 2
  } catch (err) {
    io.err(`fastify-content-api: ${(err as Error).message}`)
    return 1
  }
}
