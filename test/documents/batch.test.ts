import t from 'tap'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { BatchOperationError, ValidationError, defineComponent, defineContentType, type BatchOperation } from '../../lib/index.js'
import { build } from '../helpers/build.js'
import { DATABASE_URL, dialectName } from '../helpers/database.js'
import { countRows } from '../fixtures/relations.js'

/**
 * `app.contentApi.documents.batch()`: the document service's atomic batch, the executor behind
 * `POST /api/batch` (test/rest/batch.test.ts has the route's checks).
 */

t.setTimeout(120_000)

const TOPIC = 'api::topic.topic'
const NOTE = 'api::note.note'

/** A component with an attribute named `lid`: only relations' `{ lid }` are resolved. */
const pick = defineComponent({
  collectionName: 'components_shared_picks',
  info: { displayName: 'Pick' },
  attributes: { lid: { type: 'string' }, label: { type: 'string' } }
})
const topic = defineContentType({
  kind: 'collectionType',
  collectionName: 'topics',
  info: { singularName: 'topic', pluralName: 'topics', displayName: 'Topic' },
  attributes: { name: { type: 'string', required: true } }
})
const note = defineContentType({
  kind: 'collectionType',
  collectionName: 'notes',
  info: { singularName: 'note', pluralName: 'notes', displayName: 'Note' },
  options: { draftAndPublish: true },
  attributes: {
    title: { type: 'string', required: true },
    topic: { type: 'relation', relation: 'manyToOne', target: TOPIC },
    topics: { type: 'relation', relation: 'manyToMany', target: TOPIC },
    pick: { type: 'component', component: 'shared.pick', repeatable: false },
    picks: { type: 'component', component: 'shared.pick', repeatable: true },
    blocks: { type: 'dynamiczone', components: ['shared.pick'] }
  }
})
const options = { models: [topic, note], components: { 'shared.pick': pick }, graphql: false as const, upload: { enabled: false } }

t.test('lids in relations, in every input form; a component attribute named lid untouched', async (t) => {
  const { app } = await build(t, options)
  const [first, second, written] = await app.contentApi.documents.batch([
    { op: 'create', uid: TOPIC, lid: 'a', data: { name: 'A' } },
    { op: 'create', uid: TOPIC, lid: 'b', data: { name: 'B' } },
    {
      op: 'create',
      uid: NOTE,
      data: {
        title: 'n',
        topic: { lid: 'a' },
        topics: { connect: [{ lid: 'b' }, { lid: 'a', position: { before: { lid: 'b' } } }] },
        pick: { lid: 'just text' },
        blocks: [{ __component: 'shared.pick', lid: 'y' }]
      },
      populate: ['topic', 'topics', 'pick', 'blocks']
    }
  ]) as any[]
  t.match(written, { topic: { documentId: first.documentId }, pick: { lid: 'just text' }, blocks: [{ lid: 'y' }] })
  t.same(written.topics.map((x: any) => x.name), ['A', 'B'], 'connect and position anchors by lid')
  t.equal(second.name, 'B')
  const [, replaced] = await app.contentApi.documents.batch([
    { op: 'create', uid: TOPIC, lid: 'c', data: { name: 'C' } },
    { op: 'update', uid: NOTE, documentId: written.documentId, data: { topics: { set: [{ lid: 'c' }] }, topic: [{ lid: 'c' }] }, populate: ['topic', 'topics'] }
  ]) as any[]
  t.match(replaced, { topic: { name: 'C' }, topics: [{ name: 'C' }] }, 'set and the array form')
})

t.test('publish, unpublish and discardDraft; a missing document to update is a 404 of its operation', async (t) => {
  const { app } = await build(t, options)
  const notes = app.contentApi.documents(NOTE)
  const results = await app.contentApi.documents.batch([
    { op: 'create', uid: NOTE, lid: 'n', data: { title: 'draft only' }, status: 'draft' },
    { op: 'publish', uid: NOTE, documentId: { lid: 'n' } },
    { op: 'update', uid: NOTE, documentId: { lid: 'n' }, data: { title: 'edited' }, status: 'draft' },
    { op: 'discardDraft', uid: NOTE, documentId: { lid: 'n' } }
  ]) as any[]
  const documentId = results[0].documentId as string
  t.equal(results[1].entries.length, 1, 'published')
  t.equal(results[3].entries[0].title, 'draft only', 'the draft discarded back to the published version')
  t.equal((await notes.findOne({ documentId }))?.title, 'draft only')

  const unpublished = await app.contentApi.documents.batch([{ op: 'unpublish', uid: NOTE, documentId }]) as any[]
  t.equal(unpublished[0].entries, 1)
  t.equal(await notes.findOne({ documentId }), null, 'no published version any more')

  const before = await countRows(app, 'topics')
  const err = await app.contentApi.documents.batch([
    { op: 'create', uid: TOPIC, data: { name: 'kept?' } },
    { op: 'update', uid: TOPIC, documentId: 'nosuchdocument0000000000', data: { name: 'x' } }
  ]).catch((e: unknown) => e)
  t.ok(err instanceof BatchOperationError)
  t.match(err, { status: 404, name: 'NotFoundError', operation: 1, details: { operation: 1 } })
  t.equal(await countRows(app, 'topics'), before, 'rolled back')

  const bad = await app.contentApi.documents.batch([{ op: 'upsert', uid: TOPIC } as unknown as BatchOperation]).catch((e: unknown) => e)
  t.match(bad, { status: 400, details: { operation: 0, path: 'op' } })
  t.ok((bad as BatchOperationError).cause instanceof ValidationError, 'the operation\'s own error is the cause')
  const unknown = await app.contentApi.documents.batch([{ op: 'create', uid: 'api::nope.nope', data: {} }]).catch((e: unknown) => e)
  t.match(unknown, { status: 400, details: { operation: 0, path: 'uid' } })
})

