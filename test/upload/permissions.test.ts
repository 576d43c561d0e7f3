import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { defineContentType } from '../../lib/index.js'
import type { UploadProvider } from '../../lib/options/upload-provider.js'
import { UPLOAD_ACTIONS } from '../../lib/upload/routes.js'
import { contentActions } from '../helpers/build.js'
import { buildUpload, png, pngPart, postUpload, type Part, type UploadApp } from './helpers.js'

/**
 * The upload routes within the caller's grants: linking (`ref`/`refId`/`field`) within the
 * `update` grant's conditions and fields on the entry's type; `?id=` (info update, replacement)
 * and new records within the `upload` grant's conditions; `DELETE` within the `destroy` grant's.
 * Each refusal is checked to leave nothing changed.
 */

const DOC = 'api::doc.doc'
const USER = 'plugin::users-permissions.user'
const PASSWORD = 'Password123!'

const doc = defineContentType({
  kind: 'collectionType',
  collectionName: 'docs',
  info: { singularName: 'doc', pluralName: 'docs', displayName: 'Doc' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string' },
    cover: { type: 'media', multiple: false },
    avatar: { type: 'media', multiple: false },
    gallery: { type: 'media', multiple: true },
    owner: { type: 'relation', relation: 'manyToOne', target: USER }
  }
})

const OWNED = { owner: { id: { $eq: '$user.id' } } }

interface User { jwt: string, user: { id: number, documentId: string, username: string } }
interface Entry { documentId: string, rows: number[] }

interface Setup extends UploadApp {
  alice: User
  bob: User
  as: (user: User) => Record<string, string>
  /** A doc owned by `owner` (published: a draft row and a published row). */
  createDoc: (title: string, owner: User) => Promise<Entry>
  /** The files linked to a doc's attribute, in the draft and in the published version. */
  linked: (entry: Entry, field: string) => Promise<{ draft: unknown, published: unknown }>
}

/** Content is private (no public grants): Alice and Bob act through the authenticated role. */
async function setup (t: Parameters<typeof buildUpload>[0], upload: Parameters<typeof buildUpload>[1] = {}): Promise<Setup> {
  const built = await buildUpload(t, { sizeOptimization: false, ...upload }, { models: [doc], grants: [] })
  const { app } = built
  await app.contentApi.permissions.revoke('public', contentActions(app))
  const register = async (username: string): Promise<User> => {
    const res = await app.inject({ method: 'POST', url: '/api/auth/local/register', payload: { username, email: `${username}@example.com`, password: PASSWORD } })
    if (res.statusCode !== 200) throw new Error(`register ${username}: ${res.body}`)
    return JSON.parse(res.body)
  }
  const docs = app.contentApi.documents(DOC)
  const createDoc = async (title: string, owner: User): Promise<Entry> => {
    const created = await docs.create({ data: { title, owner: owner.user.documentId } })
    return { documentId: created.documentId, rows: await rowsOf(app, created.documentId) }
  }
  const linked = async (entry: Entry, field: string): Promise<{ draft: unknown, published: unknown }> => {
    const read = async (status: 'draft' | 'published'): Promise<unknown> =>
      (await docs.findOne({ documentId: entry.documentId, status, populate: [field] }))?.[field]
    return { draft: await read('draft'), published: await read('published') }
  }
  return {
    ...built,
    alice: await register('alice'),
    bob: await register('bob'),
    as: (user) => ({ authorization: `Bearer ${user.jwt}` }),
    createDoc,
    linked
  }
}

/** A doc's row ids, draft first. */
async function rowsOf (app: FastifyInstance, documentId: string): Promise<number[]> {
  const rows = await app.contentApi.documents(DOC).findMany({ filters: { documentId }, status: 'draft', fields: ['title'] })
  const published = await app.contentApi.documents(DOC).findMany({ filters: { documentId }, fields: ['title'] })
  return [...rows, ...published].map((r) => r.id)
}

const link = (refId: number, field: string): Part[] =>
  [{ name: 'ref', value: DOC }, { name: 'refId', value: String(refId) }, { name: 'field', value: field }]

/** What an upload linking to an entry that does not exist answers. */
const noEntry = (refId: number): unknown => ({
  data: null,
  error: { status: 400, name: 'ValidationError', message: `No ${DOC} entry has id ${refId}`, details: { ref: DOC, refId } }
})

const NOT_FOUND = { data: null, error: { status: 404, name: 'NotFoundError', message: 'file.notFound', details: {} } }
const FORBIDDEN = { data: null, error: { status: 403, name: 'ForbiddenError', message: 'Forbidden', details: {} } }

