import {
  Kind, getArgumentValues, getNamedType, getNullableType, getOperationAST, getVariableValues, isInputObjectType, isInterfaceType, isLeafType, isListType,
  isObjectType, typeFromAST, type DocumentNode, type GraphQLInputObjectType, type OperationDefinitionNode, type FieldNode, type GraphQLError, type FragmentDefinitionNode, type GraphQLField, type GraphQLNamedType, type GraphQLSchema,
  type SelectionSetNode
} from 'graphql'
import { LimitError } from '../errors.js'
import { operationSizes } from './operation-size.js'
import { resolveWindow, type PaginationArg } from './pagination.js'
import type { FieldRole } from './type-defs.js'

export interface CostSettings {
  defaultLimit: number
  amountLimit: number
  /** Roles of the generated fields: a wrapper of a document (`data`, `attributes`, `nodes`) is that document. */
  roles: ReadonlyMap<string, ReadonlyMap<string, FieldRole>>
}

type Variables = Record<string, unknown>

/** What the preExecution hook learns of an operation before it runs. */
interface OperationCheck {
  /** The row estimate (below), or null. */
  rows: number | null
  /** graphql-js's errors for variables that do not coerce (or are missing), or null. */
  refused: readonly GraphQLError[] | null
  /**
   * Whether Mercurius may compile it (graphql-jit): a compiled query is of one operation and
   * ignores `operationName`, so a document with several operations, or an `operationName` that
   * names none, runs through graphql-js; so does a large one (`COMPILED_SELECTIONS`), and one
   * with a variable of a recursive input type (`recursiveVariables`).
   */
  compilable: boolean
}

/**
 * The most rows an operation may read, from its text and its variables, before it runs. A list
 * counts its items, each with what its selection reads for it; lists inside lists multiply:
 *
 * - a list with a `pagination` argument (root lists, to-many relations, media, localizations)
 *   reads its page: `pageSize` or `limit` (literal or variable) or `defaultLimit`, at most
 *   `amountLimit` (`limit: -1` reads `amountLimit`);
 * - a collection with a `pagination` argument (`articles_connection`, the entity shape's
 *   `articles` and `authors`) is not a row itself: its `nodes` or `data` read the page;
 * - another list of objects (repeatable components, dynamic zones, lists of extensions) counts
 *   `defaultLimit`: its length is the stored content's, not the client's choice;
 * - `pageInfo` and `meta` count 1 (a count); any other object (a to-one relation, a component,
 *   a single document) counts 1 with what its selection reads;
 * - a wrapper of the same document (`attributes`, a to-one `data`) counts nothing itself;
 *   scalars and introspection fields count nothing.
 *
 * So `articles(pagination: { pageSize: 100 }) { authors { name } }` may read 100 + 100 x 10
 * rows. Aliases and repeated selections each count (even where GraphQL merges them), fragments
 * count where they are spread, and `@skip`/`@include` are ignored: an upper bound. A fragment's
 * rows are computed once, so fragments spreading each other do not make the estimate expensive.
 *
 * The estimate is null when the variables do not fit the operation (`refused` then holds
 * graphql-js's errors) or no operation can be chosen: graphql-js refuses those without executing
 * anything.
 */
function checkOperation (schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined,
  rawVariables: Variables | null | undefined, settings: CostSettings): OperationCheck {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION)
  const only = operations.length === 1 ? operations[0] : undefined
  const compilable = only !== undefined && (operationName == null || operationName === only.name?.value) &&
    operationSizes(document).operation(only).selections <= COMPILED_SELECTIONS && !recursiveVariables(schema, only)
  const operation = getOperationAST(document, operationName)
  const root = operation == null ? null : schema.getRootType(operation.operation)
  if (operation == null || root == null) return { rows: null, refused: null, compilable }
  // As graphql-js's execute coerces them (`maxErrors` included).
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {}, { maxErrors: 50 })
  if (coerced.errors !== undefined) return { rows: null, refused: coerced.errors, compilable }
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
  }
  return { rows: new RowCounter(schema, fragments, coerced.coerced, settings).rows(operation.selectionSet, root, null), refused: null, compilable }
}

/** Input object types that reach themselves through their fields, by schema (the schema is built once). */
const recursion = new WeakMap<GraphQLSchema, Map<GraphQLInputObjectType, boolean>>()

/**
 * Whether a variable of the operation has an input type that reaches a recursive one (`ArticleFiltersInput`
 * through `and`/`or`/`not` and its relations' filters). graphql-jit 0.8 generates the coercion
 * of a variable by walking its type without remembering where it has been: for such a type it
 * recurses until the stack overflows, for tens of seconds with one self-reference and until the
 * heap is exhausted with several (`query($f: ArticleFiltersInput)` sent twice stopped the server).
 * Such an operation runs through graphql-js, whose coercion follows the value, not the type.
 */
