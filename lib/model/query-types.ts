import type { ContentSchemas, FieldName, MediaFile, PopulatableKeys } from './document-types.js'
import type { Attribute, ScalarValueOf } from './types.js'

/**
 * The parameters of a typed read or write, checked against the models' literal types: a field,
 * sort key, filter key or populate key the model does not have fails to compile. Values are
 * checked loosely (a filter operand is any primitive), since the API casts them as a query string
 * does. Shared by the typed document service and the client; types only.
 */

type Attrs<M> = M extends { attributes: infer A extends Record<string, Attribute> } ? A : never
type Prev = [never, 0, 1, 2, 3, 4]

/** Bounds nested filters and populate parameters, as `ResultOf` bounds its result. */
type ParamDepth = 3

/** Strapi's comparison operators on one field (docs/rest.md#filters). */
export interface FieldOperators {
  $eq?: FilterOperand
  $eqi?: FilterOperand
  $ne?: FilterOperand
  $nei?: FilterOperand
  $lt?: FilterOperand
  $lte?: FilterOperand
  $gt?: FilterOperand
  $gte?: FilterOperand
  $in?: readonly FilterOperand[]
  $notIn?: readonly FilterOperand[]
  $contains?: FilterOperand
  $notContains?: FilterOperand
  $containsi?: FilterOperand
  $notContainsi?: FilterOperand
  $startsWith?: FilterOperand
  $startsWithi?: FilterOperand
  $endsWith?: FilterOperand
  $endsWithi?: FilterOperand
  $null?: boolean | 'true' | 'false'
  $notNull?: boolean | 'true' | 'false'
  $between?: readonly [FilterOperand, FilterOperand]
  $not?: FieldOperators | FilterOperand
  $and?: readonly FieldOperators[]
  $or?: readonly FieldOperators[]
}

export type FilterOperand = string | number | boolean | null

type FieldFilter = FilterOperand | FieldOperators

/** Filters on what an attribute leads to: a relation's target, a component's attributes, media's file fields. */
type NestedFilter<S extends ContentSchemas, A, D extends number> =
  [D] extends [0] ? Record<string, unknown>
    : A extends { type: 'relation', target: infer T extends string }
      ? T extends keyof S['contentTypes'] ? Filters<S, S['contentTypes'][T], Prev[D]> : Record<string, unknown>
      : A extends { type: 'component', component: infer C extends string }
        ? C extends keyof S['components'] ? Filters<S, S['components'][C], Prev[D]> : Record<string, unknown>
        : A extends { type: 'media' } ? { [K in keyof MediaFile]?: FieldFilter } & Logical<Record<string, unknown>>
          : never

interface Logical<F> {
  $and?: readonly F[]
  $or?: readonly F[]
  $not?: F
}

/** Strapi's filter object on a model: its scalar and system fields, relations, components and media; `$and`, `$or`, `$not`. */
export type Filters<S extends ContentSchemas, M, D extends number = ParamDepth> = {
  // One mapped type, never an empty one: inside an inferred `populate`, a misspelt key is then still
  // caught (an object of optional properties accepts no object sharing none of them).
  [K in FieldName<M> | Exclude<PopulatableKeys<Attrs<M>>, DynamicZoneKeys<Attrs<M>>>]?: K extends FieldName<M> ? FieldFilter : NestedFilter<S, Attrs<M>[K & keyof Attrs<M>], D>
} & Logical<Filters<S, M, D>>

type DynamicZoneKeys<A> = { [K in keyof A]: A[K] extends { type: 'dynamiczone' } ? K : never }[keyof A] & string

type Direction = 'asc' | 'desc' | 'ASC' | 'DESC'
type SortKey<M> = Exclude<FieldName<M>, 'locale'> | 'locale'

/** `sort` in Strapi's forms: `'title'`, `'title:desc'`, a list of those, `{ title: 'desc' }`, or a list of those. */
export type Sort<M> =
  | SortKey<M> | `${SortKey<M>}:${Direction}`
  | ReadonlyArray<SortKey<M> | `${SortKey<M>}:${Direction}`>
  | { [K in SortKey<M>]?: Direction }
  | ReadonlyArray<{ [K in SortKey<M>]?: Direction }>

/** `fields`: a list of field names, or one name. */
export type Fields<M> = FieldName<M> | '*' | readonly FieldName<M>[]

