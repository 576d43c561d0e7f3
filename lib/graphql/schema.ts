import * as graphql from 'graphql'
import { GraphQLSchema, isObjectType, isScalarType, isUnionType, type GraphQLScalarType } from 'graphql'
import type { FastifyInstance } from 'fastify'
import type { AccessControl } from '../auth/access.js'
import type { DocumentService } from '../documents/service.js'
import type { Registry } from '../model/registry.js'
import type { GraphqlApi, Extension } from './extension.js'
import type { ResolvedGraphqlOptions } from '../options/graphql.js'
import { TreeMemo } from '../documents/tree-memo.js'
import type { PlannedRead } from './query-tree.js'
import { operationResolvers, statusOf, typeResolvers, type ResolverMap } from './resolvers.js'
import { scalars } from './scalars.js'
import { ContentTypeConfig } from './shadow-crud.js'
import { generateTypes, type GeneratedTypes } from './type-defs.js'
import {
  USERS_PERMISSIONS_AUTH, USERS_PERMISSIONS_MUTATIONS, USERS_PERMISSIONS_QUERIES, USERS_PERMISSIONS_TYPES, usersPermissionsResolvers,
  type UsersPermissionsDeps
} from './users-permissions.js'
import { wrapResolvers, type DefaultAuth, type ResolverConfig } from './wrap.js'

export interface SchemaDeps extends UsersPermissionsDeps {
  app: FastifyInstance
  registry: Registry
  access: AccessControl
  documents: (uid: string) => DocumentService
  graphql: ResolvedGraphqlOptions
  api: GraphqlApi
}

/**
 * The generated schema without an extension: graphql-js builds it from the SDL, and the
 * resolvers are set on it as @graphql-tools' `mergeSchemas({ updateResolversInPlace: true })`
 * sets them (a scalar takes the configuration of our `GraphQLScalarType`, a union its
 * `__resolveType`, a field its resolver), so that both paths answer introspection alike
 * (test/graphql/schema.test.ts). @graphql-tools is then never loaded: about 90 modules, some
 * 35 ms of the plugin's registration on a two-core machine.
 */
function generatedSchema (typeDefs: string, resolvers: Record<string, Record<string, unknown>>): GraphQLSchema {
  // The SDL is generated (type-defs.ts), not written by hand: its rules (unique and known names)
  // hold by construction, and graphql-js checks the schema built from it before its first
  // execution all the same (assertValidSchema). No source locations: no error points into a
  // text no one wrote, and the parser's tokens and locations (about 7,500 objects, 1 MiB of
  // heap, for the blog example) would stay reachable from the types' AST nodes for good.
  const schema = graphql.buildSchema(typeDefs, { assumeValidSDL: true, noLocation: true })
  for (const [typeName, members] of Object.entries(resolvers)) {
    const type = schema.getType(typeName)
    if (isScalarType(type)) {
      const scalar = members as unknown as GraphQLScalarType
      Object.assign(type, {
        description: scalar.description,
        specifiedByURL: scalar.specifiedByURL,
        serialize: scalar.serialize,
        parseValue: scalar.parseValue,
        parseLiteral: scalar.parseLiteral,
        extensions: scalar.extensions
      })
    } else if (isUnionType(type) && typeof members.__resolveType === 'function') {
      type.resolveType = members.__resolveType as GraphQLUnionTypeResolver
    } else if (isObjectType(type)) {
      const fields = type.getFields()
      for (const [name, resolve] of Object.entries(members)) {
        if (fields[name] === undefined) throw new Error(`${typeName}.${name} defined in resolvers, but not in schema`)
        fields[name].resolve = resolve as graphql.GraphQLFieldResolver<unknown, unknown>
      }
    } else {
      throw new Error(`"${typeName}" defined in resolvers, but not in schema`)
    }
  }
  return schema
}

type GraphQLUnionTypeResolver = NonNullable<graphql.GraphQLUnionType['resolveType']>

/**
 * Builds the executable schema: Shadow CRUD's types and resolvers, the users-and-permissions
 * operations, then every extension in registration order (types, SDL, resolvers deep-merged,
 * plugins applied last), and finally each root field wrapped with its authorization, middlewares
 * and policies. Returns it with the roles of the generated fields, which the row bound reads.
 * With extensions, @graphql-tools merges them (and extension factories receive it).
 */
