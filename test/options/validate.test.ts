import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Ajv } from 'ajv'
import { ConfigurationError } from '../../lib/index.js'
import { OptionsSchema, resolveOptions, type ContentApiOptions } from '../../lib/options/index.js'
import { UploadOptionsSchema, resolveUploadOptions } from '../../lib/options/upload.js'
import { WebhookOptionsSchema } from '../../lib/options/webhooks.js'
import type { UploadProvider } from '../../lib/options/upload-provider.js'
import { resolveSchema, schemaKey } from '../../lib/options/validate.js'
import { validators } from '../../lib/options/validators.generated.js'
import { article } from '../fixtures/models.js'

/**
 * The options' schemas are plain JSON Schema run by Ajv (lib/options/validate.ts): defaults are
 * written into a copy, never into the application's objects; what the schemas leave open stays
 * the application's own object; TypeBox is not loaded at run time.
 */

const problemsOf = (options: unknown): string[] => {
  try {
    resolveOptions(options as ContentApiOptions)
  } catch (err) {
    if (err instanceof ConfigurationError) return err.problems
    throw err
  }
  return []
}

t.test('every schema is valid JSON Schema (the meta-schema check skipped at start-up)', async (t) => {
  const ajv = new Ajv({ strict: true, strictSchema: true })
  for (const [name, schema] of Object.entries({ OptionsSchema, UploadOptionsSchema, WebhookOptionsSchema })) {
    t.ok(ajv.validateSchema(schema), `${name}: ${ajv.errorsText(ajv.errors)}`)
  }
})

t.test('defaults are filled into a copy: the application\'s objects are left as given', async (t) => {
  const auth = { jwtSecret: 'x'.repeat(16), apiTokenSalt: 'y'.repeat(16), register: { allowedFields: ['bio'] }, rateLimit: { max: 3 } }
  const rest = { defaultLimit: 5 }
  const upload = { local: { directory: 'files' } }
  const input = { models: [article], auth, rest, upload }
  const before = structuredClone(input)
  const resolved = resolveOptions(input)
  t.same(input, before, 'nothing added to the options given')
  t.same(resolved.auth.register, { allowedFields: ['bio'], enabled: true, defaultRole: 'authenticated', emailConfirmation: false })
  t.same(resolved.auth.rateLimit, { max: 3, timeWindow: 60000, nameSpace: 'fastify-content-api:rate-limit:' }, 'a union member gets its own defaults')
  t.equal(resolved.rest.defaultLimit, 5)
  t.equal(resolved.rest.maxLimit, 100)
  t.same(resolved.upload.local, { directory: 'files', baseUrl: '/uploads', serve: true })
  t.equal(resolved.auth.rateLimit !== false && resolved.auth.rateLimit.max, 3)

  // Two resolutions share no default object: changing one leaves the other (and the next) alone.
  const first = resolveOptions({ models: [article] })
  first.i18n.locales.push('fr')
  first.auth.register.allowedFields.push('bio')
  const second = resolveOptions({ models: [article] })
  t.same(second.i18n.locales, ['en'])
  t.same(second.auth.register.allowedFields, [])
})

t.test('what the schemas leave open is the application\'s own object', async (t) => {
  class FakeRedis {
    status = 'ready'
    defineCommand (): void {}
    on (): this { return this }
    off (): this { return this }
  }
  const redis = new FakeRedis()
  const send = (): void => {}
  const policies = { isOwner: () => true }
  const provider: UploadProvider = { name: 'memory', upload: async () => ({ url: '/uploads/x' }), delete: async () => {} }
  const models = [article]
  const resolved = resolveOptions({
    models,
    policies,
    auth: { rateLimit: { redis }, email: { send }, urls: { resetPassword: 'https://app.example/reset' } },
    upload: { provider }
  })
  t.equal(resolved.auth.rateLimit !== false && resolved.auth.rateLimit.redis, redis, 'the Redis client')
  t.equal(resolved.auth.email?.send, send, 'the email sender')
  t.equal(resolved.policies, policies, 'the policies')
  t.equal(resolved.upload.provider, provider, 'the upload provider')
  t.equal(resolved.models[0], article, 'the models')
  t.same(resolveUploadOptions(undefined).breakpoints, { large: 1000, medium: 750, small: 500 })
})