function recursiveVariables (schema: GraphQLSchema, operation: OperationDefinitionNode): boolean {
  let known = recursion.get(schema)
  if (known === undefined) {
    known = new Map()
    recursion.set(schema, known)
  }
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type)
    const named = type === undefined ? undefined : getNamedType(type)
    if (isInputObjectType(named) && reachesCycle(named, known)) return true
  }
  return false
}

/** Whether an input type reaching itself is among those `type` reaches (depth-first; a type met again on the current path closes a cycle). */
function reachesCycle (type: GraphQLInputObjectType, known: Map<GraphQLInputObjectType, boolean>): boolean {
  const cached = known.get(type)
  if (cached !== undefined) return cached
  const onPath = new Set<GraphQLInputObjectType>()
  const visit = (current: GraphQLInputObjectType): boolean => {
    const seen = known.get(current)
    if (seen !== undefined) return seen
    if (onPath.has(current)) return true
    onPath.add(current)
    let cyclic = false
    for (const field of Object.values(current.getFields())) {
      const inner = getNamedType(field.type)
      if (isInputObjectType(inner) && visit(inner)) { cyclic = true; break }
    }
    onPath.delete(current)
    known.set(current, cyclic)
    return cyclic
  }
  return visit(type)
}

class RowCounter {
  readonly #fragmentRows = new Map<string, number>()

  constructor (
    readonly schema: GraphQLSchema,
    readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    readonly variables: Variables,
    readonly settings: CostSettings
  ) {}

  /**
   * Rows a selection set reads for one object of its type; `page` is the page of the collection
   * the set belongs to (its `nodes` and `data` read it), null elsewhere.
   */
  rows (selectionSet: SelectionSetNode, type: GraphQLNamedType, page: number | null): number {
    let rows = 0
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        rows += this.#field(selection, type, page)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition === undefined ? type : this.schema.getType(selection.typeCondition.name.value)
        if (condition != null) rows += this.rows(selection.selectionSet, condition, page)
      } else {
        rows += this.#fragment(selection.name.value, page)
      }
    }
    return rows
  }

  #field (node: FieldNode, parent: GraphQLNamedType, page: number | null): number {
    const name = node.name.value
    if (name.startsWith('__') || !(isObjectType(parent) || isInterfaceType(parent))) return 0
    const def = parent.getFields()[name]
    if (def === undefined) return 0
    const type = getNamedType(def.type)
    if (isLeafType(type)) return 0
    const role = this.settings.roles.get(parent.name)?.get(name)?.kind
    if (role === 'meta') return 1
    const list = isListType(getNullableType(def.type))
    const paginated = def.args.some((arg) => arg.name === 'pagination')
    const below = (inner: number | null): number => node.selectionSet === undefined ? 0 : this.rows(node.selectionSet, type, inner)
    if (paginated && !list) return below(this.#page(def, node))
    if (role === 'self' && !list) return below(null)
    const items = paginated ? this.#page(def, node) : list ? (role === 'self' ? page : null) ?? this.settings.defaultLimit : 1
    return items * (1 + below(null))
  }

  /** The page a field's `pagination` argument asks for, as the resolvers read it. */
  #page (def: GraphQLField<unknown, unknown>, node: FieldNode): number {
    const { defaultLimit, amountLimit } = this.settings
    try {
      const { pagination } = getArgumentValues(def, node, this.variables) as { pagination?: PaginationArg | null }
      return Math.min(resolveWindow(pagination, defaultLimit, amountLimit).sqlLimit, amountLimit)
    } catch {
      // Page and offset mixed: the field fails when it runs; count its largest page meanwhile.
      return amountLimit
    }
  }

  #fragment (name: string, page: number | null): number {
    const key = `${name}\u0000${page ?? ''}`
    const known = this.#fragmentRows.get(key)
    if (known !== undefined) return known
    const fragment = this.fragments.get(name)
    const type = fragment === undefined ? undefined : this.schema.getType(fragment.typeCondition.name.value)
    if (fragment === undefined || type == null) return 0
    // A fragment spread inside itself counts nothing the second time: validation refused it anyway.
    this.#fragmentRows.set(key, 0)
    const rows = this.rows(fragment.selectionSet, type, page)
    this.#fragmentRows.set(key, rows)
    return rows
  }
}

/** What Mercurius's context holds of the HTTP request, for the operation's name. */
interface HookContext {
  reply?: { request: { method: string, query: unknown, body: unknown } }
  /** The index of the operation in a batch. */
  operationId?: number
}

