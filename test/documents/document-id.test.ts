import t from 'tap'
import { createDocumentId } from '../../lib/documents/document-id.js'
import { slugify } from '../../lib/documents/slugify.js'

t.test('createDocumentId: 24 lowercase alphanumerics starting with a letter, unique', async (t) => {
  const ids = Array.from({ length: 10_000 }, () => createDocumentId())
  const malformed = ids.filter((id) => !/^[a-z][a-z0-9]{23}$/.test(id))
  t.same(malformed, [], 'every id has the cuid2 shape')
  t.equal(new Set(ids).size, ids.length, 'no duplicates in 10k')

  const first = new Set(ids.map((id) => id[0]))
  const rest = new Map<string, number>()
  for (const id of ids) for (const c of id.slice(1)) rest.set(c, (rest.get(c) ?? 0) + 1)
  t.equal(first.size, 26, 'the first character covers every letter')
  t.equal(rest.size, 36, 'the others cover every letter and digit')
  // 230k characters over 36 symbols: about 6389 each; a biased modulo would skew some by ~3%.
  const expected = (10_000 * 23) / 36
  for (const [c, n] of rest) t.ok(Math.abs(n - expected) < expected * 0.08, `"${c}" appears ${n} times`)
})

t.test('slugify', async (t) => {
  t.equal(slugify('Hello World'), 'hello-world')
  t.equal(slugify('Crème Brûlée: 10 façons!'), 'creme-brulee-10-facons')
  t.equal(slugify('  --Already-slugged--  '), 'already-slugged')
  t.equal(slugify('Straße & Øre, Łódź'), 'strasse-ore-lodz')
  t.equal(slugify('ＡＢＣ １２３'), 'abc-123', 'compatibility forms fold to ASCII')
  t.equal(slugify('snake_case.and~tilde'), 'snake-case-and-tilde')
  t.equal(slugify('日本語'), '', 'no ASCII letters or digits: empty')
  t.equal(slugify(''), '')
  t.match(slugify('Any Title, at all!'), /^[A-Za-z0-9-_.~]*$/)
})
