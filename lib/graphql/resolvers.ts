import { Kind, type FieldNode, type GraphQLFieldResolver, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql'
import { toStrapiFilters } from './filters.js'
import type { ContentAction } from '../auth/access.js'
import type { AccessScope } from '../query/access-scope.js'
import type { DocumentService } from '../documents/service.js'
import type { TreeMemo } from '../documents/tree-memo.js'
import { ForbiddenError, ValidationError } from '../errors.js'
import type { Component, ContentType, Registry } from '../model/registry.js'
import type { LocaleSettings, Status } from '../query/index.js'
import { dynamicZoneName, publicationFilterOf, typeName } from './names.js'
import { pageInfo, resolveWindow } from './pagination.js'
import { SLOTS, argsKey, attachSlots, planContext, planRoot, type PlanContext } from './plan.js'
import { listRead, oneRead, type PlannedRead } from './query-tree.js'
import type { FieldRole, GeneratedTypes, OperationNames } from './type-defs.js'
import { currentGrant } from './wrap.js'
import type { Consistency } from '../documents/types.js'
import { requestedConsistency } from '../http/consistency.js'

type Json = Record<string, unknown>
type Resolver = GraphQLFieldResolver<any, any, any>
export type ResolverMap = Record<string, Record<string, Resolver>>

export interface ResolverDeps {
  registry: Registry
  documents: (uid: string) => DocumentService
  i18n: LocaleSettings
  /** Planned root reads by AST node, then by caller and variables. */
  reads: TreeMemo<PlannedRead>
  types: GeneratedTypes
  entity: boolean
  compat: boolean
  defaultLimit: number
  amountLimit: number
}

/** The access check of a generated operation: its content type, its action, and whether it reads drafts. */
export interface OperationAuth {
  uid: string
  action: ContentAction
}

const STATUS: Record<string, Status> = { DRAFT: 'draft', PUBLISHED: 'published', LIVE: 'published', PREVIEW: 'draft' }

/** `status` wins over the entity shape's `publicationState`; published by default. */
export function statusOf (args: Json): Status {
  const raw = (args.status ?? args.publicationState) as string | undefined | null
  return raw === undefined || raw === null ? 'published' : STATUS[raw]
}

/** The flat shape's `publicationFilter` (an enum value) and `hasPublishedVersion`, for the query layer. */
function cohortOf (args: Json): { publicationFilter?: string, hasPublishedVersion?: boolean } {
  const filter = args.publicationFilter as string | undefined | null
  const has = args.hasPublishedVersion as boolean | undefined | null
  return {
    ...(filter === undefined || filter === null ? {} : { publicationFilter: publicationFilterOf(filter) }),
    ...(has === undefined || has === null ? {} : { hasPublishedVersion: has })
  }
}

function tooMany (amountLimit: number, where: string): ValidationError {
  return new ValidationError(`${where} has more than ${amountLimit} items, the amountLimit of this server: ask for a smaller page`)
}

function capped (list: unknown[], amountLimit: number, info: GraphQLResolveInfo): unknown[] {
  if (list.length > amountLimit) throw tooMany(amountLimit, info.fieldName)
  return list
}

/**
 * The field of a document that reads an association: its value was rendered with the document,
 * under the attribute's name or, when the attribute is read with several argument sets, under
 * the slot the plan gave these arguments. A missing value is one the plan left out: the caller
 * may not read it.
 */
function associationResolver (role: FieldRole & { kind: 'association' }, amountLimit: number): Resolver {
  return (parent: Json, args: Json, _context, info) => {
    const slots = parent[SLOTS as unknown as string] as Map<string, string> | undefined
    const key = slots?.get(argsKey(role.attribute, args)) ?? role.attribute
    const value = parent[key]
    if (value === undefined) throw new ForbiddenError()
    if (role.wrap === 'response') return { data: value }
    if (Array.isArray(value)) capped(value, amountLimit, info)
    if (role.wrap === 'collection') return { data: value, nodes: value }
    return value
  }
}

/** Resolvers of the generated object types (associations, entity wrappers, aliases, dynamic zones). */
export function typeResolvers (deps: ResolverDeps): ResolverMap {
  const map: ResolverMap = {}
  const set = (type: string, field: string, resolver: Resolver): void => { (map[type] ??= {})[field] = resolver }
  for (const [type, fields] of deps.types.roles) {
    for (const [field, role] of fields) {
      if (role.kind === 'association') set(type, field, associationResolver(role, deps.amountLimit))
      else if (role.kind === 'self' && (type.endsWith('Entity') || deps.types.models.has(type))) set(type, field, (doc) => doc)
      else if (role.kind === 'field' && role.field === 'documentId' && field === 'id' && deps.entity) set(type, field, (doc: Json) => doc.documentId)
    }
  }
  for (const model of deps.types.models.values()) {
    for (const association of model.associations.values()) {
      if (association.kind !== 'dynamiczone') continue
      const names = new Map(association.components.map((uid) => [uid, typeName(deps.registry.components.get(uid)!)]))
      ;(map as any)[dynamicZoneName(model, association.name)] = { __resolveType: (value: Json) => names.get(value.__component as string) ?? 'Error' }
    }
  }
  return map
}

/** GraphQL input → document-service data: file and component ids are numbers; timestamps are not written. */
function toData (model: ContentType | Component, registry: Registry, input: Json): Json {
  const data: Json = {}
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || key === 'createdAt' || key === 'updatedAt' || key === 'publishedAt') continue
    const association = model.associations.get(key)
    if (association?.kind === 'media') {
      data[key] = Array.isArray(value) ? value.map(numericId) : numericId(value)
    } else if (association?.kind === 'component' && value !== null) {
      const component = registry.components.get(association.component)!
      data[key] = Array.isArray(value) ? value.map((v) => componentData(component, registry, v as Json)) : componentData(component, registry, value as Json)
    } else if (association?.kind === 'dynamiczone' && Array.isArray(value)) {
      data[key] = value.map((v) => componentData(registry.components.get((v as Json).__component as string)!, registry, v as Json))
    } else {
      data[key] = value
    }
  }
  return data
}

