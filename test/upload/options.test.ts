import t from 'tap'
import { ConfigurationError } from '../../lib/index.js'
import { resolveUploadOptions, type UploadOptions } from '../../lib/options/upload.js'
import type { UploadProvider } from '../../lib/options/upload-provider.js'

t.test('defaults', async (t) => {
  const options = resolveUploadOptions(undefined)
  t.match(options, {
    enabled: true,
    sizeLimit: 1_000_000_000,
    maxFiles: 20,
    security: {},
    provider: 'local',
    local: { directory: 'public/uploads', baseUrl: '/uploads', serve: true },
    sizeOptimization: true,
    autoOrientation: false,
    thumbnail: true,
    responsiveDimensions: true,
    breakpoints: { large: 1000, medium: 750, small: 500 }
  })
  t.equal(options.s3, undefined)
})

t.test('S3 defaults, and a custom provider object kept as given', async (t) => {
  t.match(resolveUploadOptions({ provider: 's3', s3: { bucket: 'media' } }).s3, {
    bucket: 'media', region: 'us-east-1', forcePathStyle: false, prefix: '', private: false, signedUrlExpires: 900, partSize: 8 * 1024 * 1024
  })
  const custom: UploadProvider = { name: 'mine', upload: async () => ({ url: '/x' }), delete: async () => {} }
  t.equal(resolveUploadOptions({ provider: custom }).provider, custom)
})

t.test('every problem reported at once', async (t) => {
  const bad = {
    sizeLimit: 0,
    maxFiles: 'many',
    provider: 'ftp',
    local: { baseUrl: 'uploads/', nope: true },
    breakpoints: { large: -1 },
    extra: 1
  } as unknown as UploadOptions
  try {
    resolveUploadOptions(bad)
    t.fail('expected a ConfigurationError')
  } catch (err) {
    t.type(err, ConfigurationError)
    const problems = (err as ConfigurationError).problems
    t.match(problems, [
      /upload: unknown option\(s\) extra/,
      /upload\.sizeLimit: must be >= 1/,
      /upload\.maxFiles: must be integer/,
      /upload\.local: unknown option\(s\) nope/,
      /upload\.local\.baseUrl: must match pattern/,
      /upload\.breakpoints\.large: must be >= 1/,
      /upload\.provider: expected "local", "s3" or an object with upload\(file\) and delete\(file\) methods/
    ].map((re) => re), 'one line per problem')
    t.equal(problems.length, 7, problems.join('\n'))
  }
  const problemsOf = (options: UploadOptions): string[] => {
    try {
      resolveUploadOptions(options)
      return []
    } catch (err) {
      return (err as ConfigurationError).problems
    }
  }
  t.strictSame(problemsOf({ provider: 's3' }), ['upload.s3: required when upload.provider is "s3"'])
  t.match(problemsOf({ provider: 's3', s3: { bucket: '' } }), [/upload\.s3\.bucket/])
})
