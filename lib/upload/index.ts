import type { FastifyInstance } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import type { DocumentService, QueryParams } from '../documents/service.js'
import { FILE_UID } from '../model/associations.js'
import type { Registry } from '../model/registry.js'
import type { ResolvedOptions } from '../options/index.js'
import { importOptional } from '../optional-import.js'
import { parseMediaTarget } from './attach.js'
import { parseFileInfo, type FileInfo } from './file-info.js'
import { LocalProvider } from './local-provider.js'
import type { ResolvedUploadOptions } from '../options/upload.js'
import type { UploadProvider } from '../options/upload-provider.js'
import { uploadRoutes } from './routes.js'
import { serveLocalFiles } from './serve.js'
import { UploadService, type FileRecord } from './service.js'
import { createStaging, stageInputs, type UploadInput } from './staging.js'

/** What the upload module needs from the rest of the plugin. */
export interface UploadDeps {
  registry: Registry
  documents: (uid: string) => DocumentService
  access: AccessControl
  options: ResolvedOptions
}

/**
 * The upload service decorated as `app.contentApi.upload`: the same checks and storage as the
 * REST routes, for application code (seeding, imports, jobs). Files are given as a stream, a
 * buffer or a path.
 *
 * @example
 * const [file] = await app.contentApi.upload!.upload(
 *   { name: 'cover.png', type: 'image/png', path: './cover.png' },
 *   { fileInfo: { alternativeText: 'The cover' }, ref: 'api::article.article', refId: 12, field: 'cover' }
 * )
 */
export interface UploadApi {
  readonly provider: UploadProvider
  readonly options: ResolvedUploadOptions
  upload (files: UploadInput | readonly UploadInput[], params?: UploadParams): Promise<FileRecord[]>
  /** Replaces a file's content, keeping its URL (see docs/upload.md). */
  replace (id: number | string, file: UploadInput, fileInfo?: FileInfo): Promise<FileRecord>
  updateFileInfo (id: number | string, fileInfo: FileInfo): Promise<FileRecord>
  findMany (params?: QueryParams): Promise<FileRecord[]>
  /** By row id or documentId; null when there is no such file. */
  findOne (id: number | string): Promise<FileRecord | null>
  /** Deletes the record and the stored objects; returns the deleted record, or null. */
  remove (id: number | string): Promise<FileRecord | null>
}

export interface UploadParams {
  fileInfo?: FileInfo | FileInfo[]
  ref?: string
  refId?: number | string
  field?: string
}

export type { UploadOptions, ResolvedUploadOptions } from '../options/upload.js'
export type { UploadProvider, ProviderUpload, ProviderResult, StoredObject } from '../options/upload-provider.js'
export type { FileInfo } from './file-info.js'
export type { FileRecord } from './service.js'
export type { UploadInput } from './staging.js'
export { LocalProvider } from './local-provider.js'

/** The S3 provider's optional peer dependencies (package.json `peerDependenciesMeta`). */
const S3_PACKAGES = ['@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner'] as const

async function createProvider (options: ResolvedUploadOptions): Promise<UploadProvider> {
  if (typeof options.provider === 'object') return options.provider
  if (options.provider === 's3') {
    // Loaded only when configured: the AWS SDK is an optional peer dependency (about 20 MiB
    // installed, 0.3-0.5 s of start-up) that an application without S3 does not install.
    const { S3Provider } = await importOptional(async () => await import('./s3-provider.js'), "upload.provider: 's3'", S3_PACKAGES)
    return new S3Provider(options.s3!)
  }
  return new LocalProvider(options.local)
}

/**
 * Registers the upload routes under `<rest.prefix>/upload`, serves the local provider's files
 * under `local.baseUrl`, and returns the service for `app.contentApi.upload` (null when
 * `upload.enabled` is false).
 */
export async function registerUpload (app: FastifyInstance, deps: UploadDeps): Promise<UploadApi | null> {
  const options = deps.options.upload
  if (!options.enabled) return null
  const provider = await createProvider(options)
  if (provider.close !== undefined) app.addHook('onClose', async () => { await provider.close!() })
  const service = new UploadService({
    files: deps.documents(FILE_UID),
    documents: deps.documents,
    provider,
    options,
    log: app.log
  })
  const prefix = `${deps.options.rest.prefix.replace(/\/+$/, '')}/upload`
  await app.register(uploadRoutes, { prefix, service, access: deps.access, registry: deps.registry, options, limits: deps.options.limits })
  if (provider instanceof LocalProvider && options.local.serve) await serveLocalFiles(app, provider.directory, options.local.baseUrl, options.inlineTypes)
  return uploadApi(service, options, deps.registry)
}

function uploadApi (service: UploadService, options: ResolvedUploadOptions, registry: Registry): UploadApi {
  const present = async (records: Parameters<UploadService['present']>[0][]): Promise<FileRecord[]> =>
    await Promise.all(records.map(async (r) => await service.present(r)))
  const staged = async <T>(inputs: readonly UploadInput[], run: (staging: Awaited<ReturnType<typeof createStaging>>) => Promise<T>): Promise<T> => {
    const staging = await createStaging(options.tmpDir)
    try {
      await stageInputs(staging, inputs, options)
      return await run(staging)
    } finally {
      await staging.cleanup()
    }
  }
  return {
    provider: service.provider,
    options,
    async upload (files, params = {}) {
      const inputs = Array.isArray(files) ? files as readonly UploadInput[] : [files as UploadInput]
      const target = parseMediaTarget(registry, {
        ref: params.ref, refId: params.refId === undefined ? undefined : String(params.refId), field: params.field
      })
      return await staged(inputs, async (staging) => await present(await service.upload(staging, parseFileInfo(params.fileInfo, inputs.length), target)))
    },
    async replace (id, file, fileInfo = {}) {
      return await staged([file], async (staging) => await service.present(await service.replace(id, staging, parseFileInfo(fileInfo, 1)[0])))
    },
    async updateFileInfo (id, fileInfo) {
      return await service.present(await service.updateFileInfo(id, parseFileInfo(fileInfo, 1)[0]))
    },
    async findMany (params) { return await present(await service.findMany(params)) },
    async findOne (id) {
      const record = await service.findOne(id)
      return record === null ? null : await service.present(record)
    },
    async remove (id) {
      const record = await service.remove(id)
      return record === null ? null : await service.present(record)
    }
  }
}