function componentData (component: Component, registry: Registry, value: Json): Json {
  const { id, __component: uid, ...rest } = value
  const data = toData(component, registry, rest)
  if (id !== undefined && id !== null) data.id = numericId(id)
  if (uid !== undefined) data.__component = uid
  return data
}

const numericId = (value: unknown): unknown => typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value

/** The fields selected under a node, through fragments. */
function selectedFields (set: SelectionSetNode | undefined, info: GraphQLResolveInfo, out: Map<string, FieldNode[]> = new Map()): Map<string, FieldNode[]> {
  for (const selection of set?.selections ?? []) {
    if (selection.kind === Kind.FIELD) out.set(selection.name.value, [...out.get(selection.name.value) ?? [], selection])
    else if (selection.kind === Kind.INLINE_FRAGMENT) selectedFields(selection.selectionSet, info, out)
    else selectedFields(info.fragments[selection.name.value]?.selectionSet, info, out)
  }
  return out
}

/**
 * What an `<plural>_aggregate` field computes, from its selection as REST's parameters:
 * `{ count sum { views } max { publishDate } }` is `count=true&sum=views&max=publishDate`.
 */
function aggregateSelection (info: GraphQLResolveInfo): Json {
  const top = new Map<string, FieldNode[]>()
  for (const node of info.fieldNodes) selectedFields(node.selectionSet, info, top)
  const raw: Json = { count: top.has('count') ? 'true' : 'false' }
  for (const fn of ['sum', 'avg', 'min', 'max']) {
    const inner = new Map<string, FieldNode[]>()
    for (const node of top.get(fn) ?? []) selectedFields(node.selectionSet, info, inner)
    raw[fn] = [...inner.keys()].filter((name) => name !== '__typename')
  }
  return raw
}

