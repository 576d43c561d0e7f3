import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { S3Client } from '@aws-sdk/client-s3'
import S3rver from 's3rver'

interface Teardown { teardown (fn: () => Promise<void> | void): void }

export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  endpoint: string
  /** s3rver's fixed credentials, for the plugin's `s3.credentials`. */
  credentials: { accessKeyId: string, secretAccessKey: string }
  /** An AWS SDK client on the server, for the test's own checks. */
  client: S3Client
}

/**
 * A real S3-protocol server (s3rver) on 127.0.0.1 with `buckets`, in a temporary directory;
 * stopped, its directory removed and its client destroyed when the test ends.
 */
export async function startS3rver (t: Teardown, buckets: readonly string[]): Promise<S3Server> {
  const root = await mkdtemp(join(tmpdir(), 'fca-s3rver-'))
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: root, configureBuckets: buckets.map((name) => ({ name })) })
  const { port } = await server.run()
  t.teardown(async () => {
    await server.close()
    await rm(root, { recursive: true, force: true })
  })
  const endpoint = `http://127.0.0.1:${port}`
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { ...credentials } })
  t.teardown(() => { client.destroy() })
  return { endpoint, credentials, client }
}
