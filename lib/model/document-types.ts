import type { Attribute, ComponentSchema, ContentTypeSchema, ScalarValueOf } from './types.js'

/**
 * The document types a read returns, computed from the models' literal types (`defineContentType`,
 * or the text `generateTypes` writes): the typed document service (lib/documents/typed-service.ts)
 * and the client (lib/client/) share them. Types only: nothing here exists at run time, so the
 * client imports it without pulling in server code.
 *
 * Recursion through populate is bounded by `MaxDepth` levels, so that the editor stays fast on
 * models with cycles (article -> category -> articles -> ...); below it a relation is typed as
 * its target's default document.
 */

/** The models a typed service or client knows: content types and components, each by uid. */
export interface ContentSchemas {
  contentTypes: Record<string, ContentTypeSchema>
  components: Record<string, ComponentSchema>
}

/** A content type's uid: its explicit `uid`, or Strapi's default `api::<singularName>.<singularName>`. */
export type UidOf<S extends ContentTypeSchema> = S extends { uid: infer U extends string }
  ? U
  : `api::${S['info']['singularName']}.${S['info']['singularName']}`

/**
 * The `ContentSchemas` of the plugin's `models` array and `components` map, as the application
 * passes them: `SchemasOf<typeof models, typeof components>`.
 */
export type SchemasOf<
  M extends readonly ContentTypeSchema[],
  C extends Readonly<Record<string, ComponentSchema>> = {}
> = {
  contentTypes: { [S in M[number] as UidOf<S>]: S }
  components: C
}

/** Levels of populate typed precisely; deeper ones are typed as their target's default document. */
export type MaxDepth = 3
type Prev = [never, 0, 1, 2, 3, 4]

type Attrs<M> = M extends { attributes: infer A extends Record<string, Attribute> } ? A : never
type Status = 'draft' | 'published'

/** Attributes returned by default: scalars that are neither private nor passwords. */
export type ScalarKeys<A> = {
  [K in keyof A]: A[K] extends { private: true } ? never
    : A[K] extends { type: 'password' | 'relation' | 'media' | 'component' | 'dynamiczone' } ? never
      : K
}[keyof A] & string

/** Attributes `populate` may name: relations, media, components and dynamic zones, not private. */
export type PopulatableKeys<A> = {
  [K in keyof A]: A[K] extends { private: true } ? never
    : A[K] extends { type: 'relation' | 'media' | 'component' | 'dynamiczone' } ? K : never
}[keyof A] & string

type ScalarValue<A> = A extends { required: true } ? ScalarValueOf<A> : ScalarValueOf<A> | null

/** Every system field a content type's document has, and `fields` may select. */
type SystemFields<M, St> = {
  id: number
  documentId: string
  createdAt: string
  updatedAt: string
  publishedAt: PublishedAt<M, St>
  locale?: string | null
}

/**
 * `publishedAt` by `status`: a draft & publish type's draft has none; its published version and
 * every document of a type without draft & publish have one.
 */
type PublishedAt<M, St> = M extends { options: { draftAndPublish: true } }
  ? St extends 'draft' ? null : St extends 'published' ? string : string | null
  : string

/** The names `fields` accepts on a content type. */
export type FieldName<M> = ScalarKeys<Attrs<M>> | 'id' | 'documentId' | 'createdAt' | 'updatedAt' | 'publishedAt' | 'locale'

/** `fields` as the names it selects (`'title,slug'` split), or never when absent or not literal. */
type Selected<F> =
  F extends readonly (infer N extends string)[] ? (string extends N ? never : N)
    : F extends string ? (string extends F ? never : F extends '*' ? never : SplitComma<F>)
      : never

type SplitComma<S extends string> = S extends `${infer H},${infer R}` ? H | SplitComma<R> : S

/** The scalar part of a content type's document under `fields` and `status`. */
type ContentScalars<M, Q> = [Selected<FieldsOf<Q>>] extends [never]
  ? SystemFields<M, StatusOf<Q>> & { [K in ScalarKeys<Attrs<M>>]: ScalarValue<Attrs<M>[K]> }
  : Pick<SystemFields<M, StatusOf<Q>>, 'id' | 'documentId' | (Selected<FieldsOf<Q>> & keyof SystemFields<M, undefined>)> &
    { [K in Selected<FieldsOf<Q>> & ScalarKeys<Attrs<M>>]: ScalarValue<Attrs<M>[K]> }

/** The scalar part of a component entry: its `id` and its attributes under `fields`. */
type ComponentScalars<C, Q> = [Selected<FieldsOf<Q>>] extends [never]
  ? { id: number } & { [K in ScalarKeys<Attrs<C>>]: ScalarValue<Attrs<C>[K]> }
  : { id: number } & { [K in Selected<FieldsOf<Q>> & ScalarKeys<Attrs<C>>]: ScalarValue<Attrs<C>[K]> }

type FieldsOf<Q> = Q extends { fields: infer F } ? F : never
type StatusOf<Q> = Q extends { status: infer St extends Status } ? St : undefined
type PopulateOf<Q> = Q extends { populate: infer P } ? P : never

/**
 * `populate` in Strapi's forms as a map of attribute -> what to render of it: `'*'` (every
 * populatable attribute; relations and media optional), `'a,b'`, `['a', 'b']`, or the object
 * form `{ a: true | '*' | {...} }`.
 */
