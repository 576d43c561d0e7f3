import {
  GraphQLError, Kind, getNamedType, isInterfaceType, isObjectType, type ASTNode, type FragmentDefinitionNode, type GraphQLNamedType, type OperationDefinitionNode,
  type GraphQLSchema, type SelectionNode, type SelectionSetNode, type ValidationContext, type ValidationRule
} from 'graphql'

/** Whether a field only wraps its parent's document (the entity shape's `data` and `attributes`): it adds no depth. */
export type WrapperTest = (parentType: string, field: string) => boolean

/**
 * Most depth errors one document reports. graphql-depth-limit reports one per selection past
 * the limit, per path; a document whose fragments spread each other could name millions.
 */
const REPORTED = 50

/**
 * The `depthLimit` option as a validation rule, with graphql-depth-limit's counting and answer
 * (the rule Strapi uses): root fields are at depth 0, each field's selections one deeper, fragments
 * count where they are spread, the selections of an introspection field (`__schema`, `__type`)
 * are not walked. Every selection found deeper than the limit (a field, `__typename` included, a
 * fragment spread, an inline fragment) is an error located at that selection, not walked further:
 * `'<operation name>' exceeds maximum operation depth of 10` (HTTP 400). As in
 * graphql-depth-limit, the walk runs when validation starts, so these errors come before those
 * of graphql-js's own rules.
 *
 * In the entity shape, `isWrapper` names the fields that only wrap a document (`data`,
 * `attributes`): they add no depth, so `articles { data { attributes { category { data {
 * attributes { name } } } } } }` is as deep as the flat `articles { category { name } }` (2).
 */
export function depthLimitRule (max: number, isWrapper: () => WrapperTest | null): ValidationRule {
  return (context: ValidationContext) => {
    const schema = context.getSchema()
    const fragments = new Map<string, FragmentDefinitionNode>()
    // graphql-depth-limit keys operations by name: of two with one name, the last is walked.
    const operations = new Map<string, OperationDefinitionNode>()
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
      else if (definition.kind === Kind.OPERATION_DEFINITION) operations.set(definition.name?.value ?? '', definition)
    }
    const walk = new DepthWalk(schema, fragments, max, isWrapper())
    let reported = 0
    for (const [name, operation] of operations) {
      for (const node of walk.selectionSet(operation.selectionSet, schema.getRootType(operation.operation) ?? undefined, 0)) {
        // graphql-js aborts validation past 100 errors by throwing out of the rule's creation.
        if (reported === REPORTED) return {}
        reported++
        context.reportError(new GraphQLError(`'${name}' exceeds maximum operation depth of ${max}`, { nodes: [node] }))
      }
    }
    return {}
  }
}

/**
 * Finds the selections deeper than the limit. What a fragment holds past the limit depends only
 * on the depth it is spread at (its type is its own), so it is walked once per depth: a document
 * whose fragments spread each other twice over is walked in time linear in its text. A fragment
 * spread inside itself yields nothing the second time (graphql-js's NoFragmentCycles reports it).
 */
class DepthWalk {
  readonly #found = new Map<string, readonly ASTNode[]>()

  constructor (
    readonly schema: GraphQLSchema,
    readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    readonly max: number,
    readonly isWrapper: WrapperTest | null
  ) {}

  /** The selections of a set (of an object of `type`) found past the limit; `depth` is the depth of the set's fields. */
  selectionSet (set: SelectionSetNode, type: GraphQLNamedType | undefined, depth: number): readonly ASTNode[] {
    const found: ASTNode[] = []
    for (const selection of set.selections) {
      for (const node of this.#selection(selection, type, depth)) {
        if (found.length === REPORTED) return found
        found.push(node)
      }
    }
    return found
  }

  #selection (node: SelectionNode, type: GraphQLNamedType | undefined, depth: number): readonly ASTNode[] {
    if (node.kind === Kind.FIELD) {
      const name = node.name.value
      const fieldType = this.#fieldType(type, name)
      if (node.selectionSet !== undefined && type !== undefined && this.isWrapper?.(type.name, name) === true) {
        return this.selectionSet(node.selectionSet, fieldType, depth)
      }
      if (depth > this.max) return [node]
      if (name.startsWith('__') || node.selectionSet === undefined) return []
      return this.selectionSet(node.selectionSet, fieldType, depth + 1)
    }
    if (depth > this.max) return [node]
    if (node.kind === Kind.INLINE_FRAGMENT) {
      const condition = node.typeCondition === undefined ? type : this.schema.getType(node.typeCondition.name.value) ?? undefined
      return this.selectionSet(node.selectionSet, condition, depth)
    }
    return this.#fragment(node.name.value, depth)
  }

  #fragment (name: string, depth: number): readonly ASTNode[] {
    const key = `${name}\u0000${depth}`
    const known = this.#found.get(key)
    if (known !== undefined) return known
    const fragment = this.fragments.get(name)
    // An unknown fragment is graphql-js's KnownFragmentNames error.
    if (fragment === undefined) return []
    this.#found.set(key, [])
    const found = this.selectionSet(fragment.selectionSet, this.schema.getType(fragment.typeCondition.name.value) ?? undefined, depth)
    this.#found.set(key, found)
    return found
  }

  #fieldType (parent: GraphQLNamedType | undefined, name: string): GraphQLNamedType | undefined {
    if (!isObjectType(parent) && !isInterfaceType(parent)) return undefined
    const field = parent.getFields()[name]
    return field === undefined ? undefined : getNamedType(field.type)
  }
}
