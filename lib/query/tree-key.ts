import type { FilterNode } from './filters.js'
import type { Pagination } from './pagination.js'
import type { PopulateNode, PopulateSelection, PopulateTree } from './populate.js'
import type { SortTerm } from './sort.js'
import type { QueryTree } from './index.js'

/**
 * The canonical key of a query tree: two trees get the same key only when they are the same
 * query, so the document service caches the statement compiled for a tree under it, whichever
 * surface built the tree (a REST query string, GraphQL arguments, application code).
 *
 * The key is the JSON text of a nested array: each node a tagged array of fixed length, so that
 * the text parses back to one tree only. Models are named by uid and fields and associations by
 * name: a name is unique in its model, and the model of every position is fixed by the root (the
 * caller keys the root's uid) and the targets named on the way. Populate keys are kept, with
 * their order: GraphQL reads one attribute under several keys (`authors`, `authors__2`) with
 * other arguments, and the keys name the JSON the statement renders.
 *
 * A cursor page's key holds which of its cursor's values are NULL, not the values: the reader
 * binds them to the statement compiled for the key (lib/documents/reader.ts).
 *
 * A tree is immutable once keyed: the key is memoized per tree object, so a tree reused from an
 * edge's memo costs one WeakMap lookup.
 */
export function treeKey (tree: QueryTree): string {
  let key = keys.get(tree)
  if (key === undefined) {
    key = freshTreeKey(tree)
    keys.set(tree, key)
  }
  return key
}

/**
 * `treeKey` of a tree built for one call (a written document's read, lib/documents/reader.ts),
 * not memoized: the tree is never seen again, and a memo entry per call would only grow the
 * WeakMap the garbage collector walks.
 */
export function freshTreeKey (tree: QueryTree): string {
  return JSON.stringify([
    fields(tree.fields), filter(tree.filters), sort(tree.sort), populate(tree.populate),
    pagination(tree.pagination), tree.status, tree.publicationFilter, tree.locale, tree.fallbacks
  ])
}

const keys = new WeakMap<QueryTree, string>()

type Key = string | number | boolean | null | Key[]

const fields = (list: ReadonlyArray<{ name: string }> | null): Key => list === null ? null : list.map((f) => f.name)

function filter (node: FilterNode | null): Key {
  if (node === null) return null
  switch (node.kind) {
    case 'and':
    case 'or':
      return [node.kind, node.children.map(filter)]
    case 'not':
      return ['not', filter(node.child)]
    case 'compare':
      return ['compare', node.field.name, node.operator, value(node.value)]
    case 'related':
      return ['related', node.owner, node.association.name, node.target.uid, filter(node.visible), filter(node.child), node.matchesNone]
    case 'count':
      return ['count', node.owner, node.association.name, node.target.uid, filter(node.visible), filter(node.child)]
  }
}

function sort (terms: readonly SortTerm[]): Key {
  return terms.map((term) => [
    term.path.map((hop) => [hop.owner, hop.association.name, hop.target.uid, filter(hop.visible)]), term.field.name, term.direction, term.count === true
  ])
}

function populate (tree: PopulateTree): Key {
  return [...tree].map(([key, node]) => [key, populateNode(node)])
}

function populateNode (node: PopulateNode): Key {
  switch (node.kind) {
    case 'relation':
    case 'media':
      return [node.kind, node.association.name, node.target.uid, node.count, selection(node)]
    case 'component':
      return ['component', node.association.name, node.target.uid, selection(node)]
    case 'dynamiczone':
      return ['dynamiczone', node.association.name, [...node.components].map(([uid, member]) => [uid, member.target.uid, selection(member)])]
    case 'localizations':
      return ['localizations', node.target.uid, selection(node)]
  }
}

function selection (s: PopulateSelection): Key {
  return [fields(s.fields), filter(s.filters), sort(s.sort), populate(s.populate), s.start, s.limit]
}

function pagination (p: Pagination): Key {
  const window: Key = [p.mode, p.page, p.pageSize, p.start, p.limit, p.withCount]
  // A cursor's values are bound to the statement at each read (lib/documents/reader.ts): only
  // which of them are NULL changes its SQL, so only that is keyed.
  return p.mode === 'cursor' ? [...window, p.direction, p.cursor === null ? null : p.cursor.values.map((v) => v === null)] : window
}

/**
 * A filter value, cast already (lib/query/cast.ts): JSON's strings, finite numbers, booleans and
 * null stand for themselves; anything else is a tagged array, so no two values share a key
 * (`NaN` is not `null`, `-0` not `0`, an array not an object of the same entries). A value JSON
 * cannot tell from another (a Date, a Buffer, a class instance: only application code passes
 * them, in `json` filters) is keyed by its identity.
 */
function value (v: unknown): Key {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? v : ['number', String(Object.is(v, -0) ? '-0' : v)]
    case 'bigint':
      return ['bigint', String(v)]
    case 'undefined':
      return ['undefined']
    case 'object':
      if (v === null) return null
      if (Array.isArray(v)) return ['array', v.map(value)]
      if (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) {
        return ['object', Object.entries(v).map(([k, item]) => [k, value(item)])]
      }
      return ['identity', identity(v)]
    default:
      // A function, or a symbol (a new wrapper each time: never a key shared, never a hit).
      return ['identity', identity(Object(v) as object)]
  }
}

const identities = new WeakMap<object, number>()
let nextIdentity = 0

function identity (v: object): number {
  let id = identities.get(v)
  if (id === undefined) {
    id = nextIdentity++
    identities.set(v, id)
  }
  return id
}
