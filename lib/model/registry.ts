import { columnName, snakeCase, identifier } from './naming.js'
import { ConfigurationError } from '../errors.js'
import { buildAssociations, type Association, type ModelNames } from './associations.js'
import { BUILT_IN_CONTENT_TYPES, isApiContentType } from './built-ins.js'
import { validateSchemas } from './validate-models.js'
import type {
  Attribute, ComponentSchema, ContentTypeSchema, ScalarAttribute, ScalarType
} from './types.js'
import { SCALAR_TYPES } from './types.js'

/**
 * A column-backed field of a content type or component: an attribute of a scalar type, or one of
 * the system fields every document has (`id`, `documentId`, timestamps, `locale`).
 * The query compiler and the document service address fields only through this description, so
 * no identifier in SQL ever comes from user input.
 */
export interface Field {
  readonly name: string
  readonly column: string
  readonly type: ScalarType
  readonly attribute: ScalarAttribute | null
  /** System fields are managed by the library and cannot be written through the API. */
  readonly system: boolean
  /** Private and password fields never leave the server and cannot be filtered, sorted or selected. */
  readonly hidden: boolean
  readonly writable: boolean
  /**
   * Whether each locale of a document has its own value. On a localized content type an
   * attribute is localized unless it says `pluginOptions: { i18n: { localized: false } }`; the
   * others hold one value shared by every locale of the document.
   */
  readonly localized: boolean
}

export interface ContentType {
  readonly modelType: 'contentType'
  readonly uid: string
  readonly kind: 'collectionType' | 'singleType'
  readonly singularName: string
  readonly pluralName: string
  readonly displayName: string
  readonly tableName: string
  readonly draftAndPublish: boolean
  readonly localized: boolean
  readonly schema: ContentTypeSchema
  readonly attributes: Readonly<Record<string, Attribute>>
  /** Every column-backed field, system fields first, in model order. */
  readonly fields: ReadonlyMap<string, Field>
  /** Fields returned when a request names none: readable scalars and system fields. */
  readonly defaultFields: readonly Field[]
  /** Scalar attributes a client may write. */
  readonly writableFields: ReadonlyMap<string, Field>
  /** Relations, media, components and dynamic zones, by attribute name. */
  readonly associations: ReadonlyMap<string, Association>
}

export interface Component {
  readonly modelType: 'component'
  readonly uid: string
  readonly category: string
  readonly tableName: string
  readonly schema: ComponentSchema
  readonly attributes: Readonly<Record<string, Attribute>>
  readonly fields: ReadonlyMap<string, Field>
  readonly defaultFields: readonly Field[]
  readonly writableFields: ReadonlyMap<string, Field>
  readonly associations: ReadonlyMap<string, Association>
}

export interface Registry {
  readonly contentTypes: ReadonlyMap<string, ContentType>
  readonly components: ReadonlyMap<string, Component>
  /** Finds a content type by uid (`api::article.article`). */
  get (uid: string): ContentType | undefined
  /** Finds a collection type by plural API id or a single type by singular API id, as REST routes do. */
  byRouteId (apiId: string): ContentType | undefined
}

const SCALARS = new Set<string>(SCALAR_TYPES)

export function isScalarAttribute (attribute: Attribute): attribute is ScalarAttribute {
  return SCALARS.has(attribute.type)
}

function systemField (name: string, column: string, type: ScalarType): Field {
  return { name, column, type, attribute: null, system: true, hidden: false, writable: false, localized: false }
}

function attributeFields (attributes: Record<string, Attribute>, localizedType: boolean): Field[] {
  const fields: Field[] = []
  for (const [name, attribute] of Object.entries(attributes)) {
    if (!isScalarAttribute(attribute)) continue
    fields.push({
      name,
      column: columnName(name),
      type: attribute.type,
      attribute,
      system: false,
      hidden: attribute.private === true || attribute.type === 'password',
      writable: attribute.writable !== false,
      localized: localizedType && attribute.pluginOptions?.i18n?.localized !== false
    })
  }
  return fields
}

function freeze<T extends object> (value: T): T {
  return Object.freeze(value)
}

