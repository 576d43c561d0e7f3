import Type, { type TSchema } from 'typebox'
import type { ContentType, Field } from '../model/registry.js'

/**
 * TypeBox (JSON Schema) descriptions of every REST route, generated per content type, so an
 * application that registers @fastify/swagger gets a correct OpenAPI document. They describe;
 * they do not validate: the document service validates bodies and queries itself, to answer with
 * Strapi's exact error messages.
 */

const nullable = (schema: TSchema): TSchema => Type.Union([schema, Type.Null()])

function fieldSchema (field: Field): TSchema {
  const attribute = field.attribute
  switch (field.type) {
    case 'integer': return Type.Integer()
    case 'float':
    case 'decimal': return Type.Number()
    case 'boolean': return Type.Boolean()
    case 'json': return Type.Unknown()
    case 'blocks': return Type.Array(Type.Object({}, { additionalProperties: true }))
    case 'biginteger': return Type.String({ pattern: '^-?\\d+$' })
    case 'date': return Type.String({ format: 'date' })
    case 'datetime':
    case 'timestamp': return Type.String({ format: 'date-time' })
    case 'time': return Type.String({ pattern: '^\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?$' })
    case 'email': return Type.String({ format: 'email' })
    case 'enumeration': return Type.String({ enum: [...(attribute as { enum: readonly string[] }).enum] })
    default: return Type.String()
  }
}

/** A document as returned: `id`, `documentId`, the visible scalar fields, timestamps. */
export function documentSchema (model: ContentType): TSchema {
  const properties: Record<string, TSchema> = {}
  for (const field of model.defaultFields) {
    const schema = fieldSchema(field)
    // Only id and documentId are always present: `fields` narrows the rest.
    properties[field.name] = field.name === 'id' || field.name === 'documentId' ? schema : Type.Optional(nullable(schema))
  }
  return Type.Object(properties, { additionalProperties: true, description: `${model.displayName} document` })
}

/** The `data` of a POST or PUT body: every writable attribute, all optional. */
export function inputSchema (model: ContentType): TSchema {
  const properties: Record<string, TSchema> = {}
  for (const field of model.writableFields.values()) properties[field.name] = Type.Optional(nullable(fieldSchema(field)))
  return Type.Object({ data: Type.Object(properties, { additionalProperties: false }) }, { required: ['data'] })
}

const PaginationMetaSchema = Type.Union([
  Type.Object({ page: Type.Integer(), pageSize: Type.Integer(), pageCount: Type.Optional(Type.Integer()), total: Type.Optional(Type.Integer()) }),
  Type.Object({ start: Type.Integer(), limit: Type.Integer(), total: Type.Optional(Type.Integer()) })
])

export const ErrorEnvelopeSchema = Type.Object({
  data: Type.Null(),
  error: Type.Object({
    status: Type.Integer(),
    name: Type.String(),
    message: Type.String(),
    details: Type.Object({}, { additionalProperties: true })
  })
}, { description: 'Strapi error envelope' })

export function listResponseSchema (model: ContentType): TSchema {
  return Type.Object({ data: Type.Array(documentSchema(model)), meta: Type.Object({ pagination: PaginationMetaSchema }) })
}

export function singleResponseSchema (model: ContentType): TSchema {
  return Type.Object({ data: documentSchema(model), meta: Type.Object({}) })
}

/** `{ data: [{ group, count?, sum?, avg?, min?, max? }], meta: {} }`: one element per group (docs/aggregations.md). */
export const AggregateResponseSchema: TSchema = Type.Object({
  data: Type.Array(Type.Object({
    group: Type.Record(Type.String(), Type.Unknown(), { description: 'the group keys, as named in groupBy' }),
    count: Type.Optional(Type.Integer()),
    sum: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    avg: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    min: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    max: Type.Optional(Type.Record(Type.String(), Type.Unknown()))
  })),
  meta: Type.Object({})
})

const text = (description: string): TSchema => Type.Optional(Type.String({ description }))

/** The list query parameters, in the flat bracket form clients send (qs builds the nesting). */
export const ListQuerySchema = Type.Object({
  sort: text('`field`, `field:asc`, `field:desc`, or a comma list; `sort[0]=...` for several'),
  fields: text('fields to return, e.g. `title,slug` or `fields[0]=title`'),
  'pagination[page]': text('page number, default 1'),
  'pagination[pageSize]': text('page size, default 25, at most the configured maxLimit'),
  'pagination[start]': text('offset mode: first row, default 0'),
  'pagination[limit]': text('offset mode: number of rows'),
  'pagination[withCount]': text('`false` skips the total count'),
  status: text('`published` (default) or `draft`'),
  locale: text('locale code; `*` for all locales')
}, { additionalProperties: true })

/** Our extension's aggregate route (docs/aggregations.md): the list's filters, status and locale, and what to compute. */
export const AggregateQuerySchema = Type.Object({
  count: text('`false` leaves out the number of documents per group (default true)'),
  sum: text('numeric fields to sum: `views`, `views,rating` or `sum[0]=views`'),
  avg: text('numeric fields to average'),
  min: text('numeric, text or date fields: their minimum'),
  max: text('numeric, text or date fields: their maximum'),
  groupBy: text('fields to group by, also through to-one relations: `kind`, `category`, `category.name`'),
  status: text('`published` (default) or `draft`'),
  locale: text('locale code; `*` for all locales')
}, { additionalProperties: true })

export const ReadQuerySchema = Type.Object({
  fields: text('fields to return'),
  status: text('`published` (default) or `draft`'),
  locale: text('locale code')
}, { additionalProperties: true })

export const DocumentParamsSchema = Type.Object({ documentId: Type.String({ description: 'the document\'s documentId' }) })
