import type { ContentType } from '../model/registry.js'
import type { JsonSchema, ModelSchemas } from '../http/openapi-models.js'
import { PUBLICATION_FILTERS } from '../query/index.js'

/**
 * The route schemas of the content-type routes, for an application that registers
 * @fastify/swagger: parameters, bodies and answers, referencing the models' named schemas
 * (lib/http/openapi-models.ts). They describe; they do not validate: the REST context compiles
 * no schema (rest/index.ts), the document service validates bodies and queries itself, to
 * answer with Strapi's exact error messages.
 */

const PaginationMetaSchema: JsonSchema = {
  anyOf: [
    { type: 'object', properties: { page: { type: 'integer' }, pageSize: { type: 'integer' }, pageCount: { type: 'integer' }, total: { type: 'integer' } }, required: ['page', 'pageSize'] },
    { type: 'object', properties: { start: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' } }, required: ['start', 'limit'] },
    {
      type: 'object',
      description: 'cursor mode (`pagination[after]` or `[before]`)',
      properties: { pageSize: { type: 'integer' }, next: { anyOf: [{ type: 'string' }, { type: 'null' }] }, previous: { anyOf: [{ type: 'string' }, { type: 'null' }] }, total: { type: 'integer' } },
      required: ['pageSize', 'next', 'previous']
    }
  ]
}

export const ErrorEnvelopeSchema: JsonSchema = { $ref: 'ContentApiError' }

export function listResponseSchema (schemas: ModelSchemas, model: ContentType): JsonSchema {
  return {
    type: 'object',
    properties: { data: { type: 'array', items: schemas.ref(model.uid, 'document') }, meta: { type: 'object', properties: { pagination: PaginationMetaSchema } } },
    required: ['data', 'meta']
  }
}

export function singleResponseSchema (schemas: ModelSchemas, model: ContentType): JsonSchema {
  return { type: 'object', properties: { data: schemas.ref(model.uid, 'document'), meta: { type: 'object' } }, required: ['data', 'meta'] }
}

/** The body of a POST (`create`: what a create must send) or a PUT (any attribute may be left out). */
export function bodySchema (schemas: ModelSchemas, model: ContentType, create: boolean): JsonSchema {
  return { type: 'object', properties: { data: create ? schemas.createInput(model) : schemas.ref(model.uid, 'input') }, required: ['data'] }
}

const list = (description: string, items: JsonSchema = { type: 'string' }): JsonSchema =>
  ({ anyOf: [{ type: 'string' }, { type: 'array', items }], description })

/**
 * The query parameters of a route, in the bracket (deep object) form clients send and qs
 * parses: `filters[title][$eq]=x`, `populate[author][fields][0]=name`, `pagination[page]=2`.
 * `style: deepObject` is the querystring's, so @fastify/swagger gives it to every parameter;
 * a scalar parameter sent so is `name=value`.
 */
export function querySchema (schemas: ModelSchemas, model: ContentType, kind: 'list' | 'read' | 'write' | 'delete'): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const fieldNames = model.defaultFields.map((f) => f.name)
  if (kind !== 'delete') {
    properties.fields = list('fields to return: `fields=title,slug` or `fields[0]=title`', { type: 'string', enum: fieldNames })
    properties.populate = schemas.ref(model.uid, 'populate')
  }
  if (kind === 'list') {
    properties.filters = schemas.ref(model.uid, 'filters')
    properties.sort = list('`field`, `field:asc`, `field:desc`, a comma list, or `sort[0]=title:asc`; a relation\'s field as `author.name`')
    properties.pagination = {
      type: 'object',
      description: 'page mode (`page`, `pageSize`), offset mode (`start`, `limit`) or cursor mode (`after`/`before`, `pageSize`); `withCount=false` skips the total',
      properties: {
        page: { type: 'integer', minimum: 1 },
        pageSize: { type: 'integer', minimum: 1, description: 'default 25, at most the configured maxLimit' },
        start: { type: 'integer', minimum: 0 },
        limit: { type: 'integer' },
        withCount: { type: 'boolean' },
        after: { type: 'string', description: 'cursor mode: the rows after this cursor (`meta.pagination.next`); empty for the first page' },
        before: { type: 'string', description: 'cursor mode: the rows before this cursor (`meta.pagination.previous`); empty for the last page' }
      },
      additionalProperties: false
    }
  }
  if (kind !== 'delete' && model.draftAndPublish) {
    properties.status = { type: 'string', enum: ['published', 'draft'], description: kind === 'write' ? '`draft` writes the draft only (Strapi\'s draft rules)' : '`published` (default) or `draft`' }
  }
  // On every type: one without draft & publish passes the cohort to its populated relations.
  if (kind === 'list' || kind === 'read') {
    properties.publicationFilter = { type: 'string', enum: [...PUBLICATION_FILTERS], description: 'Strapi 5\'s publication cohort: the rows of `status` kept by how their other version relates to them' }
    properties.hasPublishedVersion = { type: 'boolean', deprecated: true, description: 'prefer publicationFilter: `true` is has-published-version-document, `false` never-published-document' }
  }
  if (model.localized) properties.locale = { type: 'string', description: kind === 'list' ? 'a locale code; `*` for all locales' : 'a locale code' }
  return { type: 'object', properties, style: 'deepObject', explode: true }
}

export const DocumentParamsSchema: JsonSchema = {
  type: 'object',
  properties: { documentId: { type: 'string', description: 'the document\'s documentId' } },
  required: ['documentId']
}

/** `{ data: [{ group, count?, sum?, avg?, min?, max? }], meta: {} }`: one element per group (docs/aggregations.md). */
export const AggregateResponseSchema: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          group: { type: 'object', additionalProperties: true, description: 'the group keys, as named in groupBy' },
          count: { type: 'integer' },
          sum: { type: 'object', additionalProperties: true },
          avg: { type: 'object', additionalProperties: true },
          min: { type: 'object', additionalProperties: true },
          max: { type: 'object', additionalProperties: true }
        },
        required: ['group']
      }
    },
    meta: { type: 'object' }
  },
  required: ['data', 'meta']
}

/** Our extension's aggregate route (docs/aggregations.md): the list's filters, status and locale, and what to compute. */
export function aggregateQuerySchema (schemas: ModelSchemas, model: ContentType): JsonSchema {
  const { properties } = querySchema(schemas, model, 'list') as { properties: Record<string, JsonSchema> }
  const fields = (description: string): JsonSchema => list(description)
  return {
    type: 'object',
    properties: {
      filters: properties.filters,
      ...(properties.status === undefined ? {} : { status: properties.status }),
      ...(properties.locale === undefined ? {} : { locale: properties.locale }),
      count: { type: 'boolean', description: '`false` leaves out the number of documents per group (default true)' },
      sum: fields('numeric fields to sum: `views`, `views,rating` or `sum[0]=views`'),
      avg: fields('numeric fields to average'),
      min: fields('numeric, text or date fields: their minimum'),
      max: fields('numeric, text or date fields: their maximum'),
      groupBy: fields('fields to group by, also through to-one relations: `kind`, `category`, `category.name`')
    },
    style: 'deepObject',
    explode: true
  }
}
