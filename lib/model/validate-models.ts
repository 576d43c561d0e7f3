import { columnName, snakeCase } from './naming.js'
import { BUILT_IN_CONTENT_TYPES } from './built-ins.js'
import type { Attribute, ComponentSchema, ContentTypeSchema } from './types.js'
import { RELATION_KINDS, SCALAR_TYPES } from './types.js'

/**
 * Names the library manages itself (Strapi reserves the same ones). An attribute may not use them,
 * because they are columns, response keys or write-syntax keys already.
 */
export const RESERVED_ATTRIBUTE_NAMES = new Set([
  'id', 'documentId', 'document_id', 'createdAt', 'created_at', 'updatedAt', 'updated_at',
  'publishedAt', 'published_at', 'createdBy', 'created_by', 'updatedBy', 'updated_by',
  'locale', 'localizations', '__component', '__type', '__typename', '__contentType'
])

const KNOWN_TYPES = new Set<string>([...SCALAR_TYPES, 'relation', 'media', 'component', 'dynamiczone'])
const API_ID = /^[a-z][a-z0-9-]*$/
const ATTRIBUTE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/
const COMPONENT_UID = /^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$/
const MEDIA_TYPES = new Set(['images', 'files', 'videos', 'audios'])
/** Built-in targets a relation may point to before their own issues register them as models. */
const BUILT_IN_TARGETS = new Set(['plugin::upload.file', 'plugin::users-permissions.user', 'plugin::users-permissions.role'])
/** The library's own content types: a model may point to them, not take their uid. */
const BUILT_IN_UIDS = new Set(BUILT_IN_CONTENT_TYPES.map((ct) => ct.uid))

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
/** Same test without narrowing, for values whose declared type we keep. */
const isPlainObject = (v: unknown): boolean => isObject(v)
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

function checkAttribute (
  where: string, name: string, attr: Attribute, ctx: { uids: Set<string>, components: Set<string>, inComponent: boolean }, problems: string[]
): void {
  const at = `${where}: attribute "${name}"`
  if (!isObject(attr)) { problems.push(`${at} must be an object`); return }
  if (!ATTRIBUTE_NAME.test(name)) problems.push(`${at} has an invalid name (letters, digits and _ only, starting with a letter)`)
  if (RESERVED_ATTRIBUTE_NAMES.has(name)) problems.push(`${at} uses a reserved name`)
  if (!KNOWN_TYPES.has(attr.type)) {
    problems.push(`${at} has unknown type "${String(attr.type)}" (expected one of ${[...KNOWN_TYPES].join(', ')})`)
    return
  }
  const a = attr as unknown as Record<string, unknown>
  for (const key of ['min', 'max', 'minLength', 'maxLength'] as const) {
    if (a[key] !== undefined && !isNumber(a[key]) && !(attr.type === 'biginteger' && typeof a[key] === 'string')) {
      problems.push(`${at}: ${key} must be a number`)
    }
  }
  if (isNumber(a.minLength) && isNumber(a.maxLength) && a.minLength > a.maxLength) problems.push(`${at}: minLength is greater than maxLength`)
  if (isNumber(a.min) && isNumber(a.max) && a.min > a.max) problems.push(`${at}: min is greater than max`)
  if (a.regex !== undefined) {
    try { RegExp(String(a.regex)) } catch { problems.push(`${at}: regex is not a valid regular expression`) }
  }
  switch (attr.type) {
    case 'enumeration':
      if (!Array.isArray(attr.enum) || attr.enum.length === 0 || !attr.enum.every((v) => typeof v === 'string' && v !== '')) {
        problems.push(`${at}: enumeration needs a non-empty "enum" array of strings`)
      } else if (attr.default !== undefined && !attr.enum.includes(attr.default)) {
        problems.push(`${at}: default "${attr.default}" is not one of its enum values`)
      }
      break
    case 'relation':
      if (ctx.inComponent) { problems.push(`${at}: relations inside components are not supported yet`); break }
      if (!(RELATION_KINDS as readonly string[]).includes(attr.relation)) {
        problems.push(`${at}: relation must be one of ${RELATION_KINDS.join(', ')}`)
      }
      if (typeof attr.target !== 'string' || (!ctx.uids.has(attr.target) && !BUILT_IN_TARGETS.has(attr.target))) {
        problems.push(`${at}: relation to unknown target "${String(attr.target)}"`)
      }
      if (attr.inversedBy !== undefined && attr.mappedBy !== undefined) problems.push(`${at}: use inversedBy or mappedBy, not both`)
      break
    case 'media':
      if (ctx.inComponent) problems.push(`${at}: media inside components are not supported yet`)
      if (attr.allowedTypes !== undefined && (!Array.isArray(attr.allowedTypes) || !attr.allowedTypes.every((t) => MEDIA_TYPES.has(t)))) {
        problems.push(`${at}: allowedTypes may contain only ${[...MEDIA_TYPES].join(', ')}`)
      }
      break
    case 'component':
      if (typeof attr.component !== 'string' || !ctx.components.has(attr.component)) {
        problems.push(`${at}: unknown component "${String(attr.component)}"`)
      }
      break
    case 'dynamiczone':
      if (ctx.inComponent) problems.push(`${at}: dynamic zones are not allowed inside components`)
      if (!Array.isArray(attr.components) || attr.components.length === 0) {
        problems.push(`${at}: a dynamic zone needs a non-empty "components" array`)
      } else {
        for (const c of attr.components) if (!ctx.components.has(c)) problems.push(`${at}: unknown component "${String(c)}"`)
      }
      break
  }
}

