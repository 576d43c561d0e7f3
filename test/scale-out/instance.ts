import Fastify from 'fastify'
import contentApi, { type ChangeEvent, type ContentApiOptions } from '../../lib/index.js'
import { post, tag } from '../reliability/helpers.js'

/**
 * One app instance in a process of its own, started by instances.ts. Its configuration arrives as
 * JSON in the `FCA_INSTANCE` environment variable (see `InstanceConfig`); once listening it
 * writes one JSON line to stdout, `{ "ready": true, "port": 12345 }`, and on SIGTERM it closes
 * the app and exits.
 *
 * Besides the plugin, the instance has routes for tests only (here, never in lib/):
 * - `GET /__test/events`: the change events its `onChange` listeners heard, every content type's,
 *   each with `at` (Date.now() when heard);
 * - `POST /__test/call` `{ target: 'permissions' | 'apiTokens' | 'documents', uid?, method, args }`:
 *   calls `app.contentApi[target][method](...args)` (for `documents`, on `documents(uid)`), the
 *   application-code path of the plugin, and answers `{ result }` or `{ error }`.
 */
export interface InstanceConfig {
  /** The plugin's `db`: a PostgreSQL connection string. */
  db: string
  /** Which test models: `posts` (test/reliability's posts with their tag components). */
  models?: 'posts'
  /** Any other plugin options (JSON), merged over the defaults below. */
  options?: Partial<ContentApiOptions>
}

const config = JSON.parse(process.env.FCA_INSTANCE ?? '{}') as InstanceConfig
const heard: Array<ChangeEvent & { at: number }> = []

const app = Fastify({ logger: { level: 'warn' } })
await app.register(contentApi, {
  models: [post],
  components: { 'shared.tag': tag },
  db: config.db,
  ...config.options,
  auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789', rateLimit: false, ...config.options?.auth }
})

for (const uid of app.contentApi.registry.contentTypes.keys()) {
  app.contentApi.documents(uid).onChange((event) => { heard.push({ ...event, at: Date.now() }) })
}

app.get('/__test/events', async () => heard)

app.post('/__test/call', async (request) => {
  const { target, uid, method, args } = request.body as { target: 'permissions' | 'apiTokens' | 'documents', uid?: string, method: string, args: unknown[] }
  const api = app.contentApi
  const receiver: any = target === 'documents' ? api.documents(uid!) : api[target]
  try {
    return { result: (await receiver[method](...args)) ?? null }
  } catch (err) {
    return { error: (err as Error).message }
  }
})

await app.ready()
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
process.stdout.write(JSON.stringify({ ready: true, port: typeof address === 'object' && address !== null ? address.port : null }) + '\n')

process.on('SIGTERM', () => {
  app.close().then(() => process.exit(0), () => process.exit(1))
})
