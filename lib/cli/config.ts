import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ContentApiOptions } from '../options/index.js'
import { UsageError } from '../errors.js'
import { importOptional } from '../optional-import.js'

/** The config modules looked for when `--config` is not given, in this order. */
export const DEFAULT_CONFIGS = ['content-api.config.js', 'content-api.config.mjs', 'content-api.config.ts', 'content-api.config.mts']

const TYPESCRIPT = /\.[cm]?tsx?$/

/** `--config`, else the first default config of the working directory (the `.js` one when none exists, to be reported missing). */
export function configPath (given: string | undefined): string {
  return given ?? DEFAULT_CONFIGS.find((name) => existsSync(name)) ?? `./${DEFAULT_CONFIGS[0]}`
}

/**
 * Imports the config module. A TypeScript one is run through `tsx`'s API (`tsImport`: the file
 * and what it imports, `./models.js` finding `models.ts` as under `tsc`), without a loader for
 * the whole process; Node 20 runs no TypeScript on its own. `tsx` is an optional peer
 * dependency: without it, a `MissingDependencyError` says to install it.
 */
async function importConfig (path: string): Promise<{ default?: unknown }> {
  const url = pathToFileURL(resolve(path)).href
  if (!TYPESCRIPT.test(path)) return await import(url) as { default?: unknown }
  const { tsImport } = await importOptional(async () => await import('tsx/esm/api'), `--config ${path} (a TypeScript config)`, ['tsx'])
  return await tsImport(url, import.meta.url) as { default?: unknown }
}

/**
 * Loads the application's plugin options: the config module's default export, or what the
 * function it exports returns (awaited).
 */
export async function loadOptions (path: string): Promise<ContentApiOptions> {
  const module = await importConfig(path)
  // A TypeScript config outside a `"type": "module"` package is compiled to CommonJS: its
  // `export default` is then the `default` of the module.exports namespace's default.
  const cjs = module.default as { __esModule?: unknown, default?: unknown } | undefined
  const exported = cjs?.__esModule === true ? cjs.default : module.default
  const options = typeof exported === 'function' ? await (exported as () => unknown)() : exported
  if (typeof options !== 'object' || options === null) throw new UsageError('FCA_ERR_CLI_CONFIG', path)
  return options as ContentApiOptions
}