type PopulateMap<P, A> =
  P extends '*' ? { [K in PopulatableKeys<A> & ReadChecked<A>]?: true } & { [K in Exclude<PopulatableKeys<A>, ReadChecked<A>>]: true }
    : P extends string ? (string extends P ? {} : { [K in SplitComma<P> & PopulatableKeys<A>]: true })
      : P extends readonly (infer N extends string)[] ? (string extends N ? {} : { [K in N & PopulatableKeys<A>]: true })
        : P extends object ? { [K in keyof P & PopulatableKeys<A> as P[K] extends false | 'false' ? never : K]: P[K] }
          : {}

/**
 * Relations and media: under `populate: '*'` a REST caller gets them only when it may read their
 * target (the populate leaves the others out, as Strapi's does), so there they are optional.
 */
type ReadChecked<A> = { [K in keyof A]: A[K] extends { type: 'relation' | 'media' } ? K : never }[keyof A]

/** What one populate entry asks of its target: `'*'` populates the target's own attributes one level down. */
type SubQuery<V> = V extends '*' ? { populate: '*' } : V extends object ? V : {}

/** The populated attributes of a model under a query, `D` levels still typed precisely. */
type Populated<S extends ContentSchemas, M, Q, D extends number> = {
  -readonly [K in keyof PopulateMap<PopulateOf<Q>, Attrs<M>>]: PopulatedValue<S, Attrs<M>[K & keyof Attrs<M>], SubQuery<PopulateMap<PopulateOf<Q>, Attrs<M>>[K]>, D>
}

type ToMany = 'oneToMany' | 'manyToMany'

type PopulatedValue<S extends ContentSchemas, A, Q, D extends number> =
  A extends { type: 'relation', target: infer T extends string, relation: infer R }
    ? Q extends { count: true | 'true' } ? { count: number }
      : R extends ToMany ? Array<RelatedDocument<S, T, Q, D>> : RelatedDocument<S, T, Q, D> | null
    : A extends { type: 'media' }
      ? Q extends { count: true | 'true' } ? { count: number }
        : A extends { multiple: true } ? MediaFile[] : MediaFile | null
      : A extends { type: 'component', component: infer C extends string }
        ? A extends { repeatable: true } ? Array<ComponentEntry<S, C, Q, D>> : ComponentEntry<S, C, Q, D> | null
        : A extends { type: 'dynamiczone', components: readonly (infer C extends string)[] }
          ? Array<DynamicZoneEntry<S, C, Q, D>>
          : never

/** A related document: typed when its target is one of the schemas' content types (built-in targets stay loose). */
type RelatedDocument<S extends ContentSchemas, T extends string, Q, D extends number> =
  T extends keyof S['contentTypes'] ? ResultOf<S, S['contentTypes'][T], Q, Prev[D]> : LooseDocument

type ComponentEntry<S extends ContentSchemas, C extends string, Q, D extends number> =
  C extends keyof S['components']
    ? ComponentScalars<S['components'][C], Q> & ([D] extends [0] ? {} : Populated<S, S['components'][C], Q, Prev[D]>)
    : { id: number, [key: string]: unknown }

/**
 * One entry of a dynamic zone, a union discriminated by `__component`. With `on` fragments only
 * the components named are returned; otherwise every allowed one (with `populate: '*'` each
 * populated one level down).
 */
type DynamicZoneEntry<S extends ContentSchemas, C extends string, Q, D extends number> =
  Q extends { on: infer On extends object }
    ? { [U in keyof On & C]: { __component: U } & ComponentEntry<S, U, SubQuery<On[U]>, D> }[keyof On & C]
    : { [U in C]: { __component: U } & ComponentEntry<S, U, Q extends { populate: '*' } ? { populate: '*' } : {}, D> }[C]

/** A document of a type the schemas do not describe (a built-in one, or an untyped model). */
export type LooseDocument = Record<string, unknown> & { id: number, documentId: string }

/** A file as a populated media attribute returns it (the upload plugin's file record). */
export interface MediaFile {
  id: number
  documentId: string
  name: string
  alternativeText: string | null
  caption: string | null
  focalPoint: unknown
  width: number | null
  height: number | null
  formats: Record<string, unknown> | null
  hash: string
  ext: string | null
  mime: string
  size: number
  url: string
  previewUrl: string | null
  provider: string
  provider_metadata: unknown
  createdAt: string
  updatedAt: string
  publishedAt: string | null
}

/**
 * The document a read returns for content type `M` under query `Q`: its `fields` (or every
 * default attribute), its `populate` (relations, media, components, dynamic zones; nested, up
 * to `MaxDepth` levels), and `publishedAt` by `status`.
 *
 * @example
 * type Row = ResultOf<Schemas, typeof article, { fields: ['title'], populate: { category: { fields: ['name'] } } }>
 * // { id: number, documentId: string, title: string, category: { id: number, documentId: string, name: string | null } | null }
 */
export type ResultOf<S extends ContentSchemas, M, Q = {}, D extends number = MaxDepth> =
  [D] extends [never]
    ? ContentScalars<M, {}>
    : Flatten<ContentScalars<M, Q> & Populated<S, M, Q, D>>

/** Shows the members of an intersection as one object in editor tooltips. */
type Flatten<T> = { [K in keyof T]: T[K] } & {}
