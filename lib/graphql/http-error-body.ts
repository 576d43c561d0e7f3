/**
 * Apollo Server's body for a request refused at the HTTP level (its `BadRequestError`). In a file
 * of its own, without graphql-js: the server's error handlers (lib/server/surfaces.ts) answer in
 * it, and the plugin loads the GraphQL area (graphql-js, Mercurius) only when GraphQL is on.
 */
export function httpErrorBody (message: string): { errors: Array<{ message: string, extensions: { code: 'BAD_REQUEST' } }> } {
  return { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] }
}
