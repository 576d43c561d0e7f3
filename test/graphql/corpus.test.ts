import t from 'tap'
import { readFileSync, existsSync } from 'node:fs'
import { normalise } from '../helpers/oracle.js'
import { buildGraphql, FULL_TOKEN, READ_TOKEN } from './helpers.js'

/**
 * Strapi 5's own shapes against its recorded answers (copied from ../shared/oracle into
 * test/graphql/corpus): the `gql-*` cases in the flat shape, the `gql4-*` cases with
 * `v4CompatibilityMode`. Cases run in order on a freshly seeded app, as the replay script runs
 * them. Two recorded answers cannot apply to this server and are named below.
 */

const NOT_APPLICABLE: Record<string, string> = {
  'gql-introspection-summary': "Strapi's schema also has its admin's review-workflow types, upload and role mutations and GenericMorph",
  'gql-get-landing-html': "Strapi serves Apollo Sandbox from Apollo's CDN; this server serves GraphiQL from its own assets (sandbox.test.ts)"
}

interface Case { name: string, method: string, path: string, headers?: Record<string, string>, body?: unknown, save?: Record<string, string>, saveMode?: string }

function resolve (value: unknown, ctx: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\{\{(\w+)\}\}/g, (m, k: string) => {
      if (!(k in ctx)) throw new Error(`unresolved ${m}`)
      return String(ctx[k])
    })
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, ctx))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, ctx)]))
  return value
}

/** A query sent in a POST body (no mutation): sending it again changes nothing. */
function isRead (c: Case): boolean {
  const query = (c.body as { query?: unknown } | undefined)?.query
  return c.method === 'POST' && typeof query === 'string' && !/^\s*mutation\b/.test(query)
}

const pick = (value: any, path: string): unknown => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), value)

for (const [corpus, graphql] of [['flat', { format: 'flat' }], ['v4compat', { format: 'flat', v4CompatibilityMode: true }]] as const) {
  t.test(`${corpus}: the recorded Strapi answers`, async (t) => {
    const dir = new URL(`./corpus/${corpus}/`, import.meta.url)
    const requests = JSON.parse(readFileSync(new URL('requests.json', dir), 'utf8')) as { vars: Record<string, any>, cases: Case[] }
    const { app } = await buildGraphql(t, graphql)
    const ctx: Record<string, unknown> = { fullToken: FULL_TOKEN, readToken: READ_TOKEN }
    const send = async (spec: Case) => {
      const res = await app.inject({
        method: spec.method as any,
        url: spec.path,
        headers: { ...(spec.headers ?? {}), ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: spec.body === undefined ? undefined : JSON.stringify(spec.body)
      })
      let body: unknown = res.body
      try { body = JSON.parse(res.body) } catch {}
      return { status: res.statusCode, body }
    }
    for (const [name, v] of Object.entries(requests.vars)) {
      const value = pick((await send(resolve({ method: v.method, path: v.path, headers: v.headers, body: v.body }, ctx) as Case)).body, v.pick)
      if (value !== undefined) ctx[name] = value
    }
    let compared = 0
    let reads = 0
    for (const c of requests.cases) {
      const response = await send(resolve(c, ctx) as Case)
      for (const [key, path] of Object.entries(c.save ?? {})) {
        const value = pick(response.body, path)
        if (value !== undefined) ctx[key] = value
      }
      const file = new URL(`${c.name}.json`, dir)
      if (!existsSync(file) || NOT_APPLICABLE[c.name] !== undefined) continue
      const expected = JSON.parse(readFileSync(file, 'utf8')) as { status: number, body: unknown }
      t.equal(response.status, expected.status, `${c.name}: status`)
      t.strictSame(normalise(response.body), normalise(expected.body), `${c.name}: body`)
      compared++
      if (isRead(c)) {
        // Its second run is the compiled one (graphql-jit, lib/graphql/index.ts): the same answer.
        const again = await send(resolve(c, ctx) as Case)
        t.equal(again.status, expected.status, `${c.name}: status, compiled`)
        t.strictSame(normalise(again.body), normalise(expected.body), `${c.name}: body, compiled`)
        reads++
      }
    }
    t.ok(compared >= 40, `${compared} recorded answers compared`)
    t.ok(reads >= 25, `${reads} reads compared twice`)
  })
}
