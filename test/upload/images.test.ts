import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { buildUpload, png, postUpload, type Part } from './helpers.js'

/**
 * Images: dimensions from the image itself; with sharp installed, Strapi's optimisation, a
 * thumbnail and responsive formats; without it, originals as they are and `formats: null`.
 */

const solid = async (width: number, height: number, format: 'png' | 'jpeg' = 'png'): Promise<Buffer> =>
  await sharp({ create: { width, height, channels: 3, background: '#3366cc' } })[format]().toBuffer()

const part = (filename: string, data: Buffer, type = 'image/png'): Part => ({ name: 'files', filename, type, data })

t.test('with sharp: a thumbnail and every breakpoint the image exceeds, stored and deleted with it', async (t) => {
  const { app, directory, stored } = await buildUpload(t)
  const { status, body } = await postUpload(app, [part('wide.png', await solid(1200, 800))])
  t.equal(status, 201)
  const [file] = body
  t.match(file, { width: 1200, height: 800, mime: 'image/png' })
  t.strictSame(Object.keys(file.formats).sort(), ['large', 'medium', 'small', 'thumbnail'])
  const sizes = Object.fromEntries(Object.entries(file.formats).map(([k, f]: [string, any]) => [k, [f.width, f.height]]))
  t.strictSame(sizes, { thumbnail: [234, 156], large: [1000, 667], medium: [750, 500], small: [500, 333] }, 'fit inside each box')
  const thumbnail = file.formats.thumbnail
  t.strictSame(Object.keys(thumbnail).sort(), ['ext', 'hash', 'height', 'mime', 'name', 'path', 'size', 'sizeInBytes', 'url', 'width'])
  t.match(thumbnail, { name: 'thumbnail_wide.png', hash: `thumbnail_${file.hash}`, ext: '.png', mime: 'image/png', path: null, url: `/uploads/thumbnail_${file.hash}.png` })
  const bytes = await readFile(join(directory, `thumbnail_${file.hash}.png`))
  t.equal(thumbnail.sizeInBytes, bytes.length)
  t.equal(thumbnail.size, Math.round(bytes.length / 10) / 100, 'size in KB with two decimals')
  t.match((await sharp(bytes).metadata()), { width: 234, height: 156, format: 'png' })
  t.equal((await stored()).length, 5)
  t.equal((await app.inject({ method: 'GET', url: thumbnail.url })).statusCode, 200)

  await app.inject({ method: 'DELETE', url: `/api/upload/files/${file.id}` })
  t.strictSame(await stored(), [], 'the formats go with the file')
})

t.test('with sharp: a small image gets no formats; the settings turn each step off', async (t) => {
  const { app } = await buildUpload(t, { thumbnail: false, breakpoints: { xl: 1100, tiny: 100 } })
  const [small] = (await postUpload(app, [part('small.png', await solid(200, 100))])).body
  t.match(small, { width: 200, height: 100 })
  t.strictSame(Object.keys(small.formats), ['tiny'], 'only breakpoints the image exceeds')
  const [wide] = (await postUpload(app, [part('wide.png', await solid(1200, 300))])).body
  t.strictSame(Object.keys(wide.formats).sort(), ['tiny', 'xl'])

  const off = await buildUpload(t, { thumbnail: false, responsiveDimensions: false })
  const [none] = (await postUpload(off.app, [part('wide.png', await solid(1200, 800))])).body
  t.equal(none.formats, null)
  t.equal((await off.stored()).length, 1)
})

t.test('with sharp: sizeOptimization re-encodes as Strapi does (its 4x4 squares weigh 0.1 KB)', async (t) => {
  const { app, directory } = await buildUpload(t)
  const [optimized] = (await postUpload(app, [part('red.png', png(255, 0, 0))])).body
  t.equal(optimized.size, 0.1, 'the re-encoded square, as Strapi records it')
  t.not((await readFile(join(directory, `${optimized.hash}.png`))).length, png(255, 0, 0).length)

  const raw = await buildUpload(t, { sizeOptimization: false })
  const [original] = (await postUpload(raw.app, [part('red.png', png(255, 0, 0))])).body
  t.equal(original.size, 0.07, 'sizeOptimization: false keeps the original bytes')
  t.strictSame(await readFile(join(raw.directory, `${original.hash}.png`)), png(255, 0, 0))
})

t.test('with sharp: autoOrientation turns an EXIF-rotated JPEG upright', async (t) => {
  const rotated = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#fff' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer()
  const plain = await buildUpload(t)
  const [asIs] = (await postUpload(plain.app, [part('photo.jpg', rotated, 'image/jpeg')])).body
  t.match(asIs, { width: 40, height: 20 }, 'the stored dimensions by default')
  const oriented = await buildUpload(t, { autoOrientation: true })
  const [upright] = (await postUpload(oriented.app, [part('photo.jpg', rotated, 'image/jpeg')])).body
  t.match(upright, { width: 20, height: 40 })
})

t.test('without sharp: dimensions from the header, originals untouched, no formats', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'fca-no-sharp-input-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const inputs = {
    'wide.png': await solid(1200, 800),
    'photo.jpg': await solid(30, 10, 'jpeg'),
    'red.png': png(255, 0, 0),
    'notes.txt': Buffer.from('hello')
  }
  for (const [name, data] of Object.entries(inputs)) await writeFile(join(root, name), data)
  const here = fileURLToPath(new URL('.', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import', 'tsx', '--import', join(here, 'fixtures/no-sharp-hook.mjs'), join(here, 'fixtures/upload-once.ts'),
    ...Object.keys(inputs).map((name) => join(root, name))
  ], { cwd: join(here, '../..'), env: { ...process.env, DATABASE_URL: '' } })
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!)
  t.equal(result.sharp, false, 'sharp cannot be loaded in the child')
  t.match(result.records, [
    { name: 'wide.png', width: 1200, height: 800, formats: null, size: Math.round(inputs['wide.png'].length / 10) / 100 },
    { name: 'photo.jpg', width: 30, height: 10, formats: null, mime: 'image/jpeg' },
    { name: 'red.png', width: 4, height: 4, size: 0.07, formats: null },
    { name: 'notes.txt', width: null, height: null, mime: 'text/plain' }
  ])
  t.equal(result.stored, 4, 'one stored file each, no formats')
})
