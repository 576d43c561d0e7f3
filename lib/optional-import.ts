import { MissingDependencyError } from './errors.js'

/**
 * Imports a module that needs optional peer dependencies, only when the feature using it is
 * configured: an application that uses neither S3 nor a TypeScript CLI config installs neither
 * the AWS SDK nor `tsx`. When one of `packages` is missing, Node's `ERR_MODULE_NOT_FOUND` (which
 * names a file deep in our dist) becomes a `MissingDependencyError` naming the feature and the
 * `npm install` that fixes it. Any other failure (a broken install, a syntax error) is rethrown.
 *
 * @example
 * const { S3Provider } = await importOptional(() => import('./upload/s3-provider.js'),
 *   "upload.provider: 's3'", ['@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner'])
 */
export async function importOptional<T> (load: () => Promise<T>, feature: string, packages: readonly string[]): Promise<T> {
  try {
    return await load()
  } catch (err) {
    if (isMissing(err, packages)) throw new MissingDependencyError(feature, packages, { cause: err })
    throw err
  }
}

/**
 * Whether `err` says one of `packages` cannot be found: `Cannot find package '@aws-sdk/client-s3'
 * imported from ...` (ESM) or `Cannot find module 'tsx/esm/api'` (a subpath, or CommonJS).
 */
function isMissing (err: unknown, packages: readonly string[]): boolean {
  const { code, message } = err as { code?: unknown, message?: unknown }
  if ((code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') || typeof message !== 'string') return false
  return packages.some((name) => message.includes(`'${name}'`) || message.includes(`'${name}/`))
}