t.test('linking: an entry outside the update grant\'s conditions answers as one that does not exist; nothing is stored or linked', async (t) => {
  const s = await setup(t)
  const { app, alice, bob, as } = s
  await app.contentApi.permissions.grant('authenticated', Object.values(UPLOAD_ACTIONS))
  await app.contentApi.permissions.grant('authenticated', [`${DOC}.update`], { conditions: OWNED, fields: ['title', 'avatar'] })
  const bobs = await s.createDoc('Bob\'s', bob)
  const alices = await s.createDoc('Alice\'s', alice)
  const gone = await s.createDoc('Gone', alice)
  await app.contentApi.documents(DOC).delete({ documentId: gone.documentId })

  const put = await app.inject({ method: 'PUT', url: `/api/docs/${bobs.documentId}`, headers: as(alice), payload: { data: { title: 'hijacked' } } })
  t.equal(put.statusCode, 404, 'the content route refuses Alice an update of Bob\'s doc')

  const missing = await postUpload(app, [...link(gone.rows[0], 'avatar'), pngPart('a.png')], '', as(alice))
  t.equal(missing.status, 400)
  t.strictSame(missing.body, noEntry(gone.rows[0]), 'the answer for an entry that does not exist')
  t.equal(bobs.rows.length, 2, 'Bob\'s doc has a draft and a published row')
  for (const rowId of bobs.rows) {
    const outside = await postUpload(app, [...link(rowId, 'avatar'), pngPart('a.png')], '', as(alice))
    t.equal(outside.status, 400, `row ${rowId}`)
    t.strictSame(outside.body, noEntry(rowId), 'Bob\'s doc answers exactly the same')
  }
  const reordered = await postUpload(app, [{ name: 'ref', value: DOC }, { name: 'refId', value: String(bobs.rows[1]) }, { name: 'field', value: 'avatar' }, pngPart('b.png'), { name: 'fileInfo', value: '{"caption":"x"}' }], '', as(alice))
  t.strictSame(reordered.body, noEntry(bobs.rows[1]), 'whatever the part order')

  t.equal(await s.records(), 0, 'no file record')
  t.strictSame(await s.stored(), [], 'no stored file')
  t.strictSame(await s.staged(), [], 'no staged file')
  t.strictSame(await s.linked(bobs, 'avatar'), { draft: null, published: null }, 'Bob\'s doc is not linked')

  const allowed = await postUpload(app, [...link(alices.rows[1], 'avatar'), pngPart('mine.png')], '', as(alice))
  t.equal(allowed.status, 201, 'Alice links to her own doc')
  t.match(await s.linked(alices, 'avatar'), { draft: { id: allowed.body[0].id }, published: { id: allowed.body[0].id } }, 'both versions')
  t.equal((await postUpload(app, [...link(bobs.rows[0], 'avatar'), pngPart('b.png')], '', as(bob))).status, 201, 'Bob links to his')
  t.match(await s.linked(bobs, 'avatar'), { draft: { name: 'b.png' }, published: { name: 'b.png' } })
})

t.test('linking: the update grant\'s fields must list the attribute (400 Invalid key)', async (t) => {
  const s = await setup(t)
  const { app, alice, as } = s
  await app.contentApi.permissions.grant('authenticated', Object.values(UPLOAD_ACTIONS))
  await app.contentApi.permissions.grant('authenticated', [`${DOC}.update`], { conditions: OWNED, fields: ['title', 'avatar'] })
  const alices = await s.createDoc('Alice\'s', alice)

  const put = await app.inject({ method: 'PUT', url: `/api/docs/${alices.documentId}`, headers: as(alice), payload: { data: { cover: null } } })
  const expected = { data: null, error: { status: 400, name: 'ValidationError', message: 'Invalid key cover', details: { key: 'cover', source: 'body' } } }
  t.strictSame(JSON.parse(put.body), expected, 'the content route\'s answer for a body key outside the limit')
  for (const field of ['cover', 'gallery']) {
    const refused = await postUpload(app, [...link(alices.rows[0], field), pngPart('a.png')], '', as(alice))
    t.equal(refused.status, 400, field)
    t.strictSame(refused.body, { ...expected, error: { ...expected.error, message: `Invalid key ${field}`, details: { key: field, source: 'body' } } })
  }
  t.equal(await s.records(), 0)
  t.strictSame(await s.stored(), [])
  t.strictSame(await s.linked(alices, 'cover'), { draft: null, published: null })
  t.strictSame(await s.linked(alices, 'gallery'), { draft: [], published: [] })

  await app.contentApi.permissions.grant('authenticated', [`${DOC}.update`], { conditions: OWNED })
  t.equal((await postUpload(app, [...link(alices.rows[0], 'cover'), pngPart('a.png')], '', as(alice))).status, 201, 'without a fields limit, any media attribute')
})

