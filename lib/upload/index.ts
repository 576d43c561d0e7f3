import type { FastifyInstance } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import type { DocumentService } from '../documents/service.js'
import type { Registry } from '../model/registry.js'
import type { ResolvedOptions } from '../options.js'

/** What the upload module needs from the rest of the plugin. */
export interface UploadDeps {
  registry: Registry
  documents: (uid: string) => DocumentService
  access: AccessControl
  options: ResolvedOptions
}

/** The public upload API decorated as `app.contentApi.upload` (null when not available). */
export type UploadApi = Record<string, never>

/** Registers the upload routes and file serving (not implemented yet). */
export async function registerUpload (_app: FastifyInstance, _deps: UploadDeps): Promise<UploadApi | null> {
  return null
}