function checkAttributes (
  where: string, attributes: unknown, ctx: { uids: Set<string>, components: Set<string>, inComponent: boolean }, problems: string[]
): void {
  if (!isObject(attributes)) { problems.push(`${where}: "attributes" must be an object`); return }
  const columns = new Map<string, string>()
  for (const [name, attr] of Object.entries(attributes)) {
    checkAttribute(where, name, attr as Attribute, ctx, problems)
    const column = columnName(name)
    const other = columns.get(column)
    if (other !== undefined) problems.push(`${where}: attributes "${other}" and "${name}" map to the same column "${column}"`)
    columns.set(column, name)
  }
  for (const [name, attr] of Object.entries(attributes) as Array<[string, Attribute]>) {
    if (attr?.type === 'uid' && attr.targetField !== undefined) {
      const target = (attributes as Record<string, Attribute>)[attr.targetField]
      if (target === undefined || !['string', 'text', 'uid'].includes(target.type)) {
        problems.push(`${where}: attribute "${name}" has targetField "${attr.targetField}", which is not a string attribute of the model`)
      }
    }
  }
}

/** Checks relation pairs: `inversedBy`/`mappedBy` must name a relation on the target that points back. */
function checkRelationPairs (models: readonly ContentTypeSchema[], uidOf: (m: ContentTypeSchema) => string, problems: string[]): void {
  const byUid = new Map(models.map((m) => [uidOf(m), m]))
  for (const model of models) {
    for (const [name, attr] of Object.entries(model.attributes ?? {})) {
      if (attr?.type !== 'relation') continue
      const other = attr.inversedBy ?? attr.mappedBy
      if (other === undefined) continue
      const target = byUid.get(attr.target)
      if (target === undefined) continue
      const back = target.attributes?.[other]
      if (back?.type !== 'relation' || back.target !== uidOf(model)) {
        problems.push(`${uidOf(model)}: relation "${name}" names "${other}" on ${attr.target}, which is not a relation back to ${uidOf(model)}`)
      }
    }
  }
}

const LIFECYCLE_ACTIONS: ReadonlySet<string> = new Set(['Create', 'Update', 'Delete', 'FindOne', 'FindMany', 'Count'].flatMap((a) => [`before${a}`, `after${a}`]))

