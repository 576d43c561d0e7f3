import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { LocalProviderOptions } from '../options/upload.js'
import type { ProviderResult, ProviderUpload, StoredObject, UploadProvider } from '../options/upload-provider.js'

/**
 * Files on the local disk (Strapi's default provider): `<directory>/<hash><ext>`, read at
 * `<baseUrl>/<hash><ext>`. A file is written under a hidden temporary name and renamed into
 * place once complete, so a reader (or a crash) never sees half a file.
 */
export class LocalProvider implements UploadProvider {
  readonly name = 'local'
  readonly directory: string
  readonly #baseUrl: string

  constructor (options: Pick<LocalProviderOptions, 'directory' | 'baseUrl'>) {
    this.directory = resolve(options.directory)
    this.#baseUrl = options.baseUrl
  }

  #path (key: string): string {
    // An invariant, not reachable through the API: keys are built from slugged hashes. It is
    // guarded rather than trusted because a wrong key would write outside the directory.
    if (basename(key) !== key || key.startsWith('.')) throw new Error(`invalid storage key ${JSON.stringify(key)}`)
    return join(this.directory, key)
  }

  async upload (file: ProviderUpload): Promise<ProviderResult> {
    const target = this.#path(file.key)
    await mkdir(this.directory, { recursive: true })
    const partial = join(this.directory, `.${file.key}.${randomBytes(6).toString('hex')}.part`)
    try {
      await pipeline(file.stream(), createWriteStream(partial, { flags: 'wx' }))
      await rename(partial, target)
    } catch (err) {
      await rm(partial, { force: true })
      throw err
    }
    return { url: `${this.#baseUrl}/${file.key}`, provider_metadata: null }
  }

  async delete (file: StoredObject): Promise<void> {
    await rm(this.#path(file.key), { force: true })
  }
}
