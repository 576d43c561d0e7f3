import { GraphQLError, Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql'

/**
 * The `depthLimit` option as a validation rule, with graphql-depth-limit's counting (the one
 * Strapi uses): root fields are depth 0, each nested selection one more, fragments count where
 * they are spread, introspection fields (`__schema`, `__typename`) do not count. A deeper
 * operation fails validation (HTTP 400) with graphql-depth-limit's message:
 * `'<operation name>' exceeds maximum operation depth of 10`.
 */
export function depthLimitRule (max: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const depth = (selectionSet: SelectionSetNode | undefined, level: number, seen: Set<string>): number => {
      if (selectionSet === undefined) return level - 1
      let deepest = level
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith('__')) continue
          deepest = Math.max(deepest, depth(selection.selectionSet, level + 1, seen))
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, depth(selection.selectionSet, level, seen))
        } else {
          const name = selection.name.value
          const fragment = context.getFragment(name)
          if (fragment == null || seen.has(name)) continue
          deepest = Math.max(deepest, depth(fragment.selectionSet, level, new Set([...seen, name])))
          // Spreading a fragment inside itself is reported by the standard rules.
        }
        if (deepest > max) return deepest
      }
      return deepest
    }
    return {
      OperationDefinition (node) {
        if (depth(node.selectionSet, 0, new Set()) > max) {
          context.reportError(new GraphQLError(`'${node.name?.value ?? ''}' exceeds maximum operation depth of ${max}`, { nodes: [node] }))
        }
      }
    }
  }
}
