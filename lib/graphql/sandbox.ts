import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { documented } from '../route-schema.js'

/**
 * The sandbox: GraphiQL (schema documentation, query editor, variables and a headers editor for
 * `Authorization: Bearer <token>`) served at the GraphQL endpoint to browsers. Unlike Strapi's
 * Apollo Sandbox and Mercurius's GraphiQL, which load their code from public CDNs, every asset
 * is served by this server from the installed `graphiql`, `react` and `react-dom` packages, so
 * the page works offline and its content-security policy names no other host:
 *
 * ```
 * default-src 'self'; script-src 'self' 'nonce-<random>'; style-src 'self' 'unsafe-inline';
 * img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:
 * ```
 */

const require = createRequire(import.meta.url)
const packageDir = (name: string): string => dirname(require.resolve(`${name}/package.json`))

const ASSETS: Record<string, { file: () => string, type: string }> = {
  'react.js': { file: () => join(packageDir('react'), 'umd', 'react.production.min.js'), type: 'application/javascript; charset=utf-8' },
  'react-dom.js': { file: () => join(packageDir('react-dom'), 'umd', 'react-dom.production.min.js'), type: 'application/javascript; charset=utf-8' },
  'graphiql.js': { file: () => join(packageDir('graphiql'), 'graphiql.min.js'), type: 'application/javascript; charset=utf-8' },
  'graphiql.css': { file: () => join(packageDir('graphiql'), 'graphiql.min.css'), type: 'text/css; charset=utf-8' }
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

/** `<endpoint>/sandbox/<asset>`: the sandbox's scripts and styles, from the installed packages. */
export function registerSandboxAssets (app: FastifyInstance, endpoint: string): void {
  app.get(`${endpoint}/sandbox/:asset`, { schema: documented({ hide: true }) }, async (request, reply) => {
    const asset = ASSETS[(request.params as { asset: string }).asset]
    if (asset === undefined) return await reply.code(404).type('text/plain; charset=utf-8').send('Not Found')
    return await reply.header('cache-control', 'public, max-age=86400').type(asset.type).send(createReadStream(asset.file()))
  })
}
