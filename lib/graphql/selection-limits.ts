import { GraphQLError, type ASTVisitor, type OperationDefinitionNode, type ValidationContext, type ValidationRule } from 'graphql'
import { LimitError } from '../errors.js'
import { operationSizes } from './operation-size.js'

export interface SelectionLimits {
  /** `graphql.maxAliases`: most aliased fields in one operation. */
  maxAliases: number
  /** `graphql.maxSelections`: most field selections in one operation. */
  maxSelections: number
}

/** How a message names the operation: by its name when it has one. */
const named = (node: OperationDefinitionNode): string => node.name === undefined ? 'The operation' : `Operation '${node.name.value}'`

/**
 * `graphql.maxAliases` and `graphql.maxSelections` as a validation rule (HTTP 400, as the depth
 * limit): each operation of the document is measured with its fragments expanded where they are
 * spread (operation-size.ts), so a fragment spread a thousand times counts a thousand times.
 * Every root field and every alias of one is a statement of its own: the alias bound bounds the
 * statements; the selection bound bounds the work of planning and of rendering each row.
 */
export function selectionLimitsRule (limits: SelectionLimits): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition (node) {
      const size = operationSizes(context.getDocument()).operation(node)
      const refuse = (what: string, limit: string, max: number): void => {
        const message = `${named(node)} has more than ${max} ${what} (fragments counted where they are spread), the most ${limit} allows`
        context.reportError(new GraphQLError(message, { nodes: [node], originalError: new LimitError(message, { limit, max }) }))
      }
      if (size.aliases > limits.maxAliases) refuse('aliases', 'graphql.maxAliases', limits.maxAliases)
      if (size.selections > limits.maxSelections) refuse('field selections', 'graphql.maxSelections', limits.maxSelections)
    }
  })
}
