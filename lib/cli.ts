import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import contentApi from './index.js'
import type { ContentApiOptions } from './options/index.js'
import type { ApiTokenType } from './auth/api-tokens.js'
import { UsageError } from './errors.js'
import { generateTypes } from './model/generate-types.js'

const USAGE = `Usage: fastify-content-api token <command> [options]
       fastify-content-api types --out FILE [--config PATH]

Commands:
  types --out FILE   write the models' TypeScript types for the client (docs/client.md)
  token create --name NAME --type read-only|full-access|custom [--permissions a,b] [--lifespan-days N] [--description TEXT]
  token list
  token revoke <id|name>
  token regenerate <id|name>

Options:
  --config PATH   module whose default export is the plugin's options (models, db, auth...),
                  or a function returning them; default ./content-api.config.js
  --json          print JSON
`

const DAY_MS = 24 * 60 * 60 * 1000

export interface CliIo {
  out: (line: string) => void
  err: (line: string) => void
}

/** Loads the application's plugin options from its config module. */
async function loadOptions (path: string): Promise<ContentApiOptions> {
  const module = await import(pathToFileURL(resolve(path)).href) as { default?: unknown }
  const exported = module.default
  const options = typeof exported === 'function' ? await (exported as () => unknown)() : exported
  if (typeof options !== 'object' || options === null) throw new UsageError('FCA_ERR_CLI_CONFIG', path)
  return options as ContentApiOptions
}

/**
 * The API-token CLI: boots the content API with the application's own options (same database,
 * same salt, so the keys it prints work against the running application), runs one command,
 * and exits. Returns the exit code.
 */
export async function main (argv: string[], io: CliIo = { out: console.log, err: console.error }): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string', default: './content-api.config.js' },
        name: { type: 'string' },
        type: { type: 'string' },
        description: { type: 'string' },
        permissions: { type: 'string' },
        'lifespan-days': { type: 'string' },
        json: { type: 'boolean', default: false },
        out: { type: 'string' },
        help: { type: 'boolean', default: false }
      }
    })
  } catch (err) {
    io.err(`fastify-content-api: ${(err as Error).message}`)
    io.out(USAGE)
    return 1
  }
  const { values, positionals } = parsed
  const [group, command, target] = positionals
  if (group === 'types' && values.help !== true) return await writeTypes(values.config!, values.out, io)
  if (values.help === true || group !== 'token' || command === undefined) {
    io.out(USAGE)
    return values.help === true ? 0 : 2
  }
  // A first start on a new PGlite data directory initialises it, which may take longer than
  // Fastify's default plugin timeout on a slow machine.
  const app = Fastify({ logger: false, pluginTimeout: 0 })
  try {
    const options = await loadOptions(values.config!)
    if ((command === 'create' || command === 'regenerate') && options.auth?.apiTokenSalt === undefined) {
      // The plugin would use a generated salt (stored in the database outside production), and the
      // key printed would never work against an application that is given its own.
      throw new UsageError('FCA_ERR_CLI_NO_SALT', command, values.config!)
    }
    await app.register(contentApi, options)
    await app.ready()
    const tokens = app.contentApi.apiTokens
    const print = (value: unknown, text: string): void => io.out(values.json === true ? JSON.stringify(value, null, 2) : text)
    const idOrName = (value: string | undefined): number | string => {
      if (value === undefined) throw new UsageError('FCA_ERR_CLI_NO_TARGET', command)
      return /^\d+$/.test(value) ? Number(value) : value
    }
    switch (command) {
      case 'create': {
        if (values.name === undefined || values.type === undefined) throw new UsageError('FCA_ERR_CLI_CREATE_ARGUMENTS')
        const days = values['lifespan-days']
        const created = await tokens.create({
          name: values.name,
          type: values.type as ApiTokenType,
          description: values.description,
          permissions: values.permissions?.split(',').map((p) => p.trim()).filter((p) => p !== ''),
          lifespan: days === undefined ? null : Number(days) * DAY_MS
        })
        print(created, `Created ${created.type} token "${created.name}" (id ${created.id}). Its key, shown only now:\n${created.accessKey}`)
        return 0
      }
      case 'list': {
        const list = await tokens.list()
        print(list, list.length === 0
          ? 'No API tokens.'
          : list.map((t) => `${t.id}\t${t.name}\t${t.type}\texpires ${t.expiresAt ?? 'never'}\tlast used ${t.lastUsedAt ?? 'never'}`).join('\n'))
        return 0
      }
      case 'revoke': {
        const revoked = await tokens.revoke(idOrName(target))
        print({ revoked }, revoked ? `Revoked ${target}.` : `No token ${target}.`)
        return revoked ? 0 : 1
      }
      case 'regenerate': {
        const key = await tokens.regenerate(idOrName(target))
        print({ accessKey: key }, key === null ? `No token ${target}.` : `New key for ${target}, shown only now:\n${key}`)
        return key === null ? 1 : 0
      }
      default:
        io.out(USAGE)
        return 2
    }
  } catch (err) {
    io.err(`fastify-content-api: ${(err as Error).message}`)
    return 1
  } finally {
    await app.close()
  }
}

/** `types --out FILE`: the models' types from the config's `models` and `components`; nothing connects to the database. */
async function writeTypes (config: string, out: string | undefined, io: CliIo): Promise<number> {
  try {
    if (out === undefined) throw new UsageError('FCA_ERR_CLI_TYPES_OUT')
    const options = await loadOptions(config)
    await writeFile(out, generateTypes(options.models ?? [], options.components ?? {}))
    io.out(`Wrote the types of ${options.models?.length ?? 0} content types to ${out}.`)
    return 0
  } catch (err) {
    io.err(`fastify-content-api: ${(err as Error).message}`)
    return 1
  }
}
