import type { FastifySchema } from 'fastify'

/**
 * A route schema with the OpenAPI keys that @fastify/swagger reads when the application registers
 * it (`hide: true` leaves a route out of the document). @fastify/swagger adds these keys to
 * FastifySchema itself, but only where it is installed: typed here, the package compiles, and its
 * declarations type-check in an application, without it.
 */
export type DocumentedSchema = FastifySchema & {
  tags?: readonly string[]
  summary?: string
  description?: string
  hide?: boolean
  /** OpenAPI security requirements: the schemes are lib/http/openapi-security.ts's. */
  security?: ReadonlyArray<Record<string, readonly string[]>>
  /** The request body's media types (the upload's multipart form). */
  consumes?: readonly string[]
}

export const documented = (schema: DocumentedSchema): FastifySchema => schema
