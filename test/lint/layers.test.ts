import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/**
 * The layering rule of eslint.config.js, through ESLint's Node API (`new ESLint()`, `lintText`)
 * with the project's config, as `npm run lint` runs it: an import that goes up the layers (or
 * reaches Kysely outside the folders that build SQL) is an error, one that goes down is not.
 * Each snippet is linted as if it were the named file; none of these files needs to exist.
 */

interface Snippet { filePath: string, code: string }

/** The `no-restricted-imports` messages of each snippet, in order (./lint-text.mjs runs ESLint). */
function restricted (snippets: readonly Snippet[]): string[][] {
  const script = fileURLToPath(new URL('lint-text.mjs', import.meta.url))
  const out = execFileSync(process.execPath, [script], { input: JSON.stringify(snippets), encoding: 'utf8' })
  const results = JSON.parse(out) as Array<Array<{ ruleId: string | null, message: string }>>
  return results.map((messages) => messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message))
}

const importing = (filePath: string, line: string): Snippet => ({ filePath, code: `${line}\nexport const used = [x]\n` })

const backward: Snippet[] = [
  // The imports that once went up the layers, each from the file that had it.
  importing('lib/model/built-ins.ts', "import { AUTH_CONTENT_TYPES as x } from '../auth/models.js'"),
  importing('lib/model/registry.ts', "import { snakeCase as x } from '../db/naming.js'"),
  importing('lib/documents/unique.ts', "import { varcharLimit as x } from '../schema/column-types.js'"),
  importing('lib/query/index.ts', "import { type AccessScope, y as x } from '../auth/access.js'"),
  importing('lib/upload/routes.ts', "import { errorHandler as x } from '../graphql/errors.js'"),
  // The options' schemas once imported the surfaces' own (a folder cycle: graphql -> options -> graphql).
  importing('lib/options/index.ts', "import { resolveGraphqlOptions as x } from '../graphql/options.js'"),
  importing('lib/documents/service.ts', "import type { ResolvedOptions as x } from '../options/index.js'"),
  // Sideways between surfaces (as a re-export), the entry from below, a type-only import.
  { filePath: 'lib/graphql/schema.ts', code: "export { restRoutes } from '../rest/routes.js'\n" },
  importing('lib/compiler/find.ts', "import { contentApi as x } from '../index.js'"),
  { filePath: 'lib/db/connect.ts', code: "import type { SchemaPlan } from '../schema/index.js'\nexport type Plan = SchemaPlan\n" },
  // A neutral module imports nothing of lib/.
  { filePath: 'lib/errors.ts', code: "import type { Field } from './model/registry.js'\nexport type F = Field\n" },
  { filePath: 'lib/optional-import.ts', code: "import type { Field } from './model/registry.js'\nexport type F = Field\n" },
  // The plugin's own tables come from the options and schema/: a top module, which no layer imports.
  importing('lib/documents/x.ts', "import { ownTables as x } from '../own-tables.js'")
]

const SQL = "import { sql as x } from 'kysely'"
const kysely: Array<[Snippet, boolean]> = [
  ...['documents', 'compiler', 'schema', 'db', 'webhooks'].map((area): [Snippet, boolean] => [importing(`lib/${area}/x.ts`, SQL), true]),
  ...['model', 'query', 'auth', 'upload', 'rest', 'graphql', 'http', 'server'].map((area): [Snippet, boolean] => [importing(`lib/${area}/x.ts`, SQL), false]),
  [{ filePath: 'lib/upload/x.ts', code: "import type { Kysely } from 'kysely'\nexport type Db = Kysely<any>\n" }, false],
  [importing('lib/query/x.ts', "import { PostgresDialect as x } from 'kysely/dist/esm/index.js'"), false],
  // The entry names the type of the `db` it exposes, but builds no SQL.
  [{ filePath: 'lib/index.ts', code: "import type { Kysely } from 'kysely'\nexport type Db = Kysely<any>\n" }, true],
  [importing('lib/index.ts', SQL), false]
]

const downward: Snippet[] = [
  importing('lib/model/built-ins.ts', "import { AUTH_CONTENT_TYPES as x } from './users-permissions.js'"),
  importing('lib/schema/desired-schema.ts', "import { identifier as x } from '../model/naming.js'\nimport { connect } from '../db/connect.js'"),
  importing('lib/documents/unique.ts', "import { varcharLimit as x } from '../model/column-types.js'\nimport { compileFind } from '../compiler/find.js'"),
  importing('lib/query/index.ts', "import { type AccessScope, y as x } from './access-scope.js'"),
  importing('lib/auth/access.ts', "import type { AccessScope } from '../query/access-scope.js'\nimport { DocumentService as x } from '../documents/service.js'"),
  importing('lib/rest/routes.ts', "import type { AccessControl } from '../auth/access.js'\nimport { addJsonParser as x } from '../http/body-parsers.js'\nimport type { ResolvedOptions } from '../options/index.js'"),
  importing('lib/options/index.ts', "import { isKysely as x } from '../db/connect.js'\nimport type { ContentTypeSchema } from '../model/types.js'"),
  importing('lib/query/filters.ts', "import { ValidationError as x } from '../errors.js'\nimport { LruCache } from '../lru-cache.js'\nimport { isLostRace } from '../db/faults.js'"),
  importing('lib/index.ts', "import { restRoutes as x } from './rest/index.js'\nimport { registerUpload } from './upload/index.js'"),
  importing('lib/upload/x.ts', "import { importOptional as x } from '../optional-import.js'"),
  importing('lib/optional-import.ts', "import { MissingDependencyError as x } from './errors.js'")
]

const results = restricted([...backward, ...kysely.map(([snippet]) => snippet), ...downward])
const backwardResults = results.slice(0, backward.length)
const kyselyResults = results.slice(backward.length, backward.length + kysely.length)
const downwardResults = results.slice(backward.length + kysely.length)

t.test('a backward import fails the lint', async (t) => {
  backward.forEach(({ filePath, code }, i) => {
    t.equal(backwardResults[i].length, 1, `${filePath}: ${code.split('\n')[0]}`)
  })
  const [message] = backwardResults[0]
  t.match(message, /lib\/model\/ may import nothing of lib\/ besides itself and the neutral modules/, 'the message says what the folder may import')
  t.match(message, /index -> \{rest, graphql, upload\} -> auth -> documents -> compiler -> query -> model, schema -> db -> model/, 'and shows the layers')
})

t.test('Kysely only in documents/, compiler/, schema/ and db/', async (t) => {
  kysely.forEach(([{ filePath, code }, allowed], i) => {
    t.equal(kyselyResults[i].length, allowed ? 0 : 1, `${filePath}: ${code.split('\n')[0]} ${allowed ? 'passes' : 'fails'}`)
  })
})

t.test('imports down the layers and of the neutral modules pass', async (t) => {
  downward.forEach(({ filePath, code }, i) => {
    t.same(downwardResults[i], [], `${filePath}: ${code.split('\n').slice(0, -2).join('; ')}`)
  })
})
