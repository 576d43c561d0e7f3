import type { FastifySchema } from 'fastify'

/**
 * A route schema with the OpenAPI keys that @fastify/swagger reads when the application registers
 * it (`hide: true` leaves a route out of the document). @fastify/swagger adds these keys to
 * FastifySchema itself, but only where it is installed: typed here, the package compiles, and its
 * declarations type-check in an application, without it.
 */
export type DocumentedSchema = FastifySchema & { tags?: readonly string[], summary?: string, hide?: boolean }

export const documented = (schema: DocumentedSchema): FastifySchema => schema
