import type { Association } from '../model/associations.js'
import { FILE_UID } from '../model/associations.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import type { ScalarType } from '../model/types.js'
import { NUMERIC_TYPES, ORDERED_TYPES } from '../query/aggregate.js'
import { LOCALIZATIONS } from '../query/populate.js'
import { PUBLICATION_FILTERS } from '../query/index.js'
import { GRAPHQL_NAME, dynamicZoneName, enumName, pluralQueryName, publicationFilterName, singularQueryName, typeName } from './names.js'
import type { ContentTypeConfig } from './shadow-crud.js'

/**
 * Shadow CRUD: the SDL generated from the registry, in one of three shapes, and for every
 * generated field its *role*, which tells the query planner (plan.ts) how a selection on it maps
 * to the document service's fields and populate tree, and the resolvers (resolvers.ts) how to
 * answer it.
 *
 * | shape           | `articles`                               | relation to-one / to-many                                    |
 * |-----------------|------------------------------------------|--------------------------------------------------------------|
 * | entity (spec)   | `ArticleEntityResponseCollection`        | `CategoryEntityResponse` / `AuthorRelationResponseCollection`|
 * | flat (Strapi 5) | `[Article]!` + `articles_connection`     | `Category` / `[Author]!` + `authors_connection`              |
 * | flat + v4 compat| flat, plus `id`, `attributes`, `data`, `meta` aliases                                                  |
 */

export interface Shape {
  entity: boolean
  compat: boolean
}

/** How a selection on a generated field reads the document it belongs to. */
export type FieldRole =
  /** A column of the row (`title`, `documentId`; the entity shape's `id` is `documentId`). */
  | { kind: 'field', field: string }
  /** A wrapper or alias of the same document (`attributes`, `data`, `nodes`): its selection is the document's. */
  | { kind: 'self' }
  /** Pagination of a root list (`pageInfo`, `meta`): the statement must count. */
  | { kind: 'meta' }
  /** A relation, media, component, dynamic zone or `localizations`, read through populate. */
  | { kind: 'association', attribute: string, list: boolean, wrap: 'none' | 'response' | 'collection' }

export interface GeneratedTypes {
  typeDefs: string
  /** Role of each generated field, by type name then field name. */
  roles: Map<string, Map<string, FieldRole>>
  /** The model of each generated object type, for resolvers that need it (dynamic zones, entities). */
  models: Map<string, ContentType | Component>
  /** Content types with generated operations, with the names of those operations. */
  operations: OperationNames[]
}

export interface OperationNames {
  model: ContentType
  type: string
  /** `article`, `articles`, `articles_connection`, `createArticle`, ... (null when the action is off). */
  findOne: string | null
  find: string | null
  connection: string | null
  create: string | null
  update: string | null
  delete: string | null
  /** `articles_aggregate`, our extension (docs/aggregations.md); null when `find` is off or on a single type. */
  aggregate: string | null
}

const SCALAR_GRAPHQL: Record<ScalarType, string> = {
  string: 'String',
  text: 'String',
  richtext: 'String',
  blocks: 'JSON',
  email: 'String',
  password: 'String',
  uid: 'String',
  integer: 'Int',
  biginteger: 'Long',
  float: 'Float',
  decimal: 'Float',
  date: 'Date',
  time: 'Time',
  datetime: 'DateTime',
  timestamp: 'DateTime',
  boolean: 'Boolean',
  enumeration: 'String',
  json: 'JSON'
}

/** Filter input per scalar: enumerations filter as strings, as in Strapi. */
const FILTER_INPUT: Record<ScalarType, string> = {
  ...Object.fromEntries(Object.entries(SCALAR_GRAPHQL).map(([type, gql]) => [type, `${gql}FilterInput`])) as Record<ScalarType, string>,
  enumeration: 'StringFilterInput'
}

/** The operators of every `<Scalar>FilterInput` (Strapi's GRAPHQL_SCALAR_OPERATORS). */
export const SCALAR_OPERATORS = ['eq', 'eqi', 'ne', 'nei', 'startsWith', 'endsWith', 'contains', 'notContains', 'containsi',
  'notContainsi', 'gt', 'gte', 'lt', 'lte', 'null', 'notNull', 'in', 'notIn', 'between'] as const

