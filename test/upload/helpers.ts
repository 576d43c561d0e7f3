import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { defineContentType, type ContentApiOptions } from '../../lib/index.js'
import type { UploadOptions } from '../../lib/options/upload.js'
import { UPLOAD_ACTIONS } from '../../lib/upload/routes.js'
import { build } from '../helpers/build.js'
import { png } from '../fixtures/oracle/seed.js'

export { png }
export const ARTICLE = 'api::article.article'

/** A draft & publish, localized article with the media attributes the suites attach to. */
export const article = defineContentType({
  kind: 'collectionType',
  collectionName: 'articles',
  info: { singularName: 'article', pluralName: 'articles', displayName: 'Article' },
  options: { draftAndPublish: true },
  pluginOptions: { i18n: { localized: true } },
  attributes: {
    title: { type: 'string', required: true },
    cover: { type: 'media', multiple: false, allowedTypes: ['images', 'files'] },
    gallery: { type: 'media', multiple: true, allowedTypes: ['images'] },
    attachments: { type: 'media', multiple: true }
  }
})

type Teardown = Parameters<typeof build>[0]

export interface UploadApp {
  app: FastifyInstance
  /** The local provider's directory. */
  directory: string
  /** Where uploads are staged. */
  staging: string
  /** Files in the provider's directory (hidden partial files included). */
  stored (): Promise<string[]>
  /** Staging directories still present (each request removes its own). */
  staged (): Promise<string[]>
  /** Number of file records. */
  records (): Promise<number>
}

/**
 * An app with the upload module on its own temporary directories (provider and staging), which
 * are removed when the test ends. The public role may upload and read files unless `grants`
 * says otherwise.
 */
export async function buildUpload (t: Teardown, upload: UploadOptions = {}, extra: Partial<Omit<ContentApiOptions, 'db'>> & { grants?: string[] } = {}): Promise<UploadApp> {
  const root = await mkdtemp(join(tmpdir(), 'fca-upload-test-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const directory = join(root, 'uploads')
  const staging = join(root, 'staging')
  await mkdir(staging)
  const { grants = Object.values(UPLOAD_ACTIONS), ...options } = extra
  const { app } = await build(t, {
    models: [article],
    i18n: { locales: ['en', 'fr'], defaultLocale: 'en' },
    ...options,
    upload: { tmpDir: staging, ...upload, local: { directory, ...upload.local } }
  })
  if (grants.length > 0) await app.contentApi.permissions.grant('public', grants)
  return {
    app,
    directory,
    staging,
    stored: async () => await readdir(directory).catch(() => []),
    staged: async () => await readdir(staging),
    records: async () => await app.contentApi.documents('plugin::upload.file').count()
  }
}

export type Part =
  | { name: string, value: string }
  | { name: string, filename: string, type?: string, data: Buffer }

/** A multipart/form-data body for `app.inject`, parts in the order given. */
export function multipart (parts: readonly Part[]): { payload: Buffer, headers: Record<string, string> } {
  const boundary = `----fca${randomBytes(8).toString('hex')}`
  const chunks: Buffer[] = []
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`))
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`))
      chunks.push(part.data, Buffer.from('\r\n'))
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

/** POSTs a multipart body to `/api/upload` (with `?search` when given). */
export async function postUpload (app: FastifyInstance, parts: readonly Part[], search = '', headers: Record<string, string> = {}): Promise<{ status: number, body: any }> {
  const form = multipart(parts)
  const response = await app.inject({ method: 'POST', url: `/api/upload${search}`, payload: form.payload, headers: { ...form.headers, ...headers } })
  return { status: response.statusCode, body: response.body === '' ? null : JSON.parse(response.body) }
}

export const pngPart = (filename: string, colour: [number, number, number] = [0, 128, 255], size = 4): Part =>
  ({ name: 'files', filename, type: 'image/png', data: png(...colour, size, size) })
