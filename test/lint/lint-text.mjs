import { ESLint } from 'eslint'

/*
 * Lints snippets with the project's ESLint config, through ESLint's Node API as `npm run lint`
 * runs it: reads `[{ filePath, code }]` as JSON on stdin, writes each snippet's messages as JSON.
 * A plain Node process of its own because the tests run under tsx, whose require hook cannot load
 * an ESM-only dependency of neostandard (unicorn-magic, through find-up).
 */

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const snippets = JSON.parse(Buffer.concat(chunks).toString('utf8'))
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname })
const results = []
for (const { filePath, code } of snippets) {
  const [result] = await eslint.lintText(code, { filePath })
  results.push(result.messages.map(({ ruleId, message }) => ({ ruleId, message })))
}
process.stdout.write(JSON.stringify(results))
