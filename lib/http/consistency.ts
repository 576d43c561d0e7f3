import type { FastifyRequest } from 'fastify'

/**
 * The request header with which a client asks to read its own writes (docs/operations.md#read-replicas):
 * `x-content-api-consistency: strong` reads on the primary, whatever `db.replicas` says. Any other
 * value, or none, leaves a read where it would go (a replica, when there are replicas).
 */
export const CONSISTENCY_HEADER = 'x-content-api-consistency'

/**
 * The consistency a request's reads ask for (the document service's `consistency`): `strong` with the header (case and surrounding
 * spaces ignored), else `eventual`.
 *
 * @example
 * // GET /api/articles/abc with `x-content-api-consistency: strong`
 * requestedConsistency(request) // 'strong': the read runs on the primary
 */
export function requestedConsistency (request: FastifyRequest): 'strong' | 'eventual' {
  const value = request.headers[CONSISTENCY_HEADER]
  return typeof value === 'string' && value.trim().toLowerCase() === 'strong' ? 'strong' : 'eventual'
}
