import { sql, type Transaction } from 'kysely'
import { ValidationError, type FieldError } from '../errors.js'
import type { ComponentAssociation, DynamicZoneAssociation } from '../model/associations.js'
import type { Component, Registry } from '../model/registry.js'
import { toColumns } from './columns.js'
import { hashPasswords } from './password.js'
import { validateInput } from './validate-input.js'

/** The owner of component rows: a document row or, for nested components, a component row. */
export interface ComponentOwner {
  joinTable: string
  rowId: number
}

interface Item {
  uid: string
  data: Record<string, unknown>
  path: string[]
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The items of a component attribute: an object (or null) when single, an array when repeatable. */
function componentItems (association: ComponentAssociation, value: unknown, prefix: string[]): Item[] {
  const { name } = association
  if (value === null || value === undefined) return []
  if (association.repeatable) {
    if (!Array.isArray(value)) throw ValidationError.fromFieldErrors([{ path: [...prefix, name], message: `${name} must be an array`, name: 'ValidationError', value }])
    return value.map((item, i) => ({ uid: association.component, data: item as Record<string, unknown>, path: [...prefix, name, String(i)] }))
  }
  return [{ uid: association.component, data: value as Record<string, unknown>, path: [...prefix, name] }]
}

/**
 * The items of a dynamic zone. Every item must name its component with `__component`, from the
 * zone's allowed list; otherwise the whole write is a 400 listing each bad item. A name that is
 * no component at all gets Strapi's yup message, which lists every component of the application
 * (`oneOf(Object.keys(strapi.components))`, read from the components folder in name order); a
 * component the zone does not allow, which Strapi would store, is refused with the zone's list.
 */
function zoneItems (association: DynamicZoneAssociation, value: unknown, prefix: string[], registry: Registry): Item[] {
  const { name } = association
  if (value === null || value === undefined) return []
  if (!Array.isArray(value)) throw ValidationError.fromFieldErrors([{ path: [...prefix, name], message: `${name} must be an array`, name: 'ValidationError', value }])
  const errors: FieldError[] = []
  const items: Item[] = []
  value.forEach((item, i) => {
    const path = [...prefix, name, String(i), '__component']
    const uid = isPlainObject(item) ? item.__component : undefined
    if (typeof uid !== 'string' || uid === '') {
      errors.push({ path, message: `${name}[${i}].__component is a required field`, name: 'ValidationError' })
    } else if (!association.components.includes(uid)) {
      const values = registry.components.has(uid) ? association.components : [...registry.components.keys()].sort()
      errors.push({ path, message: `${name}[${i}].__component must be one of the following values: ${values.join(', ')}`, name: 'ValidationError', value: uid })
    } else {
      items.push({ uid, data: item as Record<string, unknown>, path: [...prefix, name, String(i)] })
    }
  })
  if (errors.length > 0) throw ValidationError.fromFieldErrors(errors)
  return items
}

/**
 * Replaces the components under one attribute of an owner row. An item carrying the `id` of one
 * of the owner's existing components updates it in place; other items create new rows; the
 * owner's components left out are deleted (with their own nested components).
 */
export async function writeComponentAttribute (
  trx: Transaction<any>, registry: Registry, owner: ComponentOwner, association: ComponentAssociation | DynamicZoneAssociation, value: unknown,
  prefix: string[] = []
): Promise<void> {
  const items = association.kind === 'component' ? componentItems(association, value, prefix) : zoneItems(association, value, prefix, registry)
  const existing = await trx.selectFrom(owner.joinTable).select(['cmp_id', 'component_type'])
    .where('entity_id', '=', owner.rowId).where('field', '=', association.name).execute()
  const existingKeys = new Set(existing.map((r) => `${r.component_type as string}:${r.cmp_id as number}`))

  const written: Array<{ uid: string, id: number }> = []
  for (const item of items) {
    const component = registry.components.get(item.uid)!
    const input = validateInput(component, item.data, { partial: false, path: item.path })
    const requestedId = input.deferred.id
    const reuse = typeof requestedId === 'number' && existingKeys.has(`${item.uid}:${requestedId}`) ? requestedId : null
    const values = toColumns(component, await hashPasswords(component, input.values))
    let id: number
    if (reuse !== null) {
      if (Object.keys(values).length > 0) await trx.updateTable(component.tableName).set(values).where('id', '=', reuse).execute()
      id = reuse
    } else {
      const inserted = Object.keys(values).length > 0
        ? await trx.insertInto(component.tableName).values(values).returning('id').executeTakeFirstOrThrow()
        : await sql<{ id: number }>`insert into ${sql.table(component.tableName)} default values returning id`.execute(trx).then((r) => r.rows[0])
      id = inserted.id as number
    }
    await writeNested(trx, registry, component, id, input.deferred, item.path)
    written.push({ uid: item.uid, id })
  }

  await trx.deleteFrom(owner.joinTable).where('entity_id', '=', owner.rowId).where('field', '=', association.name).execute()
  if (written.length > 0) {
    await trx.insertInto(owner.joinTable).values(written.map((w, i) => ({
      entity_id: owner.rowId, cmp_id: w.id, component_type: w.uid, field: association.name, order: i + 1
    }))).execute()
  }
  const kept = new Set(written.map((w) => `${w.uid}:${w.id}`))
  const removed = existing.filter((r) => !kept.has(`${r.component_type as string}:${r.cmp_id as number}`))
  for (const row of removed) await deleteComponentRows(trx, registry, row.component_type as string, [row.cmp_id as number])
}

/** Components inside a component: written with the component row as their owner. */
async function writeNested (
  trx: Transaction<any>, registry: Registry, component: Component, rowId: number, deferred: Record<string, unknown>, path: string[]
): Promise<void> {
  for (const [name, value] of Object.entries(deferred)) {
    const association = component.associations.get(name)
    if (association?.kind === 'component' || association?.kind === 'dynamiczone') {
      await writeComponentAttribute(trx, registry, { joinTable: association.joinTable, rowId }, association, value, path)
    }
  }
}

/** Deletes component rows and, first, the components nested in them. */
export async function deleteComponentRows (trx: Transaction<any>, registry: Registry, uid: string, ids: number[]): Promise<void> {
  const component = registry.components.get(uid)
  if (component === undefined || ids.length === 0) return
  await deleteOwnedComponents(trx, registry, component, ids)
  await trx.deleteFrom(component.tableName).where('id', 'in', ids).execute()
}

/** Deletes every component owned by the given rows of a model (a content type or a component). */
export async function deleteOwnedComponents (
  trx: Transaction<any>, registry: Registry, owner: { associations: ReadonlyMap<string, unknown> }, rowIds: number[]
): Promise<void> {
  const slot = [...owner.associations.values()].find((a): a is ComponentAssociation | DynamicZoneAssociation =>
    (a as { kind: string }).kind === 'component' || (a as { kind: string }).kind === 'dynamiczone')
  if (slot === undefined || rowIds.length === 0) return
  const rows = await trx.selectFrom(slot.joinTable).select(['cmp_id', 'component_type']).where('entity_id', 'in', rowIds).execute()
  const byType = new Map<string, number[]>()
  for (const row of rows) byType.set(row.component_type as string, [...(byType.get(row.component_type as string) ?? []), row.cmp_id as number])
  for (const [uid, ids] of byType) await deleteComponentRows(trx, registry, uid, ids)
}

/**
 * Copies the components of one owner row to another (publishing gives the published version its
 * own copies, so editing the draft never changes what is published).
 */
export async function copyOwnedComponents (
  trx: Transaction<any>, registry: Registry, owner: { associations: ReadonlyMap<string, unknown> }, fromRow: number, toRow: number
): Promise<void> {
  const slot = [...owner.associations.values()].find((a): a is ComponentAssociation | DynamicZoneAssociation =>
    (a as { kind: string }).kind === 'component' || (a as { kind: string }).kind === 'dynamiczone')
  if (slot === undefined) return
  await deleteOwnedComponents(trx, registry, owner, [toRow])
  await trx.deleteFrom(slot.joinTable).where('entity_id', '=', toRow).execute()
  const rows = await trx.selectFrom(slot.joinTable).selectAll().where('entity_id', '=', fromRow).orderBy('id').execute()
  for (const row of rows) {
    const component = registry.components.get(row.component_type as string)
    if (component === undefined) continue
    const cols = [...component.fields.values()].filter((f) => f.name !== 'id').map((f) => f.column)
    const copied = cols.length > 0
      ? await sql<{ id: number }>`insert into ${sql.table(component.tableName)} (${sql.join(cols.map((c) => sql.id(c)))})
          select ${sql.join(cols.map((c) => sql.id(c)))} from ${sql.table(component.tableName)} where id = ${row.cmp_id} returning id`.execute(trx)
      : await sql<{ id: number }>`insert into ${sql.table(component.tableName)} default values returning id`.execute(trx)
    const id = copied.rows[0].id
    await copyOwnedComponents(trx, registry, component, row.cmp_id as number, id)
    await trx.insertInto(slot.joinTable).values({
      entity_id: toRow, cmp_id: id, component_type: row.component_type, field: row.field, order: row.order
    }).execute()
  }
}
