import type { Static } from 'typebox'
import { ConfigurationError } from '../errors.js'
import type { UploadProvider } from './upload-provider.js'
import { resolveSchema } from './validate.js'

/**
 * Upload options (docs/upload.md), validated with the plugin's own by `resolveOptions`
 * (lib/options.ts), before anything connects: every problem is reported in one `ConfigurationError`. Defaults follow Strapi's upload plugin where it
 * has one (`sizeLimit`, breakpoints, the media-library settings `sizeOptimization`,
 * `responsiveDimensions`, `autoOrientation`).
 */

const LocalOptions = {
  type: 'object',
  required: ['directory', 'baseUrl', 'serve'],
  properties: {
    /** Where the local provider writes files; relative paths resolve from the working directory. */
    directory: { type: 'string', minLength: 1, default: 'public/uploads' },
    /** The URL prefix of stored files (`url: /uploads/<hash><ext>`) and where they are served. */
    baseUrl: { type: 'string', pattern: '^/[^?#]*[^/?#]$', default: '/uploads' },
    /** Serve the directory under `baseUrl` with @fastify/static. Off when another server does it. */
    serve: { type: 'boolean', default: true }
  },
  additionalProperties: false
} as const

const S3Options = {
  type: 'object',
  required: ['bucket', 'region', 'forcePathStyle', 'prefix', 'private', 'signedUrlExpires', 'partSize'],
  properties: {
    bucket: { type: 'string', minLength: 1 },
    region: { type: 'string', minLength: 1, default: 'us-east-1' },
    /** An S3-compatible endpoint (MinIO, R2, s3rver...); AWS when omitted. */
    endpoint: { type: 'string', minLength: 1 },
    /** Path-style URLs (`<endpoint>/<bucket>/<key>`), which most S3-compatible servers need. */
    forcePathStyle: { type: 'boolean', default: false },
    credentials: {
      type: 'object',
      required: ['accessKeyId', 'secretAccessKey'],
      properties: {
        accessKeyId: { type: 'string', minLength: 1 },
        secretAccessKey: { type: 'string', minLength: 1 },
        sessionToken: { type: 'string' }
      },
      additionalProperties: false
    },
    /** A key prefix inside the bucket (`media/`). */
    prefix: { type: 'string', default: '' },
    /** Public URL of the bucket's objects (a CDN); the endpoint's own URL when omitted. */
    baseUrl: { type: 'string', minLength: 1 },
    /** A canned ACL set on every object (`public-read`); none by default. */
    acl: { type: 'string', minLength: 1 },
    /** Objects are private: API responses carry signed URLs (`isUrlSigned: true`). */
    private: { type: 'boolean', default: false },
    /** Lifetime of a signed URL, in seconds. */
    signedUrlExpires: { type: 'integer', minimum: 1, maximum: 604800, default: 900 },
    /** Bytes per part of multipart uploads (S3's minimum is 5 MiB). */
    partSize: { type: 'integer', minimum: 5 * 1024 * 1024, default: 8 * 1024 * 1024 }
  },
  additionalProperties: false
} as const

export const UploadOptionsSchema = {
  type: 'object',
  required: ['enabled', 'sizeLimit', 'maxFiles', 'security', 'inlineTypes', 'provider', 'local', 'sizeOptimization', 'autoOrientation', 'thumbnail', 'responsiveDimensions', 'breakpoints'],
  properties: {
    /** `false` leaves out the upload routes and file serving (`app.contentApi.upload` is null). */
    enabled: { type: 'boolean', default: true },
    /** Largest accepted file, in bytes (Strapi's `sizeLimit`, 1 GB by default). */
    sizeLimit: { type: 'integer', minimum: 1, default: 1_000_000_000 },
    /** Most files one request may carry. */
    maxFiles: { type: 'integer', minimum: 1, default: 20 },
    /** Strapi's `security`: MIME patterns (`image/*`) accepted, or refused; checked on the detected type. */
    security: {
      type: 'object',
      properties: {
        allowedTypes: { type: 'array', items: { type: 'string', minLength: 1 } },
        deniedTypes: { type: 'array', items: { type: 'string', minLength: 1 } }
      },
      additionalProperties: false,
      default: {}
    },
    /**
     * MIME patterns of active types (HTML, SVG, XML, JavaScript...: ./active-types.ts) served
     * inline rather than as attachments. None by default; only for files from trusted uploaders.
     */
    inlineTypes: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    /** `local` (default), `s3`, or an object implementing the provider interface (checked below). */
    provider: { default: 'local' },
    local: { ...LocalOptions, default: {} },
    s3: S3Options,
    /** Re-encode JPEG, PNG, WebP, TIFF and AVIF images at quality 80 (needs sharp). */
    sizeOptimization: { type: 'boolean', default: true },
    /** Rotate images by their EXIF orientation when re-encoding (needs sharp). */
    autoOrientation: { type: 'boolean', default: false },
    /** Generate the `thumbnail` format (245x156 inside) of larger images (needs sharp). */
    thumbnail: { type: 'boolean', default: true },
    /** Generate the responsive formats of `breakpoints` (needs sharp). */
    responsiveDimensions: { type: 'boolean', default: true },
    /** Format name -> largest side in pixels; a format is made when the image exceeds it. */
    breakpoints: {
      type: 'object',
      patternProperties: { '^[A-Za-z][A-Za-z0-9_-]*$': { type: 'integer', minimum: 1 } },
      default: { large: 1000, medium: 750, small: 500 }
    },
    /** Where uploads are staged while they are checked; the system's temporary directory by default. */
    tmpDir: { type: 'string', minLength: 1 }
  },
  additionalProperties: false
} as const

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
  const { value: resolved, problems: found } = resolveSchema<ResolvedUploadOptions>(UploadOptionsSchema, raw ?? {}, 'upload')
  const provider = raw?.provider
  if (provider !== undefined && provider !== 'local' && provider !== 's3' && !isProvider(provider)) {
    found.push('upload.provider: expected "local", "s3" or an object with upload(file) and delete(file) methods')
  }
  if (provider === 's3' && raw?.s3 === undefined) found.push('upload.s3: required when upload.provider is "s3"')
  if (found.length > 0) throw new ConfigurationError(found)
  return resolved
}
