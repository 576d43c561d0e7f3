/**
 * The security of the content API in the OpenAPI document: two bearer schemes, a user's JWT
 * (from `/auth/local`) and an API token, both sent as `Authorization: Bearer <token>`. Each
 * route says which it takes (`security`). The schemes go into the document through the route
 * config's `swaggerTransform` (@fastify/swagger calls it with the document being built), so
 * that registering @fastify/swagger is all it takes: its own options need not name them.
 */

const SECURITY_SCHEMES = {
  jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A user\'s JWT, from POST /api/auth/local or /api/auth/local/register' },
  apiToken: { type: 'http', scheme: 'bearer', description: 'An API token (app.contentApi.apiTokens, or the CLI), read-only, full-access or custom' }
} as const

type Requirement = Record<string, readonly string[]>

/** A user or an API token; or nobody, where the public role holds the permission. */
export const OPTIONAL_BEARER: readonly Requirement[] = [{ jwt: [] }, { apiToken: [] }, {}]
/** A user or an API token that holds the permission. */
export const BEARER: readonly Requirement[] = [{ jwt: [] }, { apiToken: [] }]
/** A signed-in user only (`/users/me`, `/auth/change-password`). */
export const USER_JWT: readonly Requirement[] = [{ jwt: [] }]

interface SwaggerTransformInput {
  schema?: Record<string, unknown>
  url: string
  /** OpenAPI mode: the document being built. */
  openapiObject?: { components?: { securitySchemes?: Record<string, unknown> } }
}

/**
 * The route config that puts the schemes into the document (without overwriting an
 * application's scheme of the same name). In Swagger 2 mode, which has no bearer scheme, the
 * route is documented without `security`.
 */
export const SECURITY_CONFIG: Record<string, unknown> = Object.freeze({
  swaggerTransform ({ schema, url, openapiObject }: SwaggerTransformInput): { schema?: Record<string, unknown>, url?: string } {
    if (openapiObject === undefined) {
      if (schema === undefined) return {}
      const { security: _ignored, ...rest } = schema
      return { schema: rest }
    }
    const components = (openapiObject.components ??= {})
    const schemes = (components.securitySchemes ??= {})
    for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) schemes[name] ??= scheme
    // `POST /api/upload` is routed as `/api/upload/` (a prefix's root) and answers both.
    return url.length > 1 && url.endsWith('/') ? { url: url.slice(0, -1) } : {}
  }
})