/** The `operationName` the request gave for this operation (one of a batch, or the only one). */
function requestedOperation (context: HookContext): string | undefined {
  const request = context.reply?.request
  if (request === undefined) return undefined
  const sent = request.method === 'GET' ? request.query : request.body
  const operation = Array.isArray(sent) ? sent[context.operationId ?? 0] : sent
  const name = (operation as { operationName?: unknown } | null | undefined)?.operationName
  return typeof name === 'string' ? name : undefined
}

/**
 * The most field selections (fragments expanded) of an operation Mercurius may compile:
 * compiling blocks the event loop for a time that grows faster than the document (about 2 ms
 * for 60 selections, 50 to 250 ms for 300 to 1,000), once per document; a larger one runs
 * through graphql-js, whose cost is per request and linear.
 */
export const COMPILED_SELECTIONS = 100

/** Checks kept per document (by operation and variables), and the longest key kept. */
const CHECKS_PER_DOCUMENT = 32
const CHECKED_KEY_CHARS = 2048

/** The bound on a request's rows, and the option it comes from. */
export interface RowBound {
  max: number
  limit: 'graphql.maxRows' | 'limits.maxRows'
}

/** `graphql.maxRows` or `limits.maxRows`, whichever is smaller: both bound a GraphQL request. */
export function rowBound (graphqlMaxRows: number, maxRows: number): RowBound {
  return graphqlMaxRows <= maxRows ? { max: graphqlMaxRows, limit: 'graphql.maxRows' } : { max: maxRows, limit: 'limits.maxRows' }
}

/**
 * Variables graphql-js refuses, thrown before Mercurius picks its engine: its compiled queries
 * coerce variables with other messages, so the refusal is graphql-js's whichever engine would
 * run. The error formatter answers it as Mercurius's own variables check (HTTP 400).
 */
export class VariablesRefused extends Error {
  readonly errors: readonly GraphQLError[]
  constructor (errors: readonly GraphQLError[]) {
    super('Variables refused')
    this.errors = errors
  }
}

/**
 * Mercurius's `preExecution` hook, before any resolver and the document cached or not, with the
 * request's variables:
 *
 * - it bounds the rows of a request (the operations of a batch, `engineServer.allowBatchedQueries`,
 *   share one budget: they are one request);
 * - it refuses variables graphql-js refuses (`VariablesRefused`), with graphql-js's errors;
 * - it keeps an operation that a compiled query would not answer as graphql-js does on
 *   graphql-js, by handing Mercurius the document back (a "modified" document is never run
 *   compiled).
 *
 * What it learns of an operation is kept per parsed document (Mercurius keeps one per query
 * text), by operation name and variables.
 */
export function preExecutionHook (settings: () => CostSettings, bound: RowBound) {
  const spent = new WeakMap<object, number>()
  let memo = new WeakMap<DocumentNode, Map<string, OperationCheck>>()
  let memoFor: CostSettings | null = null
  const check = (schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined, variables: Variables | undefined): OperationCheck => {
    const current = settings()
    // The settings change once, when the schema is built.
    if (memoFor !== current) {
      memo = new WeakMap()
      memoFor = current
    }
    let known = memo.get(document)
    if (known === undefined) {
      known = new Map()
      memo.set(document, known)
    }
    const key = `${operationName ?? ''}\u0000${variables === undefined || variables === null ? '' : JSON.stringify(variables)}`
    let checked = known.get(key)
    if (checked === undefined) {
      checked = checkOperation(schema, document, operationName, variables, current)
      // Large variables are checked again at every request rather than kept.
      if (key.length <= CHECKED_KEY_CHARS) {
        if (known.size >= CHECKS_PER_DOCUMENT) known.clear()
        known.set(key, checked)
      }
    }
    return checked
  }
  return async (schema: GraphQLSchema, document: DocumentNode, context: HookContext, variables?: Variables): Promise<{ document: DocumentNode } | undefined> => {
    const { rows, refused, compilable } = check(schema, document, requestedOperation(context), variables)
    if (refused !== null) throw new VariablesRefused(refused)
    if (rows !== null) {
      const request = context.reply ?? context
      const total = (spent.get(request) ?? 0) + rows
      spent.set(request, total)
      if (total > bound.max) {
        const estimate = Number.isSafeInteger(total) ? `up to ${total} rows` : 'more rows than can be counted'
        const batch = total > rows ? ' with the other operations of its batch' : ''
        throw new LimitError(`The operation may read ${estimate}${batch}, more than the ${bound.max} ${bound.limit} allows: ask for smaller pages or fewer lists`,
          { limit: bound.limit, max: bound.max })
      }
    }
    return compilable ? undefined : { document }
  }
}
