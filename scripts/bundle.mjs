// Run by `npm run build`, after tsc: bundles the package's two entries, dist/lib/index.js (the
// plugin) and dist/lib/bin.js (the CLI), each written over tsc's file of the same name, with the
// code they share and the areas they import on demand (GraphQL, upload, S3) in dist/lib/chunks/.
// Dependencies stay imports of the installed packages.
//
// Why: Node 20's ES module loader spends about half a millisecond on each file it resolves, reads,
// compiles and links. The plugin is about 200 files, and Kysely's ES build 262 more: loading
// them was about half of a cold start (bench/README.md#cold-start). So the bundle is a dozen
// files, and it loads Kysely's CommonJS build, which Node loads in half the time of its ES build
// (see `kyselyCommonJs`). The declarations (dist/lib/**/*.d.ts) and the client entry
// (dist/lib/client/, which imports nothing else of lib/) stay tsc's.
import { build } from 'esbuild'
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const lib = join(root, 'dist', 'lib')
const require = createRequire(import.meta.url)

/**
 * `import { sql } from 'kysely'` in the bundle reads the installed Kysely's CommonJS build (one
 * `require`, 262 files through Node's CommonJS loader) instead of its ES build. Kysely ships both,
 * and tells its objects apart by shape, never by class, so a Kysely an application made from the
 * ES build (`db: new Kysely(...)`) works with the plugin's (lib/db/connect.ts `isKysely`). An
 * import of a name Kysely does not export still fails the build.
 */
const kyselyCommonJs = {
  name: 'kysely-commonjs',
  setup (bundle) {
    const names = Object.keys(require('kysely')).filter((name) => name !== '__esModule')
    bundle.onResolve({ filter: /^kysely$/ }, () => ({ path: 'kysely', namespace: 'kysely-commonjs' }))
    bundle.onLoad({ filter: /.*/, namespace: 'kysely-commonjs' }, () => ({
      loader: 'js',
      contents: `import { createRequire } from 'node:module'\nexport const { ${names.join(', ')} } = createRequire(import.meta.url)('kysely')\n`
    }))
  }
}

const { metafile } = await build({
  entryPoints: ['index.js', 'bin.js'].map((name) => join(lib, name)),
  absWorkingDir: root,
  outdir: lib,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  plugins: [kyselyCommonJs],
  // No `keepNames`: it wraps every function expression in a call that redefines the function's
  // `name` each time the closure is made, which on the read path is on every request (the
  // pool's callback). What is known by name says its name itself: each error class sets `name`,
  // the plugin gives fastify-plugin its name. esbuild renames a function only where two modules'
  // names clash (`buildSchema2`), which stack traces then show.
  keepNames: false,
  metafile: true,
  logLevel: 'warning'
})

// No entry loads tsc's other JavaScript files any more (those of type-only modules are empty):
// only the bundle's files and the client entry's stay.
const outputs = new Set(Object.keys(metafile.outputs).map((path) => join(root, path)))
for (const path of readdirSync(lib, { recursive: true })) {
  const file = join(lib, path)
  if (file.endsWith('.js') && !outputs.has(file) && !path.startsWith('client/')) rmSync(file)
}

// V8 keeps a script's source in memory for as long as its functions live: one byte a character
// when every character is below U+0100, two bytes otherwise. esbuild escapes non-ASCII characters
// in strings and names, but not in the comments it keeps nor in regular expression literals: the
// letters of slugify's expression doubled the memory the plugin's 330 KB entry's source takes, a
// `→` in a comment a chunk's. So what is left is written as `\uXXXX`, which means the same
// character in a regular expression and is text in a comment.
for (const path of outputs) {
  if (!path.endsWith('.js')) continue
  const text = readFileSync(path, 'utf8')
  // One UTF-16 unit at a time: a pair of `\uXXXX` escapes is the same astral character.
  const escaped = text.replace(/(\\?)([\u0080-\uffff])/g, (_, backslash, character) => {
    if (backslash !== '') throw new Error(`${path}: an escaped character outside ASCII (${JSON.stringify(character)}); write it as \\u`)
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
  if (escaped !== text) writeFileSync(path, escaped)
}