/** Resolvers of the operations Shadow CRUD generated for one content type. */
export function operationResolvers (deps: ResolverDeps, names: OperationNames, queries: Record<string, Resolver>, mutations: Record<string, Resolver>): Map<string, OperationAuth> {
  const { model } = names
  const service = deps.documents(model.uid)
  // What the root trees are parsed with: the service's cursor codec checks `after`/`before`.
  const settings = { registry: deps.registry, i18n: deps.i18n, cursors: service.cursors }
  const auth = new Map<string, OperationAuth>()
  const plan = (info: GraphQLResolveInfo, access: AccessScope | null): PlanContext => planContext(info, {
    types: deps.types, registry: deps.registry, access, defaultLimit: deps.defaultLimit, amountLimit: deps.amountLimit, entity: deps.entity
  })
  const scope = (info: GraphQLResolveInfo): AccessScope | null => currentGrant(info)?.scope ?? null
  /**
   * The planned read of a root field, from the memo or planned now. Mercurius keeps one parsed
   * document per query text, so a field's AST node identifies the query; with the variables and
   * the caller's access key it determines the plan and the tree, as a REST query string does.
   */
  const planned = (info: GraphQLResolveInfo, extra: string, build: (ctx: PlanContext) => PlannedRead): PlannedRead =>
    deps.reads.get(info.fieldNodes[0], `${currentGrant(info)?.scope?.key ?? '-'}\u0000${JSON.stringify(info.variableValues)}\u0000${extra}`,
      () => build(plan(info, scope(info))))
  /**
   * Where a query's reads run: a replica unless the request asks for the primary (a mutation's
   * reads always run there: it wrote, or is about to).
   */
  const consistency = (context: any): Consistency => context?.reply?.request === undefined ? 'eventual' : requestedConsistency(context.reply.request)
  const one = async (documentId: string | null, args: Json, status: Status, info: GraphQLResolveInfo, consistency: Consistency): Promise<Json | null> => {
    const read = planned(info, status, (ctx) => oneRead(model, planRoot(ctx, model, info), { status, ...cohortOf(args), locale: args.locale as string | undefined }, ctx, deps))
    const json = await service.findOneJson(documentId, read.tree, { consistency })
    if (json === null) return null
    const document = JSON.parse(json) as Json
    attachSlots(read.level, document)
    return document
  }
  const answer = (document: Json | null): unknown => deps.entity ? { data: document } : document

  if (names.findOne !== null) {
    auth.set(`Query.${names.findOne}`, { uid: model.uid, action: 'findOne' })
    queries[names.findOne] = async (_root, args: Json, context, info) => {
      const documentId = (deps.entity ? args.id : args.documentId) as string | null | undefined
      if (documentId === undefined || documentId === null) return answer(null)
      return answer(await one(documentId, args, statusOf(args), info, consistency(context)))
    }
  }
  if (names.find !== null && model.kind === 'singleType') {
    auth.set(`Query.${names.find}`, { uid: model.uid, action: 'find' })
    queries[names.find] = async (_root, args: Json, context, info) => answer(await one(null, args, statusOf(args), info, consistency(context)))
  } else if (names.find !== null) {
    const list = async (args: Json, info: GraphQLResolveInfo, context: unknown): Promise<{ documents: Json[], page: () => unknown }> => {
      const window = resolveWindow(args.pagination as any, deps.defaultLimit, deps.amountLimit)
      const read = planned(info, '', (ctx) => listRead(model, planRoot(ctx, model, info), {
        filters: args.filters, sort: args.sort as string[] | undefined, status: statusOf(args), ...cohortOf(args), locale: args.locale as string | undefined
      }, window, ctx, settings))
      const page = await service.findPageJson(read.tree, { consistency: consistency(context) })
      const documents = JSON.parse(page.json) as Json[]
      attachSlots(read.level, documents)
      capped(documents, deps.amountLimit, info)
      return { documents, page: () => pageInfo(window, page.total ?? 0, page.links) }
    }
    const collection = async (_root: unknown, args: Json, context: unknown, info: GraphQLResolveInfo): Promise<unknown> => {
      const { documents, page } = await list(args, info, context)
      const pagination = page()
      return { data: documents, nodes: documents, pageInfo: pagination, meta: { pagination } }
    }
    auth.set(`Query.${names.find}`, { uid: model.uid, action: 'find' })
    queries[names.find] = deps.entity ? collection : async (_root, args: Json, context, info) => (await list(args, info, context)).documents
    if (names.connection !== null) {
      auth.set(`Query.${names.connection}`, { uid: model.uid, action: 'find' })
      queries[names.connection] = collection
    }
  }

  if (names.aggregate !== null) {
    auth.set(`Query.${names.aggregate}`, { uid: model.uid, action: 'find' })
    queries[names.aggregate] = async (_root, args: Json, context, info) => {
      const raw = {
        ...aggregateSelection(info),
        filters: toStrapiFilters(model, deps.registry, args.filters, deps.entity),
        groupBy: args.groupBy ?? [],
        status: statusOf(args),
        locale: args.locale
      }
      return JSON.parse(await service.aggregateJson(raw, { access: scope(info) ?? undefined, consistency: consistency(context) }))
    }
  }

  /** A write answers with the document as written, read through the plan of the mutation's selection. */
  const written = async (documentId: string | null, args: Json, info: GraphQLResolveInfo): Promise<unknown> => {
    if (documentId === null) return answer(null)
    const status = model.draftAndPublish ? statusOf(args) : 'published'
    return answer(await one(documentId, args, status, info, 'strong'))
  }
  if (names.create !== null) {
    auth.set(`Mutation.${names.create}`, { uid: model.uid, action: 'create' })
    mutations[names.create] = async (_root, args: Json, _context, info) => {
      const created = await service.create({
        data: toData(model, deps.registry, args.data as Json), status: statusOf(args), locale: args.locale as string | undefined, fields: ['documentId'], access: scope(info) ?? undefined
      })
      return await written(created.documentId, args, info)
    }
  }
  if (names.update !== null) {
    auth.set(`Mutation.${names.update}`, { uid: model.uid, action: 'update' })
    mutations[names.update] = async (_root, args: Json, _context, info) => {
      const params = {
        data: toData(model, deps.registry, args.data as Json), status: statusOf(args), locale: args.locale as string | undefined, fields: ['documentId'], access: scope(info) ?? undefined
      }
      if (model.kind === 'singleType') return await written((await service.upsertSingle(params)).documentId, args, info)
      const documentId = (deps.entity ? args.id : args.documentId) as string
      const updated = await service.update({ ...params, documentId })
      return await written(updated === null ? null : updated.documentId, args, info)
    }
  }
  if (names.delete !== null) {
    auth.set(`Mutation.${names.delete}`, { uid: model.uid, action: 'delete' })
    mutations[names.delete] = async (_root, args: Json, _context, info) => {
      const requested = model.kind === 'singleType' ? null : (deps.entity ? args.id : args.documentId) as string
      // The entity shape answers with the document as it was; read it before it goes.
      const before = deps.entity ? await one(requested, args, 'published', info, 'strong') ?? (model.draftAndPublish ? await one(requested, args, 'draft', info, 'strong') : null) : null
      const result = await service.delete({ documentId: requested, locale: args.locale as string | undefined, access: scope(info) ?? undefined })
      if (deps.entity) return answer(result.entries > 0 ? before : null)
      const documentId = requested ?? result.documentId
      return documentId === null ? null : { documentId }
    }
  }
  return auth
}
