import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { MissingDependencyError } from '../../lib/errors.js'
import { importOptional } from '../../lib/optional-import.js'

/**
 * The AWS SDK is an optional peer dependency: an application with `upload.provider: 's3'` and
 * without the SDK fails at start with a MissingDependencyError naming the option and the
 * `npm install` that fixes it. Proved in a child process where the SDK cannot be found
 * (test/fixtures/without-packages.mjs), as in an application that did not install it.
 */

t.setTimeout(120_000)
const require = createRequire(import.meta.url)
const root = fileURLToPath(new URL('../..', import.meta.url))
const hook = fileURLToPath(new URL('../fixtures/without-packages.mjs', import.meta.url))
const S3_PACKAGES = '@aws-sdk/client-s3, @aws-sdk/lib-storage, @aws-sdk/s3-request-presigner'

const script = `
import Fastify from 'fastify'
import contentApi from ${JSON.stringify(new URL('../../lib/index.ts', import.meta.url).href)}
const app = Fastify({ pluginTimeout: 0 })
try {
  await app.register(contentApi, { models: [], upload: { provider: 's3', s3: { bucket: 'media', region: 'eu-west-1' } } })
  await app.ready()
  console.log('started')
} catch (err) {
  console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message, packages: err.packages, cause: err.cause?.code }))
} finally {
  await app.close()
}
`

/** Runs `code` in a child process where the packages `hidden` names cannot be found; its last line of output (its stderr in the failure). */
async function run (t: Test, code: string, hidden: string): Promise<string> {
  const { out, stderr } = await new Promise<{ out: string | null, stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import=tsx', `--import=${hook}`, '--input-type=module', '-e', code], { cwd: root, env: { ...process.env, WITHOUT_PACKAGES: hidden } }, (err, stdout, stderr) => {
      resolve({ out: err === null ? stdout.trim().split('\n').pop() ?? null : null, stderr: `${err?.message ?? ''}\n${stderr}` })
    })
  })
  t.not(out, null, `the child process answered (${stderr})`)
  return out ?? ''
}

t.test('upload.provider s3 without the AWS SDK: a MissingDependencyError at start', async (t) => {
  const said = JSON.parse(await run(t, script, '@aws-sdk'))
  t.same(said, {
    name: 'MissingDependencyError',
    code: 'FCA_ERR_MISSING_DEPENDENCY',
    message: `upload.provider: 's3' needs ${S3_PACKAGES}, not installed (optional peer dependencies of fastify-content-api): npm install ${S3_PACKAGES.replaceAll(', ', ' ')}`,
    packages: S3_PACKAGES.split(', '),
    cause: 'ERR_MODULE_NOT_FOUND'
  })
})

t.test('an application without S3 starts without the AWS SDK', async (t) => {
  const script = `
import Fastify from 'fastify'
import contentApi from ${JSON.stringify(new URL('../../lib/index.ts', import.meta.url).href)}
const app = Fastify({ pluginTimeout: 0 })
await app.register(contentApi, { models: [] })
await app.ready()
console.log((await app.inject('/graphql/sandbox/graphiql.css')).statusCode)
await app.close()
`
  const out = await run(t, script, '@aws-sdk')
  t.equal(out, '200', 'started, and serves the sandbox')
})

t.test('importOptional: only a missing package it names becomes a MissingDependencyError', async (t) => {
  // Through require: Node's own MODULE_NOT_FOUND, whatever ESM loader hooks the test runner adds
  // (in CI, an ESM import of a missing package failed here with another error than Node's).
  const missing = 'fca-no-such-package'
  const load = async (): Promise<unknown> => require(missing)
  await t.rejects(importOptional(load, 'the feature', [missing]), new MissingDependencyError('the feature', [missing]))
  await t.rejects(importOptional(load, 'the feature', ['another-package']), { code: 'MODULE_NOT_FOUND' }, 'another missing package: Node\'s error as it is')
  const broken = new SyntaxError('Unexpected token')
  await t.rejects(importOptional(async () => { throw broken }, 'the feature', ['fca-no-such-package']), broken, 'any other failure as it is')
})