t.test('linking: conditions are checked on the draft, as for an update', async (t) => {
  const s = await setup(t)
  const { app, alice, bob, as } = s
  await app.contentApi.permissions.grant('authenticated', [UPLOAD_ACTIONS.upload])
  await app.contentApi.permissions.grant('authenticated', [`${DOC}.update`], { conditions: OWNED })
  // Published as Alice's, then given to Bob in a draft not yet published.
  const entry = await s.createDoc('Handed over', alice)
  await app.contentApi.documents(DOC).update({ documentId: entry.documentId, data: { owner: bob.user.documentId }, status: 'draft' })

  t.equal((await app.inject({ method: 'PUT', url: `/api/docs/${entry.documentId}`, headers: as(alice), payload: { data: { title: 'x' } } })).statusCode, 404)
  const published = entry.rows[1]
  const refused = await postUpload(app, [...link(published, 'cover'), pngPart('a.png')], '', as(alice))
  t.strictSame(refused.body, noEntry(published), 'Alice may not link to the published row either')
  t.equal(await s.records(), 0)
  t.strictSame(await s.linked(entry, 'cover'), { draft: null, published: null })
  t.equal((await postUpload(app, [...link(published, 'cover'), pngPart('b.png')], '', as(bob))).status, 201, 'Bob, who may update it, may')
})

t.test('linking: a change that takes the entry out of the conditions while files are stored is caught in the link\'s transaction', async (t) => {
  const objects = new Map<string, Buffer>()
  let onUpload = async (): Promise<void> => {}
  const provider: UploadProvider = {
    name: 'memory',
    async upload (file) {
      const chunks: Buffer[] = []
      for await (const chunk of file.stream()) chunks.push(chunk as Buffer)
      objects.set(file.key, Buffer.concat(chunks))
      await onUpload()
      return { url: `/memory/${file.key}` }
    },
    async delete (file) { objects.delete(file.key) }
  }
  const s = await setup(t, { provider })
  const { app, alice, bob, as } = s
  await app.contentApi.permissions.grant('authenticated', [UPLOAD_ACTIONS.upload])
  await app.contentApi.permissions.grant('authenticated', [`${DOC}.update`], { conditions: OWNED })
  const entry = await s.createDoc('Alice\'s for now', alice)
  // The early check passes; the doc changes hands while the provider stores the file.
  onUpload = async () => { await app.contentApi.documents(DOC).update({ documentId: entry.documentId, data: { owner: bob.user.documentId } }) }

  const refused = await postUpload(app, [...link(entry.rows[0], 'cover'), pngPart('a.png')], '', as(alice))
  t.strictSame(refused.body, noEntry(entry.rows[0]))
  t.equal(await s.records(), 0, 'the record is removed')
  t.strictSame([...objects.keys()], [], 'the stored object is removed')
  t.strictSame(await s.linked(entry, 'cover'), { draft: null, published: null }, 'nothing linked')

  onUpload = async () => {}
  const mine = await s.createDoc('Alice\'s', alice)
  t.equal((await postUpload(app, [...link(mine.rows[0], 'cover'), pngPart('a.png')], '', as(alice))).status, 201)
  t.equal(objects.size, 1)
})

t.test('linking: a link may not take the entry out of the conditions (403, nothing left)', async (t) => {
  const s = await setup(t)
  const { app, alice, as } = s
  await app.contentApi.permissions.grant('authenticated', [UPLOAD_ACTIONS.upload])
  // Alice may update her docs while they have no cover.
  await app.contentApi.permissions.grant('authenticated', [`${DOC}.update`], { conditions: { ...OWNED, cover: { id: { $null: true } } } })
  const entry = await s.createDoc('Alice\'s', alice)
  const refused = await postUpload(app, [...link(entry.rows[0], 'cover'), pngPart('a.png')], '', as(alice))
  t.equal(refused.status, 403)
  t.strictSame(refused.body, FORBIDDEN)
  t.equal(await s.records(), 0)
  t.strictSame(await s.stored(), [])
  t.strictSame(await s.linked(entry, 'cover'), { draft: null, published: null }, 'the link is rolled back')
  t.equal((await postUpload(app, [...link(entry.rows[0], 'gallery'), pngPart('a.png')], '', as(alice))).status, 201, 'another attribute is fine')
})

