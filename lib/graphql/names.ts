import type { Component, ContentType } from '../model/registry.js'
import type { PublicationFilter } from '../query/index.js'

/**
 * Strapi's GraphQL names (`services/utils/naming.ts`), so that queries written for Strapi run
 * unchanged: `api::article.article` is `Article` with queries `article`/`articles`,
 * `plugin::upload.file` is `UploadFile` (`uploadFile`/`uploadFiles`), component `shared.rich-text`
 * is `ComponentSharedRichText`, and an enumeration is `ENUM_ARTICLE_KIND`.
 */

/** lodash's word split: case changes, digits and separators start words (`i18n-locale` → i, 18, n, locale). */
function words (value: string): string[] {
  return value.match(/[A-Z]{2,}(?=[A-Z][a-z]+|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+|[0-9]+/g) ?? []
}

const upperFirst = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)
const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1)

export function camelCase (value: string): string {
  return words(value).map((w, i) => (i === 0 ? w.toLowerCase() : upperFirst(w.toLowerCase()))).join('')
}

export const pascalCase = (value: string): string => upperFirst(camelCase(value))

function snakeUpper (value: string): string {
  return words(value).map((w) => w.toUpperCase()).join('_')
}

/** `plugin::users-permissions.user` → `users-permissions`; null for application types. */
function pluginOf (uid: string): string | null {
  const match = /^plugin::([^.]+)\./.exec(uid)
  return match === null ? null : match[1]
}

/** The type name: `Article`, `UploadFile`, `UsersPermissionsUser`, `ComponentSharedSeo`. */
export function typeName (model: ContentType | Component): string {
  if (model.modelType === 'component') {
    const [category, name] = model.uid.split('.')
    return `Component${pascalCase(category)}${pascalCase(name)}`
  }
  const plugin = pluginOf(model.uid)
  if (plugin === 'upload') return pascalCase(`upload-${model.singularName}`)
  return plugin === null ? pascalCase(model.singularName) : pascalCase(`${plugin}-${model.singularName}`)
}

/** The single-document query: `article`, `uploadFile`, `homepage`. */
export function singularQueryName (model: ContentType): string {
  return lowerFirst(typeName(model))
}

/** The list query: `articles`, `uploadFiles`, `usersPermissionsUsers`. */
export function pluralQueryName (model: ContentType): string {
  const plugin = pluginOf(model.uid)
  if (plugin === 'upload') return camelCase(`upload-${model.pluralName}`)
  return plugin === null ? camelCase(model.pluralName) : camelCase(`${plugin}-${model.pluralName}`)
}

export function enumName (model: ContentType | Component, attribute: string): string {
  return `ENUM_${snakeUpper(typeName(model))}_${snakeUpper(attribute)}`
}

export function dynamicZoneName (model: ContentType | Component, attribute: string): string {
  return `${typeName(model)}${pascalCase(attribute)}DynamicZone`
}

/** GraphQL names and enum values must match this; others cannot be generated as they are. */
export const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/

/** A publication cohort's GraphQL enum value, as Strapi 5 names it: `never-published` is `NEVER_PUBLISHED`. */
export const publicationFilterName = (mode: PublicationFilter): string => mode.toUpperCase().replaceAll('-', '_')

/** The cohort a `PublicationFilter` value names (graphql-js has already checked it is one). */
export const publicationFilterOf = (name: string): string => name.toLowerCase().replaceAll('_', '-')
