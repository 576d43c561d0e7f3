import { DeleteObjectCommand, GetObjectCommand, S3Client, type ObjectCannedACL } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import type { S3ProviderOptions } from '../options/upload.js'
import type { ProviderResult, ProviderUpload, StoredObject, UploadProvider } from '../options/upload-provider.js'

/**
 * Files in an S3 bucket, or any server speaking the S3 protocol (MinIO, R2, s3rver), through the
 * AWS SDK v3: several application instances then share one media store. Uploads stream as
 * multipart uploads of `partSize` parts (never the whole file in memory); a failed upload is
 * aborted by the SDK, so no object is left behind. With `private: true` responses carry
 * pre-signed GET URLs valid for `signedUrlExpires` seconds.
 *
 * `provider_metadata` records `{ bucket, key }`, so a file is deleted from the bucket it was
 * written to even after the options change.
 *
 * Objects are read straight from the bucket (or its CDN), which sends what was stored with them:
 * the recorded type, and for an active type `ContentDisposition: attachment`. S3 cannot add
 * `nosniff` or a CSP, so the bucket belongs on an origin of its own (docs/operations.md).
 */
export class S3Provider implements UploadProvider {
  readonly name = 'aws-s3'
  readonly client: S3Client
  readonly #options: S3ProviderOptions

  constructor (options: S3ProviderOptions, client?: S3Client) {
    this.#options = options
    this.client = client ?? new S3Client({
      region: options.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      forcePathStyle: options.forcePathStyle,
      // A copy: the SDK annotates the credentials object it is given.
      ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } })
    })
  }

  #objectKey (key: string): string {
    return `${this.#options.prefix}${key}`
  }

  /** The object's public URL: `baseUrl/key`, else the endpoint's path- or virtual-host-style URL. */
  #url (objectKey: string): string {
    const { baseUrl, endpoint, bucket, region, forcePathStyle } = this.#options
    const path = objectKey.split('/').map(encodeURIComponent).join('/')
    if (baseUrl !== undefined) return `${baseUrl.replace(/\/+$/, '')}/${path}`
    if (endpoint !== undefined) {
      const base = endpoint.replace(/\/+$/, '')
      if (forcePathStyle) return `${base}/${bucket}/${path}`
      const url = new URL(base)
      return `${url.protocol}//${bucket}.${url.host}/${path}`
    }
    return `https://${bucket}.s3.${region}.amazonaws.com/${path}`
  }

  async upload (file: ProviderUpload): Promise<ProviderResult> {
    const Key = this.#objectKey(file.key)
    const upload = new Upload({
      client: this.client,
      partSize: this.#options.partSize,
      queueSize: 2,
      leavePartsOnError: false,
      params: {
        Bucket: this.#options.bucket,
        Key,
        Body: file.stream(),
        ContentType: file.mime,
        ...(file.contentDisposition === undefined ? {} : { ContentDisposition: file.contentDisposition }),
        ...(this.#options.acl === undefined ? {} : { ACL: this.#options.acl as ObjectCannedACL })
      }
    })
    await upload.done()
    return { url: this.#url(Key), provider_metadata: { bucket: this.#options.bucket, key: Key } }
  }

  #location (file: StoredObject): { Bucket: string, Key: string } {
    const meta = file.provider_metadata
    if (meta != null && typeof meta.bucket === 'string' && typeof meta.key === 'string') return { Bucket: meta.bucket, Key: meta.key }
    return { Bucket: this.#options.bucket, Key: this.#objectKey(file.key) }
  }

  async delete (file: StoredObject): Promise<void> {
    // S3 answers a delete of a missing key with success, as the interface asks.
    await this.client.send(new DeleteObjectCommand(this.#location(file)))
  }

  isPrivate (): boolean {
    return this.#options.private
  }

  async getSignedUrl (file: StoredObject): Promise<string> {
    return await getSignedUrl(this.client, new GetObjectCommand(this.#location(file)), { expiresIn: this.#options.signedUrlExpires })
  }

  async close (): Promise<void> {
    this.client.destroy()
  }
}
