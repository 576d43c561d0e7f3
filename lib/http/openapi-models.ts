import { FILE_UID } from '../model/associations.js'
import type { Attribute } from '../model/types.js'
import { isScalarAttribute, type Component, type ContentType, type Field, type Registry } from '../model/registry.js'
import { COMPARISON_OPERATORS } from '../query/filters.js'

/**
 * The named JSON Schemas of the models, for the OpenAPI document @fastify/swagger builds: one set
 * per content type and per component, added to a route context with `addSchema` and referenced
 * from the route schemas by `$id` (`{ $ref: 'Article' }`), so that the document lists them once
 * under `components.schemas`. They describe the rules lib/documents/validate-input.ts applies;
 * they validate nothing (the route contexts compile no schema: see docs/openapi.md).
 *
 * Per content type `Article` (a component `shared.seo` is `SharedSeoComponent`):
 * - `Article`: a document as returned (system fields, visible scalars, populated associations);
 * - `ArticleInput`: the `data` of a write, every attribute in every form it takes, no key
 *   required (an update's rules); a create adds `required` (`createInput`);
 * - `ArticleFilters`, `ArticlePopulate`: the `filters` and `populate` query parameters.
 */

export type JsonSchema = Record<string, unknown>

export interface ModelSchemas {
  /** Every named schema, each with its `$id`, for `addSchema`. */
  readonly schemas: readonly JsonSchema[]
  /** `{ $ref }` to a model's schema of one kind. */
  ref: (uid: string, kind: SchemaKind) => JsonSchema
  /** The `data` of a create: the input with the attributes a create must send. */
  createInput: (model: ContentType) => JsonSchema
  /**
   * A model's input built inline, for the routes whose body differs (`POST /users` takes no
   * private attribute): `omit` leaves attributes out, `required` lists those a create needs.
   */
  inlineInput: (model: ContentType, options: { omit?: (name: string, attribute: Attribute) => boolean, required?: readonly string[] }) => JsonSchema
}

export type SchemaKind = 'document' | 'input' | 'filters' | 'populate'

const SUFFIX: Record<SchemaKind, string> = { document: '', input: 'Input', filters: 'Filters', populate: 'Populate' }

const pascal = (text: string): string => text.split(/[^A-Za-z0-9]+/).filter((w) => w !== '').map((w) => w[0].toUpperCase() + w.slice(1)).join('')

/**
 * `api::article.article` -> `Article`, `plugin::users-permissions.user` -> `UsersPermissionsUser`,
 * `plugin::upload.file` -> `UploadFile`, component `shared.seo` -> `SharedSeoComponent`: Strapi's
 * documentation plugin's names. Names must match `^[a-zA-Z0-9.\-_]+$` as component keys.
 */
function baseName (model: ContentType | Component): string {
  if (model.modelType === 'component') return `${pascal(model.uid)}Component`
  const [namespace, rest] = model.uid.split('::')
  return namespace === 'api' ? pascal(model.singularName) : pascal(rest)
}

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] })

/** The JSON type of a scalar field as the API returns it and takes it. */
function scalarSchema (field: Pick<Field, 'type' | 'attribute'>): JsonSchema {
  const attribute = field.attribute as (Attribute & { enum?: readonly string[], minLength?: number, maxLength?: number, min?: number, max?: number }) | null
  switch (field.type) {
    case 'integer': return withBounds({ type: 'integer' }, attribute)
    case 'float':
    case 'decimal': return withBounds({ type: 'number' }, attribute)
    case 'boolean': return { type: 'boolean' }
    case 'json': return {}
    case 'blocks': return { type: 'array', items: { type: 'object', additionalProperties: true } }
    case 'biginteger': return { type: 'string', pattern: '^-?\\d+$' }
    case 'date': return { type: 'string', format: 'date' }
    case 'datetime':
    case 'timestamp': return { type: 'string', format: 'date-time' }
    case 'time': return { type: 'string', pattern: '^\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?$' }
    case 'email': return withLengths({ type: 'string', format: 'email' }, attribute)
    case 'enumeration': return { type: 'string', enum: [...(attribute?.enum ?? [])] }
    default: return withLengths({ type: 'string' }, attribute)
  }
}

function withBounds (schema: JsonSchema, attribute: { min?: number, max?: number } | null): JsonSchema {
  if (typeof attribute?.min === 'number') schema.minimum = attribute.min
  if (typeof attribute?.max === 'number') schema.maximum = attribute.max
  return schema
}

