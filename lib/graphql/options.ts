/** GraphQL options (to be completed by the GraphQL module): see docs/graphql.md. */
export interface GraphqlOptions {
  endpoint?: string
}
