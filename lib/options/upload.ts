import Type, { type Static } from 'typebox'
import Value from 'typebox/value'
import { ConfigurationError } from '../errors.js'
import type { UploadProvider } from './upload-provider.js'

/**
 * Upload options (docs/upload.md), validated with the plugin's own by `resolveOptions`
 * (lib/options.ts), before anything connects: every problem is reported in one `ConfigurationError`. Defaults follow Strapi's upload plugin where it
 * has one (`sizeLimit`, breakpoints, the media-library settings `sizeOptimization`,
 * `responsiveDimensions`, `autoOrientation`).
 */

const LocalOptions = Type.Object({
  /** Where the local provider writes files; relative paths resolve from the working directory. */
  directory: Type.String({ minLength: 1, default: 'public/uploads' }),
  /** The URL prefix of stored files (`url: /uploads/<hash><ext>`) and where they are served. */
  baseUrl: Type.String({ pattern: '^/[^?#]*[^/?#]$', default: '/uploads' }),
  /** Serve the directory under `baseUrl` with @fastify/static. Off when another server does it. */
  serve: Type.Boolean({ default: true })
}, { additionalProperties: false })

const S3Options = Type.Object({
  bucket: Type.String({ minLength: 1 }),
  region: Type.String({ minLength: 1, default: 'us-east-1' }),
  /** An S3-compatible endpoint (MinIO, R2, s3rver...); AWS when omitted. */
  endpoint: Type.Optional(Type.String({ minLength: 1 })),
  /** Path-style URLs (`<endpoint>/<bucket>/<key>`), which most S3-compatible servers need. */
  forcePathStyle: Type.Boolean({ default: false }),
  credentials: Type.Optional(Type.Object({
    accessKeyId: Type.String({ minLength: 1 }),
    secretAccessKey: Type.String({ minLength: 1 }),
    sessionToken: Type.Optional(Type.String())
  }, { additionalProperties: false })),
  /** A key prefix inside the bucket (`media/`). */
  prefix: Type.String({ default: '' }),
  /** Public URL of the bucket's objects (a CDN); the endpoint's own URL when omitted. */
  baseUrl: Type.Optional(Type.String({ minLength: 1 })),
  /** A canned ACL set on every object (`public-read`); none by default. */
  acl: Type.Optional(Type.String({ minLength: 1 })),
  /** Objects are private: API responses carry signed URLs (`isUrlSigned: true`). */
  private: Type.Boolean({ default: false }),
  /** Lifetime of a signed URL, in seconds. */
  signedUrlExpires: Type.Integer({ minimum: 1, maximum: 604800, default: 900 }),
  /** Bytes per part of multipart uploads (S3's minimum is 5 MiB). */
  partSize: Type.Integer({ minimum: 5 * 1024 * 1024, default: 8 * 1024 * 1024 })
}, { additionalProperties: false })

const UploadOptionsSchema = Type.Object({
  /** `false` leaves out the upload routes and file serving (`app.contentApi.upload` is null). */
  enabled: Type.Boolean({ default: true }),
  /** Largest accepted file, in bytes (Strapi's `sizeLimit`, 1 GB by default). */
  sizeLimit: Type.Integer({ minimum: 1, default: 1_000_000_000 }),
  /** Most files one request may carry. */
  maxFiles: Type.Integer({ minimum: 1, default: 20 }),
  /** Strapi's `security`: MIME patterns (`image/*`) accepted, or refused; checked on the detected type. */
  security: Type.Object({
    allowedTypes: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    deniedTypes: Type.Optional(Type.Array(Type.String({ minLength: 1 })))
  }, { additionalProperties: false, default: {} }),
  /**
   * MIME patterns of active types (HTML, SVG, XML, JavaScript...: ./active-types.ts) served
   * inline rather than as attachments. None by default; only for files from trusted uploaders.
   */
  inlineTypes: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  /** `local` (default), `s3`, or an object implementing the provider interface (checked below). */
  provider: Type.Unknown({ default: 'local' }),
  local: Type.Object(LocalOptions.properties, { additionalProperties: false, default: {} }),
  s3: Type.Optional(S3Options),
  /** Re-encode JPEG, PNG, WebP, TIFF and AVIF images at quality 80 (needs sharp). */
  sizeOptimization: Type.Boolean({ default: true }),
  /** Rotate images by their EXIF orientation when re-encoding (needs sharp). */
  autoOrientation: Type.Boolean({ default: false }),
  /** Generate the `thumbnail` format (245x156 inside) of larger images (needs sharp). */
  thumbnail: Type.Boolean({ default: true }),
  /** Generate the responsive formats of `breakpoints` (needs sharp). */
  responsiveDimensions: Type.Boolean({ default: true }),
  /** Format name -> largest side in pixels; a format is made when the image exceeds it. */
  breakpoints: Type.Record(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]*$' }), Type.Integer({ minimum: 1 }), {
    default: { large: 1000, medium: 750, small: 500 }
  }),
  /** Where uploads are staged while they are checked; the system's temporary directory by default. */
  tmpDir: Type.Optional(Type.String({ minLength: 1 }))
}, { additionalProperties: false })