function withLengths (schema: JsonSchema, attribute: { minLength?: number, maxLength?: number } | null): JsonSchema {
  if (typeof attribute?.minLength === 'number') schema.minLength = attribute.minLength
  if (typeof attribute?.maxLength === 'number') schema.maxLength = attribute.maxLength
  return schema
}

/** A related document named in a write: its documentId, its row id, or an object naming either. */
const RELATION_REF: JsonSchema = {
  anyOf: [
    { type: 'string', minLength: 1, description: 'a documentId' },
    { type: 'integer', minimum: 1, description: 'a row id' },
    {
      type: 'object',
      properties: {
        documentId: { type: 'string', minLength: 1 },
        id: { type: 'integer', minimum: 1 },
        locale: { type: 'string', description: 'the locale of the related document (i18n)' }
      },
      additionalProperties: false
    }
  ]
}

const refList = (item: JsonSchema): JsonSchema => ({ anyOf: [item, { type: 'array', items: item }, { type: 'null' }] })

/** `{ connect, disconnect }`, where `connect` items may say where they go. */
const RELATION_LONGHAND: JsonSchema = {
  type: 'object',
  properties: {
    connect: refList({
      anyOf: [
        { $ref: 'ContentApiRelationRef' },
        {
          type: 'object',
          properties: {
            documentId: { type: 'string', minLength: 1 },
            id: { type: 'integer', minimum: 1 },
            locale: { type: 'string' },
            position: {
              anyOf: [
                { type: 'object', properties: { before: { $ref: 'ContentApiRelationRef' } }, required: ['before'], additionalProperties: false },
                { type: 'object', properties: { after: { $ref: 'ContentApiRelationRef' } }, required: ['after'], additionalProperties: false },
                { type: 'object', properties: { start: { type: 'boolean', enum: [true] } }, required: ['start'], additionalProperties: false },
                { type: 'object', properties: { end: { type: 'boolean', enum: [true] } }, required: ['end'], additionalProperties: false }
              ]
            }
          },
          required: ['position'],
          additionalProperties: false
        }
      ]
    }),
    disconnect: refList({ $ref: 'ContentApiRelationRef' })
  },
  additionalProperties: false
}

/**
 * Every form lib/documents/relation-input.ts parses: a reference or a list of them (replaces the
 * links), `{ set }`, or `{ connect, disconnect }` where `connect` items may say where they go
 * (`position: { before | after: ref } | { start: true } | { end: true }`); `null` clears them.
 * For a required relation (`ContentApiRequiredRelationInput`), as validate-input.ts's
 * `linksNothing` rules: no empty list, no empty `set` (a create's empty `connect` is refused too).
 */
function relationInput (required: boolean): JsonSchema {
  const list = { type: 'array', items: { $ref: 'ContentApiRelationRef' }, ...(required ? { minItems: 1 } : {}) }
  return {
    $id: required ? 'ContentApiRequiredRelationInput' : 'ContentApiRelationInput',
    description: required
      ? 'A required relation write: a documentId, an id, a non-empty list of them, `{ set }` naming one at least, or `{ connect, disconnect }`'
      : 'A relation write: a documentId, an id, a list of them, `{ set }`, or `{ connect, disconnect }` (null clears it)',
    anyOf: [
      { $ref: 'ContentApiRelationRef' },
      list,
      {
        type: 'object',
        properties: { set: required ? { anyOf: [{ $ref: 'ContentApiRelationRef' }, list] } : refList({ $ref: 'ContentApiRelationRef' }) },
        required: ['set'],
        additionalProperties: false
      },
      RELATION_LONGHAND
    ]
  }
}