const FILTERED_SCALARS = ['ID', 'String', 'Int', 'Long', 'Float', 'Boolean', 'Date', 'DateTime', 'Time', 'JSON']

function scalarFilterInput (scalar: string): string {
  const list = `[${scalar}]`
  const fields = [`and: ${list}`, `or: ${list}`, `not: ${scalar}FilterInput`, ...SCALAR_OPERATORS.map((op) => {
    if (op === 'null' || op === 'notNull') return `${op}: Boolean`
    if (op === 'in' || op === 'notIn' || op === 'between') return `${op}: ${list}`
    return `${op}: ${scalar}`
  })]
  return `input ${scalar}FilterInput {\n  ${fields.join('\n  ')}\n}`
}

const COMMON = `
"""A date-time in ISO 8601, UTC: 2025-01-31T10:00:00.000Z"""
scalar DateTime
"""A date: 2025-01-31"""
scalar Date
"""A time of day: 10:00:00.000"""
scalar Time
"""Any JSON value"""
scalar JSON
"""A 64-bit integer, as a string when it does not fit a JavaScript number"""
scalar Long
"""A locale code among the configured locales, or * for all (lists only)"""
scalar I18NLocaleCode

"""DRAFT reads the draft (latest) version of each document, PUBLISHED the published one"""
enum PublicationStatus { DRAFT PUBLISHED }

input PaginationArg { page: Int pageSize: Int start: Int limit: Int after: String before: String }

type Pagination { total: Int! page: Int! pageSize: Int! pageCount: Int! next: String previous: String }

"""A dynamic-zone entry whose component is not in the schema"""
type Error { code: String! message: String }

${FILTERED_SCALARS.map(scalarFilterInput).join('\n')}
`

const ENTITY_COMMON = `
"""LIVE reads published versions, PREVIEW the latest draft of each document"""
enum PublicationState { LIVE PREVIEW }
type ResponseCollectionMeta { pagination: Pagination! }
`

const FLAT_COMMON = `
type DeleteMutationResponse { documentId: ID! }
"""Strapi 5's publication cohorts: which documents a read keeps, by how their draft and published versions relate"""
enum PublicationFilter { ${PUBLICATION_FILTERS.map(publicationFilterName).join(' ')} }
`

const COMPAT_COMMON = `
type ResponseCollectionMeta { pagination: Pagination! }
`

const DEPRECATED_ALIAS = '@deprecated(reason: "Use the flat fields instead (v4 compatibility alias)")'

type Model = ContentType | Component

class Generator {
  readonly #registry: Registry
  readonly #shape: Shape
  readonly #config: (uid: string) => ContentTypeConfig
  readonly #blocks: string[] = []
  readonly roles = new Map<string, Map<string, FieldRole>>()
  readonly models = new Map<string, Model>()
  readonly operations: OperationNames[] = []
  readonly #enabled: ContentType[]
  readonly #enums = new Set<string>()
  readonly #components = new Set<string>()

  constructor (registry: Registry, shape: Shape, config: (uid: string) => ContentTypeConfig) {
    this.#registry = registry
    this.#shape = shape
    this.#config = config
    this.#enabled = [...registry.contentTypes.values()].filter((ct) => config(ct.uid).isEnabled())
  }

