import type { FastifySchema } from 'fastify'
import type { JsonSchema, ModelSchemas } from '../http/openapi-models.js'
import { OPTIONAL_BEARER } from '../http/openapi-security.js'
import { FILE_UID } from '../model/associations.js'
import { documented } from '../route-schema.js'

/**
 * The route schemas of the upload routes (routes.ts), for the OpenAPI document. They describe
 * what the handlers check; the upload context compiles no schema. Answers are bare file
 * records (`UploadFile`), as in Strapi.
 */
export function uploadSchemas (schemas: ModelSchemas): Record<'upload' | 'find' | 'findOne' | 'destroy', FastifySchema> {
  const file = schemas.ref(FILE_UID, 'document')
  const error: JsonSchema = { $ref: 'ContentApiError' }
  const errors = { 400: error, 401: error, 403: error }
  const tags = ['Upload - File']
  const idParams: JsonSchema = { type: 'object', properties: { id: { type: 'string', description: 'the file\'s id or documentId' } }, required: ['id'] }
  const list = (items: JsonSchema = { type: 'string' }): JsonSchema => ({ anyOf: [{ type: 'string' }, { type: 'array', items }] })
  return {
    upload: documented({
      tags,
      summary: 'Upload files, replace a file (`?id=`), or update a file\'s information (`?id=` without a file)',
      description: 'A multipart form. `ref`, `refId` and `field` link the new files to an entry\'s media attribute (the caller must be allowed to update it). ' +
        'With `?id=` and no file, a JSON body `{ "fileInfo": {...} }` is taken as well.',
      security: OPTIONAL_BEARER,
      consumes: ['multipart/form-data'],
      querystring: { type: 'object', properties: { id: { type: 'string', description: 'the file to replace or update' } } },
      body: {
        type: 'object',
        properties: {
          files: { anyOf: [{ type: 'string', format: 'binary' }, { type: 'array', items: { type: 'string', format: 'binary' } }] },
          fileInfo: { type: 'string', description: 'JSON: `{ name, alternativeText, caption, folder }`, or a list of them, one per file' },
          ref: { type: 'string', description: 'the uid of the entry\'s content type, e.g. `api::article.article`' },
          refId: { type: 'string', description: 'the entry\'s id or documentId' },
          field: { type: 'string', description: 'the media attribute' }
        }
      },
      response: { 200: file, 201: { type: 'array', items: file }, ...errors, 404: error, 413: error }
    }),
    find: documented({
      tags,
      summary: 'List files (a bare array)',
      security: OPTIONAL_BEARER,
      querystring: {
        type: 'object',
        properties: { filters: schemas.ref(FILE_UID, 'filters'), sort: list(), fields: list(), populate: schemas.ref(FILE_UID, 'populate') },
        style: 'deepObject',
        explode: true
      },
      response: { 200: { type: 'array', items: file }, ...errors }
    }),
    findOne: documented({ tags, summary: 'Get a file', security: OPTIONAL_BEARER, params: idParams, response: { 200: file, ...errors, 404: error } }),
    destroy: documented({ tags, summary: 'Delete a file (answers the deleted record)', security: OPTIONAL_BEARER, params: idParams, response: { 200: file, ...errors, 404: error } })
  }
}
