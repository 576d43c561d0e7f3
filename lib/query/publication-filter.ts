import { ValidationError } from '../errors.js'

/**
 * Strapi 5's publication cohorts (`publicationFilter`): which documents of a draft & publish type a
 * read keeps, by how its draft and published versions relate. Pair-scoped modes compare the
 * versions of one (documentId, locale); the `-document` modes look at every locale of the
 * document; `published-without-draft`/`published-with-draft` only select published rows.
 */
export const PUBLICATION_FILTERS = [
  'never-published',
  'has-published-version',
  'modified',
  'unmodified',
  'never-published-document',
  'has-published-version-document',
  'published-without-draft',
  'published-with-draft'
] as const

export type PublicationFilter = typeof PUBLICATION_FILTERS[number]

const isPublicationFilter = (value: unknown): value is PublicationFilter =>
  typeof value === 'string' && (PUBLICATION_FILTERS as readonly string[]).includes(value)

/** Strapi's deprecated boolean, REST's `true`/`false` text or GraphQL's Boolean. */
function parseHasPublishedVersion (raw: unknown): boolean | undefined {
  if (raw === undefined || raw === null) return undefined
  if (raw === true || raw === 'true') return true
  if (raw === false || raw === 'false') return false
  throw new ValidationError("Invalid value for 'hasPublishedVersion'. Expected boolean or 'true'/'false' string.",
    { source: 'query', param: 'hasPublishedVersion' })
}

/**
 * The cohort a read asks for, as Strapi 5's document service takes it: `publicationFilter` wins,
 * else the deprecated `hasPublishedVersion` means `has-published-version-document` (true) or
 * `never-published-document` (false). Both are taken on every type: one without draft & publish
 * keeps all its rows (its one version is always published), and its populated draft & publish
 * relations follow the cohort, as in Strapi. A bad value is a 400.
 */
export function parsePublicationFilter (rawFilter: unknown, rawHasPublishedVersion: unknown): PublicationFilter | null {
  let mode: PublicationFilter | undefined
  if (rawFilter !== undefined && rawFilter !== null) {
    if (!isPublicationFilter(rawFilter)) {
      throw new ValidationError(`Invalid value for 'publicationFilter'. Expected one of: ${PUBLICATION_FILTERS.join(', ')}.`,
        { source: 'query', param: 'publicationFilter' })
    }
    mode = rawFilter
  }
  const legacy = parseHasPublishedVersion(rawHasPublishedVersion)
  if (mode === undefined && legacy !== undefined) mode = legacy ? 'has-published-version-document' : 'never-published-document'
  return mode ?? null
}
