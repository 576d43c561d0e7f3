// Run by `npm run build`, after tsc: copies the GraphQL sandbox's prebuilt browser bundles
// (graphiql, react, react-dom; development dependencies) into dist/sandbox/, where
// dist/lib/graphql/sandbox.js serves them from. The package then ships the files and does not
// depend on those packages at run time. The list is the one the server serves (SANDBOX_ASSETS).
import { copyFileSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SANDBOX_ASSETS } from '../dist/lib/graphql/sandbox.js'

const require = createRequire(import.meta.url)
const target = fileURLToPath(new URL('../dist/sandbox/', import.meta.url))
mkdirSync(target, { recursive: true })
for (const [name, { source: [pkg, path] }] of Object.entries(SANDBOX_ASSETS)) {
  copyFileSync(join(dirname(require.resolve(`${pkg}/package.json`)), path), join(target, name))
}
