import type { ParseArgsConfig } from 'node:util'

export interface CliIo {
  out: (line: string) => void
  err: (line: string) => void
}

/** What a command group is given: its sub-command and arguments, the options parsed, where to print. */
export interface CliRun {
  /** The word after the group (`create` of `token create`); undefined when none was given. */
  command: string | undefined
  /** The positional arguments after it. */
  args: string[]
  values: Record<string, string | boolean | undefined>
  /** The config module's path (`--config`, or the default found). */
  config: string
  io: CliIo
}

/**
 * A group of commands, the first word of the command line (`token`, `schema`): the lines it adds
 * to the usage, the options only it takes (the CLI refuses them for another group), and its run,
 * which returns the exit code, or null for a sub-command it does not have (the usage is printed).
 */
export interface CliGroup {
  usage: string[]
  options: NonNullable<ParseArgsConfig['options']>
  run: (run: CliRun) => Promise<number | null>
}
