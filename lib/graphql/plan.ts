import {
  GraphQLIncludeDirective, GraphQLSkipDirective, Kind, getArgumentValues, getDirectiveValues, getNamedType, isObjectType,
  type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type GraphQLSchema, type SelectionSetNode
} from 'graphql'
import type { AccessScope } from '../query/access-scope.js'
import type { Association } from '../model/associations.js'
import { FILE_UID } from '../model/associations.js'
import type { Component, ContentType, Field, Registry } from '../model/registry.js'
import { parseFields } from '../query/fields.js'
import { parseFilters } from '../query/filters.js'
import { LOCALIZATIONS, type PopulateNode, type PopulateSelection, type PopulateTree } from '../query/populate.js'
import { parseSort } from '../query/sort.js'
import { Visibility, andFilters } from '../query/visibility.js'
import { toStrapiFilters } from './filters.js'
import { resolveWindow } from './pagination.js'
import { PaginationError } from '../errors.js'
import type { FieldRole, GeneratedTypes } from './type-defs.js'

/**
 * The query planner: a root field's selection set becomes ONE read, the same fields and
 * populate tree REST builds from `fields`/`populate`, so the document compiler renders the whole
 * answer (relations inside components inside relations...) in one SQL statement.
 *
 * Selections that reach the same attribute with the same arguments share one populated value
 * (`authors { name }` and `authors_connection { nodes { email } }` read `authors` once); the
 * same attribute with other arguments (`a: authors(sort: "name")`, `b: authors(limit: 1)`) gets
 * a slot of its own in the same statement, and resolvers find their slot by their arguments.
 */

type Model = ContentType | Component
type Json = Record<string, unknown>

/** Where a document's resolvers find the slot of an attribute read with other arguments. */
export const SLOTS = Symbol('fastify-content-api.graphql.slots')

export interface Slot {
  key: string
  attribute: string
  args: Json
  /** The caller may not read the target (or, at the root, this attribute): the field answers FORBIDDEN. */
  forbidden: boolean
  child: Level | null
  /** Dynamic zones: one level per component. */
  components: Map<string, Level> | null
}

export interface Level {
  model: Model
  /** The attributes the caller may see here (a field-level permission), or null for all. */
  allowed: ReadonlySet<string> | null
  /** Fields to render; null renders the default fields (a custom field may need any of them). */
  fields: Set<string> | null
  /** The list's total is needed (`pageInfo`, `meta`). */
  count: boolean
  /** `total` or `pageCount` is selected in `pageInfo` or `meta`: what a cursor page counts for. */
  total: boolean
  slots: Map<string, Slot>
  /** Slot key by `attribute + arguments`, for resolvers. */
  byArgs: Map<string, string>
  /** Some slot here, or below, is not keyed by its attribute name. */
  aliased: boolean
}

export interface PlanContext {
  schema: GraphQLSchema
  fragments: Record<string, FragmentDefinitionNode>
  variables: Record<string, unknown>
  types: GeneratedTypes
  registry: Registry
  access: AccessScope | null
  /** What the caller may read through relations (from `access`); null: everything. */
  visibility: Visibility | null
  defaultLimit: number
  amountLimit: number
  entity: boolean
}

/** The key a resolver looks its value up by: the attribute and its (coerced) arguments. */
export function argsKey (attribute: string, args: Json): string {
  return `${attribute}\u0000${JSON.stringify(args)}`
}

function newLevel (model: Model, allowed: ReadonlySet<string> | null): Level {
  return { model, allowed, fields: new Set(), count: false, total: false, slots: new Map(), byArgs: new Map(), aliased: false }
}

function skipped (node: { directives?: readonly any[] }, variables: Json): boolean {
  if (node.directives === undefined || node.directives.length === 0) return false
  const skip = getDirectiveValues(GraphQLSkipDirective, node as FieldNode, variables)
  if (skip?.if === true) return true
  const include = getDirectiveValues(GraphQLIncludeDirective, node as FieldNode, variables)
  return include?.if === false
}

