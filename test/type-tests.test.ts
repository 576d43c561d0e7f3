import t from 'tap'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/**
 * The type tests (test/types/*.ts) compile: every `@ts-expect-error` line there fails to compile
 * (a wrong uid, field, filter, sort or populate key, wrong data) and every type assertion holds
 * (a populate, `fields` or `status` changes the result type). They have their own tsconfig, out
 * of the main one, because they register models by declaration merging, which would type every
 * other test's documents. Incremental, so that a run without changes is quick.
 */

const root = fileURLToPath(new URL('..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

t.test('the type tests compile', async (t) => {
  const args = [tsc, '-p', join(root, 'test/types/tsconfig.json'), '--incremental', '--tsBuildInfoFile', join(tmpdir(), 'fastify-content-api-type-tests.tsbuildinfo')]
  const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { cwd: root }).catch((err: { stdout: string, stderr: string }) => err)
  t.equal(stdout + stderr, '', 'tsc reports no error')
})
