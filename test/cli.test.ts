import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import Fastify from 'fastify'
import contentApi, { type ContentApiOptions } from '../lib/index.js'
import { main } from '../lib/cli.js'
import { cliDatabase } from './helpers/cli-database.js'

/**
 * The API-token CLI (`fastify-content-api token ...`), driven through `main(argv, io)` with a
 * config module written to a temporary directory: an embedded PGlite in that directory, or with
 * DATABASE_URL a schema of its own on PostgreSQL. Keys it prints must work against an app
 * started from the same config.
 */

const KEY = /^[0-9a-f]{256}$/
// Every command boots PGlite from the data directory: more than the default on a busy machine.
t.setTimeout(300_000)
const { dir, db } = await cliDatabase('cli')

const config = join(dir, 'content-api.config.mjs')
await writeFile(config, `// The application's plugin options, as the CLI loads them.
export default {
  models: [{
    kind: 'collectionType',
    collectionName: 'notes',
    info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
    options: { draftAndPublish: false },
    attributes: { title: { type: 'string' } }
  }],
  db: ${db},
  auth: { jwtSecret: 'cli-test-jwt-secret-0123456789', apiTokenSalt: 'cli-test-api-token-salt-0123456789', rateLimit: false }
}
`)

interface Run { code: number, out: string[], err: string[] }

async function cli (...argv: string[]): Promise<Run> {
  const out: string[] = []
  const err: string[] = []
  const code = await main([...argv, '--config', config], { out: (line) => out.push(line), err: (line) => err.push(line) })
  return { code, out, err }
}

/** An app started from the same config module, closed when the test ends. */
async function startApp (t: { teardown: (fn: () => Promise<void>) => void }) {
  const options = (await import(pathToFileURL(config).href) as { default: ContentApiOptions }).default
  const app = Fastify({ logger: false, pluginTimeout: 0 })
  await app.register(contentApi, options)
  await app.ready()
  t.teardown(async () => { await app.close() })
  return app
}

let ciKey = ''

t.test('token create', async (t) => {
  const run = await cli('token', 'create', '--name', 'ci', '--type', 'read-only', '--description', 'CI builds')
  t.equal(run.code, 0)
  t.strictSame(run.err, [])
  t.equal(run.out.length, 1)
  const [message, key] = run.out[0].split('\n')
  t.equal(message, 'Created read-only token "ci" (id 1). Its key, shown only now:')
  t.match(key, KEY, 'the key, 256 hex characters')
  ciKey = key

  const json = await cli('token', 'create', '--name', 'deploy', '--type', 'custom', '--permissions', 'api::note.note.find, api::note.note.create,', '--lifespan-days', '7', '--json')
  t.equal(json.code, 0)
  const created = JSON.parse(json.out.join('\n'))
  t.match(created, { id: 2, name: 'deploy', type: 'custom', permissions: ['api::note.note.find', 'api::note.note.create'], lifespan: 7 * 24 * 60 * 60 * 1000, lastUsedAt: null })
  t.match(created.accessKey, KEY, '--json carries the key once')
  t.equal(Date.parse(created.expiresAt) - Date.parse(created.createdAt), 7 * 24 * 60 * 60 * 1000, '--lifespan-days')
})

t.test('a key the CLI printed authenticates against the application', async (t) => {
  const app = await startApp(t)
  const read = await app.inject({ method: 'GET', url: '/api/notes', headers: { authorization: `Bearer ${ciKey}` } })
  t.equal(read.statusCode, 200, 'same database, same salt')
  const write = await app.inject({ method: 'POST', url: '/api/notes', headers: { authorization: `Bearer ${ciKey}` }, payload: { data: { title: 'x' } } })
  t.equal(write.statusCode, 403, 'as a read-only token')
  t.equal((await app.inject({ method: 'GET', url: '/api/notes' })).statusCode, 403, 'content stays private without it')
  t.equal((await app.inject({ method: 'GET', url: '/api/notes', headers: { authorization: `Bearer ${'0'.repeat(256)}` } })).statusCode, 401)
})

t.test('token list', async (t) => {
  const run = await cli('token', 'list')
  t.equal(run.code, 0)
  const lines = run.out.join('\n').split('\n')
  t.equal(lines.length, 2)
  t.match(lines[0], /^1\tci\tread-only\texpires never\tlast used \d{4}-\d{2}-\d{2}T/, 'the use above is recorded')
  t.match(lines[1], /^2\tdeploy\tcustom\texpires \d{4}-\d{2}-\d{2}T[^\t]+\tlast used never$/)
  t.notMatch(run.out.join('\n'), ciKey, 'no key')

  const json = await cli('token', 'list', '--json')
  const list = JSON.parse(json.out.join('\n')) as Array<Record<string, unknown>>
  t.strictSame(list.map((token) => token.name), ['ci', 'deploy'])
  for (const token of list) t.notOk('accessKey' in token, `${token.name as string}: no key`)
})