t.test('?id= and DELETE: a file outside the upload / destroy grant\'s conditions is an unknown file; nothing changes', async (t) => {
  const s = await setup(t)
  const { app, alice, bob, as, directory } = s
  // Files captioned with a user's name are theirs.
  const theirs = { conditions: { caption: { $eq: '$user.username' } } }
  await app.contentApi.permissions.grant('authenticated', [UPLOAD_ACTIONS.upload, UPLOAD_ACTIONS.destroy], theirs)
  await app.contentApi.permissions.grant('authenticated', [UPLOAD_ACTIONS.find, UPLOAD_ACTIONS.findOne])
  const captioned = (caption: string): Part => ({ name: 'fileInfo', value: JSON.stringify({ caption }) })
  const [bobs] = (await postUpload(app, [captioned('bob'), pngPart('bob.png', [0, 0, 255])], '', as(bob))).body
  const [alices] = (await postUpload(app, [captioned('alice'), pngPart('alice.png', [255, 0, 0])], '', as(alice))).body
  const stored = await s.stored()
  const record = async (id: number): Promise<unknown> => await app.contentApi.upload!.findOne(id)
  const before = await record(bobs.id)

  for (const key of [bobs.id, bobs.documentId]) {
    const info = await postUpload(app, [{ name: 'fileInfo', value: '{"name":"mine.png","caption":"alice"}' }], `?id=${key}`, as(alice))
    t.equal(info.status, 404, `info update by ${key as string}`)
    t.strictSame(info.body, NOT_FOUND)
    const json = await app.inject({ method: 'POST', url: `/api/upload?id=${key as string}`, headers: as(alice), payload: { fileInfo: { alternativeText: 'x' } } })
    t.strictSame(JSON.parse(json.body), NOT_FOUND, 'a JSON info update too')
    const replaced = await postUpload(app, [pngPart('evil.png', [0, 0, 0])], `?id=${key}`, as(alice))
    t.strictSame(replaced.body, NOT_FOUND, 'replacement')
    const deleted = await app.inject({ method: 'DELETE', url: `/api/upload/files/${key as string}`, headers: as(alice) })
    t.equal(deleted.statusCode, 404)
    t.strictSame(JSON.parse(deleted.body), NOT_FOUND, 'delete')
  }
  t.strictSame(await record(bobs.id), before, 'Bob\'s record is unchanged')
  t.strictSame(await s.stored(), stored, 'no object stored or removed')
  t.strictSame(await readFile(join(directory, `${bobs.hash as string}.png`)), png(0, 0, 255), 'Bob\'s file keeps its content')
  t.strictSame(await s.staged(), [])

  const info = await postUpload(app, [{ name: 'fileInfo', value: '{"alternativeText":"mine"}' }], `?id=${alices.id as number}`, as(alice))
  t.equal(info.status, 200, 'Alice updates her file')
  t.equal(info.body.alternativeText, 'mine')
  const replaced = await postUpload(app, [pngPart('new.png', [0, 255, 0], 8)], `?id=${alices.documentId as string}`, as(alice))
  t.equal(replaced.status, 200, 'and replaces it')
  t.strictSame(await readFile(join(directory, `${alices.hash as string}.png`)), png(0, 255, 0, 8, 8))
  t.equal((await app.inject({ method: 'DELETE', url: `/api/upload/files/${alices.id as number}`, headers: as(alice) })).statusCode, 200, 'and deletes it')
  t.equal(await record(alices.id), null)
  t.strictSame(await s.stored(), [`${bobs.hash as string}.png`])
})

t.test('POST /api/upload: what an upload or an info update leaves must satisfy the upload grant\'s conditions (403, nothing left)', async (t) => {
  const s = await setup(t)
  const { app, alice, as } = s
  await app.contentApi.permissions.grant('authenticated', [UPLOAD_ACTIONS.upload], { conditions: { caption: { $eq: '$user.username' } } })
  for (const parts of [[pngPart('a.png')], [{ name: 'fileInfo', value: '[{"caption":"alice"},{"caption":"bob"}]' }, pngPart('a.png'), pngPart('b.png')]]) {
    const refused = await postUpload(app, parts, '', as(alice))
    t.equal(refused.status, 403)
    t.strictSame(refused.body, FORBIDDEN)
  }
  t.equal(await s.records(), 0, 'no record, the first file of a refused pair included')
  t.strictSame(await s.stored(), [])

  const [mine] = (await postUpload(app, [{ name: 'fileInfo', value: '{"caption":"alice"}' }, pngPart('a.png')], '', as(alice))).body
  t.ok(mine?.id, 'a file within the conditions is uploaded')
  const moved = await postUpload(app, [{ name: 'fileInfo', value: '{"caption":"bob"}' }], `?id=${mine.id as number}`, as(alice))
  t.strictSame(moved.body, FORBIDDEN, 'an info update may not take the file out of them')
  t.match(await app.contentApi.upload!.findOne(mine.id), { caption: 'alice' }, 'and changed nothing')
})