t.test('middlewares see each operation; results pass through after hooks run at the batch\'s end', async (t) => {
  const { app } = await build(t, options)
  const seen: string[] = []
  app.contentApi.documents.use(async (context, next) => {
    seen.push(`${context.action} ${context.uid}`)
    return await next()
  })
  app.contentApi.lifecycles.subscribe({ models: [TOPIC], afterCreate (event) { event.result = { ...event.result, decorated: true } } })
  const [created] = await app.contentApi.documents.batch([
    { op: 'create', uid: TOPIC, data: { name: 'one' } },
    { op: 'delete', uid: TOPIC, documentId: 'nosuchdocument0000000000' }
  ]) as any[]
  t.same(seen, [`create ${TOPIC}`, `delete ${TOPIC}`])
  t.equal(created.decorated, true, 'an after hook\'s result is the operation\'s')
})

t.test('change notifications to other instances go out on commit only', { skip: dialectName !== 'postgres' && 'PostgreSQL only (LISTEN/NOTIFY)' }, async (t) => {
  const channel = `batch_${randomBytes(6).toString('hex')}`
  const { app } = await build(t, { ...options, notifications: { connectionString: DATABASE_URL, channel } })
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  t.teardown(async () => { await client.end() })
  const heard: Array<{ u: string, a: string }> = []
  client.on('notification', (message) => { heard.push(JSON.parse(message.payload ?? '{}')) })
  await client.query(`listen "${channel}"`)

  await app.contentApi.documents.batch([
    { op: 'create', uid: TOPIC, data: { name: 'one' } },
    { op: 'create', uid: TOPIC, data: {} }
  ]).catch(() => {})
  await app.contentApi.documents.batch([
    { op: 'create', uid: TOPIC, data: { name: 'two' } },
    { op: 'create', uid: NOTE, data: { title: 'three' } }
  ])
  // A round trip on the listening connection: notifications committed before it are delivered by then.
  await client.query('select 1')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(heard.map((m) => [m.u, m.a]), [[TOPIC, 'create'], [NOTE, 'create']], 'only the committed batch\'s writes, in order')
})

t.test('two batches locking the same documents in opposite orders: one commits, the other is a 503 with nothing written', { skip: dialectName !== 'postgres' && 'PostgreSQL only (concurrent transactions)' }, async (t) => {
  const { app } = await build(t, options)
  const topics = app.contentApi.documents(TOPIC)
  const x = await topics.create({ data: { name: 'x' } })
  const y = await topics.create({ data: { name: 'y' } })
  // Each batch's second update waits (in its before hook, its first lock held) for the other's.
  let waiting = 0
  let release = (): void => {}
  const both = new Promise<void>((resolve) => { release = resolve })
  app.contentApi.lifecycles.subscribe({
    models: [TOPIC],
    async beforeUpdate (event) {
      if (!String(event.params.data.name).endsWith('2')) return
      if (++waiting === 2) release()
      await Promise.race([both, new Promise((resolve) => setTimeout(resolve, 5000))])
    }
  })
  const settled = await Promise.allSettled([
    app.contentApi.documents.batch([
      { op: 'update', uid: TOPIC, documentId: x.documentId, data: { name: 'A1' } },
      { op: 'update', uid: TOPIC, documentId: y.documentId, data: { name: 'A2' } }
    ]),
    app.contentApi.documents.batch([
      { op: 'update', uid: TOPIC, documentId: y.documentId, data: { name: 'B1' } },
      { op: 'update', uid: TOPIC, documentId: x.documentId, data: { name: 'B2' } }
    ])
  ])
  const failed = settled.filter((s) => s.status === 'rejected')
  t.equal(failed.length, 1, 'one batch lost the deadlock')
  t.match((failed[0] as PromiseRejectedResult).reason, { status: 503, name: 'ServiceUnavailableError' }, 'a 503 to retry, as a single write\'s lost race')
  const names = [(await topics.findOne({ documentId: x.documentId }))?.name, (await topics.findOne({ documentId: y.documentId }))?.name]
  t.ok(JSON.stringify(names) === '["A1","A2"]' || JSON.stringify(names) === '["B2","B1"]', `the winner's writes only: ${names.join(', ')}`)
})
