import { GraphQLError, type ASTVisitor, type ValidationContext, type ValidationRule } from 'graphql'
import { operationSizes } from './operation-size.js'

/**
 * The `depthLimit` option as a validation rule, with graphql-depth-limit's counting (the one
 * Strapi uses): root fields are depth 0, each nested selection one more, fragments count where
 * they are spread, introspection fields (`__schema`, `__typename`) do not count. A deeper
 * operation fails validation (HTTP 400) with graphql-depth-limit's message:
 * `'<operation name>' exceeds maximum operation depth of 10`.
 */
export function depthLimitRule (max: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition (node) {
      if (operationSizes(context.getDocument()).operation(node).depth > max) {
        context.reportError(new GraphQLError(`'${node.name?.value ?? ''}' exceeds maximum operation depth of ${max}`, { nodes: [node] }))
      }
    }
  })
}