t.test('problems: unknown keys listed once per object, unions of constants as their values', async (t) => {
  t.same(problemsOf({ models: [article], rest: { a: 1, b: 2 }, c: 3 }), ['options: unknown option(s) c', 'rest: unknown option(s) a, b'])
  t.same(problemsOf({ models: [article], schemaSync: { mode: 5 } }), ['schemaSync.mode: must be one of "apply", "dryRun", "off"'])
  // An object for `false | { max, ... }`: its member's problems, and the union's.
  t.same(problemsOf({ models: [article], auth: { rateLimit: { max: 0, every: 1 } } }), [
    'auth.rateLimit: must be boolean',
    'auth.rateLimit: unknown option(s) every',
    'auth.rateLimit.max: must be >= 1',
    'auth.rateLimit: must be one of false'
  ])
  t.same(problemsOf({ models: [article], upload: { maxFiles: 1.5, local: { nope: true } } }).sort(), ['upload.local: unknown option(s) nope', 'upload.maxFiles: must be integer'])
})

t.test('the options\' validators are generated code, up to date with the schemas (npm run build:validators)', async (t) => {
  const { generate } = await import('../../scripts/build-options-validators.js')
  const file = fileURLToPath(new URL('../../lib/options/validators.generated.ts', import.meta.url))
  t.ok(readFileSync(file, 'utf8') === generate(), 'lib/options/validators.generated.ts is what the schemas generate: run npm run build:validators')
  for (const [name, schema] of Object.entries({ OptionsSchema, UploadOptionsSchema, WebhookOptionsSchema })) {
    t.type(validators[schemaKey(schema) as keyof typeof validators], 'function', `${name}: a generated validator, nothing compiled at registration`)
  }
  // A schema with no generated code (one edited since) is compiled, and validates the same way.
  const edited = { type: 'object', properties: { size: { type: 'integer', minimum: 1, default: 10 } }, additionalProperties: false }
  t.equal(validators[schemaKey(edited) as keyof typeof validators], undefined)
  t.same(resolveSchema(edited, { size: 0, x: 1 }, 'pool'), { value: { size: 0, x: 1 }, problems: ['pool: unknown option(s) x', 'pool.size: must be >= 1'] })
  t.same(resolveSchema(edited, {}, 'pool'), { value: { size: 10 }, problems: [] })
})

t.test('TypeBox is not loaded at run time', async (t) => {
  const root = fileURLToPath(new URL('../..', import.meta.url))
  // The package's entry, from source as the tests run it: a resolve hook (in the loader's own
  // thread) reports every module it loads.
  const hooks = 'export function initialize ({ port }) { globalThis.port = port } ' +
    'export async function resolve (specifier, context, next) { const r = await next(specifier, context); globalThis.port.postMessage(r.url); return r }'
  const script = `
    import { register } from 'node:module'
    import { MessageChannel } from 'node:worker_threads'
    const { port1, port2 } = new MessageChannel()
    const loaded = []
    port1.on('message', (url) => loaded.push(url))
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { port: port2 }, transferList: [port2] })
    const { resolveOptions } = await import('./lib/options/index.ts')
    await import('./lib/index.ts')
    resolveOptions({ models: [] })
    await new Promise((resolve) => setTimeout(resolve, 200))
    port1.close()
    console.log(JSON.stringify(loaded))
  `
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  t.equal(run.status, 0, run.stderr)
  const loaded = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '[]') as string[]
  t.ok(loaded.some((url) => url.includes('/node_modules/kysely/')), 'the hook saw the package\'s imports')
  t.same(loaded.filter((url) => url.includes('/node_modules/typebox/')), [], 'no TypeBox module')
})
