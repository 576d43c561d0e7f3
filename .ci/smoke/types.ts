// An application's TypeScript, type-checked against the installed package's declarations (.ci/run
// copies this file into the fresh app, which has none of our development packages, @fastify/swagger
// included). skipLibCheck, as most applications set it: PGlite's own declarations need
// @types/emscripten; declarations.mjs checks what ours import.
import Fastify from 'fastify'
import contentApi, { defineContentType, type ContentApiOptions, type SchemasOf } from 'fastify-content-api'
import { createClient } from 'fastify-content-api/client'

const note = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'note', pluralName: 'notes' },
  attributes: { title: { type: 'string', required: true } }
})
const options: ContentApiOptions = { models: [note], db: process.env.DATABASE_URL }

const app = Fastify({ pluginTimeout: 120_000 })
await app.register(contentApi, options)
const notes = app.contentApi.documents('api::note.note')
const first: Record<string, unknown> | null = await notes.findFirst({ filters: { title: { $startsWith: 'A' } } })
console.log(first?.title)

// The typed client, from its own entry (docs/client.md).
const client = createClient<SchemasOf<[typeof note]>>({ baseUrl: 'http://127.0.0.1:3000/api' })
const page = await client.collection('notes').find({ fields: ['title'] })
const title: string | undefined = page.data[0]?.title
console.log(title)
