import { basename, extname } from 'node:path'
import type { FastifyInstance } from 'fastify'
import fastifyStatic from '@fastify/static'
import mime from 'mime-types'
import { dispositionFor } from './active-types.js'
import { contentDisposition } from './content-disposition.js'
import { typeOfExtension } from './file-type.js'

/**
 * What every answer under `baseUrl` carries, found or not: no sniffing (a browser keeps to the
 * type it is given, so a text file holding HTML stays text), and a policy under which nothing
 * a file holds can run or load anything, in a sandbox with an origin of its own.
 */
export const MEDIA_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox"
} as const

/**
 * Fetch Metadata destinations that run what they load (`Sec-Fetch-Dest`, sent by current
 * browsers). `Content-Disposition` does not apply to them, so a page of the origin could still
 * run an uploaded script with `<script src>` (bypassing its own CSP) or register it as a worker:
 * an active type that is not allowed inline is refused to them.
 */
const RUNNING_DESTINATIONS = new Set(['script', 'worker', 'sharedworker', 'serviceworker', 'audioworklet', 'paintworklet', 'xslt'])

/**
 * Serves the local provider's directory under `baseUrl` (`/uploads`) with @fastify/static, in its
 * own encapsulated context so that nothing else of the application changes (no `reply.sendFile`
 * decoration). No directory listing, no index files, no dotfiles (uploads in progress are
 * hidden `.part` files). A file is served with the type of its extension as the upload module
 * records it (./file-type.ts), and an active type (./active-types.ts) as an attachment unless
 * `inlineTypes` allows it inline, and never to a script or a worker. The directory is created
 * by the first upload, not here: an application that never uploads leaves no empty folder behind.
 */
export async function serveLocalFiles (app: FastifyInstance, directory: string, baseUrl: string, inlineTypes: readonly string[]): Promise<void> {
  const dispositionOf = dispositionFor(inlineTypes)
  await app.register(async (files) => {
    files.addHook('onRequest', async (request, reply) => {
      // On the request, not the file: a 404 or a 304 under `baseUrl` carries them too.
      reply.headers(MEDIA_HEADERS)
      const destination = request.headers['sec-fetch-dest']
      if (typeof destination !== 'string' || !RUNNING_DESTINATIONS.has(destination)) return
      const path = (request.params as { '*'?: string })['*'] ?? ''
      if (dispositionOf(typeOfExtension(extname(path))) === 'attachment') return await reply.code(403).send()
    })
    await files.register(fastifyStatic, {
      root: directory,
      prefix: `${baseUrl}/`,
      decorateReply: false,
      index: false,
      list: false,
      serveDotFiles: false,
      suppressWarning: true,
      setHeaders: (reply, path) => {
        const type = typeOfExtension(extname(path))
        reply.header('content-type', mime.contentType(type) || type)
        // Stored names are `<hash><ext>`: letters, digits, `_`, `-` and `.` only.
        if (dispositionOf(type) === 'attachment') reply.header('content-disposition', contentDisposition('attachment', basename(path)))
      }
    })
  })
}
