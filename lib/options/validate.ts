import { createHash } from 'node:crypto'
import { Ajv, type ErrorObject } from 'ajv'
import { validators as precompiled } from './validators.generated.js'

/**
 * The options' JSON Schemas, run by Ajv (Fastify's own validator, already loaded with it). The
 * schemas are plain objects typed `as const`, from which TypeBox's `Static` (a type, never loaded
 * at run time) infers the options' types: TypeBox's run-time modules were 680 files, a fifth of
 * a cold start and about 25 MiB of every process, for one validation at registration.
 */
export type JsonSchema = Readonly<Record<string, unknown>>

/**
 * The Ajv that validates the options, and that scripts/build-options-validators.ts generates
 * their code with (`code`: its standalone settings). Not strict about defaults inside a union's
 * members, which Ajv does not fill but `copyForDefaults` does. The schemas are this package's,
 * checked by its tests (test/options/validate.test.ts): not checked against the meta-schema,
 * which compiling the meta-schema's own validator makes the larger part of the cost; nor
 * optimised, for a validator that runs once.
 */
export function createOptionsAjv (code: { source?: boolean, esm?: boolean } = {}): Ajv {
  return new Ajv({ allErrors: true, useDefaults: true, strictSchema: false, validateSchema: false, code: { optimize: false, ...code } })
}

/** A schema's key among the generated validators: a hash of its JSON, so that a changed schema is another key. */
export function schemaKey (schema: JsonSchema): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 16)
}

let ajv: Ajv | null = null
/** What the options need of a validator, compiled or generated (which has no `schema` of its own). */
type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

const generated = precompiled as Readonly<Record<string, Validate | undefined>>
const compiled = new WeakMap<JsonSchema, Validate>()

/**
 * A schema's validator: the generated one for its key (validators.generated.ts, `npm run
 * build:validators`), else compiled now, as a schema edited since the generation is.
 */
function validator (schema: JsonSchema): Validate {
  let validate = compiled.get(schema)
  if (validate === undefined) {
    validate = generated[schemaKey(schema)] ?? (ajv ??= createOptionsAjv()).compile(schema)
    compiled.set(schema, validate)
  }
  return validate
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

interface ObjectSchema { properties?: Record<string, JsonSchema>, items?: JsonSchema, anyOf?: readonly JsonSchema[] }

/**
 * A copy of `value` in which defaults may be written: every plain object and array the schema
 * describes by its properties is copied, so the application's own objects stay as given; what the
 * schema leaves open (a Kysely, a Redis client, policies, functions) is kept by reference. Ajv
 * fills no defaults inside a union's members (`auth.rateLimit: false | { max, ... }`), so an
 * object matched against a union gets its member's defaults here, before validation.
 */
function copyForDefaults (schema: JsonSchema, value: unknown): unknown {
  const s = schema as ObjectSchema
  if (Array.isArray(value)) return s.items !== undefined ? value.map((item) => copyForDefaults(s.items!, item)) : value
  if (!isPlainObject(value)) return value
  const member = s.properties !== undefined ? s : s.anyOf?.find((m) => (m as ObjectSchema).properties !== undefined) as ObjectSchema | undefined
  if (member?.properties === undefined) return value
  const copy: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const property = member.properties[key]
    copy[key] = property === undefined ? item : copyForDefaults(property, item)
  }
  // Its own validator fills the member's defaults (its errors are the union's, reported by the caller).
  if (member !== s) validator(member as JsonSchema)(copy)
  return copy
}

/** `webhooks` + `/endpoints/0/url` -> `webhooks.endpoints.0.url`; the root itself is `options`. */
function label (at: string, instancePath: string): string {
  const path = `${at}${instancePath.replaceAll('/', '.')}`.replace(/^\./, '')
  return path === '' ? 'options' : path
}

/**
 * `value` with the schema's defaults filled in (a copy: see `copyForDefaults`), and one line per
 * problem, each naming the option at fault under `at`. Properties a schema does not allow are
 * listed once per object ("unknown option(s) a, b"), and a value that is none of a union of
 * constants (`mode: 'apply' | 'dryRun' | 'off'`) is one "must be one of ...".
 *
 * @example
 * resolveSchema({ type: 'object', properties: { size: { type: 'integer', minimum: 1, default: 10 } } }, { size: 0 }, 'pool')
 * // { value: { size: 0 }, problems: ['pool.size: must be >= 1'] }
 */
export function resolveSchema<T> (schema: JsonSchema, input: unknown, at: string): { value: T, problems: string[] } {
  const value = copyForDefaults(schema, input)
  const validate = validator(schema)
  if (validate(value)) return { value: value as T, problems: [] }
  const errors = validate.errors ?? []
  const unknown = new Map<string, string[]>()
  const allowed = new Map<string, unknown[]>()
  for (const e of errors) {
    if (e.keyword === 'additionalProperties') unknown.set(e.instancePath, [...(unknown.get(e.instancePath) ?? []), String(e.params.additionalProperty)])
    if (e.keyword === 'const') allowed.set(e.instancePath, [...(allowed.get(e.instancePath) ?? []), e.params.allowedValue])
  }
  const problems: string[] = []
  for (const e of errors) {
    const path = label(at, e.instancePath)
    if (e.keyword === 'const') continue
    if (e.keyword === 'additionalProperties') {
      const names = unknown.get(e.instancePath)
      if (names === undefined) continue
      problems.push(`${path}: unknown option(s) ${names.join(', ')}`)
      unknown.delete(e.instancePath)
    } else if (e.keyword === 'anyOf' && allowed.has(e.instancePath)) {
      problems.push(`${path}: must be one of ${allowed.get(e.instancePath)!.map((v) => JSON.stringify(v)).join(', ')}`)
    } else {
      problems.push(`${path}: ${e.message ?? e.keyword}`)
    }
  }
  return { value: value as T, problems }
}
