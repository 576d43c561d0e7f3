import neostandard from 'neostandard'

/**
 * The layers of lib/, as docs/architecture.md draws them:
 *
 *   index -> {rest, graphql, upload} -> auth -> documents -> compiler -> query -> model
 *   schema -> db -> model
 *   webhooks (the delivery worker, on the outbox the document service writes) -> documents, options
 *
 * Each folder, and what it may import besides itself (skipping layers downwards is fine). The
 * entry (the files of lib/ itself) and lib/server/ sit on top of everything. `http` holds the
 * helpers every HTTP surface shares (body parsers), `options` the options' schemas, defaults and
 * resolved types (the upload provider's contract among them), which the areas read. A folder not listed here is unrestricted.
 */
const LAYERS = {
  rest: ['auth', 'documents', 'compiler', 'query', 'model', 'http', 'options'],
  graphql: ['auth', 'documents', 'compiler', 'query', 'model', 'http', 'options'],
  upload: ['auth', 'documents', 'compiler', 'query', 'model', 'http', 'options'],
  auth: ['documents', 'compiler', 'query', 'model', 'http', 'options'],
  http: ['query', 'model'],
  documents: ['compiler', 'query', 'model', 'db'],
  compiler: ['query', 'model', 'db'],
  query: ['model'],
  schema: ['db', 'model'],
  db: ['model'],
  options: ['db', 'model'],
  webhooks: ['documents', 'options', 'model', 'db'],
  // The client runs in browsers: only the model's types (its own test checks the imports are type-only).
  client: ['model'],
  model: []
}

/** What lib/ holds above the layers: the entry's own modules (the plugin's own tables among them: options and schema) and lib/server/. */
const TOP = ['server', 'index', 'cli', 'bin', 'shutdown', 'own-tables']

/**
 * Modules any layer may import: they import nothing of lib/ but each other (the error envelope
 * maps errors and database faults; an optional peer's absence is a coded error).
 */
const NEUTRAL = ['lib/errors.ts', 'lib/error-handler.ts', 'lib/lru-cache.ts', 'lib/route-schema.ts', 'lib/optional-import.ts', 'lib/db/faults.ts']

/** The only folders that build SQL, so the only ones that import Kysely. */
const SQL = ['documents', 'compiler', 'schema', 'db', 'webhooks']

const KYSELY = { regex: '^kysely(?:/|$)', message: `Only lib/${SQL.join('/, lib/')}/ build SQL: go through the document service.` }

/**
 * TypeBox infers the options' types from their JSON Schemas; loading it at run time would cost
 * every process 680 modules (about 200 ms of a cold start and 25 MiB) for one validation.
 */
const TYPEBOX = { regex: '^typebox(?:/|$)', allowTypeImports: true, message: 'TypeBox is for types only (import type): the options\' schemas are plain JSON Schema, run by Ajv (lib/options/validate.ts).' }

/** `no-restricted-imports` for one folder; `allow` lifts the ban on some folders above it. */
function layerRule (area, { allow = [], kysely = SQL.includes(area) } = {}) {
  const allowed = new Set([area, ...LAYERS[area], ...allow])
  const above = [...Object.keys(LAYERS), ...TOP].filter((name) => !allowed.has(name))
  const patterns = kysely ? [TYPEBOX] : [TYPEBOX, KYSELY]
  if (above.length > 0) {
    patterns.push({
      // Relative specifiers only (the layers import each other so): `../auth/access.js`, `../options/index.js`.
      regex: `^(?:\\.\\./)+(?!db/faults\\.js$)(?:${above.join('|')})(?:/|\\.js$)`,
      message: `lib/${area}/ may import ${LAYERS[area].length === 0 ? 'nothing of lib/' : LAYERS[area].join(', ')} besides itself and the neutral modules ` +
        `(${NEUTRAL.join(', ')}): the layers run index -> {rest, graphql, upload} -> auth -> documents -> compiler -> query -> model, schema -> db -> model.`
    })
  }
  return ['error', { patterns }]
}

const layers = [
  // Folders outside the layers (lib/cli/): only the TypeBox rule; the entries below replace it with theirs.
  { files: ['lib/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [TYPEBOX] }] } },
  ...Object.keys(LAYERS).map((area) => ({ files: [`lib/${area}/**/*.ts`], rules: { 'no-restricted-imports': layerRule(area) } })),
  // The entry names Kysely's type for the `db` it exposes, and builds no SQL.
  { files: ['lib/*.ts', 'lib/server/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [TYPEBOX, { ...KYSELY, allowTypeImports: true }] }] } },
  { files: NEUTRAL, rules: { 'no-restricted-imports': ['error', { patterns: [TYPEBOX, KYSELY, { regex: '^\\.(?!/errors\\.js$|/db/faults\\.js$)', message: 'A neutral module imports nothing of lib/ but the other neutral ones: every layer imports it.' }] }] } }
]

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'dist-bench/**', 'node_modules/**', '.tap/**', 'lib/options/validators.generated.ts'] }),
  ...layers
]
