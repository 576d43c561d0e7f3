import type { ContentApiError } from '../errors.js'
import { httpErrorBody } from '../graphql/http-error-body.js'

/**
 * Where the content API answers on an HTTP server: its REST prefix and its GraphQL endpoint, as
 * full paths. The plugin records them when it registers; the server's own error handlers
 * (./server-options.ts), which run before any route or plugin context is known, read them to
 * decide whose format an error is answered in. Keyed by the Node server, which every
 * encapsulation context of one Fastify instance shares.
 */
interface Surfaces {
  rest: Set<string>
  graphql: Set<string>
}

export type Surface = 'rest' | 'graphql'

const byServer = new WeakMap<object, Surfaces>()

/** `/api/` and `/api` are the same prefix; `/` is every path (''). */
const trimSlash = (path: string): string => path.replace(/\/+$/, '')

export function addSurfaces (server: object, paths: { rest: string, graphql: string | null }): void {
  let surfaces = byServer.get(server)
  if (surfaces === undefined) byServer.set(server, surfaces = { rest: new Set(), graphql: new Set() })
  surfaces.rest.add(trimSlash(paths.rest))
  if (paths.graphql !== null) surfaces.graphql.add(paths.graphql)
}

/** Whether a content API registered on this server. */
export const hasSurfaces = (server: object): boolean => byServer.has(server)

/**
 * The surface a request target belongs to, from its path as sent (`/api/articles?x=1`), or
 * null for the application's own paths. The GraphQL endpoint is a single path; the REST prefix
 * covers itself and everything below it.
 */
export function surfaceOf (server: object, target: string): Surface | null {
  const surfaces = byServer.get(server)
  if (surfaces === undefined) return null
  const path = target.split(/[?#]/, 1)[0]
  if (surfaces.graphql.has(path)) return 'graphql'
  for (const prefix of surfaces.rest) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return 'rest'
  }
  return null
}

/** An error's body in the surface's format: Strapi's envelope, or Apollo Server's `errors`. */
export function errorBody (surface: Surface, error: ContentApiError): string {
  return JSON.stringify(surface === 'rest' ? error.toEnvelope() : httpErrorBody(error.message))
}
