/**
 * Content-type and component schemas in Strapi's format, as an application writes them.
 * These are the *input* types; `registry.ts` turns them into the normalised, immutable
 * `ContentType` / `Component` descriptions the rest of the library reads.
 */

export const SCALAR_TYPES = [
  'string', 'text', 'richtext', 'blocks', 'email', 'password', 'uid',
  'integer', 'biginteger', 'float', 'decimal',
  'date', 'time', 'datetime', 'timestamp',
  'boolean', 'enumeration', 'json'
] as const

export type ScalarType = typeof SCALAR_TYPES[number]

export const RELATION_KINDS = ['oneToOne', 'oneToMany', 'manyToOne', 'manyToMany'] as const
export type RelationKind = typeof RELATION_KINDS[number]

export interface I18nPluginOptions {
  i18n?: { localized?: boolean }
  [plugin: string]: unknown
}

interface AttributeBase {
  required?: boolean
  unique?: boolean
  /** Never returned by the API and never usable in filters, sort or fields. */
  private?: boolean
  /** `false` makes the attribute read-only for the content API. */
  writable?: boolean
  /**
   * Create a btree index on the column (not a Strapi option): for attributes your clients filter
   * or sort on often, e.g. `filters[views][$gt]=500` or `sort=title:desc`.
   */
  index?: boolean
  configurable?: boolean
  pluginOptions?: I18nPluginOptions
}

export interface StringLikeAttribute extends AttributeBase {
  type: 'string' | 'text' | 'richtext' | 'email' | 'password'
  default?: string
  minLength?: number
  maxLength?: number
  regex?: string
}

export interface UidAttribute extends AttributeBase {
  type: 'uid'
  targetField?: string
  default?: string
  minLength?: number
  maxLength?: number
  regex?: string
}

export interface NumberAttribute extends AttributeBase {
  type: 'integer' | 'float' | 'decimal'
  default?: number
  min?: number
  max?: number
}

export interface BigIntegerAttribute extends AttributeBase {
  type: 'biginteger'
  default?: string
  min?: string | number
  max?: string | number
}

export interface DateLikeAttribute extends AttributeBase {
  type: 'date' | 'time' | 'datetime' | 'timestamp'
  default?: string
}

export interface BooleanAttribute extends AttributeBase {
  type: 'boolean'
  default?: boolean
}

export interface EnumerationAttribute extends AttributeBase {
  type: 'enumeration'
  enum: readonly string[]
  default?: string
}

export interface JsonAttribute extends AttributeBase {
  type: 'json' | 'blocks'
  default?: unknown
}

export interface RelationAttribute extends AttributeBase {
  type: 'relation'
  relation: RelationKind
  target: string
  inversedBy?: string
  mappedBy?: string
}

export interface MediaAttribute extends AttributeBase {
  type: 'media'
  multiple?: boolean
  allowedTypes?: readonly ('images' | 'files' | 'videos' | 'audios')[]
}

export interface ComponentAttribute extends AttributeBase {
  type: 'component'
  component: string
  repeatable?: boolean
  min?: number
  max?: number
}

export interface DynamicZoneAttribute extends AttributeBase {
  type: 'dynamiczone'
  components: readonly string[]
  min?: number
  max?: number
}

export type ScalarAttribute =
  | StringLikeAttribute | UidAttribute | NumberAttribute | BigIntegerAttribute
  | DateLikeAttribute | BooleanAttribute | EnumerationAttribute | JsonAttribute

export type Attribute =
  | ScalarAttribute | RelationAttribute | MediaAttribute | ComponentAttribute | DynamicZoneAttribute

export type AttributeType = Attribute['type']

