import t from 'tap'
import { mkdtemp, readdir, rm, stat, statfs, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import contentApi, { type DatabaseOption } from '../../lib/index.js'
import { defaultBootSnapshot, scratchParent } from '../../lib/db/embedded.js'
import { createTestDatabase, DATABASE_URL, embeddedOnly, newPGlite } from '../helpers/database.js'
import { article } from '../fixtures/models.js'

/**
 * The forms of the `db` option: a Kysely instance the application owns, a PostgreSQL connection
 * string, an embedded PGlite in a data directory or in memory, or a PGlite instance given.
 */

// Several embedded PGlite instances boot here (seconds each, much more on a loaded machine).
t.setTimeout(300_000)

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Content types are private by default: these tests read and write as the public role. */
const ARTICLE_ACTIONS = ['find', 'findOne', 'create'].map((action) => `api::article.article.${action}`)

async function start (db: DatabaseOption): Promise<FastifyInstance> {
  // Booting embedded PGlite can take longer than Fastify's 10 s plugin timeout on a loaded machine.
  const app = Fastify({ logger: false, pluginTimeout: 120_000 })
  await app.register(contentApi, { models: [article], db, auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789' } })
  await app.ready()
  await app.contentApi.permissions.grant('public', ARTICLE_ACTIONS)
  return app
}

async function createArticle (app: FastifyInstance, title: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/articles', payload: { data: { title } } })
  if (res.statusCode !== 200) throw new Error(`create failed: ${res.body}`)
  return res.json().data.documentId
}

async function titles (app: FastifyInstance): Promise<string[]> {
  return (await app.inject('/api/articles')).json().data.map((d: { title: string }) => d.title)
}

t.test('a Kysely instance: used as given, never destroyed by the app', async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const app = await start(database.db)
  t.equal(app.contentApi.db, database.db, 'app.contentApi.db is the instance given')
  await createArticle(app, 'Through Kysely')
  await app.close()
  const { rows } = await sql<{ title: string }>`select title from articles where published_at is not null`.execute(database.db)
  t.same(rows.map((r) => r.title), ['Through Kysely'], 'still usable after the app closed, and the rows are there')

  const again = await start(database.db)
  t.teardown(() => again.close())
  t.same(await titles(again), ['Through Kysely'], 'a second app on the same instance sees the data')
})

t.test('a PostgreSQL connection string', { skip: DATABASE_URL === undefined || DATABASE_URL === '' ? 'DATABASE_URL is not set: no PostgreSQL server to connect to' : false }, async (t) => {
  const schema = `t_${randomBytes(6).toString('hex')}`
  const admin = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, max: 1 }) }) })
  await sql`create schema ${sql.id(schema)}`.execute(admin)
  t.teardown(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin)
    await admin.destroy()
  })
  const url = new URL(DATABASE_URL!)
  url.searchParams.set('options', `-c search_path=${schema}`)

  const app = await start(url.toString())
  const documentId = await createArticle(app, 'Through a connection string')
  t.equal((await app.inject(`/api/articles/${documentId}`)).json().data.title, 'Through a connection string')
  await app.close()
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(schema, 'articles')}`.execute(admin)
  t.equal(rows[0].n, 2, 'written to PostgreSQL (draft and published rows)')

  const withPool = await start({ connectionString: url.toString(), max: 2 })
  t.same(await titles(withPool), ['Through a connection string'], '{ connectionString, max } reaches the same database')
  await withPool.close()
  await t.rejects(withPool.contentApi.db.selectFrom('articles').selectAll().execute(), 'the pool the app created is closed with it')
})

t.test('{ dataDir }: the data survives closing and re-opening the app', { skip: embeddedOnly }, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'fca-pglite-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))

  const first = await start({ dataDir })
  const documentId = await createArticle(first, 'Persisted')
  await first.close()

  const second = await start({ dataDir })
  t.teardown(() => second.close())
  t.same(await titles(second), ['Persisted'], 'read back by a second app on the same dataDir')
  t.equal((await second.inject(`/api/articles/${documentId}`)).json().data.title, 'Persisted')
  t.same(second.contentApi.schemaPlan.statements, [], 'the schema is already there: nothing to sync')
})

t.test('omitted: a throwaway embedded PGlite', { skip: embeddedOnly }, async (t) => {
  const app = await start(undefined)
  t.teardown(() => app.close())
  const documentId = await createArticle(app, 'In memory')
  t.same(await titles(app), ['In memory'])
  t.equal((await app.inject(`/api/articles/${documentId}`)).statusCode, 200)
  t.ok(app.contentApi.schemaPlan.applied)

  const other = await start(undefined)
  t.teardown(() => other.close())
  t.same(await titles(other), [], 'each app gets its own in-memory database')

  // Its dialect starts transactions as Kysely's PostgreSQL driver does, settings included.
  const db = app.contentApi.db
  const isolation = async (trx: Kysely<any>): Promise<string> => (await sql<{ level: string }>`select current_setting('transaction_isolation') as level`.execute(trx)).rows[0].level
  t.equal(await db.transaction().execute(isolation), 'read committed', 'a plain transaction')
  t.equal(await db.transaction().setIsolationLevel('serializable').execute(isolation), 'serializable', 'setIsolationLevel')
  await t.rejects(db.transaction().setAccessMode('read only').execute(async (trx) => {
    await sql`insert into articles (document_id, title) values ('x', 'read only')`.execute(trx)
  }), /read-only transaction/, 'setAccessMode')
})

/** This process's scratch directories (lib/db/embedded.ts `scratchDataDir`) in `parent`, and another's. */
async function scratchDirs (pid = process.pid, parent = scratchParent()): Promise<string[]> {
  const named = new RegExp(`^fastify-content-api-db-[^-]+-${pid}-`)
  return (await readdir(parent)).filter((name) => named.test(name)).map((name) => join(parent, name))
}

/** A child process that starts the plugin without `db` and then `end`s: exits, or waits to be killed. */
function embeddedChild (end: 'exit' | 'wait'): ChildProcess {
  const script = `
    import Fastify from 'fastify'
    import contentApi from './lib/index.ts'
    import { article } from './test/fixtures/models.ts'
    const app = Fastify({ logger: false, pluginTimeout: 120_000 })
    await app.register(contentApi, { models: [article], auth: { jwtSecret: 'test-jwt-secret-0123456789', apiTokenSalt: 'test-api-token-salt-0123456789' } })
    await app.ready()
    console.log('ready')
    ${end === 'exit' ? 'process.exit(0)' : 'setInterval(() => {}, 1000)'}
  `
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
}

async function readyOrExit (child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('ready')) resolve() })
    child.once('exit', () => { resolve() })
    child.once('error', reject)
  })
}

t.test('omitted: the files are in a scratch directory, removed at close, at exit, or by the next start', { skip: embeddedOnly }, async (t) => {
  const before = await scratchDirs()
  const exitListeners = process.listenerCount('exit')
  const app = await start(undefined)
  const made = (await scratchDirs()).filter((dir) => !before.includes(dir))
  t.equal(made.length, 1, 'one new directory in the temporary directory')
  t.ok((await stat(join(made[0], 'PG_VERSION'))).isFile(), 'holding the cluster')
  const second = await start(undefined)
  t.equal(process.listenerCount('exit'), exitListeners + 1, 'one exit listener for all the open ones')
  await app.close()
  await t.rejects(stat(made[0]), { code: 'ENOENT' }, 'removed when the app closes')
  await second.close()
  t.equal(process.listenerCount('exit'), exitListeners, 'and none once they are closed')

  const memory = await start({ dataDir: 'memory://' })
  t.same((await scratchDirs()).filter((dir) => !before.includes(dir)), [], 'memory:// keeps the files in memory: no directory')
  await memory.close()

  // A process that exits without closing the app removes its directory as it exits.
  const exiting = embeddedChild('exit')
  await once(exiting, 'exit')
  t.equal(exiting.exitCode, 0)
  t.same(await scratchDirs(exiting.pid), [], 'removed at exit')

  // A killed process cannot: the next start in this temporary directory removes it, and only
  // those of processes that no longer run.
  const killed = embeddedChild('wait')
  t.teardown(() => { killed.kill('SIGKILL') })
  await readyOrExit(killed)
  const left = await scratchDirs(killed.pid)
  t.equal(left.length, 1, 'a running process\'s directory')
  const next = await start(undefined)
  t.same(await scratchDirs(killed.pid), left, 'kept while its process runs')
  await next.close()
  killed.kill('SIGKILL')
  await once(killed, 'exit')
  t.same(await scratchDirs(killed.pid), left, 'left by the killed process')
  const after = await start(undefined)
  t.teardown(() => after.close())
  t.same(await scratchDirs(killed.pid), [], 'removed by the next start')

  // One of another PID namespace (another container on a shared temporary directory): its PID
  // says nothing here, so it stays.
  const foreign = join(scratchParent(), `fastify-content-api-db-1-${killed.pid!}-other`)
  await writeFile(foreign, '')
  t.teardown(() => rm(foreign, { force: true }))
  await (await start(undefined)).close()
  t.ok((await stat(foreign)).isFile(), 'another namespace\'s directory is left alone')
})

t.test('omitted: the scratch directory is in TMPDIR when set, else in /dev/shm when it has room, else the temporary directory', { skip: embeddedOnly }, async (t) => {
  // The boot snapshot's default path follows TMPDIR too: the usual one, named before TMPDIR moves.
  const bootSnapshot = defaultBootSnapshot()
  const saved = { TMPDIR: process.env.TMPDIR, TMP: process.env.TMP, TEMP: process.env.TEMP }
  t.teardown(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })

  // Without TMPDIR (nor TMP, TEMP): Linux's memory file system when it has 1 GiB free.
  for (const name of Object.keys(saved)) delete process.env[name]
  const shm = process.platform === 'linux' ? await statfs('/dev/shm').catch(() => null) : null
  const roomy = shm !== null && shm.bavail * shm.bsize >= 1024 ** 3
  const unset = scratchParent()
  t.equal(unset, roomy ? '/dev/shm' : tmpdir(), roomy ? 'without TMPDIR: /dev/shm, which has room here' : 'without TMPDIR: the temporary directory (no /dev/shm with room here)')
  const before = await scratchDirs(process.pid, unset)
  const app = await start({ bootSnapshot })
  t.equal((await scratchDirs(process.pid, unset)).filter((dir) => !before.includes(dir)).length, 1, 'the cluster is made there')
  await app.close()
  t.same(await scratchDirs(process.pid, unset), before, 'and removed at close')

  // TMPDIR names where the process's temporary files go: obeyed, whatever /dev/shm has.
  const chosen = await mkdtemp(join(tmpdir(), 'fca-tmpdir-'))
  t.teardown(() => rm(chosen, { recursive: true, force: true }))
  process.env.TMPDIR = chosen
  t.equal(scratchParent(), chosen, 'TMPDIR set: there')
  delete process.env.TMPDIR
  process.env.TMP = chosen
  t.equal(scratchParent(), chosen, 'TMP set (which os.tmpdir() reads too): there')
  delete process.env.TMP
  process.env.TMPDIR = chosen
  const inChosen = await start({ bootSnapshot })
  t.equal((await scratchDirs(process.pid, chosen)).length, 1, 'the cluster is made in TMPDIR')
  await inChosen.close()
  t.same(await scratchDirs(process.pid, chosen), [], 'and removed at close')
})

t.test('omitted, where the temporary directory cannot be written: the files stay in memory', { skip: embeddedOnly }, async (t) => {
  const realTmp = tmpdir()
  const bootSnapshot = defaultBootSnapshot()
  const before = await scratchDirs()
  const notADirectory = join(realTmp, `fca-not-a-dir-${randomBytes(4).toString('hex')}`)
  await writeFile(notADirectory, '')
  t.teardown(() => rm(notADirectory, { force: true }))
  const saved = process.env.TMPDIR
  process.env.TMPDIR = notADirectory
  let app: FastifyInstance
  try {
    // The boot snapshot named where it is (its default path follows TMPDIR too).
    app = await start({ bootSnapshot })
  } finally {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
  }
  t.teardown(() => app.close())
  await createArticle(app, 'Kept in memory')
  t.same(await titles(app), ['Kept in memory'], 'the app starts and works')
  t.same((await scratchDirs()).filter((dir) => !before.includes(dir)), [], 'no directory made anywhere')
})

t.test('the embedded PGlite: small buffers unless db.settings says otherwise, new clusters from a boot snapshot', { skip: embeddedOnly }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fca-boot-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const bootSnapshot = join(dir, 'boot.tar')
  const setting = async (app: FastifyInstance, name: string): Promise<string> =>
    (await sql<{ value: string }>`select current_setting(${name}) as value`.execute(app.contentApi.db)).rows[0].value

  const first = await start({ bootSnapshot })
  t.equal(await setting(first, 'shared_buffers'), '8MB', 'the default buffer pool is small')
  t.ok((await stat(bootSnapshot)).size > 1_000_000, 'the first new cluster wrote the boot snapshot')
  await createArticle(first, 'First')
  await first.close()
  const written = (await stat(bootSnapshot)).mtimeMs

  const dataDir = join(dir, 'data')
  const second = await start({ dataDir, bootSnapshot, settings: { shared_buffers: '24MB', work_mem: 2048 } })
  t.equal(await setting(second, 'shared_buffers'), '24MB', 'db.settings replaces a default')
  t.equal(await setting(second, 'work_mem'), '2MB', 'and adds settings (a number is in the setting\'s unit)')
  t.same(await titles(second), [], 'a new cluster from the snapshot holds none of another app\'s rows')
  await createArticle(second, 'In the data directory')
  await second.close()
  t.equal((await stat(bootSnapshot)).mtimeMs, written, 'the snapshot was read, not written again')

  const third = await start({ dataDir, bootSnapshot })
  t.teardown(() => third.close())
  t.same(await titles(third), ['In the data directory'], 'an existing data directory is resumed, not replaced by the snapshot')
  t.equal(await setting(third, 'shared_buffers'), '8MB', 'settings are per start, not stored in the cluster')
})

t.test('the embedded PGlite: a boot snapshot that does not load is replaced', { skip: embeddedOnly }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fca-boot-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const bootSnapshot = join(dir, 'boot.tar')
  await writeFile(bootSnapshot, 'not a tar archive')
  const app = await start({ bootSnapshot })
  t.teardown(() => app.close())
  await createArticle(app, 'After initdb')
  t.same(await titles(app), ['After initdb'])
  t.ok((await stat(bootSnapshot)).size > 1_000_000, 'a valid snapshot replaced the broken one')
})

t.test('the embedded PGlite: a boot snapshot that does not load into a new dataDir is replaced', { skip: embeddedOnly }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fca-boot-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const bootSnapshot = join(dir, 'boot.tar')
  await writeFile(bootSnapshot, 'not a tar archive')
  const dataDir = join(dir, 'data')
  const app = await start({ dataDir, bootSnapshot })
  await createArticle(app, 'After initdb')
  t.same(await titles(app), ['After initdb'])
  t.ok((await stat(bootSnapshot)).size > 1_000_000, 'a valid snapshot replaced the broken one')
  await app.close()

  const again = await start({ dataDir, bootSnapshot })
  t.teardown(() => again.close())
  t.same(await titles(again), ['After initdb'], 'the directory initdb made is resumed')
})

t.test('the embedded PGlite: a boot snapshot that extracts but does not start, with no dataDir, is replaced', { skip: embeddedOnly }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fca-boot-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const bootSnapshot = join(dir, 'boot.tar')
  // A cluster's version file and nothing else: extracted, then refused by PostgreSQL.
  await writeFile(bootSnapshot, Buffer.concat([tarEntry('PG_VERSION', Buffer.from('17\n')), Buffer.alloc(1024)]))
  const before = await scratchDirs()
  const app = await start({ bootSnapshot })
  t.teardown(() => app.close())
  await createArticle(app, 'After initdb')
  t.same(await titles(app), ['After initdb'], 'the scratch directory was emptied and initdb ran')
  t.ok((await stat(bootSnapshot)).size > 1_000_000, 'a valid snapshot replaced the broken one')
  t.equal((await scratchDirs()).filter((d) => !before.includes(d)).length, 1, 'one scratch directory, in use')
})

/** One ustar record: a header (its checksum computed as tar does) and the data padded to 512 bytes. */
function tarEntry (name: string, data: Buffer): Buffer {
  const header = Buffer.alloc(512)
  header.write(name, 0, 100, 'utf8')
  header.write('0000644\0', 100, 'latin1')
  header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 'latin1')
  header.write('0', 156, 'latin1')
  header.write('ustar\u000000', 257, 'latin1')
  header.fill(' ', 148, 156)
  let sum = 0
  for (const byte of header) sum += byte
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1')
  return Buffer.concat([header, data, Buffer.alloc((512 - (data.length % 512)) % 512)])
}

t.test('the embedded PGlite: a boot snapshot naming a file outside the new dataDir writes nothing there, and initdb runs', { skip: embeddedOnly }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fca-boot-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const bootSnapshot = join(dir, 'boot.tar')
  await writeFile(bootSnapshot, Buffer.concat([tarEntry('PG_VERSION', Buffer.from('17\n')), tarEntry('../escaped', Buffer.from('x')), Buffer.alloc(1024)]))
  const app = await start({ dataDir: join(dir, 'data'), bootSnapshot })
  t.teardown(() => app.close())
  await createArticle(app, 'After initdb')
  t.same(await titles(app), ['After initdb'])
  t.notOk((await readdir(dir)).includes('escaped'), 'nothing written outside the data directory')
  t.ok((await stat(bootSnapshot)).size > 1_000_000, 'a valid snapshot replaced the refused one')
})

t.test('the embedded PGlite: bootSnapshot false runs initdb and writes nothing', { skip: embeddedOnly }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fca-boot-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const app = await start({ dataDir: join(dir, 'data'), bootSnapshot: false })
  t.teardown(() => app.close())
  await createArticle(app, 'No snapshot')
  t.same(await titles(app), ['No snapshot'])
  t.same((await readdir(dir)).sort(), ['data'], 'no snapshot file next to the data')
})

t.test('{ pglite }: an instance the application owns, left open', { skip: embeddedOnly }, async (t) => {
  const pglite = await newPGlite()
  t.teardown(() => pglite.close())
  const app = await start({ pglite })
  await createArticle(app, 'Shared PGlite')
  await app.close()
  t.equal(pglite.closed, false, 'not closed with the app')
  const { rows } = await pglite.query<{ title: string }>('select title from articles where published_at is not null')
  t.same(rows.map((r) => r.title), ['Shared PGlite'])
})