  #role (type: string, field: string, role: FieldRole): void {
    let fields = this.roles.get(type)
    if (fields === undefined) {
      fields = new Map()
      this.roles.set(type, fields)
    }
    fields.set(field, role)
  }

  #isEnabled (uid: string): boolean {
    return this.#config(uid).isEnabled()
  }

  /** Attribute config of a content type; components have none (they follow their owners). */
  #fieldConfig (model: Model, name: string): { output: boolean, input: boolean, filters: boolean } {
    if (model.modelType === 'component') return { output: true, input: true, filters: true }
    const field = this.#config(model.uid).field(name)
    return { output: field.hasOutputEnabled(), input: field.hasInputEnabled(), filters: field.hasFiltersEnabled() }
  }

  /** A relation's or media field's target content type, when it is in the schema. */
  #target (association: Association): ContentType | null {
    if (association.kind !== 'relation' && association.kind !== 'media') return null
    const target = this.#registry.get(association.kind === 'media' ? FILE_UID : association.target)
    return target !== undefined && this.#isEnabled(target.uid) ? target : null
  }

  #scalarOutput (model: Model, field: Field): string {
    if (field.type === 'enumeration') {
      const values = (field.attribute as { enum: readonly string[] }).enum
      if (values.length > 0 && values.every((v) => GRAPHQL_NAME.test(v))) {
        const name = enumName(model, field.name)
        if (!this.#enums.has(name)) {
          this.#enums.add(name)
          this.#blocks.push(`enum ${name} {\n  ${values.join('\n  ')}\n}`)
        }
        return name
      }
    }
    return SCALAR_GRAPHQL[field.type]
  }

  #listArgs (target: ContentType): string {
    return `(filters: ${typeName(target)}FiltersInput, pagination: PaginationArg = {}, sort: [String] = [])`
  }

  /** Output fields of a document or component: attributes, associations, timestamps, aliases. */
  #objectType (model: Model): void {
    const name = typeName(model)
    const lines: string[] = []
    const { compat } = this.#shape
    if (model.modelType === 'contentType') {
      if (compat) {
        lines.push(`id: ID! ${DEPRECATED_ALIAS}`)
        this.#role(name, 'id', { kind: 'field', field: 'id' })
      }
      lines.push('documentId: ID!')
      this.#role(name, 'documentId', { kind: 'field', field: 'documentId' })
    } else {
      lines.push('id: ID!')
      this.#role(name, 'id', { kind: 'field', field: 'id' })
    }
    for (const [attr, attribute] of Object.entries(model.attributes)) {
      if (!this.#fieldConfig(model, attr).output || attribute.private === true) continue
      const field = model.fields.get(attr)
      if (field !== undefined) {
        if (field.hidden) continue
        const required = attribute.required === true ? '!' : ''
        lines.push(`${attr}: ${this.#scalarOutput(model, field)}${required}`)
        this.#role(name, attr, { kind: 'field', field: attr })
        continue
      }
      const association = model.associations.get(attr)
      if (association === undefined) continue
      lines.push(...this.#associationFields(model, name, association))
    }
    if (model.modelType === 'contentType') {
      for (const ts of ['createdAt', 'updatedAt', 'publishedAt']) {
        lines.push(`${ts}: DateTime`)
        this.#role(name, ts, { kind: 'field', field: ts })
      }
      if (model.localized) {
        lines.push('locale: String')
        this.#role(name, 'locale', { kind: 'field', field: 'locale' })
        lines.push(...this.#toMany(name, LOCALIZATIONS, model))
      }
    }
    if (compat) {
      lines.push(`attributes: ${name}! ${DEPRECATED_ALIAS}`, `data: ${name}! ${DEPRECATED_ALIAS}`)
      this.#role(name, 'attributes', { kind: 'self' })
      this.#role(name, 'data', { kind: 'self' })
    }
    this.models.set(name, model)
    this.#blocks.push(`type ${name} {\n  ${lines.join('\n  ')}\n}`)
  }

  #toMany (owner: string, attr: string, target: ContentType): string[] {
    const t = typeName(target)
    if (this.#shape.entity) {
      this.#role(owner, attr, { kind: 'association', attribute: attr, list: true, wrap: 'collection' })
      return [`${attr}${this.#listArgs(target)}: ${t}RelationResponseCollection`]
    }
    this.#role(owner, `${attr}_connection`, { kind: 'association', attribute: attr, list: true, wrap: 'collection' })
    this.#role(owner, attr, { kind: 'association', attribute: attr, list: true, wrap: 'none' })
    return [`${attr}_connection${this.#listArgs(target)}: ${t}RelationResponseCollection`, `${attr}${this.#listArgs(target)}: [${t}]!`]
  }

  #associationFields (model: Model, owner: string, association: Association): string[] {
    const attr = association.name
    switch (association.kind) {
      case 'component': {
        const component = this.#registry.components.get(association.component)!
        this.#component(component)
        this.#role(owner, attr, { kind: 'association', attribute: attr, list: association.repeatable, wrap: 'none' })
        return [`${attr}: ${association.repeatable ? `[${typeName(component)}]` : typeName(component)}`]
      }
      case 'dynamiczone': {
        const union = this.#dynamicZone(model, association.name, association.components)
        this.#role(owner, attr, { kind: 'association', attribute: attr, list: true, wrap: 'none' })
        return [`${attr}: [${union}]`]
      }
      default: {
        const target = this.#target(association)
        if (target === null) return []
        const toMany = association.kind === 'media' ? association.multiple : association.toMany
        if (toMany) return this.#toMany(owner, attr, target)
        const t = typeName(target)
        if (this.#shape.entity) {
          this.#role(owner, attr, { kind: 'association', attribute: attr, list: false, wrap: 'response' })
          return [`${attr}: ${t}EntityResponse`]
        }
        this.#role(owner, attr, { kind: 'association', attribute: attr, list: false, wrap: 'none' })
        return [`${attr}: ${t}`]
      }
    }
  }

  /** The union of a dynamic zone's components (plus `Error`) and its input scalar, once. */
  #dynamicZone (model: Model, attr: string, uids: readonly string[]): string {
    const union = dynamicZoneName(model, attr)
    if (this.#enums.has(union)) return union
    this.#enums.add(union)
    const members = uids.map((uid) => this.#registry.components.get(uid)!)
    for (const component of members) this.#component(component)
    this.#blocks.push(`union ${union} = ${[...members.map(typeName), 'Error'].join(' | ')}`, `scalar ${union}Input`)
    return union
  }

  #component (component: Component): void {
    if (this.#components.has(component.uid)) return
    this.#components.add(component.uid)
    this.#objectType(component)
    this.#filtersInput(component)
    this.#input(component)
  }

  /** `<Type>FiltersInput`: one filter per attribute, through relations and components, plus and/or/not. */
  #filtersInput (model: Model): void {
    const name = typeName(model)
    const lines: string[] = []
    if (model.modelType === 'contentType') {
      // The entity shape's `id` is the documentId, so it filters on it too.
      if (this.#shape.entity) lines.push('id: IDFilterInput')
      lines.push('documentId: IDFilterInput')
    }
    for (const [attr, attribute] of Object.entries(model.attributes)) {
      if (!this.#fieldConfig(model, attr).filters || attribute.private === true) continue
      const field = model.fields.get(attr)
      if (field !== undefined) {
        if (!field.hidden) lines.push(`${attr}: ${FILTER_INPUT[field.type]}`)
        continue
      }
      const association = model.associations.get(attr)
      if (association === undefined || association.kind === 'media') continue
      if (association.kind === 'dynamiczone') {
        lines.push(`${attr}: ${this.#dynamicZoneFilters(model, attr, association.components)}`)
        continue
      }
      if (association.kind === 'component') {
        const component = this.#registry.components.get(association.component)!
        this.#component(component)
        lines.push(`${attr}: ${typeName(component)}FiltersInput`)
        continue
      }
      const target = this.#target(association)
      if (target !== null) lines.push(`${attr}: ${typeName(target)}FiltersInput`)
      // Our extension, REST's `filters[articles][$count]`: `articles_count: { gt: 3 }`.
      if (target !== null && association.kind === 'relation' && !Object.hasOwn(model.attributes, `${attr}_count`)) lines.push(`${attr}_count: IntFilterInput`)
    }
    if (model.modelType === 'contentType') {
      lines.push('createdAt: DateTimeFilterInput', 'updatedAt: DateTimeFilterInput', 'publishedAt: DateTimeFilterInput')
      if (model.localized) lines.push('locale: StringFilterInput')
    }
    lines.push(`and: [${name}FiltersInput]`, `or: [${name}FiltersInput]`, `not: ${name}FiltersInput`)
    this.#blocks.push(`input ${name}FiltersInput {\n  ${lines.join('\n  ')}\n}`)
  }

  /**
   * Our extension, REST's `filters[blocks][on][<uid>]`: `<Zone>FiltersInput { on, and, or, not }`
   * with `on: <Zone>OnFiltersInput`, one field per member named as its GraphQL type (the name a
   * client writes in `... on ComponentSharedQuote`), holding that component's filters input.
   */
  #dynamicZoneFilters (model: Model, attr: string, uids: readonly string[]): string {
    const union = this.#dynamicZone(model, attr, uids)
    const name = `${union}FiltersInput`
    if (this.#enums.has(name)) return name
    this.#enums.add(name)
    const members = uids.map((uid) => typeName(this.#registry.components.get(uid)!))
    this.#blocks.push(
      `input ${union}OnFiltersInput {\n  ${members.map((t) => `${t}: ${t}FiltersInput`).join('\n  ')}\n}`,
      `input ${name} {\n  on: ${union}OnFiltersInput\n  and: [${name}]\n  or: [${name}]\n  not: ${name}\n}`
    )
    return name
  }

  /** `<Type>Input`: writable attributes; relations and media take documentIds (media: file ids). */
  #input (model: Model): void {
    const name = typeName(model)
    const lines: string[] = model.modelType === 'component' ? ['id: ID'] : []
    for (const [attr, attribute] of Object.entries(model.attributes)) {
      if (!this.#fieldConfig(model, attr).input || attribute.writable === false) continue
      const field = model.fields.get(attr)
      if (field !== undefined) {
        lines.push(`${attr}: ${this.#scalarOutput(model, field)}`)
        continue
      }
      const association = model.associations.get(attr)
      if (association === undefined) continue
      switch (association.kind) {
        case 'component': {
          const model = this.#registry.components.get(association.component)!
          this.#component(model)
          const component = typeName(model)
          lines.push(`${attr}: ${association.repeatable ? `[${component}Input]` : `${component}Input`}`)
          break
        }
        case 'dynamiczone':
          lines.push(`${attr}: [${this.#dynamicZone(model, attr, association.components)}Input!]`)
          break
        case 'media':
          lines.push(`${attr}: ${association.multiple ? '[ID]' : 'ID'}`)
          break
        default:
          if (this.#target(association) !== null) lines.push(`${attr}: ${association.toMany ? '[ID]' : 'ID'}`)
      }
    }
    if (model.modelType === 'contentType') {
      // Accepted and ignored, as Strapi ignores publishedAt: `status` decides what is published.
      if (this.#shape.entity) lines.push('createdAt: DateTime', 'updatedAt: DateTime')
      lines.push('publishedAt: DateTime')
    }
    if (lines.length === 0) lines.push('_: Boolean')
    this.#blocks.push(`input ${name}Input {\n  ${lines.join('\n  ')}\n}`)
  }

  /** Wrapper types of a content type (entity, responses, collections). */
  #wrappers (model: ContentType): void {
    const t = typeName(model)
    if (this.#shape.entity) {
      this.#blocks.push(
        `type ${t}Entity {\n  id: ID\n  documentId: ID\n  attributes: ${t}\n}`,
        `type ${t}EntityResponse {\n  data: ${t}Entity\n}`,
        `type ${t}EntityResponseCollection {\n  data: [${t}Entity!]!\n  meta: ResponseCollectionMeta!\n}`,
        `type ${t}RelationResponseCollection {\n  data: [${t}Entity!]!\n}`
      )
      this.#role(`${t}Entity`, 'id', { kind: 'field', field: 'documentId' })
      this.#role(`${t}Entity`, 'documentId', { kind: 'field', field: 'documentId' })
      this.#role(`${t}Entity`, 'attributes', { kind: 'self' })
      this.#role(`${t}EntityResponse`, 'data', { kind: 'self' })
      this.#role(`${t}EntityResponseCollection`, 'data', { kind: 'self' })
      this.#role(`${t}EntityResponseCollection`, 'meta', { kind: 'meta' })
      this.#role(`${t}RelationResponseCollection`, 'data', { kind: 'self' })
      return
    }
    const compat = this.#shape.compat
    this.#blocks.push(
      `type ${t}EntityResponseCollection {\n  nodes: [${t}!]!\n  pageInfo: Pagination!${compat ? `\n  data: [${t}!]! ${DEPRECATED_ALIAS}\n  meta: ResponseCollectionMeta! ${DEPRECATED_ALIAS}` : ''}\n}`,
      `type ${t}RelationResponseCollection {\n  nodes: [${t}!]!${compat ? `\n  data: [${t}!]! ${DEPRECATED_ALIAS}` : ''}\n}`
    )
    this.#role(`${t}EntityResponseCollection`, 'nodes', { kind: 'self' })
    this.#role(`${t}EntityResponseCollection`, 'pageInfo', { kind: 'meta' })
    this.#role(`${t}RelationResponseCollection`, 'nodes', { kind: 'self' })
    if (compat) {
      this.#role(`${t}EntityResponseCollection`, 'data', { kind: 'self' })
      this.#role(`${t}EntityResponseCollection`, 'meta', { kind: 'meta' })
      this.#role(`${t}RelationResponseCollection`, 'data', { kind: 'self' })
    }
  }

  /**
   * `<Type>Aggregate { group: JSON!, count: Int, sum, avg, min, max }`: one per group; the fields
   * selected under `sum` ... `max` are the values computed (REST's `sum=views`). `sum` and `avg`
   * list the numeric attributes, `min` and `max` the ordered ones (aggregate.ts in lib/query).
   */
  #aggregateType (model: ContentType): string {
    const t = `${typeName(model)}Aggregate`
    const fields = [...model.fields.values()].filter((f) => !f.hidden && f.name !== 'id' && f.name !== 'documentId' && f.name !== 'locale' &&
      (f.system || this.#fieldConfig(model, f.name).output))
    const numeric = fields.filter((f) => NUMERIC_TYPES.has(f.type))
    const ordered = fields.filter((f) => ORDERED_TYPES.has(f.type))
    const lines = ['group: JSON!', 'count: Int']
    const block = (name: string, list: Field[], type: (f: Field) => string): void => {
      if (list.length === 0) return
      this.#blocks.push(`type ${t}${name} {\n  ${list.map((f) => `${f.name}: ${type(f)}`).join('\n  ')}\n}`)
      lines.push(`${name.toLowerCase()}: ${t}${name}`)
    }
    block('Sum', numeric, (f) => f.type === 'biginteger' ? 'Long' : 'Float')
    block('Avg', numeric, () => 'Float')
    block('Min', ordered, (f) => f.type === 'enumeration' ? 'String' : SCALAR_GRAPHQL[f.type])
    block('Max', ordered, (f) => f.type === 'enumeration' ? 'String' : SCALAR_GRAPHQL[f.type])
    this.#blocks.push(`type ${t} {\n  ${lines.join('\n  ')}\n}`)
    return t
  }

  /** Query and Mutation fields of a content type, as the spec's table (entity) or Strapi 5 (flat). */
  #operations (model: ContentType, queries: string[], mutations: string[]): void {
    const config = this.#config(model.uid)
    const t = typeName(model)
    const single = model.kind === 'singleType'
    const { entity } = this.#shape
    const status = entity ? 'status: PublicationStatus' : 'status: PublicationStatus = PUBLISHED'
    const locale = model.localized ? ', locale: I18NLocaleCode' : ''
    // Strapi 5's root reads take the publication cohort on every type (a no-op without drafts).
    const cohort = entity ? '' : ', hasPublishedVersion: Boolean, publicationFilter: PublicationFilter'
    // The spec's table gives every list this argument: on a type without draft & publish, whose
    // only version is the published one, PREVIEW reads what LIVE reads.
    const state = entity ? ', publicationState: PublicationState = LIVE' : ''
    const one = entity ? `${t}EntityResponse` : t
    const idArg = entity ? 'id: ID' : 'documentId: ID!'
    const names: OperationNames = { model, type: t, findOne: null, find: null, connection: null, create: null, update: null, delete: null, aggregate: null }
    const listArgs = `filters: ${t}FiltersInput, pagination: PaginationArg = {}, sort: [String] = []${state}, ${status}${cohort}${locale}`
    if (single) {
      if (config.isActionEnabled('find')) {
        names.find = singularQueryName(model)
        queries.push(`${names.find}(${status}${state}${cohort}${locale}): ${one}`)
      }
    } else {
      if (config.isActionEnabled('findOne')) {
        names.findOne = singularQueryName(model)
        queries.push(`${names.findOne}(${idArg}, ${status}${cohort}${locale}): ${one}`)
      }
      if (config.isActionEnabled('find')) {
        names.find = pluralQueryName(model)
        if (entity) queries.push(`${names.find}(${listArgs}): ${t}EntityResponseCollection`)
        else {
          names.connection = `${names.find}_connection`
          queries.push(`${names.connection}(${listArgs}): ${t}EntityResponseCollection`, `${names.find}(${listArgs}): [${t}]!`)
        }
        names.aggregate = `${names.find}_aggregate`
        queries.push(`${names.aggregate}(filters: ${t}FiltersInput, groupBy: [String!] = []${state}, ${status}${locale}): [${this.#aggregateType(model)}!]!`)
      }
    }
    const writeStatus = entity ? 'status: PublicationStatus' : 'status: PublicationStatus = PUBLISHED'
    const deleted = entity ? one : 'DeleteMutationResponse'
    const mutationId = entity ? 'id: ID!' : 'documentId: ID!'
    if (!single && config.isActionEnabled('create')) {
      names.create = `create${t}`
      mutations.push(`${names.create}(data: ${t}Input!, ${writeStatus}${locale}): ${one}`)
    }
    if (config.isActionEnabled('update')) {
      names.update = `update${t}`
      mutations.push(`${names.update}(${single ? '' : `${mutationId}, `}data: ${t}Input!, ${writeStatus}${locale}): ${one}`)
    }
    if (config.isActionEnabled('delete')) {
      names.delete = `delete${t}`
      const args = [single ? '' : mutationId, model.localized ? 'locale: I18NLocaleCode' : ''].filter((a) => a !== '').join(', ')
      mutations.push(`${names.delete}${args === '' ? '' : `(${args})`}: ${deleted}`)
    }
    this.operations.push(names)
  }

  generate (extraQueries: string[], extraMutations: string[]): string {
    this.#blocks.push(COMMON, this.#shape.entity ? ENTITY_COMMON : FLAT_COMMON)
    if (this.#shape.compat) this.#blocks.push(COMPAT_COMMON)
    const queries = [...extraQueries]
    const mutations = [...extraMutations]
    for (const model of this.#enabled) {
      this.#objectType(model)
      this.#filtersInput(model)
      this.#input(model)
      this.#wrappers(model)
      this.#operations(model, queries, mutations)
    }
    this.#blocks.push(`type Query {\n  ${queries.join('\n  ')}\n}`)
    if (mutations.length > 0) this.#blocks.push(`type Mutation {\n  ${mutations.join('\n  ')}\n}`)
    return this.#blocks.join('\n\n')
  }
}

/**
 * Generates the schema's SDL for the enabled content types. `extraQueries`/`extraMutations` are
 * field definitions of operations that are not per type (`me`, `login`, `register`, `i18NLocales`).
 */
export function generateTypes (
  registry: Registry, shape: Shape, config: (uid: string) => ContentTypeConfig, extraQueries: string[], extraMutations: string[]
): GeneratedTypes {
  const generator = new Generator(registry, shape, config)
  const typeDefs = generator.generate(extraQueries, extraMutations)
  return { typeDefs, roles: generator.roles, models: generator.models, operations: generator.operations }
}
