import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped, type ValueNode } from 'graphql'
import type { Component, Registry } from '../model/registry.js'
import { dynamicZoneName, typeName } from './names.js'

/**
 * The custom scalars. Output values arrive already rendered by PostgreSQL in the API's formats
 * (ISO timestamps, `YYYY-MM-DD` dates, bigintegers as strings), so serialising passes them on;
 * input values are checked here, so a malformed one is a validation error (HTTP 400) and never
 * reaches the database.
 */

const DATE = /^\d{4}-\d{2}-\d{2}$/
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?$/
const LONG = /^-?\d{1,19}$/

function stringScalar (name: string, description: string, check: (value: string) => boolean, expected: string): GraphQLScalarType {
  const parse = (value: unknown): string => {
    if (typeof value !== 'string' || !check(value)) throw new GraphQLError(`${name} cannot represent ${JSON.stringify(value)}: expected ${expected}`)
    return value
  }
  return new GraphQLScalarType({
    name,
    description,
    serialize: (value) => value,
    parseValue: parse,
    parseLiteral: (ast) => parse(ast.kind === Kind.STRING ? ast.value : valueFromASTUntyped(ast))
  })
}

const isDateTime = (value: string): boolean => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value))

export const DateTimeScalar = stringScalar('DateTime', 'A date-time in ISO 8601, UTC', isDateTime, 'an ISO 8601 date-time')
export const DateScalar = stringScalar('Date', 'A date: YYYY-MM-DD', (v) => DATE.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)), 'a date (YYYY-MM-DD)')
export const TimeScalar = stringScalar('Time', 'A time of day: HH:mm:ss.SSS', (v) => TIME.test(v), 'a time (HH:mm:ss.SSS)')

export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast: ValueNode, variables) => valueFromASTUntyped(ast, variables)
})

export const LongScalar = new GraphQLScalarType({
  name: 'Long',
  description: 'A 64-bit integer',
  serialize: (value) => value,
  parseValue: (value) => {
    const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
    if (typeof text !== 'string' || !LONG.test(text)) throw new GraphQLError(`Long cannot represent ${JSON.stringify(value)}: expected an integer`)
    return text
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT && ast.kind !== Kind.STRING) throw new GraphQLError('Long cannot represent a non-integer value')
    if (!LONG.test(ast.value)) throw new GraphQLError(`Long cannot represent ${ast.value}: expected an integer`)
    return ast.value
  }
})

/** A configured locale, or `*` (every locale; the document service refuses it where it makes no sense). `all` is no locale, as in Strapi 5. */
export function localeScalar (locales: readonly string[]): GraphQLScalarType {
  const allowed = new Set([...locales, '*'])
  return stringScalar('I18NLocaleCode', 'A configured locale code', (v) => allowed.has(v), `one of ${locales.join(', ')}`)
}

/**
 * `<Type><Attr>DynamicZoneInput`: a dynamic-zone entry names its component by GraphQL type
 * (`{ __typename: "ComponentSharedQuote", text: "..." }`), as in Strapi; it becomes the document
 * service's `{ __component: "shared.quote", ... }`.
 */
function dynamicZoneInput (name: string, members: readonly Component[]): GraphQLScalarType {
  const byTypename = new Map(members.map((c) => [typeName(c), c.uid]))
  const parse = (value: unknown): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new GraphQLError(`${name} expects an object`)
    const { __typename: typename, ...rest } = value as Record<string, unknown>
    const uid = typeof typename === 'string' ? byTypename.get(typename) : undefined
    if (uid === undefined) {
      throw new GraphQLError(`${name}: __typename must be one of ${[...byTypename.keys()].join(', ')} (got ${JSON.stringify(typename)})`)
    }
    return { __component: uid, ...rest }
  }
  return new GraphQLScalarType({
    name,
    serialize: (value) => value,
    parseValue: parse,
    parseLiteral: (ast, variables) => parse(valueFromASTUntyped(ast, variables))
  })
}

/** Every scalar the generated schema declares, by name, ready for the resolver map. */
export function scalars (registry: Registry, locales: readonly string[]): Record<string, GraphQLScalarType> {
  const out: Record<string, GraphQLScalarType> = {
    DateTime: DateTimeScalar, Date: DateScalar, Time: TimeScalar, JSON: JSONScalar, Long: LongScalar, I18NLocaleCode: localeScalar(locales)
  }
  const models = [...registry.contentTypes.values(), ...registry.components.values()]
  for (const model of models) {
    for (const association of model.associations.values()) {
      if (association.kind !== 'dynamiczone') continue
      const name = `${dynamicZoneName(model, association.name)}Input`
      out[name] = dynamicZoneInput(name, association.components.map((uid) => registry.components.get(uid)!))
    }
  }
  return out
}
