import t from 'tap'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cliDatabase } from '../helpers/cli-database.js'

/**
 * `fastify-content-api schema plan|apply`, run as the user runs it: the bin in a child process,
 * with a TypeScript config module (loaded through tsx's API) whose models import a TypeScript
 * file as `./models.js`. The database: an embedded PGlite in a temporary directory, or with
 * DATABASE_URL a schema of its own on PostgreSQL.
 */

t.setTimeout(300_000)
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(root, 'lib', 'bin.ts')
const { dir, db } = await cliDatabase('cli-schema')

// The note's attributes follow NOTE_ATTRIBUTES, so that one config describes each step of the models.
await writeFile(join(dir, 'models.ts'), `type Attributes = Record<string, { type: 'string' | 'integer' }>
export function note (attributes: Attributes) {
  return {
    kind: 'collectionType' as const,
    collectionName: 'notes',
    info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
    options: { draftAndPublish: false },
    attributes
  }
}
`)
const config = join(dir, 'content-api.config.ts')
await writeFile(config, `import { note } from './models.js'

const attributes: Record<string, { type: 'string' | 'integer' }> = JSON.parse(process.env.NOTE_ATTRIBUTES ?? '{"title":{"type":"string"}}')
export default {
  models: [note(attributes)],
  db: ${db},
  auth: { jwtSecret: 'cli-test-jwt-secret-0123456789', apiTokenSalt: 'cli-test-api-token-salt-0123456789' },
  schemaSync: { mode: 'off' as const, allowDestructive: process.env.ALLOW_DESTRUCTIVE === 'true' }
}
`)

interface Run { code: number, out: string, err: string }

async function cli (argv: string[], env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Run> {
  const result = await new Promise<Run>((resolve) => {
    execFile(process.execPath, ['--import=tsx', ...nodeArgs, bin, ...argv], { cwd: root, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (err as { code: number }).code, out: stdout, err: stderr })
    })
  })
  return result
}

const titleAndViews = JSON.stringify({ title: { type: 'string' }, views: { type: 'integer' } })