class Planner {
  readonly #ctx: PlanContext
  constructor (ctx: PlanContext) {
    this.#ctx = ctx
  }

  /** A level of related rows: a content type shows the attributes its `find` grant allows; a component, all. */
  #level (model: Model): Level {
    const { visibility } = this.#ctx
    return newLevel(model, model.modelType === 'contentType' && visibility !== null ? visibility.fields(model.uid) : null)
  }

  #applies (typeCondition: string | undefined, typeName: string): boolean {
    if (typeCondition === undefined || typeCondition === typeName) return true
    const type = this.#ctx.schema.getType(typeCondition)
    return type !== undefined && !isObjectType(type)
  }

  collect (level: Level, selectionSet: SelectionSetNode | undefined, typeName: string): void {
    if (selectionSet === undefined) return
    for (const selection of selectionSet.selections) {
      if (skipped(selection, this.#ctx.variables)) continue
      if (selection.kind === Kind.FIELD) this.#field(level, selection, typeName)
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (this.#applies(selection.typeCondition?.name.value, typeName)) this.collect(level, selection.selectionSet, typeName)
      } else {
        const fragment = this.#ctx.fragments[selection.name.value]
        if (fragment !== undefined && this.#applies(fragment.typeCondition.name.value, typeName)) this.collect(level, fragment.selectionSet, typeName)
      }
    }
  }

  #fieldDef (typeName: string, name: string) {
    const type = this.#ctx.schema.getType(typeName)
    return isObjectType(type) ? type.getFields()[name] : undefined
  }

  #field (level: Level, node: FieldNode, typeName: string): void {
    const name = node.name.value
    if (name.startsWith('__')) return
    const role: FieldRole | undefined = this.#ctx.types.roles.get(typeName)?.get(name)
    const def = this.#fieldDef(typeName, name)
    if (role === undefined || def === undefined) {
      // A field added by an extension: its resolver may read any attribute of the document.
      level.fields = null
      return
    }
    switch (role.kind) {
      case 'field':
        level.fields?.add(role.field)
        return
      case 'self':
        this.collect(level, node.selectionSet, getNamedType(def.type).name)
        return
      case 'meta':
        level.count = true
        level.total ||= this.#selectsTotal(node.selectionSet)
        return
      case 'association': {
        const args = getArgumentValues(def, node, this.#ctx.variables)
        const slot = this.#slot(level, role.attribute, args)
        const returned = getNamedType(def.type).name
        if (slot.components !== null) this.#dynamicZone(slot.components, node.selectionSet)
        else if (slot.child !== null) this.collect(slot.child, node.selectionSet, returned)
      }
    }
  }

  /** Whether `total` or `pageCount` is selected anywhere under `pageInfo` or `meta { pagination }`. */
  #selectsTotal (selectionSet: SelectionSetNode | undefined): boolean {
    if (selectionSet === undefined) return false
    return selectionSet.selections.some((selection) => {
      if (skipped(selection, this.#ctx.variables)) return false
      if (selection.kind === Kind.FIELD) {
        return selection.name.value === 'total' || selection.name.value === 'pageCount' || this.#selectsTotal(selection.selectionSet)
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) return this.#selectsTotal(selection.selectionSet)
      return this.#selectsTotal(this.#ctx.fragments[selection.name.value]?.selectionSet)
    })
  }

  /** Members of a dynamic zone are selected with fragments on their component types. */
  #dynamicZone (components: Map<string, Level>, selectionSet: SelectionSetNode | undefined): void {
    if (selectionSet === undefined) return
    for (const selection of selectionSet.selections) {
      if (skipped(selection, this.#ctx.variables) || selection.kind === Kind.FIELD) continue
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : this.#ctx.fragments[selection.name.value]
      if (fragment === undefined) continue
      const condition = fragment.typeCondition?.name.value
      if (condition === undefined) {
        this.#dynamicZone(components, fragment.selectionSet)
        continue
      }
      const model = this.#ctx.types.models.get(condition)
      const level = model === undefined ? undefined : components.get(model.uid)
      if (level !== undefined) this.collect(level, fragment.selectionSet, condition)
    }
  }

  #target (model: Model, attribute: string): { association: Association | null, target: Model | null, components: readonly string[] | null } {
    if (attribute === LOCALIZATIONS) return { association: null, target: model, components: null }
    const association = model.associations.get(attribute)!
    switch (association.kind) {
      case 'component': return { association, target: this.#ctx.registry.components.get(association.component)!, components: null }
      case 'dynamiczone': return { association, target: null, components: association.components }
      case 'media': return { association, target: this.#ctx.registry.get(FILE_UID)!, components: null }
      default: return { association, target: this.#ctx.registry.get(association.target)!, components: null }
    }
  }

  #slot (level: Level, attribute: string, args: Json): Slot {
    const key = argsKey(attribute, args)
    const existing = level.byArgs.get(key)
    if (existing !== undefined) return level.slots.get(existing)!
    let slotKey = attribute
    for (let n = 2; level.slots.has(slotKey); n++) slotKey = `${attribute}__${n}`
    if (slotKey !== attribute) level.aliased = true
    const { association, target, components } = this.#target(level.model, attribute)
    const { visibility } = this.#ctx
    const readable = association?.kind === 'component' || association?.kind === 'dynamiczone' || visibility === null || visibility.canRead(target!.uid)
    const permitted = level.allowed === null || !Object.hasOwn(level.model.attributes, attribute) || level.allowed.has(attribute)
    const slot: Slot = {
      key: slotKey,
      attribute,
      args,
      forbidden: !readable || !permitted,
      child: target === null ? null : this.#level(target),
      components: components === null ? null : new Map(components.map((uid) => [uid, this.#level(this.#ctx.registry.components.get(uid)!)]))
    }
    level.slots.set(slotKey, slot)
    level.byArgs.set(key, slotKey)
    return slot
  }
}

/** Plans the read of a root field (or a mutation's answer) from its selection set. */
export function planRoot (ctx: PlanContext, model: ContentType, info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'returnType'>): Level {
  const level = newLevel(model, ctx.access?.fields ?? null)
  const planner = new Planner(ctx)
  const typeName = getNamedType(info.returnType).name
  for (const node of info.fieldNodes) planner.collect(level, node.selectionSet, typeName)
  return level
}

/** Planning context of a resolver call. */
export function planContext (info: GraphQLResolveInfo, rest: Omit<PlanContext, 'schema' | 'fragments' | 'variables' | 'visibility'>): PlanContext {
  const visibility = rest.access === null ? null : new Visibility(rest.registry, rest.access.read)
  return { schema: info.schema, fragments: info.fragments, variables: info.variableValues, visibility, ...rest }
}

/**
 * The fields of a level: those the selection reads (null keeps the default fields). Unlike REST's
 * `fields`, without `id` and `documentId` unless selected: no resolver reads a column it was not
 * asked for, and each document's JSON is parsed at every request (10 articles with their
 * category: 1.6 KB with them, 0.6 KB without).
 */
export function levelFields (level: Level): Field[] | null {
  if (level.fields === null) return null
  const fields: Field[] = []
  for (const name of level.fields) {
    const field = level.model.fields.get(name)
    if (field !== undefined && !field.hidden) fields.push(field)
  }
  return fields
}

/**
 * The field names of a root level, checked by the query layer as REST's `fields` (which adds `id`
 * and `documentId` itself); the read renders `levelFields`. Undefined: the default fields.
 */
export function rootFieldNames (level: Level): string[] | undefined {
  return level.fields === null ? undefined : [...level.fields].filter((n) => level.model.fields.has(n))
}

/** The populate tree of a level: every slot that may be read, keyed by slot. */
export function populateTree (level: Level, ctx: PlanContext): PopulateTree {
  const tree: PopulateTree = new Map()
  for (const slot of level.slots.values()) {
    if (slot.forbidden) continue
    const node = populateNode(level.model, slot, ctx)
    if (node !== null) tree.set(slot.key, node)
  }
  return tree
}

/**
 * The fields of a level the caller may see: selecting an attribute outside a field-level
 * permission is REST's 400 `Invalid key`; an extension's field (null) gets the visible defaults.
 */
function visibleFields (level: Level): Field[] | null {
  if (level.allowed === null) return levelFields(level)
  const checked = parseFields(level.model, level.fields === null ? undefined : [...level.fields], level.allowed)
  return level.fields === null ? checked : levelFields(level)
}

/** What to render of a level of related rows: only the rows and attributes the caller may see. */
function selection (level: Level, args: Json, ctx: PlanContext, list: boolean): PopulateSelection {
  const target = level.model
  const { visibility } = ctx
  const filters = toStrapiFilters(target, ctx.registry, args.filters, ctx.entity)
  const window = list ? resolveWindow(args.pagination as any, ctx.defaultLimit, ctx.amountLimit) : null
  if (window?.mode === 'cursor') throw new PaginationError('Cursor pagination (after, before) applies to root lists only')
  const requested = parseFilters(target, filters, ctx.registry, visibility, level.allowed)
  return {
    fields: visibleFields(level),
    filters: target.modelType === 'contentType' && visibility !== null ? andFilters(requested, visibility.rows(target)) : requested,
    sort: parseSort(target, args.sort ?? [], ctx.registry, visibility, level.allowed),
    populate: populateTree(level, ctx),
    start: window === null || window.start === 0 ? null : window.start,
    limit: window === null ? null : window.sqlLimit
  }
}

function populateNode (model: Model, slot: Slot, ctx: PlanContext): PopulateNode | null {
  if (slot.attribute === LOCALIZATIONS) {
    return { kind: 'localizations', target: model as ContentType, ...selection(slot.child!, slot.args, ctx, true) }
  }
  const association = model.associations.get(slot.attribute)!
  switch (association.kind) {
    case 'dynamiczone': {
      const components = new Map<string, { target: Component } & PopulateSelection>()
      for (const [uid, level] of slot.components!) {
        components.set(uid, { target: level.model as Component, ...selection(level, {}, ctx, false) })
      }
      return { kind: 'dynamiczone', association, components }
    }
    case 'component':
      return { kind: 'component', association, target: slot.child!.model as Component, ...selection(slot.child!, {}, ctx, false) }
    case 'media':
      return { kind: 'media', association, target: slot.child!.model as ContentType, count: false, ...selection(slot.child!, slot.args, ctx, association.multiple) }
    default:
      return { kind: 'relation', association, target: slot.child!.model as ContentType, count: false, ...selection(slot.child!, slot.args, ctx, association.toMany) }
  }
}

/** Whether rendered documents need their slot maps attached (some level is aliased). */
function needsSlots (level: Level): boolean {
  if (level.aliased) return true
  for (const slot of level.slots.values()) {
    if (slot.child !== null && needsSlots(slot.child)) return true
    if (slot.components !== null && [...slot.components.values()].some(needsSlots)) return true
  }
  return false
}

/** Attaches, where a level has aliased slots, the map resolvers use to find them. */
export function attachSlots (level: Level, value: unknown): void {
  if (!needsSlots(level) || value === null || value === undefined) return
  if (Array.isArray(value)) {
    for (const item of value) attachSlots(level, item)
    return
  }
  const doc = value as Json
  if (level.aliased) Object.defineProperty(doc, SLOTS, { value: level.byArgs })
  for (const slot of level.slots.values()) {
    if (slot.child !== null) attachSlots(slot.child, doc[slot.key])
    if (slot.components !== null) {
      for (const item of (doc[slot.key] as Json[] | undefined) ?? []) {
        const member = slot.components.get(item.__component as string)
        if (member !== undefined) attachSlots(member, item)
      }
    }
  }
}
