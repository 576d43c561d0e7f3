import { randomBytes } from 'node:crypto'
import { createReadStream, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { importOptional } from '../optional-import.js'
import { documented } from '../route-schema.js'

/**
 * The sandbox: GraphiQL (schema documentation, query editor, variables and a headers editor for
 * `Authorization: Bearer <token>`) served at the GraphQL endpoint to browsers. Unlike Strapi's
 * Apollo Sandbox and Mercurius's GraphiQL, which load their code from public CDNs, every asset
 * is served by this server, so the page works offline and its content-security policy names no
 * other host:
 *
 * ```
 * default-src 'self'; script-src 'self' 'nonce-<random>'; style-src 'self' 'unsafe-inline';
 * img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:
 * ```
 *
 * The assets are the prebuilt browser bundles of `graphiql`, `react` and `react-dom`, copied into
 * the package at build time (`dist/sandbox/`, scripts/copy-sandbox-assets.mjs): an application
 * installs none of those packages (about 30 MiB with graphiql's own dependencies). A source
 * checkout, which has no build, reads them from the development dependencies instead.
 */

const require = createRequire(import.meta.url)

/** Each asset's file name in `dist/sandbox/`, and the installed file it is a copy of. */
export const SANDBOX_ASSETS: Record<string, { source: [pkg: string, path: string], type: string }> = {
  'react.js': { source: ['react', 'umd/react.production.min.js'], type: 'application/javascript; charset=utf-8' },
  'react-dom.js': { source: ['react-dom', 'umd/react-dom.production.min.js'], type: 'application/javascript; charset=utf-8' },
  'graphiql.js': { source: ['graphiql', 'graphiql.min.js'], type: 'application/javascript; charset=utf-8' },
  'graphiql.css': { source: ['graphiql', 'graphiql.min.css'], type: 'text/css; charset=utf-8' }
}

/**
 * `dist/sandbox/` in the package's folder: the nearest one above this module that holds a
 * package.json. Not a fixed path from this module: the build bundles it into a chunk
 * (scripts/bundle.mjs), and a source checkout runs it from `lib/`.
 */
function shippedDir (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'dist', 'sandbox')
}

/** Where the assets are read from: the package's built copies, else the installed packages. */
function assetFiles (): Map<string, string> {
  const files = new Map<string, string>()
  const shippedAt = shippedDir()
  const shipped = Object.keys(SANDBOX_ASSETS).every((name) => existsSync(join(shippedAt, name)))
  for (const [name, { source: [pkg, path] }] of Object.entries(SANDBOX_ASSETS)) {
    files.set(name, shipped ? join(shippedAt, name) : join(dirname(require.resolve(`${pkg}/package.json`)), path))
  }
  return files
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export function sandboxPolicy (nonce: string): string {
  return [
    "default-src 'self'", `script-src 'self' 'nonce-${nonce}'`, "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
    "font-src 'self' data:", "connect-src 'self'", "worker-src 'self' blob:"
  ].join('; ')
}

export function sandboxPage (endpoint: string, nonce: string): string {
  const assets = `${endpoint}/sandbox`
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="robots" content="noindex" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>GraphQL sandbox</title>
    <link rel="stylesheet" href="${escapeHtml(assets)}/graphiql.css" />
    <style nonce="${nonce}">body { margin: 0; overflow: hidden; } #sandbox { height: 100vh; }</style>
  </head>
  <body>
    <div id="sandbox">Loading the GraphQL sandbox…</div>
    <script nonce="${nonce}" src="${escapeHtml(assets)}/react.js"></script>
    <script nonce="${nonce}" src="${escapeHtml(assets)}/react-dom.js"></script>
    <script nonce="${nonce}" src="${escapeHtml(assets)}/graphiql.js"></script>
    <script nonce="${nonce}">
      const fetcher = GraphiQL.createFetcher({ url: ${JSON.stringify(endpoint)} })
      ReactDOM.createRoot(document.getElementById('sandbox')).render(
        React.createElement(GraphiQL, { fetcher, isHeadersEditorEnabled: true, shouldPersistHeaders: true })
      )
    </script>
  </body>
</html>`
}

/** Sends the sandbox page with its own content-security policy (a fresh nonce per page). */
export function sendSandbox (reply: FastifyReply, endpoint: string): FastifyReply {
  const nonce = randomBytes(16).toString('hex')
  return reply.code(200)
    .header('content-security-policy', sandboxPolicy(nonce))
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(sandboxPage(endpoint, nonce))
}

/**
 * `<endpoint>/sandbox/<asset>`: the sandbox's scripts and styles. Their files are found at
 * registration, so a checkout without them fails at start, naming what to install.
 */
export async function registerSandboxAssets (app: FastifyInstance, endpoint: string): Promise<void> {
  const files = await importOptional(async () => assetFiles(), 'graphql.landingPage (the GraphQL sandbox)', ['graphiql', 'react', 'react-dom'])
  app.get(`${endpoint}/sandbox/:asset`, { schema: documented({ hide: true }) }, async (request, reply) => {
    const name = (request.params as { asset: string }).asset
    const file = Object.hasOwn(SANDBOX_ASSETS, name) ? files.get(name) : undefined
    if (file === undefined) return await reply.code(404).type('text/plain; charset=utf-8').send('Not Found')
    return await reply.header('cache-control', 'public, max-age=86400').type(SANDBOX_ASSETS[name].type).send(createReadStream(file))
  })
}