function buildContentType (uid: string, schema: ContentTypeSchema, names: ReadonlyMap<string, ModelNames>): ContentType {
  const localized = schema.pluginOptions?.i18n?.localized === true
  const own = attributeFields(schema.attributes, localized)
  const all: Field[] = [
    systemField('id', 'id', 'integer'),
    systemField('documentId', 'document_id', 'string'),
    ...own,
    systemField('createdAt', 'created_at', 'datetime'),
    systemField('updatedAt', 'updated_at', 'datetime'),
    systemField('publishedAt', 'published_at', 'datetime'),
    ...(localized ? [systemField('locale', 'locale', 'string')] : [])
  ]
  return freeze({
    modelType: 'contentType',
    uid,
    kind: schema.kind,
    singularName: schema.info.singularName,
    pluralName: schema.info.pluralName,
    displayName: schema.info.displayName ?? schema.info.name ?? schema.info.singularName,
    tableName: names.get(uid)!.tableName,
    draftAndPublish: schema.options?.draftAndPublish === true,
    localized,
    schema,
    attributes: freeze({ ...schema.attributes }),
    fields: new Map(all.map((f) => [f.name, f])),
    defaultFields: freeze(all.filter((f) => !f.hidden)),
    writableFields: new Map(own.filter((f) => f.writable).map((f) => [f.name, f])),
    associations: buildAssociations(names.get(uid)!, names)
  })
}

function buildComponent (uid: string, schema: ComponentSchema, names: ReadonlyMap<string, ModelNames>): Component {
  const [category] = uid.split('.')
  const own = attributeFields(schema.attributes, false)
  const all = [systemField('id', 'id', 'integer'), ...own]
  const self = names.get(uid)!
  return freeze({
    modelType: 'component',
    uid,
    category,
    tableName: self.tableName,
    schema,
    attributes: freeze({ ...schema.attributes }),
    fields: new Map(all.map((f) => [f.name, f])),
    defaultFields: freeze(all.filter((f) => !f.hidden)),
    writableFields: new Map(own.filter((f) => f.writable).map((f) => [f.name, f])),
    associations: buildAssociations(self, names)
  })
}

function contentTypeNames (uid: string, schema: ContentTypeSchema): ModelNames {
  return {
    uid,
    tableName: identifier(schema.collectionName ?? snakeCase(schema.info.pluralName)),
    singularName: schema.info.singularName,
    attributes: schema.attributes
  }
}

function componentNames (uid: string, schema: ComponentSchema): ModelNames {
  const [category, name] = uid.split('.')
  return {
    uid,
    tableName: identifier(schema.collectionName ?? `components_${snakeCase(category)}_${snakeCase(name)}s`),
    singularName: `${category}_${name}`,
    attributes: schema.attributes
  }
}

/** `api::<singularName>.<singularName>`, Strapi's uid for an application content type. */
export function defaultUid (schema: ContentTypeSchema): string {
  return `api::${schema.info.singularName}.${schema.info.singularName}`
}

/**
 * Validates every model and component, then builds the immutable registry.
 * Throws one `ConfigurationError` listing every problem found.
 */
export function createRegistry (
  models: readonly ContentTypeSchema[],
  components: Readonly<Record<string, ComponentSchema>> = {}
): Registry {
  const problems = validateSchemas(models, components)
  if (problems.length > 0) throw new ConfigurationError(problems, 'content-type models')

  // Names first: a relation needs its target's table before either model is built.
  const schemas = [...BUILT_IN_CONTENT_TYPES, ...models]
  const names = new Map<string, ModelNames>()
  for (const schema of schemas) {
    const uid = schema.uid ?? defaultUid(schema)
    names.set(uid, contentTypeNames(uid, schema))
  }
  for (const [uid, schema] of Object.entries(components)) names.set(uid, componentNames(uid, schema))

  const contentTypes = new Map<string, ContentType>()
  const routes = new Map<string, ContentType>()
  for (const schema of schemas) {
    const ct = buildContentType(schema.uid ?? defaultUid(schema), schema, names)
    contentTypes.set(ct.uid, ct)
    if (isApiContentType(ct.uid)) routes.set(ct.kind === 'singleType' ? ct.singularName : ct.pluralName, ct)
  }
  const componentMap = new Map<string, Component>()
  for (const [uid, schema] of Object.entries(components)) componentMap.set(uid, buildComponent(uid, schema, names))

  return freeze({
    contentTypes,
    components: componentMap,
    get: (uid: string) => contentTypes.get(uid),
    byRouteId: (apiId: string) => routes.get(apiId)
  })
}
