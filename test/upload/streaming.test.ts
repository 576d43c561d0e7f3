import t from 'tap'
import { request } from 'node:http'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { AddressInfo } from 'node:net'
import { buildUpload } from './helpers.js'

/**
 * Uploads stream from the socket to the staging file to the provider: a 200 MB file goes through
 * a real HTTP connection while the process's memory stays far below the file's size and the
 * event loop keeps turning. The body is generated as it is sent (one 64 KB chunk reused), so the
 * test itself never holds the file either.
 */

const MB = 1024 * 1024
const CHUNK = Buffer.alloc(64 * 1024, 'abcdefghijklmnopqrstuvwxyz0123456789')

/** A multipart body with one file of `size` bytes, produced chunk by chunk. */
function multipartStream (size: number, filename: string): { body: Readable, contentType: string } {
  const boundary = '----fca-streaming-boundary'
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  async function * generate (): AsyncGenerator<Buffer> {
    yield head
    let left = size
    while (left > 0) {
      const n = Math.min(left, CHUNK.length)
      yield n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n)
      left -= n
    }
    yield tail
  }
  return { body: Readable.from(generate(), { objectMode: false }), contentType: `multipart/form-data; boundary=${boundary}` }
}

async function post (port: number, body: Readable, contentType: string, onSent?: () => void): Promise<{ status: number, body: any }> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/upload', headers: { 'content-type': contentType } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (onSent !== undefined) req.on('finish', onSent)
    body.pipe(req)
  })
}

t.test('a 200 MB upload keeps memory bounded and the event loop responsive', async (t) => {
  const { app, directory, staged } = await buildUpload(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  global.gc?.()
  const base = process.memoryUsage()
  let peakRss = base.rss
  let peakHeap = base.heapUsed
  const sampler = setInterval(() => {
    const now = process.memoryUsage()
    peakRss = Math.max(peakRss, now.rss)
    peakHeap = Math.max(peakHeap, now.heapUsed)
  }, 20)
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  const size = 200 * MB
  const { body, contentType } = multipartStream(size, 'big.bin')
  const started = Date.now()
  // The event loop is watched while the bytes stream; the record's insert comes after (on PGlite
  // a query runs on this thread as WebAssembly, which says nothing about the upload path).
  const response = await post(port, body, contentType, () => { delay.disable() })
  clearInterval(sampler)
  delay.disable()
  t.equal(response.status, 201)
  const [file] = response.body
  t.match(file, { name: 'big.bin', ext: '.bin', mime: 'application/octet-stream', size: Math.round(size / 10) / 100 })
  t.equal((await stat(join(directory, `${file.hash}.bin`))).size, size, 'every byte stored')
  t.strictSame(await staged(), [], 'the staged copy is removed')
  const rssGrowth = (peakRss - base.rss) / MB
  const heapGrowth = (peakHeap - base.heapUsed) / MB
  const worstPause = delay.max / 1e6
  t.comment(`200 MB in ${Date.now() - started} ms; peak RSS +${rssGrowth.toFixed(1)} MB, heap +${heapGrowth.toFixed(1)} MB, longest event-loop pause ${worstPause.toFixed(0)} ms`)
  t.ok(rssGrowth < 100, `RSS grew by ${rssGrowth.toFixed(1)} MB (< 100 MB, half the file)`)
  t.ok(heapGrowth < 40, `heap grew by ${heapGrowth.toFixed(1)} MB (< 40 MB)`)
  t.ok(worstPause < 500, `while streaming, the event loop never paused for ${worstPause.toFixed(0)} ms or more`)
})

t.test('over the size limit on a real connection: the client gets its 413, nothing stays', async (t) => {
  const upload = await buildUpload(t, { sizeLimit: MB })
  await upload.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = upload.app.server.address() as AddressInfo
  const { body, contentType } = multipartStream(20 * MB, 'too-big.bin')
  const response = await post(port, body, contentType)
  t.equal(response.status, 413)
  t.match(response.body.error, { name: 'PayloadTooLargeError', message: `too-big.bin exceeds the size limit of ${MB} bytes` })
  t.strictSame(await upload.stored(), [])
  t.strictSame(await upload.staged(), [])
  t.equal(await upload.records(), 0)
})
