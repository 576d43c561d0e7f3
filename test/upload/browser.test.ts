import t from 'tap'
import { existsSync } from 'node:fs'
import { chromium, type Page } from 'playwright-core'
import { buildUpload, postUpload, type Part } from './helpers.js'

/**
 * What a real browser (Debian's chromium, driven by playwright-core) does with the uploads the
 * server serves: the claims of docs/operations.md#media-served-safely, checked rather than assumed.
 */

const CHROMIUM = '/usr/bin/chromium'
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><style>rect { fill: rgb(0, 0, 255) }</style><script>alert("svg")</script><rect id="r" width="8" height="8" fill="red"/></svg>')
const fill = async (page: Page): Promise<string> => await page.evaluate(() => getComputedStyle(document.getElementById('r')!).fill)
const HTML = Buffer.from('<!doctype html><title>x</title><script>alert("html")</script>')
const part = (filename: string, data: Buffer, type: string): Part => ({ name: 'files', filename, type, data })

t.test('in Chromium', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install -y chromium)` }, async (t) => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] })
  t.teardown(async () => { await browser.close() })

  /** A page of the server's origin whose body is `html`, and the alerts anything on it raised. */
  async function pageOf (address: string, html: string): Promise<{ page: Page, alerts: string[] }> {
    const page = await browser.newPage({ acceptDownloads: true })
    const alerts: string[] = []
    page.on('dialog', (dialog) => {
      alerts.push(dialog.message())
      dialog.dismiss().catch(() => {})
    })
    await page.route(`${address}/test-page`, async (route) => { await route.fulfill({ contentType: 'text/html', body: html }) })
    await page.goto(`${address}/test-page`)
    return { page, alerts }
  }

  t.test('by default: an SVG logo still shows as an image, active files download and never run', async (t) => {
    const { app } = await buildUpload(t)
    const { body: [svg, html, script, text] } = await postUpload(app, [
      part('logo.svg', SVG, 'image/svg+xml'), part('page.html', HTML, 'text/html'),
      part('app.js', Buffer.from('window.ran = true'), 'text/javascript'), part('notes.txt', HTML, 'text/plain')
    ])
    const address = await app.listen({ host: '127.0.0.1', port: 0 })

    // Browsers ignore Content-Disposition (and the image's CSP) for a sub-resource.
    const { page, alerts } = await pageOf(address, `<img id="logo" src="${svg.url}"><script src="${script.url}"></script>`)
    await page.waitForFunction(() => (document.getElementById('logo') as HTMLImageElement).complete)
    t.equal(await page.evaluate(() => (document.getElementById('logo') as HTMLImageElement).naturalWidth), 8, 'the SVG attachment renders in <img>')
    t.equal(await page.evaluate(() => (window as any).ran), undefined, 'a page of the origin cannot run an uploaded script with <script src>')
    t.equal(await page.evaluate(async (url) => await new Promise((resolve) => {
      const worker = new Worker(url)
      worker.onerror = () => { resolve('refused') }
      setTimeout(() => { resolve('started') }, 1000)
    }), script.url), 'refused', 'nor start it as a worker')

    for (const file of [svg, html]) {
      const download = page.waitForEvent('download')
      await page.goto(`${address}${file.url}`).catch(() => {})
      t.equal((await download).suggestedFilename(), `${file.hash}${file.ext}`, `opening ${file.name} downloads it`)
    }
    await page.goto(`${address}${text.url}`)
    t.match(await page.evaluate(() => document.body.textContent), /<script>alert\("html"\)<\/script>/, 'HTML in a .txt file shows as text')
    t.same(alerts, [], 'no script of an upload ran')
  })

  t.test('types allowed inline: an SVG opens as a picture, its script blocked by the sandboxing CSP; a script runs', async (t) => {
    const { app } = await buildUpload(t, { inlineTypes: ['image/svg+xml', 'text/javascript'] })
    const { body: [svg, script] } = await postUpload(app, [part('logo.svg', SVG, 'image/svg+xml'), part('app.js', Buffer.from('window.ran = true'), 'text/javascript')])
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const { page, alerts } = await pageOf(address, `<script src="${script.url}"></script>`)
    t.equal(await page.evaluate(() => (window as any).ran), true, 'an allowed script loads with <script src>')

    // The control: the same bytes without the upload headers run their script.
    await page.route(`${address}/unprotected.svg`, async (route) => { await route.fulfill({ contentType: 'image/svg+xml', body: SVG }) })
    await page.goto(`${address}/unprotected.svg`)
    await page.waitForTimeout(200)
    t.same(alerts, ['svg'], 'the control runs: the check below can fail')
    t.equal(await fill(page), 'rgb(0, 0, 255)', 'and its <style> applies')

    alerts.length = 0
    const response = await page.goto(`${address}${svg.url}`)
    t.equal(response?.status(), 200)
    t.equal(await page.evaluate(() => document.documentElement.localName), 'svg', 'rendered inline')
    await page.waitForTimeout(200)
    t.same(alerts, [], 'its script did not run')
    t.equal(await page.evaluate(() => window.origin), 'null', 'and the document has an opaque origin')
    t.equal(await fill(page), 'rgb(255, 0, 0)', 'default-src \'none\' keeps its own <style> from applying too')
  })
})
