import type { ApiTokenType } from '../auth/api-tokens.js'
import { UsageError } from '../errors.js'
import type { CliGroup } from './command.js'
import { loadOptions } from './config.js'

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * `token create|list|revoke|regenerate`: boots the content API with the application's own options
 * (same database, same salt, so the keys it prints work against the running application), runs
 * one command, and closes it.
 */
export const tokenCommands: CliGroup = {
  usage: [
    'token create --name NAME --type read-only|full-access|custom [--permissions a,b] [--lifespan-days N] [--description TEXT]',
    'token list',
    'token revoke <id|name>',
    'token regenerate <id|name>'
  ],
  options: {
    name: { type: 'string' },
    type: { type: 'string' },
    description: { type: 'string' },
    permissions: { type: 'string' },
    'lifespan-days': { type: 'string' }
  },
  async run ({ command, args: [target], values, config, io }) {
    if (command === undefined || !['create', 'list', 'revoke', 'regenerate'].includes(command)) return null
    // Loaded here, not with the CLI: `--help`, `schema` and `types` never start the plugin (about
    // 1.2 s of CPU saved per run of those).
    const [{ default: Fastify }, { default: contentApi }] = await Promise.all([import('fastify'), import('../index.js')])
    // A first start on a new PGlite data directory initialises it, which may take longer than
    // Fastify's default plugin timeout on a slow machine.
    const app = Fastify({ logger: false, pluginTimeout: 0 })
    try {
      const options = await loadOptions(config)
      if ((command === 'create' || command === 'regenerate') && options.auth?.apiTokenSalt === undefined) {
        // The plugin would use a generated salt (stored in the database outside production), and the
        // key printed would never work against an application that is given its own.
        throw new UsageError('FCA_ERR_CLI_NO_SALT', command, config)
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
          const { name, type, description, permissions } = values as Record<string, string | undefined>
          if (name === undefined || type === undefined) throw new UsageError('FCA_ERR_CLI_CREATE_ARGUMENTS')
          const days = values['lifespan-days'] as string | undefined
          const created = await tokens.create({
            name,
            type: type as ApiTokenType,
            description,
            permissions: permissions?.split(',').map((p) => p.trim()).filter((p) => p !== ''),
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
        default: {
          const key = await tokens.regenerate(idOrName(target))
          print({ accessKey: key }, key === null ? `No token ${target}.` : `New key for ${target}, shown only now:\n${key}`)
          return key === null ? 1 : 0
        }
      }
    } finally {
      await app.close()
    }
  }
}