export interface ContentTypeSchema {
  kind: 'collectionType' | 'singleType'
  /** Optional explicit uid; defaults to `api::<singularName>.<singularName>`. */
  uid?: string
  collectionName?: string
  info: {
    singularName: string
    pluralName: string
    displayName?: string
    name?: string
    description?: string
  }
  options?: { draftAndPublish?: boolean, [key: string]: unknown }
  pluginOptions?: I18nPluginOptions
  attributes: Record<string, Attribute>
  /**
   * Strapi's lifecycle hooks of this type (`beforeCreate`, `afterUpdate`, ...), called around
   * every call of its document service (docs/extending.md#lifecycles).
   */
  lifecycles?: LifecycleHooks
}

/** The hooks of a lifecycle subscriber, Strapi's names: before/after each document action. */
export type LifecycleAction =
  | 'beforeCreate' | 'afterCreate' | 'beforeUpdate' | 'afterUpdate' | 'beforeDelete' | 'afterDelete'
  | 'beforeFindOne' | 'afterFindOne' | 'beforeFindMany' | 'afterFindMany' | 'beforeCount' | 'afterCount'

/**
 * What a lifecycle hook receives, as Strapi's `event`: `params` the call's parameters (a before
 * hook may change them), `result` (after hooks only; an after hook may replace it), `state`
 * shared by a subscriber's before hook and its after hook of the same call. `operation` (ours)
 * names the document-service call: a `publish` runs the update hooks with `operation: 'publish'`.
 */
export interface LifecycleEvent {
  action: LifecycleAction
  model: { uid: string, singularName: string, pluralName: string, kind: 'collectionType' | 'singleType', tableName: string, attributes: Readonly<Record<string, Attribute>> }
  params: Record<string, any>
  result?: any
  state: Record<string, any>
  operation: string
}

export type LifecycleHook = (event: LifecycleEvent) => unknown
export type LifecycleHooks = Partial<Record<LifecycleAction, LifecycleHook>>

export interface ComponentSchema {
  collectionName?: string
  info?: { displayName?: string, icon?: string, description?: string }
  attributes: Record<string, Attribute>
}

/**
 * Identity helper that keeps the literal types of a model, so `DocumentOf<typeof article>`
 * can infer the document shape.
 *
 * @example
 * const article = defineContentType({
 *   kind: 'collectionType',
 *   info: { singularName: 'article', pluralName: 'articles' },
 *   attributes: { title: { type: 'string', required: true }, views: { type: 'integer' } }
 * })
 * type Article = DocumentOf<typeof article> // { id: number, documentId: string, title: string, views: number | null, ... }
 */
export function defineContentType<const T extends ContentTypeSchema> (schema: T): T {
  return schema
}

/** Identity helper for component schemas, the counterpart of `defineContentType`. */
export function defineComponent<const T extends ComponentSchema> (schema: T): T {
  return schema
}

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** The JSON type of one scalar attribute as the API returns it. */
export type ScalarValueOf<A> =
  A extends { type: 'integer' | 'float' | 'decimal' } ? number
    : A extends { type: 'boolean' } ? boolean
      : A extends { type: 'enumeration', enum: readonly (infer E)[] } ? E
        : A extends { type: 'json' } ? JsonValue
          : A extends { type: 'blocks' } ? Array<Record<string, unknown>>
            : string

type Nullable<A, V> = A extends { required: true } ? V : V | null

/** Attributes the API returns by default: scalars that are neither private nor passwords. */
type ReturnedKeys<T extends Record<string, Attribute>> = {
  [K in keyof T]: T[K] extends { private: true } ? never
    : T[K] extends { type: 'password' | 'relation' | 'media' | 'component' | 'dynamiczone' } ? never
      : K
}[keyof T]

/** The document type the REST API and the document service return for a content type. */
export type DocumentOf<S extends ContentTypeSchema> = {
  id: number
  documentId: string
  createdAt: string
  updatedAt: string
  publishedAt: string | null
  locale?: string | null
} & {
  [K in ReturnedKeys<S['attributes']>]: Nullable<S['attributes'][K], ScalarValueOf<S['attributes'][K]>>
}
