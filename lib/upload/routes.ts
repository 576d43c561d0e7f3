import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import { NotFoundError, ValidationError } from '../errors.js'
import type { AccessControl } from '../auth/access.js'
import type { QueryParams } from '../documents/service.js'
import type { Registry } from '../model/registry.js'
import type { RequestLimits } from '../query/limits.js'
import { parseQueryString, type RawQuery } from '../query/querystring.js'
import { addJsonParser, namingBodyLimit } from '../http/body-parsers.js'
import { modelSchemasOf } from '../http/openapi-models.js'
import { SECURITY_CONFIG } from '../http/openapi-security.js'
import { errorHandler } from '../error-handler.js'
import { parseMediaTarget } from './attach.js'
import { parseFileInfo } from './file-info.js'
import type { ResolvedUploadOptions } from '../options/upload.js'
import type { UploadService } from './service.js'
import { createStaging, stageMultipart, type Staging } from './staging.js'
import { uploadSchemas } from './route-schemas.js'

export interface UploadRoutesOptions {
  service: UploadService
  access: AccessControl
  registry: Registry
  options: ResolvedUploadOptions
  /** The bounds on a request's work: JSON bodies, query strings and `fileInfo` fields. */
  limits: RequestLimits
}

/** The content-API permissions of the upload plugin, as Strapi names them. */
export const UPLOAD_ACTIONS = {
  find: 'plugin::upload.content-api.find',
  findOne: 'plugin::upload.content-api.findOne',
  upload: 'plugin::upload.content-api.upload',
  destroy: 'plugin::upload.content-api.destroy'
} as const

function sendJson (reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body))
}

/** One value of a text field; a field sent twice is ambiguous. */
function single (fields: Map<string, string[]>, name: string): string | undefined {
  const values = fields.get(name)
  if (values === undefined) return undefined
  if (values.length > 1) throw new ValidationError(`${name} must be a single value`, { key: name })
  return values[0]
}

/**
 * After a refusal mid-body, the rest of the request is read and dropped (never buffered) and the
 * connection closed once answered, so the client always receives the 4xx.
 */
function abandonBody (request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close')
  request.raw.unpipe()
  request.raw.resume()
}

/**
 * Strapi's upload routes (`POST /api/upload`, `GET /api/upload/files`, `GET|DELETE
 * /api/upload/files/:id`), in their own encapsulated context: multipart parsing, the body
 * parsers and the error handler apply here only. Answers are bare, not enveloped, as in Strapi.
 */
export async function uploadRoutes (app: FastifyInstance, { service, access, registry, options, limits }: UploadRoutesOptions): Promise<void> {
  await app.register(multipart)
  addJsonParser(app, limits)
  // Fastify's own text/plain parser reads up to the server's bodyLimit: the catch-all below takes it.
  app.removeContentTypeParser('text/plain')
  // Any other body is not an upload: it is never read (the route answers "Files are empty").
  app.addContentTypeParser('*', (_request, _payload, done) => { done(null, undefined) })
  app.setErrorHandler(namingBodyLimit(errorHandler, limits))
  app.setNotFoundHandler(async (_request, reply) => sendJson(reply, 404, new NotFoundError().toEnvelope()))
  // As on content routes: the schemas document the routes (OpenAPI), the handlers validate.
  app.setValidatorCompiler(() => () => true)
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  const schemas = uploadSchemas(modelSchemasOf(registry, (id) => app.getSchema(id) !== undefined))
  const config = SECURITY_CONFIG

  const query = (request: FastifyRequest): RawQuery => parseQueryString(request.url, limits)
  /** A list's or a file's read, under the REST bounds. */
  const read = (request: FastifyRequest): QueryParams => ({ ...query(request), limits: true })
  const fileInfo = (raw: unknown, files: number): ReturnType<typeof parseFileInfo> => parseFileInfo(raw, files, limits.inputDepth)

  app.post('/', { schema: schemas.upload, config }, async (request, reply) => {
    const { id } = query(request)
    if (id !== undefined && typeof id !== 'string') throw new ValidationError('File id is required and must be a single value')
    // Its conditions limit the files that `?id=` may update or replace (outside them: file.notFound)
    // and hold for every record the request leaves.
    const { scope } = await access.check(request, { action: UPLOAD_ACTIONS.upload })
    if (!request.isMultipart()) {
      if (id === undefined) throw new ValidationError('Files are empty')
      const [info] = fileInfo((request.body as { fileInfo?: unknown } | undefined)?.fileInfo, 1)
      return sendJson(reply, 200, await service.present(await service.updateFileInfo(id, info, scope)))
    }
    const staging = await createStaging(options.tmpDir)
    let answer: [status: number, body: unknown]
    try {
      try {
        await stageMultipart(request, staging, options)
      } catch (err) {
        abandonBody(request, reply)
        throw err
      }
      answer = await handleUpload(staging, id)
    } finally {
      // Removed before answering: once the client has its answer, nothing of the request is left.
      await staging.cleanup()
    }
    return sendJson(reply, answer[0], answer[1])

    async function handleUpload (staging: Staging, id: string | undefined): Promise<[number, unknown]> {
      const { files, fields } = staging
      if (files.length === 0) {
        if (id === undefined) throw new ValidationError('Files are empty')
        const [info] = fileInfo(fields.get('fileInfo'), 1)
        return [200, await service.present(await service.updateFileInfo(id, info, scope))]
      }
      if (id !== undefined) {
        if (files.length > 1) throw new ValidationError('Cannot replace a file with multiple ones')
        const [info] = fileInfo(fields.get('fileInfo'), 1)
        return [200, await service.present(await service.replace(id, staging, info, scope))]
      }
      const infos = fileInfo(fields.get('fileInfo'), files.length)
      const target = parseMediaTarget(registry, { ref: single(fields, 'ref'), refId: single(fields, 'refId'), field: single(fields, 'field') })
      // Linking writes the entry: beyond Strapi, the caller must be allowed to update it, within
      // that grant's fields and conditions.
      const update = target === null ? undefined : (await access.check(request, { action: 'update', uid: target.model.uid })).scope
      const records = await service.upload(staging, infos, target, { upload: scope, update })
      return [201, await Promise.all(records.map(async (r) => await service.present(r)))]
    }
  })

  app.get('/files', { schema: schemas.find, config }, async (request, reply) => {
    const grant = await access.check(request, { action: UPLOAD_ACTIONS.find })
    const records = await service.findMany(read(request), grant.scope)
    return sendJson(reply, 200, await Promise.all(records.map(async (r) => await service.present(r))))
  })

  app.get<{ Params: { id: string } }>('/files/:id', { schema: schemas.findOne, config }, async (request, reply) => {
    const grant = await access.check(request, { action: UPLOAD_ACTIONS.findOne })
    const record = await service.findOne(request.params.id, read(request), grant.scope)
    if (record === null) throw new NotFoundError('file.notFound')
    return sendJson(reply, 200, await service.present(record))
  })

  app.delete<{ Params: { id: string } }>('/files/:id', { schema: schemas.destroy, config }, async (request, reply) => {
    const grant = await access.check(request, { action: UPLOAD_ACTIONS.destroy })
    const record = await service.remove(request.params.id, grant.scope)
    if (record === null) throw new NotFoundError('file.notFound')
    return sendJson(reply, 200, await service.present(record))
  })
}