t.test('token regenerate', async (t) => {
  const run = await cli('token', 'regenerate', 'ci')
  t.equal(run.code, 0)
  const [message, key] = run.out[0].split('\n')
  t.equal(message, 'New key for ci, shown only now:')
  t.match(key, KEY)
  const json = await cli('token', 'regenerate', '2', '--json')
  t.equal(json.code, 0, 'by id')
  t.match(JSON.parse(json.out.join('\n')).accessKey, KEY)

  const app = await startApp(t)
  const statusOf = async (k: string) => (await app.inject({ method: 'GET', url: '/api/notes', headers: { authorization: `Bearer ${k}` } })).statusCode
  t.equal(await statusOf(ciKey), 401, 'the old key stopped working')
  t.equal(await statusOf(key), 200, 'the new one works')
  ciKey = key
  await app.close()

  const unknown = await cli('token', 'regenerate', 'nope')
  t.equal(unknown.code, 1)
  t.strictSame(unknown.out, ['No token nope.'])
})

t.test('token revoke', async (t) => {
  const run = await cli('token', 'revoke', 'ci')
  t.equal(run.code, 0)
  t.strictSame(run.out, ['Revoked ci.'])
  const again = await cli('token', 'revoke', 'ci')
  t.equal(again.code, 1)
  t.strictSame(again.out, ['No token ci.'])
  const byId = await cli('token', 'revoke', '2', '--json')
  t.equal(byId.code, 0)
  t.strictSame(JSON.parse(byId.out.join('\n')), { revoked: true })
  t.strictSame((await cli('token', 'list')).out, ['No API tokens.'])
  t.strictSame(JSON.parse((await cli('token', 'list', '--json')).out.join('\n')), [])

  const app = await startApp(t)
  t.equal((await app.inject({ method: 'GET', url: '/api/notes', headers: { authorization: `Bearer ${ciKey}` } })).statusCode, 401, 'a revoked key is refused')
})

t.test('errors', async (t) => {
  const missing = await cli('token', 'create', '--name', 'x')
  t.equal(missing.code, 1, 'the exit code of a failed command')
  t.strictSame(missing.err, ['fastify-content-api: token create needs --name and --type'])

  const badType = await cli('token', 'create', '--name', 'x', '--type', 'admin')
  t.equal(badType.code, 1)
  t.strictSame(badType.err, ['fastify-content-api: API token type must be read-only, full-access or custom'])

  const noList = await cli('token', 'create', '--name', 'x', '--type', 'custom')
  t.strictSame(noList.err, ['fastify-content-api: A custom API token needs a list of permissions'])

  const badDays = await cli('token', 'create', '--name', 'x', '--type', 'read-only', '--lifespan-days', 'soon')
  t.equal(badDays.code, 1)
  t.strictSame(badDays.err, ['fastify-content-api: API token lifespan must be a positive number of milliseconds'])

  await cli('token', 'create', '--name', 'dup', '--type', 'read-only')
  const duplicate = await cli('token', 'create', '--name', 'dup', '--type', 'read-only')
  t.equal(duplicate.code, 1)
  t.strictSame(duplicate.err, ['fastify-content-api: An API token named "dup" already exists'])

  const noTarget = await cli('token', 'revoke')
  t.equal(noTarget.code, 1)
  t.strictSame(noTarget.err, ['fastify-content-api: token revoke needs an id or a name'])

  t.strictSame((await cli('token', 'list', '--json')).out.length, 1, 'nothing was created by the failures')
  t.strictSame(JSON.parse((await cli('token', 'list', '--json')).out.join('\n')).map((token: { name: string }) => token.name), ['dup'])

  const unknownCommand = await cli('token', 'rotate')
  t.equal(unknownCommand.code, 2, 'an unknown command')
  t.match(unknownCommand.out[0], /^Usage: fastify-content-api <command> \[options\]/)

  const noCommand = await main(['token'], { out: () => {}, err: () => {} })
  t.equal(noCommand, 2, 'no command: usage')
  const otherGroup = await main(['user', 'list'], { out: () => {}, err: () => {} })
  t.equal(otherGroup, 2, 'another group: usage')
  const help: string[] = []
  t.equal(await main(['--help'], { out: (line) => help.push(line), err: () => {} }), 0, '--help')
  t.match(help[0], /token create --name NAME --type read-only\|full-access\|custom/)
  const io = { out: () => {}, err: () => {} }
  const noConfig = await main(['token', 'list', '--config', join(dir, 'missing.config.mjs')], io).then((code) => code, (err: Error) => err)
  t.equal(noConfig, 1, 'a missing config module: exit code 1')
  const unknownOption = await main(['token', 'create', '--nme', 'x', '--config', config], io).then((code) => code, (err: Error) => err)
  t.equal(unknownOption, 1, 'an unknown option: exit code 1')
  const refused: string[] = []
  t.equal(await main(['schema', 'plan', '--name', 'x', '--config', config], { out: () => {}, err: (line) => refused.push(line) }), 1, 'an option of another group: exit code 1')
  t.match(refused[0], /^fastify-content-api: Unknown option '--name'/)

  const empty = join(dir, 'empty.config.mjs')
  await writeFile(empty, 'export default 42\n')
  const said: string[] = []
  const notOptions = await main(['token', 'list', '--config', empty], { out: () => {}, err: (line) => said.push(line) }).then((code) => code, (err: Error) => err)
  t.match(`${String(notOptions)} ${said.join(' ')}`, /must export the plugin options/, 'a config module without options is named as such')
})

