import t from 'tap'
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'
import { build } from '../helpers/build.js'
import { note } from './helpers.js'

/**
 * The sandbox in a real browser (Debian's chromium, driven by playwright-core): the page loads
 * with its own content-security policy and no other host, runs a query typed in the editor with
 * an `Authorization` header from the headers editor, and shows the result.
 */

const CHROMIUM = '/usr/bin/chromium'

t.test('the sandbox loads, runs a query and shows the result', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install -y chromium)` }, async (t) => {
  const { app } = await build(t, { models: [note], graphql: { landingPage: true, format: 'flat' } })
  await app.contentApi.documents('api::note.note').create({ data: { title: 'Seen in the browser' } })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] })
  t.teardown(async () => { await browser.close() })
  const page = await browser.newPage()
  const problems: string[] = []
  page.on('pageerror', (err) => problems.push(err.message))
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
  const missing: string[] = []
  page.on('response', (res) => { if (res.status() === 404) missing.push(new URL(res.url()).pathname) })
  const outside: string[] = []
  page.on('request', (request) => { if (!request.url().startsWith(address)) outside.push(request.url()) })
  const requests: Array<{ authorization?: string, body: string | null }> = []
  page.on('request', (request) => {
    if (request.url() === `${address}/graphql` && request.method() === 'POST') requests.push({ authorization: request.headers().authorization, body: request.postData() })
  })

  const response = await page.goto(`${address}/graphql`)
  t.equal(response?.status(), 200)
  t.match(response?.headers()['content-security-policy'], /script-src 'self' 'nonce-/)
  await page.waitForSelector('.graphiql-container', { timeout: 30_000 })
  t.pass('GraphiQL rendered')

  // The schema documentation is there: GraphiQL introspects the endpoint on load.
  await page.click('button[aria-label="Show Documentation Explorer"]')
  await page.waitForSelector('.graphiql-doc-explorer', { timeout: 10_000 })
  t.match(await page.textContent('.graphiql-doc-explorer'), /Query/, 'the documentation explorer lists the root types')

  // The query editor and the headers editor are CodeMirror editors: type into them.
  const query = '{ notes { title } }'
  await page.click('.graphiql-query-editor .CodeMirror')
  await page.keyboard.press('Control+A')
  await page.keyboard.type(query)
  await page.click('button[data-name="headers"]')
  await page.click('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror')
  await page.keyboard.press('Control+A')
  await page.keyboard.type('{"Authorization": "Bearer none"}')
  // An invalid token: the server answers 401, shown in the result pane.
  await page.click('button.graphiql-execute-button')
  await page.waitForFunction(() => (document.querySelector('.graphiql-response')?.textContent ?? '').includes('Missing or invalid credentials'), undefined, { timeout: 10_000 })
  t.equal(requests.at(-1)?.authorization, 'Bearer none', 'the headers editor sets Authorization')
  t.pass('a refused token shows the 401 answer')

  await page.click('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror')
  await page.keyboard.press('Control+A')
  await page.keyboard.press('Backspace')
  await page.click('button.graphiql-execute-button')
  await page.waitForFunction(() => (document.querySelector('.graphiql-response')?.textContent ?? '').includes('Seen in the browser'), undefined, { timeout: 10_000 })
  t.match(await page.textContent('.graphiql-response'), /"title": "Seen in the browser"/, 'the result is shown')
  t.match(requests.at(-1)?.body, /notes/, 'the typed query was sent')
  await page.screenshot({ path: `${process.env.TMPDIR ?? '/tmp'}/fastify-content-api-sandbox.png` })
  t.same(outside, [], 'the page loads nothing from another host')
  // The browser's own favicon request is the only miss.
  t.same(missing.filter((path) => path !== '/favicon.ico'), [], 'every asset is served')
  t.same(problems.filter((p) => !p.includes('401') && !p.includes('404')), [], 'no script error and no CSP violation')
})