export async function buildSchema (deps: SchemaDeps): Promise<{ schema: GraphQLSchema, roles: GeneratedTypes['roles'] }> {
  const { registry, graphql: options, api } = deps
  const shape = { entity: options.format === 'entity', compat: options.format === 'flat' && options.v4CompatibilityMode }
  const disabled = new ContentTypeConfig('*').disable()
  const config = (uid: string): ContentTypeConfig => options.shadowCRUD ? api.shadowCRUD(uid) : disabled
  const types = generateTypes(registry, shape, config, USERS_PERMISSIONS_QUERIES, USERS_PERMISSIONS_MUTATIONS)
  const typeDefs = `${types.typeDefs}\n${USERS_PERMISSIONS_TYPES}`

  const resolverDeps = {
    registry,
    documents: deps.documents,
    i18n: deps.options.i18n,
    reads: new TreeMemo<PlannedRead>(100),
    types,
    entity: shape.entity,
    compat: shape.compat,
    defaultLimit: options.defaultLimit,
    amountLimit: options.amountLimit
  }
  const up = usersPermissionsResolvers(deps)
  const queries: ResolverMap[string] = { ...up.Query }
  const mutations: ResolverMap[string] = { ...up.Mutation }
  const defaults = new Map<string, DefaultAuth>(USERS_PERMISSIONS_AUTH)
  for (const names of types.operations) {
    for (const [key, auth] of operationResolvers(resolverDeps, names, queries, mutations)) {
      // Every operation with `status: DRAFT` reads drafts: mutations answer with the draft they wrote.
      defaults.set(key, { ...auth, draft: (args) => statusOf(args) === 'draft' })
    }
  }
  const declared = Object.fromEntries(Object.entries(scalars(registry, deps.options.i18n.locales)).filter(([name]) => typeDefs.includes(`scalar ${name}`)))
  const generated: ResolverMap = { ...typeResolvers(resolverDeps), Query: queries, ...(Object.keys(mutations).length > 0 ? { Mutation: mutations } : {}) }

  const registered = deps.api.registered.extensions
  const tools = registered.length === 0 ? null : await import('@graphql-tools/schema')
  const libraries = tools === null ? null : { graphql, tools: { makeExecutableSchema: tools.makeExecutableSchema, mergeSchemas: tools.mergeSchemas }, app: deps.app, registry }
  const extensions: Extension[] = libraries === null ? [] : registered.map((e) => typeof e === 'function' ? e(libraries) : e)
  const configs = new Map<string, ResolverConfig>()
  for (const extension of extensions) {
    for (const [key, value] of Object.entries(extension.resolversConfig ?? {})) {
      // The first configuration registered for a resolver wins, key by key (Strapi's merge).
      configs.set(key, { ...value, ...configs.get(key) })
    }
  }
  const extensionTypes = extensions.flatMap((e) => e.types ?? [])
  // The resolvers are set on the schema just built from the SDL, which nothing else holds, rather
  // than on a copy of it (graphql-tools' default rebuilds every type): half of the build's 30 ms.
  let schema = tools === null
    ? generatedSchema(typeDefs, { ...declared, ...generated } as Record<string, Record<string, unknown>>)
    : tools.mergeSchemas({
      updateResolversInPlace: true,
      schemas: extensionTypes.length > 0 ? [new GraphQLSchema({ types: extensionTypes })] : [],
      typeDefs: [typeDefs, ...extensions.map((e) => e.typeDefs).filter((t): t is string => typeof t === 'string' && t.trim() !== '')],
      resolvers: [declared, generated, ...extensions.map((e) => e.resolvers ?? {})] as any
    })
  for (const plugin of extensions.flatMap((e) => e.plugins ?? [])) schema = plugin(schema)
  wrapResolvers(schema, { app: deps.app, access: deps.access, policies: api.registered.policies, middlewares: api.registered.middlewares, sharedPolicies: deps.options.policies }, configs, defaults)
  return { schema, roles: types.roles }
}
