import { writeFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { generateTypes } from '../model/generate-types.js'
import type { CliGroup } from './command.js'
import { loadOptions } from './config.js'

/**
 * `types --out FILE`: the models' TypeScript types for the client (docs/client.md), from the
 * config's `models` and `components`; nothing connects to the database.
 */
export const typesCommands: CliGroup = {
  usage: ['types --out FILE  write the models\' TypeScript types for the client (docs/client.md)'],
  options: { out: { type: 'string' } },
  async run ({ command, config, values, io }) {
    if (command !== undefined) return null
    const out = values.out as string | undefined
    if (out === undefined) throw new UsageError('FCA_ERR_CLI_TYPES_OUT')
    const options = await loadOptions(config)
    await writeFile(out, generateTypes(options.models ?? [], options.components ?? {}))
    io.out(`Wrote the types of ${options.models?.length ?? 0} content types to ${out}.`)
    return 0
  }
}
