// The package as an application installs it (.ci/run copies this file into a fresh app beside
// node_modules/fastify-content-api): register with a model on embedded PGlite, create a document
// over REST (its uid made from its title by the bundle's slugify: the letters the build writes as
// escapes), list it, read it back through GraphQL. Exits non-zero on the first failed check.
import assert from 'node:assert/strict'
import Fastify from 'fastify'
import contentApi, { defineContentType } from 'fastify-content-api'

const note = defineContentType({
  kind: 'collectionType',
  info: { singularName: 'note', pluralName: 'notes' },
  attributes: { title: { type: 'string', required: true }, slug: { type: 'uid', targetField: 'title' }, words: { type: 'integer' } }
})

// PGlite's start takes longer than Fastify's default 10 s plugin timeout on a busy machine.
const app = Fastify({ logger: { level: 'warn' }, pluginTimeout: 120_000 })
try {
  await app.register(contentApi, { models: [note], auth: { jwtSecret: 'smoke-jwt-secret-0123456789abcdef', apiTokenSalt: 'smoke-api-token-salt-0123456789' } })
  await app.ready()
  await app.contentApi.permissions.grant('public', ['find', 'create'].map((action) => `api::note.note.${action}`))

  const title = 'Packed and installed: Straße, Łódź, Œuvre'
  const created = await app.inject({ method: 'POST', url: '/api/notes', payload: { data: { title, words: 3 } } })
  assert.equal(created.statusCode, 200, created.body)
  const { documentId, slug } = created.json().data
  assert.match(documentId, /^[a-z0-9]{24}$/)
  assert.equal(slug, 'packed-and-installed-strasse-lodz-oeuvre')

  const listed = await app.inject({ method: 'GET', url: '/api/notes?filters[words][$gte]=3' })
  assert.equal(listed.statusCode, 200, listed.body)
  assert.deepEqual(listed.json().data.map((n) => [n.documentId, n.title]), [[documentId, title]])

  const graphql = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ notes(filters: { words: { gte: 3 } }) { data { id attributes { title words } } } }' } })
  assert.equal(graphql.statusCode, 200, graphql.body)
  assert.deepEqual(graphql.json(), { data: { notes: { data: [{ id: documentId, attributes: { title, words: 3 } }] } } })
  // The sandbox's assets are found from the bundled chunk that serves them (dist/sandbox/ of the package).
  const asset = await app.inject({ method: 'GET', url: '/graphql/sandbox/graphiql.js' })
  assert.equal(asset.statusCode, 200, asset.body.slice(0, 200))
  assert.match(asset.headers['content-type'], /^application\/javascript/)
  console.log('smoke: registered on PGlite, created, listed, queried over GraphQL, served the sandbox')
} finally {
  await app.close()
}
