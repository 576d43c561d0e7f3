import type { FastifyRequest } from 'fastify'

/** The content-API actions a route performs, named as Strapi names permissions (`<uid>.<action>`). */
export type ContentAction = 'find' | 'findOne' | 'create' | 'update' | 'delete'

export interface AccessRequest {
  uid: string
  action: ContentAction
}

/**
 * The one place where a request's access is decided. Every REST route (and later every GraphQL
 * resolver) asks it before touching a document. Until users-and-permissions lands, content is
 * public: the decision is always "allowed".
 */
export interface AccessControl {
  check (request: FastifyRequest, access: AccessRequest): Promise<void>
}

export const publicAccess: AccessControl = {
  async check () {}
}