type Schema = Static<typeof UploadOptionsSchema>
export type LocalProviderOptions = Static<typeof LocalOptions>
export type S3ProviderOptions = Static<typeof S3Options>

/** The `upload` section of the plugin's options. */
export interface UploadOptions {
  enabled?: boolean
  sizeLimit?: number
  maxFiles?: number
  security?: { allowedTypes?: string[], deniedTypes?: string[] }
  inlineTypes?: string[]
  provider?: 'local' | 's3' | UploadProvider
  local?: Partial<LocalProviderOptions>
  s3?: Partial<S3ProviderOptions> & { bucket: string }
  sizeOptimization?: boolean
  autoOrientation?: boolean
  thumbnail?: boolean
  responsiveDimensions?: boolean
  breakpoints?: Record<string, number>
  tmpDir?: string
}

export type ResolvedUploadOptions = Omit<Schema, 'provider' | 's3'> & {
  provider: 'local' | 's3' | UploadProvider
  s3: S3ProviderOptions | undefined
}

function problems (value: unknown): string[] {
  const found: string[] = []
  for (const e of Value.Errors(UploadOptionsSchema, value)) {
    // `boolean`: the `false` schema of a property additionalProperties refuses, reported once below.
    if (e.keyword === 'boolean') continue
    const path = `upload${e.instancePath.replaceAll('/', '.')}`
    found.push(e.keyword === 'additionalProperties'
      ? `${path}: unknown option(s) ${(e.params as { additionalProperties: string[] }).additionalProperties.join(', ')}`
      : `${path}: ${e.message}`)
  }
  return found
}

const isProvider = (value: unknown): value is UploadProvider =>
  typeof value === 'object' && value !== null &&
  typeof (value as UploadProvider).upload === 'function' && typeof (value as UploadProvider).delete === 'function'

/**
 * The upload options with their defaults, or a `ConfigurationError` listing every problem.
 *
 * @example
 * resolveUploadOptions({ provider: 's3', s3: { bucket: 'media' } }).sizeLimit // 1_000_000_000
 */
export function resolveUploadOptions (raw: UploadOptions | undefined): ResolvedUploadOptions {
  const input: Record<string, unknown> = { ...raw }
  for (const key of ['security', 'local', 's3'] as const) {
    if (typeof input[key] === 'object' && input[key] !== null) input[key] = { ...(input[key] as object) }
  }
  const provider = input.provider
  const resolved = Value.Default(UploadOptionsSchema, input) as Record<string, unknown>
  const found = problems(resolved)
  if (provider !== undefined && provider !== 'local' && provider !== 's3' && !isProvider(provider)) {
    found.push('upload.provider: expected "local", "s3" or an object with upload(file) and delete(file) methods')
  }
  if (provider === 's3' && input.s3 === undefined) found.push('upload.s3: required when upload.provider is "s3"')
  if (found.length > 0) throw new ConfigurationError(found)
  return resolved as ResolvedUploadOptions
}