/** A file named by its id (as a number, a string of digits, or `{ id }`), as write-media.ts reads it. */
const FILE_REF: JsonSchema = {
  $id: 'ContentApiFileRef',
  anyOf: [
    { type: 'integer', minimum: 1 },
    { type: 'string', pattern: '^\\d+$' },
    { type: 'object', properties: { id: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^\\d+$' }] } }, required: ['id'], additionalProperties: false }
  ]
}

/** One field's condition: a value (`$eq`), a list (`$in`), or operators. */
const FIELD_FILTER: JsonSchema = {
  $id: 'ContentApiFieldFilter',
  anyOf: [
    { type: 'string' }, { type: 'number' }, { type: 'boolean' },
    { type: 'array', items: {} },
    {
      type: 'object',
      properties: {
        ...Object.fromEntries(COMPARISON_OPERATORS.map((op) => [op, operatorValue(op)])),
        $not: { $ref: 'ContentApiFieldFilter' },
        $and: { type: 'array', items: { $ref: 'ContentApiFieldFilter' } },
        $or: { type: 'array', items: { $ref: 'ContentApiFieldFilter' } }
      },
      additionalProperties: false
    }
  ]
}

function operatorValue (op: string): JsonSchema {
  if (op === '$in' || op === '$notIn') return { type: 'array', items: {} }
  if (op === '$between') return { type: 'array', items: {}, minItems: 2, maxItems: 2 }
  if (op === '$null' || op === '$notNull') return { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false'] }] }
  return {}
}

/** Strapi's error envelope, the answer of every refusal. */
const ERROR: JsonSchema = {
  $id: 'ContentApiError',
  type: 'object',
  description: 'Strapi error envelope',
  properties: {
    data: { type: 'null' },
    error: {
      type: 'object',
      properties: {
        status: { type: 'integer' },
        name: { type: 'string' },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true }
      },
      required: ['status', 'name', 'message']
    }
  },
  required: ['data', 'error']
}

const SHARED = [ERROR, relationInput(false), relationInput(true), { $id: 'ContentApiRelationRef', ...RELATION_REF }, FILE_REF, FIELD_FILTER]

/**
 * Builds the named schemas of every content type and component. `taken(id)` says whether the
 * route context already has a schema of that `$id` (the application's own): a model's name
 * then takes the `ContentApi` prefix rather than clash.
 */
function buildModelSchemas (registry: Registry, taken: (id: string) => boolean): ModelSchemas {
  const models: Array<ContentType | Component> = [...registry.contentTypes.values(), ...registry.components.values()]
  const names = new Map<string, string>()
  for (const model of models) {
    const base = baseName(model)
    names.set(model.uid, Object.values(SUFFIX).some((s) => taken(base + s)) ? `ContentApi${base}` : base)
  }
  const ref = (uid: string, kind: SchemaKind): JsonSchema => ({ $ref: names.get(uid)! + SUFFIX[kind] })
  const schemas: JsonSchema[] = [...SHARED]
  for (const model of models) {
    const name = names.get(model.uid)!
    schemas.push(
      { $id: name, ...documentSchema(model, ref) },
      { $id: name + SUFFIX.input, ...inputSchema(model, ref) },
      { $id: name + SUFFIX.filters, ...filtersSchema(model, ref) },
      { $id: name + SUFFIX.populate, ...populateSchema(model, ref) }
    )
  }
  const createInput = (model: ContentType): JsonSchema => {
    const required = requiredOnCreate(model)
    return required.length === 0 ? ref(model.uid, 'input') : { allOf: [ref(model.uid, 'input'), { required }] }
  }
  const inlineInput = (model: ContentType, options: { omit?: (name: string, attribute: Attribute) => boolean, required?: readonly string[] }): JsonSchema => {
    const schema = inputSchema(model, ref, options.omit)
    return options.required === undefined || options.required.length === 0 ? schema : { ...schema, required: [...options.required] }
  }
  return { schemas, ref, createInput, inlineInput }
}

type Ref = ModelSchemas['ref']

/**
 * A document as returned. Only `id` and `documentId` are always there: `fields` narrows the rest
 * and associations appear when populated. A required attribute is never null, except in a draft
 * of a draft & publish type, which Strapi's draft rules let wait.
 */
function documentSchema (model: ContentType | Component, ref: Ref): JsonSchema {
  const draftable = model.modelType === 'contentType' && model.draftAndPublish
  const properties: Record<string, JsonSchema> = {}
  for (const field of model.defaultFields) {
    const schema = scalarSchema(field)
    if (field.name === 'id' || field.name === 'documentId' || field.name === 'createdAt' || field.name === 'updatedAt') properties[field.name] = schema
    else if (field.attribute?.required === true && !draftable) properties[field.name] = schema
    else properties[field.name] = nullable(schema)
  }
  for (const [name, attribute] of Object.entries(model.attributes)) {
    if (isScalarAttribute(attribute) || attribute.private === true) continue
    properties[name] = { ...associationOutput(attribute, ref), description: `present when populated (populate[${name}])` }
  }
  if (model.modelType === 'component') properties.__component = { type: 'string', description: 'the component uid, in a dynamic zone' }
  else if (model.localized) properties.localizations = { type: 'array', items: ref(model.uid, 'document'), description: 'present when populated (populate=localizations)' }
  // The upload routes' answers say whether `url` is a signed, expiring one (lib/upload/service.ts).
  if (model.uid === FILE_UID) properties.isUrlSigned = { type: 'boolean', description: 'in the upload routes\' answers: whether `url` is signed' }
  const description = model.modelType === 'component' ? `The ${model.uid} component` : `A ${model.uid} document`
  return { type: 'object', description, properties, required: ['id', ...(model.modelType === 'contentType' ? ['documentId'] : [])], additionalProperties: false }
}

function associationOutput (attribute: Attribute, ref: Ref): JsonSchema {
  switch (attribute.type) {
    case 'relation': {
      const toMany = attribute.relation === 'oneToMany' || attribute.relation === 'manyToMany'
      const count = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'], additionalProperties: false, description: 'with populate[x][count]=true' }
      return { anyOf: [toMany ? { type: 'array', items: ref(attribute.target, 'document') } : ref(attribute.target, 'document'), count, { type: 'null' }] }
    }
    case 'media': return attribute.multiple === true ? nullable({ type: 'array', items: ref(FILE_UID, 'document') }) : nullable(ref(FILE_UID, 'document'))
    case 'component': return attribute.repeatable === true ? { type: 'array', items: ref(attribute.component, 'document') } : nullable(ref(attribute.component, 'document'))
    case 'dynamiczone': return { type: 'array', items: zoneItems(attribute.components, ref, 'document') }
    default: return {}
  }
}

/**
 * A dynamic zone's item: one of its components, told apart by `__component` (its uid). Each
 * member pins `__component` to its uid, so the `oneOf` holds on its own; the members are inline
 * `allOf`s, not named schemas, so the discriminator has no `mapping` to give.
 */
function zoneItems (components: readonly string[], ref: Ref, kind: 'document' | 'input'): JsonSchema {
  const members = components.map((uid) => ({
    allOf: [ref(uid, kind), { type: 'object', properties: { __component: { type: 'string', enum: [uid] } }, required: ['__component'] }]
  }))
  return { oneOf: members, discriminator: { propertyName: '__component' } }
}

/**
 * The `data` of a write, as validate-input.ts reads it: only the writable attributes (unknown
 * keys are "Invalid key"); `locale` and `publishedAt` are accepted and ignored (the query's
 * `locale` and `status` decide). A required attribute may not be null, except under the draft
 * rules (a `status=draft` write of a draft & publish type), which let it wait until publication;
 * what a create must send is `createInput`'s `required`.
 */
function inputSchema (model: ContentType | Component, ref: Ref, omit?: (name: string, attribute: Attribute) => boolean): JsonSchema {
  const draftable = model.modelType === 'contentType' && model.draftAndPublish
  const properties: Record<string, JsonSchema> = {}
  for (const [name, attribute] of Object.entries(model.attributes)) {
    if (attribute.writable === false || omit?.(name, attribute) === true) continue
    const field = model.writableFields.get(name)
    const schema = field !== undefined ? scalarSchema(field) : associationInput(attribute, ref)
    properties[name] = attribute.required === true ? schema : nullable(schema)
  }
  if (model.modelType === 'component') {
    properties.id = { type: 'integer', description: 'an existing item of this component, to update it in place' }
    properties.__component = { type: 'string', description: 'the component uid, in a dynamic zone' }
    // A component item is always validated whole (write-components.ts), drafts included.
    const required = requiredOnCreate(model)
    return { type: 'object', properties, additionalProperties: false, ...(required.length > 0 ? { required } : {}) }
  }
  properties.locale = { type: 'string', description: 'ignored: the `locale` query parameter decides' }
  properties.publishedAt = { description: 'ignored: the `status` query parameter decides' }
  const description = draftable
    ? 'Required attributes may be left out or null in a `status=draft` write, until publication.'
    : undefined
  return { type: 'object', properties, additionalProperties: false, ...(description === undefined ? {} : { description }) }
}

/** The write forms of a relation, media, component or dynamic zone, null aside. */
function associationInput (attribute: Attribute, ref: Ref): JsonSchema {
  switch (attribute.type) {
    case 'relation': return { $ref: attribute.required === true ? 'ContentApiRequiredRelationInput' : 'ContentApiRelationInput' }
    case 'media': return attribute.multiple === true
      ? { anyOf: [{ type: 'array', items: { $ref: 'ContentApiFileRef' }, ...(attribute.required === true ? { minItems: 1 } : {}) }, { $ref: 'ContentApiFileRef' }], description: 'file ids' }
      : { allOf: [{ $ref: 'ContentApiFileRef' }], description: 'a file id' }
    case 'component': return attribute.repeatable === true
      ? { type: 'array', items: ref(attribute.component, 'input'), ...itemBounds(attribute) }
      : ref(attribute.component, 'input')
    case 'dynamiczone': return { type: 'array', items: zoneItems(attribute.components, ref, 'input'), ...itemBounds(attribute) }
    default: return {}
  }
}

function itemBounds (attribute: { min?: number, max?: number }): JsonSchema {
  return {
    ...(Number.isInteger(attribute.min) ? { minItems: attribute.min } : {}),
    ...(Number.isInteger(attribute.max) ? { maxItems: attribute.max } : {})
  }
}

/**
 * What a create must send (validate-input.ts with `partial: false`): required scalars without a
 * default (a uid with a `targetField` is generated when left out), and required associations.
 */
function requiredOnCreate (model: ContentType | Component): string[] {
  return Object.entries(model.attributes)
    .filter(([, a]) => a.required === true && a.writable !== false)
    .filter(([, a]) => !isScalarAttribute(a) || (a.default === undefined && !(a.type === 'uid' && a.targetField !== undefined)))
    .map(([name]) => name)
}

/** The `filters` of a model: each field's condition, associations' nested filters, `$and`/`$or`/`$not`. */
function filtersSchema (model: ContentType | Component, ref: Ref): JsonSchema {
  const self = ref(model.uid, 'filters')
  const properties: Record<string, JsonSchema> = {}
  for (const field of model.defaultFields) properties[field.name] = { $ref: 'ContentApiFieldFilter' }
  for (const [name, attribute] of Object.entries(model.attributes)) {
    if (isScalarAttribute(attribute) || attribute.private === true) continue
    if (attribute.type === 'relation') properties[name] = ref(attribute.target, 'filters')
    else if (attribute.type === 'media') properties[name] = ref(FILE_UID, 'filters')
    else if (attribute.type === 'component') properties[name] = ref(attribute.component, 'filters')
  }
  properties.$and = { type: 'array', items: self }
  properties.$or = { type: 'array', items: self }
  properties.$not = self
  return {
    type: 'object',
    description: 'Strapi filters, sent in bracket form: `filters[title][$contains]=news&filters[category][name][$eq]=Tech`',
    properties,
    additionalProperties: false
  }
}

/** The `populate` of a model: `*`, a list of associations, or per association its own query. */
function populateSchema (model: ContentType | Component, ref: Ref): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const names: string[] = []
  for (const [name, attribute] of Object.entries(model.attributes)) {
    if (isScalarAttribute(attribute) || attribute.private === true) continue
    names.push(name)
    const target = attribute.type === 'relation' ? attribute.target : attribute.type === 'media' ? FILE_UID : attribute.type === 'component' ? attribute.component : null
    const options: Record<string, JsonSchema> = {
      populate: target === null ? {} : ref(target, 'populate')
    }
    if (target !== null) {
      options.fields = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }
      options.filters = ref(target, 'filters')
      options.sort = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }
    }
    if (attribute.type === 'relation' || attribute.type === 'media') options.count = { type: 'boolean' }
    if (attribute.type === 'dynamiczone') {
      options.on = { type: 'object', properties: Object.fromEntries(attribute.components.map((uid) => [uid, { type: 'object', properties: { fields: {}, populate: ref(uid, 'populate') } }])), additionalProperties: false }
    }
    properties[name] = { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['*', 'true', 'false'] }, { type: 'object', properties: options, additionalProperties: false }] }
  }
  return {
    description: 'Associations to return: `populate=*`, `populate=a,b`, `populate[0]=a`, or `populate[a][fields][0]=name&populate[a][populate][b]=true`',
    anyOf: [
      { type: 'string', description: '`*` or a comma list of association names' },
      { type: 'array', items: names.length > 0 ? { type: 'string', enum: names } : { type: 'string' } },
      { type: 'object', properties, additionalProperties: false }
    ]
  }
}

const built = new WeakMap<Registry, ModelSchemas>()

/**
 * The registry's schemas, built once for the REST, auth and upload contexts alike (the first
 * caller's `taken` decides the names: the contexts see the same application schemas).
 */
export function modelSchemasOf (registry: Registry, taken: (id: string) => boolean): ModelSchemas {
  let schemas = built.get(registry)
  if (schemas === undefined) {
    schemas = buildModelSchemas(registry, taken)
    built.set(registry, schemas)
  }
  return schemas
}