t.test('schema plan on an empty database: every table, a line each with its SQL; nothing is created', async (t) => {
  const run = await cli(['schema', 'plan', '--config', config])
  t.equal(run.code, 2, 'changes are pending: exit code 2')
  t.equal(run.err, '')
  const lines = run.out.split('\n')
  const notes = lines.indexOf('+ create table notes')
  t.ok(notes >= 0, 'the change, in a few words')
  t.match(lines[notes + 1], /^ {4}create table "notes" \("id" serial primary key, "document_id" varchar\(255\) not null, "title" varchar\(255\), /, 'its SQL below it')
  t.ok(lines.includes('+ create table up_users'), 'the built-in tables too')
  t.match(lines.at(-2), /^Plan: \d+ change\(s\), 0 destructive change\(s\) not allowed by schemaSync.allowDestructive\. Apply with: fastify-content-api schema apply$/)

  const again = await cli(['schema', 'plan', '--config', config, '--json'])
  t.equal(again.code, 2, 'still pending: plan changed nothing')
  const plan = JSON.parse(again.out) as { statements: string[], destructive: unknown[], applied: boolean }
  t.ok(plan.statements.some((statement) => statement.startsWith('create table "notes"')))
  t.same([plan.destructive, plan.applied], [[], false])
})

t.test('schema apply makes the plan; the next plan is empty', async (t) => {
  const run = await cli(['schema', 'apply', '--config', config])
  t.equal(run.code, 0)
  t.match(run.out, /^\+ create table notes\n {4}create table "notes"/m)
  t.match(run.out, /\nApplied \d+ change\(s\)\.\n$/)

  const plan = await cli(['schema', 'plan', '--config', config])
  t.equal(plan.code, 0, 'nothing to do: exit code 0')
  t.equal(plan.out, 'The database matches the models: nothing to do.\n')
})

t.test('a new attribute: one added column', async (t) => {
  const env = { NOTE_ATTRIBUTES: titleAndViews }
  const plan = await cli(['schema', 'plan', '--config', config], env)
  t.equal(plan.code, 2)
  t.equal(plan.out, '+ add column notes.views integer\n    alter table "notes" add column "views" integer\n' +
    'Plan: 1 change(s), 0 destructive change(s) not allowed by schemaSync.allowDestructive. Apply with: fastify-content-api schema apply\n')
  const apply = await cli(['schema', 'apply', '--config', config], env)
  t.equal(apply.code, 0)
  t.equal(apply.out, '+ add column notes.views integer\n    alter table "notes" add column "views" integer\nApplied 1 change(s).\n')
})

t.test('a removed attribute: destructive, refused by apply unless schemaSync.allowDestructive', async (t) => {
  const plan = await cli(['schema', 'plan', '--config', config])
  t.equal(plan.code, 2)
  t.equal(plan.out, '! drop column notes.views (destructive: column is no longer in the model; dropping it deletes its data)\n' +
    '    alter table "notes" drop column "views"\n' +
    'Plan: 0 change(s), 1 destructive change(s) not allowed by schemaSync.allowDestructive. Apply with: fastify-content-api schema apply\n')

  const refused = await cli(['schema', 'apply', '--config', config])
  t.equal(refused.code, 2, 'left pending: exit code 2')
  t.match(refused.out, /Applied 0 change\(s\); left 1 destructive change\(s\): set schemaSync.allowDestructive: true to apply them, or apply them yourself\.\n$/)

  const allowed = await cli(['schema', 'apply', '--config', config], { ALLOW_DESTRUCTIVE: 'true' })
  t.equal(allowed.code, 0)
  t.match(allowed.out, /Applied 1 change\(s\)\.\n$/)
  t.equal((await cli(['schema', 'plan', '--config', config])).code, 0, 'dropped')
})

t.test('errors: usage, an unreachable database named by its option, a TypeScript config without tsx', async (t) => {
  const { freePort } = await import('../helpers/net.js')
  const port = await freePort()
  const unreachable = join(dir, 'unreachable.config.mjs')
  await writeFile(unreachable, `export default { models: [], db: 'postgres://app:secret@127.0.0.1:${port}/app', pool: { connectionTimeoutMs: 2000 } }\n`)
  const mysql = join(dir, 'mysql.config.mjs')
  await writeFile(mysql, 'export default { models: [], db: \'mysql://root:secret@db/app\' }\n')
  // Four independent processes, none of which opens the test's database: run side by side.
  const [usage, refused, wrongScheme, noTsx] = await Promise.all([
    cli(['schema', 'migrate', '--config', config]),
    cli(['schema', 'plan', '--config', unreachable]),
    cli(['schema', 'plan', '--config', mysql]),
    cli(['schema', 'plan', '--config', config], { WITHOUT_PACKAGES: 'tsx' }, [`--import=${join(root, 'test', 'fixtures', 'without-packages.mjs')}`])
  ])

  t.equal(usage.code, 2)
  t.match(usage.out, /^Usage: fastify-content-api <command> \[options\]/)
  t.match(usage.out, /\n {2}schema plan {5}the changes schema sync would make/)

  t.equal(refused.code, 1)
  t.equal(refused.err, `fastify-content-api: db: could not connect to 127.0.0.1:${port} (ECONNREFUSED)\n`)
  t.notMatch(refused.err, /secret/, 'no password')

  t.equal(wrongScheme.code, 1)
  t.match(wrongScheme.err, /^fastify-content-api: Invalid fastify-content-api options:\n {2}- db: mysql:\/\/ is not a PostgreSQL connection string/)

  t.equal(noTsx.code, 1)
  t.equal(noTsx.err, `fastify-content-api: --config ${config} (a TypeScript config) needs tsx, not installed (optional peer dependencies of fastify-content-api): npm install tsx\n`)
})
