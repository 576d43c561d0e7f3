import t from 'tap'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateTypes } from '../../lib/index.js'
import { main } from '../../lib/cli.js'
import { article, components, models } from '../fixtures/typed-models.js'

/**
 * `generateTypes` and the CLI's `types` command: the text is the models as literal types, without
 * what the API never shows (hooks, private and password attributes). test/types/client.ts
 * compiles the client against the file kept here, so that file must be the generator's output.
 */

t.test('the type tests\' generated file is the generator\'s output', async (t) => {
  const kept = await readFile(new URL('../types/generated/content-types.ts', import.meta.url), 'utf8')
  t.equal(generateTypes(models, components), kept, 'regenerate test/types/generated/content-types.ts when the fixture changes')
})

t.test('what the API never shows is left out', async (t) => {
  const text = generateTypes([{ ...article, lifecycles: { beforeCreate: () => {} }, attributes: { ...article.attributes, pass: { type: 'password' } } }])
  t.notMatch(text, /secret|pass"|lifecycles|beforeCreate/)
  t.match(text, /"api::article\.article": \{/)
  t.match(text, /export type Schemas = \{ contentTypes: ContentTypes, components: Components \}/)
  t.match(text, /export type Components = \{\}/, 'no components: an empty map')
})

t.test('fastify-content-api types --config --out', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fca-types-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const config = join(dir, 'content-api.config.mjs')
  await writeFile(config, `export default ${JSON.stringify({ models, components, db: 'postgres://nowhere.invalid/none' })}\n`)
  const out = join(dir, 'content-types.ts')
  const lines: string[] = []
  const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) }

  t.equal(await main(['types', '--config', config, '--out', out], io), 0)
  t.equal(await readFile(out, 'utf8'), generateTypes(models, components), 'the file holds the generator\'s text; nothing connected to the database')
  t.match(lines.at(-1), /Wrote the types of 4 content types to /)

  t.equal(await main(['types', '--config', config], io), 1)
  t.equal(lines.at(-1), 'fastify-content-api: types needs --out FILE')
})
