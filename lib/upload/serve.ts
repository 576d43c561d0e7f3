import type { FastifyInstance } from 'fastify'
import fastifyStatic from '@fastify/static'

/**
 * Serves the local provider's directory under `baseUrl` (`/uploads`) with @fastify/static, in its
 * own encapsulated context so that nothing else of the application changes (no `reply.sendFile`
 * decoration). No directory listing, no index files, no dotfiles (uploads in progress are
 * hidden `.part` files); `nosniff` so browsers keep to the stored type. The directory is created by
 * the first upload, not here: an application that never uploads leaves no empty folder behind.
 */
export async function serveLocalFiles (app: FastifyInstance, directory: string, baseUrl: string): Promise<void> {
  await app.register(async (files) => {
    await files.register(fastifyStatic, {
      root: directory,
      prefix: `${baseUrl}/`,
      decorateReply: false,
      index: false,
      list: false,
      serveDotFiles: false,
      suppressWarning: true,
      setHeaders: (reply) => { reply.header('x-content-type-options', 'nosniff') }
    })
  })
}
