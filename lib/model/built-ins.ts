import { AUTH_CONTENT_TYPES } from './users-permissions.js'
import { FILE_UID } from './associations.js'
import type { ContentTypeSchema } from './types.js'

/**
 * The upload plugin's file record (`plugin::upload.file`), Strapi's shape. Media attributes point
 * to it; the upload API fills it. It has no route under `/api/<pluralApiId>`: files are served by
 * the upload routes.
 */
export const fileContentType: ContentTypeSchema = {
  kind: 'collectionType',
  uid: FILE_UID,
  collectionName: 'files',
  info: { singularName: 'file', pluralName: 'files', displayName: 'File' },
  options: { draftAndPublish: false },
  attributes: {
    name: { type: 'string', required: true },
    alternativeText: { type: 'text' },
    caption: { type: 'text' },
    focalPoint: { type: 'json' },
    width: { type: 'integer' },
    height: { type: 'integer' },
    formats: { type: 'json' },
    hash: { type: 'string', required: true },
    ext: { type: 'string' },
    mime: { type: 'string', required: true },
    size: { type: 'decimal', required: true },
    url: { type: 'text', required: true },
    previewUrl: { type: 'text' },
    provider: { type: 'string', required: true },
    provider_metadata: { type: 'json' },
    // Where the file sits in the media library's folders; the content API never shows it.
    folderPath: { type: 'string', private: true }
  }
}

/** Content types the library always registers, whatever the application's models. */
export const BUILT_IN_CONTENT_TYPES: readonly ContentTypeSchema[] = [fileContentType, ...AUTH_CONTENT_TYPES]

/** True for the application's own content types (`api::...`), which get REST routes. */
export const isApiContentType = (uid: string): boolean => uid.startsWith('api::')
