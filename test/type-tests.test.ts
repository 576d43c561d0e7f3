import t from 'tap'
import { execFile } from 'node:child_process'
import { readdir } from 'node:fs/promises'
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
  const args = [
    tsc, '-p', join(root, 'test/types/tsconfig.json'), '--listFiles',
    '--incremental', '--tsBuildInfoFile', join(tmpdir(), 'fastify-content-api-type-tests.tsbuildinfo')
  ]
  const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 })
    .catch((err: { stdout: string, stderr: string }) => err)
  const lines = (stdout + stderr).split('\n').filter((line) => line !== '')
  // A type test left out of the program would pass silently: each must be among the files compiled.
  const compiled = new Set(lines.filter((line) => line.startsWith('/')))
  for (const file of (await readdir(join(root, 'test/types'))).filter((f) => f.endsWith('.ts'))) {
    t.ok(compiled.has(join(root, 'test/types', file)), `${file} is compiled`)
  }
  t.same(lines.filter((line) => !line.startsWith('/')), [], 'tsc reports no error')
})