/** What may be asked of one populated attribute. */
type PopulateEntry<S extends ContentSchemas, A, D extends number> =
  | boolean | 'true' | 'false' | '*'
  | (A extends { type: 'relation', target: infer T extends string }
    ? T extends keyof S['contentTypes'] ? NestedSelection<S, S['contentTypes'][T], D> & { count?: boolean } : Record<string, unknown>
    : A extends { type: 'media' } ? { fields?: readonly (keyof MediaFile)[], count?: boolean }
      : A extends { type: 'component', component: infer C extends string }
        ? C extends keyof S['components'] ? NestedSelection<S, S['components'][C], D> : Record<string, unknown>
        : A extends { type: 'dynamiczone', components: readonly (infer C extends string)[] }
          ? { on?: { [U in C]?: U extends keyof S['components'] ? NestedSelection<S, S['components'][U], D> | boolean : never }, populate?: '*' }
          : never)

/** The selection inside a populate entry: the target's fields, filters, sort, and what it populates in turn. */
interface NestedSelection<S extends ContentSchemas, M, D extends number> {
  fields?: Fields<M>
  filters?: Filters<S, M, Prev[D]>
  sort?: Sort<M>
  populate?: [D] extends [0] ? unknown : Populate<S, M, Prev[D]>
}

/** `populate` in Strapi's forms: `'*'`, an attribute name, a list of names, or an object of entries. */
export type Populate<S extends ContentSchemas, M, D extends number = ParamDepth> =
  | '*'
  | PopulatableKeys<Attrs<M>>
  | readonly PopulatableKeys<Attrs<M>>[]
  | { [K in PopulatableKeys<Attrs<M>>]?: PopulateEntry<S, Attrs<M>[K], D> }

/** Page-based or offset-based pagination. */
export type Pagination = { page?: number, pageSize?: number, withCount?: boolean } | { start?: number, limit?: number, withCount?: boolean }

/** The read parameters of a model: Strapi's query parameters, typed by its attributes. */
export interface TypedQuery<S extends ContentSchemas, M> {
  fields?: Fields<M>
  filters?: Filters<S, M>
  sort?: Sort<M>
  populate?: Populate<S, M>
  status?: Status
  locale?: string
  pagination?: Pagination
}

/** The value a write accepts for one attribute (Strapi's input forms). */
type InputOf<S extends ContentSchemas, A> =
  A extends { type: 'relation', relation: infer R }
    ? R extends 'oneToMany' | 'manyToMany' ? RelationInput | readonly RelationRef[] : RelationRef | RelationInput | null
    : A extends { type: 'media', multiple: true } ? readonly number[] | null
      : A extends { type: 'media' } ? number | null
        : A extends { type: 'component', component: infer C extends string, repeatable: true }
          ? ReadonlyArray<ComponentInput<S, C>>
          : A extends { type: 'component', component: infer C extends string } ? ComponentInput<S, C> | null
            : A extends { type: 'dynamiczone', components: readonly (infer C extends string)[] }
              ? ReadonlyArray<{ [U in C]: { __component: U } & ComponentInput<S, U> }[C]>
              : A extends { type: 'biginteger' } ? string | number | null
                : A extends { type: 'date' | 'time' | 'datetime' | 'timestamp' } ? string | Date | null
                  : ScalarValueOf<A> | null

/** A related document named by its documentId (or its row id), or `{ documentId, locale?, status? }`. */
export type RelationRef = string | number | { documentId: string, locale?: string, status?: 'draft' | 'published' }

/** Strapi's relation-write object: `connect` (with an optional position), `disconnect`, `set`. */
export interface RelationInput {
  connect?: readonly (RelationRef | { documentId: string, position?: Record<string, unknown> })[]
  disconnect?: readonly RelationRef[]
  set?: readonly RelationRef[]
}

type ComponentInput<S extends ContentSchemas, C extends string> =
  C extends keyof S['components'] ? { id?: number } & DataFields<S, Attrs<S['components'][C]>> : Record<string, unknown>

type WritableKeys<A> = { [K in keyof A]: A[K] extends { writable: false } ? never : K }[keyof A] & string

type DataFields<S extends ContentSchemas, A> = { [K in WritableKeys<A>]?: InputOf<S, A[K]> }

/** The `data` of a create or update: every writable attribute, optional, in its input forms. */
export type DataOf<S extends ContentSchemas, M> = DataFields<S, Attrs<M>>

export type Status = 'draft' | 'published'

/** The parameters a typed call infers, since its result follows them: `fields`, `populate`, `status`. */
export interface Asks<F, P, St> {
  fields?: F
  populate?: P
  status?: St
}

/** What `ResultOf` reads of a call's inferred parameters (`undefined`: not given). */
export interface Asked<F, P, St> {
  fields: F
  populate: P
  status: St
}