/** A model's `lifecycles`: an object of Strapi's hook names, each a function (a misspelt hook would never be called). */
function checkLifecycles (where: string, lifecycles: unknown, problems: string[]): void {
  if (lifecycles === undefined) return
  if (!isPlainObject(lifecycles)) { problems.push(`${where}: lifecycles must be an object of hooks (beforeCreate, afterCreate, ...)`); return }
  for (const [name, hook] of Object.entries(lifecycles as Record<string, unknown>)) {
    if (!LIFECYCLE_ACTIONS.has(name)) problems.push(`${where}: lifecycles.${name} is not a lifecycle hook (expected one of ${[...LIFECYCLE_ACTIONS].join(', ')})`)
    else if (typeof hook !== 'function') problems.push(`${where}: lifecycles.${name} must be a function`)
  }
}

/** Returns every problem in the models and components; an empty array means they are valid. */
export function validateSchemas (
  models: readonly ContentTypeSchema[], components: Readonly<Record<string, ComponentSchema>>
): string[] {
  const problems: string[] = []
  if (!Array.isArray(models)) return ['"models" must be an array of content-type schemas']
  if (!isObject(components)) return ['"components" must be an object keyed by component uid']

  const uidOf = (m: ContentTypeSchema): string => m.uid ?? `api::${m.info?.singularName}.${m.info?.singularName}`
  const uids = new Set<string>()
  const apiIds = new Map<string, string>()
  const tables = new Map<string, string>()
  const componentUids = new Set(Object.keys(components))

  models.forEach((model, i) => {
    if (!isPlainObject(model)) { problems.push(`models[${i}] must be an object`); return }
    const info = isPlainObject(model.info) ? model.info : undefined
    const where = typeof info?.singularName === 'string' ? uidOf(model) : `models[${i}]`
    if (model.kind !== 'collectionType' && model.kind !== 'singleType') problems.push(`${where}: kind must be "collectionType" or "singleType"`)
    if (info === undefined) { problems.push(`${where}: "info" with singularName and pluralName is required`); return }
    for (const key of ['singularName', 'pluralName'] as const) {
      if (typeof info[key] !== 'string' || info[key] === '') problems.push(`${where}: info.${key} is required`)
      else if (!API_ID.test(info[key])) problems.push(`${where}: info.${key} "${info[key]}" must be kebab-case (a-z, 0-9, -)`)
    }
    if (info.singularName !== undefined && info.singularName === info.pluralName) problems.push(`${where}: singularName and pluralName must differ`)
    const uid = uidOf(model)
    if (uids.has(uid)) problems.push(`${where}: duplicate content type uid "${uid}"`)
    if (BUILT_IN_UIDS.has(uid)) problems.push(`${where}: the uid of a built-in content type (a model may relate to it, not redefine it)`)
    uids.add(uid)
    for (const id of [info.singularName, info.pluralName]) {
      if (typeof id !== 'string') continue
      const owner = apiIds.get(id)
      if (owner !== undefined && owner !== uid) problems.push(`${where}: API id "${id}" is already used by ${owner}`)
      apiIds.set(id, uid)
    }
    checkLifecycles(where, (model as { lifecycles?: unknown }).lifecycles, problems)
    const table = model.collectionName ?? (typeof info.pluralName === 'string' ? snakeCase(info.pluralName) : undefined)
    if (table !== undefined) {
      if (tables.has(table)) problems.push(`${where}: table "${table}" is already used by ${tables.get(table)}`)
      tables.set(table, uid)
    }
  })
  models.forEach((model) => {
    if (!isPlainObject(model) || !isPlainObject(model.info)) return
    checkAttributes(uidOf(model), model.attributes, { uids, components: componentUids, inComponent: false }, problems)
  })
  for (const [uid, component] of Object.entries(components)) {
    if (!COMPONENT_UID.test(uid)) problems.push(`component "${uid}": uid must have the form <category>.<name>`)
    if (!isObject(component)) { problems.push(`component "${uid}" must be an object`); continue }
    checkAttributes(`component "${uid}"`, component.attributes, { uids, components: componentUids, inComponent: true }, problems)
  }
  checkRelationPairs(models.filter((m) => isPlainObject(m) && isPlainObject(m.info)), uidOf, problems)
  return problems
}
