import t from 'tap'
import pg from 'pg'
import { TAGS_PER_POST, postBody } from '../reliability/helpers.js'
import { call, needsPostgres, scratchDatabase, startInstances, type Instance } from './instances.js'

/**
 * Creates, draft updates and publishes sent at once through three instances in three processes,
 * on one PostgreSQL database: no acknowledged write is lost, none is stored twice, and no
 * document ends with two drafts, two published versions or a version without all its tags.
 *
 * Two kinds of documents are updated: each worker's own (one writer at a time, so the last
 * acknowledged update is what the database holds) and shared ones that every worker of every
 * instance updates at once (the stored title is one some writer was told was written).
 */

const WORKERS_PER_INSTANCE = 4
const DURATION_MS = 3000
const POST_ACTIONS = ['find', 'findOne', 'create', 'update', 'delete', 'publish'].map((a) => `api::post.post.${a}`)

interface Answer { status: number, body: any }

async function send (instance: Instance, method: string, path: string, payload?: unknown): Promise<Answer> {
  const res = await fetch(`${instance.url}${path}`, {
    method,
    headers: payload === undefined ? {} : { 'content-type': 'application/json' },
    body: payload === undefined ? undefined : JSON.stringify(payload)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : JSON.parse(text) }
}

/** A PUT that publishes (the REST default) or only writes the draft (`status=draft`). */
const update = async (instance: Instance, documentId: string, title: string, publish: boolean): Promise<Answer> =>
  await send(instance, 'PUT', `/api/posts/${documentId}${publish ? '' : '?status=draft'}`, postBody(title))

interface Row { document_id: string, title: string, published: boolean, tags: number }

t.test('scale-out: concurrent creates, updates and publishes through three instances lose nothing', { skip: needsPostgres, timeout: 120_000 }, async (t) => {
  const url = await scratchDatabase(t, 'writes')
  const instances = await startInstances(t, 3, { db: url })
  await call(instances[0], 'permissions', 'grant', ['public', POST_ACTIONS])
  for (const instance of instances) {
    // The grant reaches the others by notification; wait for it rather than for a TTL.
    for (let i = 0; i < 100 && (await send(instance, 'GET', '/api/posts')).status !== 200; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  }

  const shared: string[] = []
  for (let i = 0; i < 3; i++) {
    const res = await send(instances[i], 'POST', '/api/posts', postBody(`shared-${i}`))
    t.equal(res.status, 200, 'a shared document created')
    shared.push(res.body.data.documentId)
  }

  const statuses = new Map<number, number>()
  const created = new Set<string>()
  /** Per owned document, the last title acknowledged for its draft and for its published version. */
  const owned = new Map<string, { draft: string, published: string }>()
  /** Per shared document, every title acknowledged for each version. */
  const sharedTitles = new Map(shared.map((id, i) => [id, { draft: new Set([`shared-${i}`]), published: new Set([`shared-${i}`]) }]))
  const count = (status: number): void => { statuses.set(status, (statuses.get(status) ?? 0) + 1) }

  const stop = Date.now() + DURATION_MS
  const worker = async (instance: Instance, name: string): Promise<void> => {
    const mine: string[] = []
    for (let n = 0; Date.now() < stop; n++) {
      const title = `${name}-${n}`
      const step = n % 4
      if (step === 0 || mine.length === 0) {
        const res = await send(instance, 'POST', '/api/posts', postBody(title))
        count(res.status)
        if (res.status === 200) {
          created.add(res.body.data.documentId)
          mine.push(res.body.data.documentId)
          owned.set(res.body.data.documentId, { draft: title, published: title })
        }
      } else if (step === 1 || step === 2) {
        const documentId = mine[n % mine.length]
        const publish = step === 2
        const res = await update(instance, documentId, title, publish)
        count(res.status)
        if (res.status === 200) {
          const last = owned.get(documentId)!
          owned.set(documentId, publish ? { draft: title, published: title } : { ...last, draft: title })
        }
      } else {
        const documentId = shared[n % shared.length]
        const publish = n % 8 === 3
        const res = await update(instance, documentId, title, publish)
        count(res.status)
        if (res.status === 200) {
          const titles = sharedTitles.get(documentId)!
          titles.draft.add(title)
          if (publish) titles.published.add(title)
        }
      }
    }
  }
  await Promise.all(instances.flatMap((instance, i) =>
    Array.from({ length: WORKERS_PER_INSTANCE }, async (_, w) => { await worker(instance, `i${i}w${w}`) })))

  const answered = Object.fromEntries(statuses)
  t.same([...statuses.keys()].filter((s) => s !== 200 && s !== 503), [], `only 200 and 503 (${JSON.stringify(answered)})`)
  t.ok((statuses.get(200) ?? 0) > 50, `${statuses.get(200) ?? 0} writes acknowledged`)

  const admin = new pg.Client({ connectionString: url })
  admin.on('error', () => {})
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  const { rows } = await admin.query<Row>(`
    select p.document_id, p.title, p.published_at is not null as published,
      (select count(*)::int from posts_cmps c where c.entity_id = p.id and c.field = 'tags') as tags
    from posts p`)

  const versions = new Map<string, { draft: Row[], published: Row[] }>()
  for (const row of rows) {
    const entry = versions.get(row.document_id) ?? { draft: [], published: [] }
    entry[row.published ? 'published' : 'draft'].push(row)
    versions.set(row.document_id, entry)
  }
  const expected = new Set([...created, ...shared])
  t.same([...expected].filter((id) => !versions.has(id)), [], `every acknowledged create is stored (${created.size})`)
  t.same([...versions.keys()].filter((id) => !expected.has(id)), [], 'no document that was not acknowledged (none stored twice, none half-created)')
  t.same([...versions].filter(([, v]) => v.draft.length !== 1 || v.published.length > 1).map(([id]) => id), [],
    'one draft and at most one published version per document')
  t.same(rows.filter((r) => r.tags !== TAGS_PER_POST).map((r) => r.document_id), [], `every version has its ${TAGS_PER_POST} tags`)

  const lost: string[] = []
  for (const [documentId, last] of owned) {
    const { draft, published } = versions.get(documentId)!
    if (draft[0].title !== last.draft) lost.push(`${documentId} draft: ${draft[0].title} stored, ${last.draft} acknowledged last`)
    if (published[0]?.title !== last.published) lost.push(`${documentId} published: ${published[0]?.title} stored, ${last.published} acknowledged last`)
  }
  t.same(lost, [], `each owned document holds its last acknowledged update (${owned.size} documents)`)
  for (const [documentId, titles] of sharedTitles) {
    const { draft, published } = versions.get(documentId)!
    t.ok(titles.draft.has(draft[0].title), `shared ${documentId}: its draft's title was acknowledged (${titles.draft.size} updates)`)
    t.ok(titles.published.has(published[0].title), `shared ${documentId}: its published title was acknowledged (${titles.published.size} publishes)`)
  }
})