t.test('a config module may export a function', async (t) => {
  const factory = join(dir, 'factory.config.mjs')
  await writeFile(factory, `import options from ${JSON.stringify(pathToFileURL(config).href)}\nexport default async () => options\n`)
  const out: string[] = []
  const code = await main(['token', 'list', '--config', factory], { out: (line) => out.push(line), err: () => {} })
  t.equal(code, 0)
  t.match(out[0], /^\d+\tdup\tread-only/)
})

t.test('create and regenerate refuse a config without auth.apiTokenSalt', async (t) => {
  // The plugin would generate a throwaway salt: the key printed would never work against the application.
  const saltless = join(dir, 'saltless.config.mjs')
  await writeFile(saltless, `import options from ${JSON.stringify(pathToFileURL(config).href)}
export default { ...options, auth: { jwtSecret: options.auth.jwtSecret, rateLimit: false } }
`)
  const run = async (...argv: string[]): Promise<Run> => {
    const out: string[] = []
    const err: string[] = []
    const code = await main([...argv, '--config', saltless], { out: (line) => out.push(line), err: (line) => err.push(line) })
    return { code, out, err }
  }
  const before = JSON.parse((await cli('token', 'list', '--json')).out.join('\n')) as Array<{ name: string }>
  const create = await run('token', 'create', '--name', 'saltless', '--type', 'read-only')
  t.equal(create.code, 1)
  t.strictSame(create.out, [], 'no key printed')
  t.strictSame(create.err, [`fastify-content-api: token create needs auth.apiTokenSalt in ${saltless}: without the application's salt the key would not work against it`])
  const regenerate = await run('token', 'regenerate', 'dup')
  t.equal(regenerate.code, 1)
  t.strictSame(regenerate.out, [])
  t.strictSame(regenerate.err, [`fastify-content-api: token regenerate needs auth.apiTokenSalt in ${saltless}: without the application's salt the key would not work against it`])
  t.strictSame(JSON.parse((await cli('token', 'list', '--json')).out.join('\n')), before, 'nothing was created or replaced')
  t.equal((await run('token', 'list')).code, 0, 'list needs no salt')
})

t.test('the bin runs through the symlink npm links it by', async (t) => {
  // npm installs `bin` as node_modules/.bin/fastify-content-api -> ../fastify-content-api/dist/lib/bin.js.
  const bin = join(dir, 'node_modules', '.bin', 'fastify-content-api')
  await mkdir(join(dir, 'node_modules', '.bin'), { recursive: true })
  await symlink(fileURLToPath(new URL('../lib/bin.ts', import.meta.url)), bin)
  const root = fileURLToPath(new URL('..', import.meta.url))
  const run = async (...argv: string[]): Promise<Run> => {
    const result = await promisify(execFile)(process.execPath, ['--import=tsx', bin, ...argv], { cwd: root })
      .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (err: { code: number, stdout: string, stderr: string }) => err)
    return { code: result.code, out: result.stdout.split('\n').filter((l) => l !== ''), err: result.stderr.split('\n').filter((l) => l !== '') }
  }
  const help = await run('--help')
  t.equal(help.code, 0)
  t.match(help.out[0], /^Usage: fastify-content-api <command> \[options\]/, 'prints its usage')
  const missing = await run('token', 'list', '--config', join(dir, 'missing.config.mjs'))
  t.equal(missing.code, 1, 'the exit code of a failed command')
  t.match(missing.err[0], /^fastify-content-api: Cannot find module/, 'errors on stderr')
})
