/*
 * The contract between the access check and everything below it. Auth (lib/auth/access.ts)
 * decides a request's scope; the query parser, the compiler and the document service enforce it
 * in the SQL they build, knowing only these types.
 */

/**
 * What a caller may read of one content type (its `find` grant): the rows, as a filter in
 * Strapi's `filters` syntax with the caller's values already bound, and the attributes.
 */
export interface ReadAccess {
  /** Rows outside this filter do not exist for the caller (null: every row). */
  conditions: Record<string, unknown> | null
  /** The attributes the caller may see (null: all). System fields are always visible. */
  fields: ReadonlySet<string> | null
}

/** The caller's read access to a content type, or null when it may not read the type at all. */
export type ReadAccessOf = (uid: string) => ReadAccess | null

/**
 * What a granted request may do beyond the action itself, enforced by the document service in
 * the SQL it runs (never by filtering results afterwards).
 */
export interface AccessScope {
  /** A filter every row the request touches must satisfy (row-level permission), or null. */
  conditions: Record<string, unknown> | null
  /** The attributes the request may read or write (field-level permission), or null for all. */
  fields: ReadonlySet<string> | null
  /**
   * What the caller may read of a content type reached through relations (populate, filters and
   * sort): its `find` grant's rows and attributes, or null when it may not read the type.
   */
  read: ReadAccessOf
  /** Whether the request may read drafts (`status=draft`): always, unless `auth.draftsRequirePermission`. */
  drafts: boolean
  /**
   * Identifies everything above: two requests with the same key and the same query compile to
   * the same SQL, so compiled statements can be reused across them.
   */
  key: string
}
