import t from 'tap'
import { LimitError, ValidationError } from '../../lib/errors.js'
import { createRegistry } from '../../lib/model/registry.js'
import { checkInputDepth, nestedDeeperThan } from '../../lib/query/limits.js'
import { parsePopulate, type PopulateDepth } from '../../lib/query/populate.js'
import { ARTICLE, relationComponents, relationModels } from '../fixtures/relations.js'

/**
 * The query layer's bounds (lib/query/limits.ts, lib/query/populate.ts): how nesting is measured
 * without recursion, and how populate levels are counted, whatever the attribute.
 */

const nested = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value }
  return value
}

t.test('nestedDeeperThan: objects and arrays count, scalars do not', async (t) => {
  for (const scalar of [1, 'x', null, undefined, true]) t.equal(nestedDeeperThan(scalar, 0), false, String(scalar))
  t.equal(nestedDeeperThan({}, 0), true, '{} is one level')
  t.equal(nestedDeeperThan({}, 1), false)
  t.equal(nestedDeeperThan({ a: [1] }, 1), true, '{ a: [1] } is two levels')
  t.equal(nestedDeeperThan({ a: [1] }, 2), false)
  t.equal(nestedDeeperThan([1, [2, [3]], { b: 1 }], 3), false, 'the deepest branch counts')
  t.equal(nestedDeeperThan([1, [2, [3, []]], { b: 1 }], 3), true)
  t.equal(nestedDeeperThan(nested(64), 64), false, 'exactly the bound')
  t.equal(nestedDeeperThan(nested(65), 64), true, 'one more')
  t.equal(nestedDeeperThan(Array.from({ length: 100_000 }, () => ({ a: 1 })), 2), false, 'width is not depth')
})

t.test('nestedDeeperThan walks without recursion: a million levels, and cycles, end', async (t) => {
  t.equal(nestedDeeperThan(nested(1_000_000), 64), true)
  const cycle: Record<string, unknown> = {}
  cycle.self = cycle
  t.equal(nestedDeeperThan(cycle, 1000), true, 'a cycle is as deep as the bound')
})

t.test('checkInputDepth: a LimitError naming limits.inputDepth', async (t) => {
  t.doesNotThrow(() => { checkInputDepth(nested(8), 8, 'The request body') })
  try {
    checkInputDepth(nested(9), 8, 'The request body')
    t.fail('expected a LimitError')
  } catch (err) {
    t.ok(err instanceof LimitError)
    t.same((err as LimitError).toEnvelope().error, {
      status: 400,
      name: 'ValidationError',
      message: 'The request body is nested more than 8 levels deep (limits.inputDepth is 8)',
      details: { limit: 'limits.inputDepth', max: 8 }
    })
    t.equal((err as LimitError).code, 'FCA_ERR_LIMIT')
  }
})

t.test('populate levels: every populated attribute is one, whatever it is', async (t) => {
  const registry = createRegistry(relationModels, relationComponents)
  const model = registry.get(ARTICLE)!
  const depth = (max: number): PopulateDepth => ({ max, limited: true })
  const parses = (raw: unknown, max: number): boolean => {
    try {
      parsePopulate(registry, model, raw, null, null, false, depth(max))
      return true
    } catch (err) {
      if (err instanceof LimitError) return false
      throw err
    }
  }
  const levels = (raw: unknown, what: string, expected: number): void => {
    t.ok(parses(raw, expected), `${what}: ${expected} level(s)`)
    t.notOk(parses(raw, expected - 1), `${what}: refused under ${expected}`)
  }
  levels({ category: true }, 'a relation', 1)
  levels('category.articles.author', 'the dotted form', 3)
  levels(['tags', 'category.articles'], 'the list form', 2)
  levels('*', 'populate=*', 1)
  levels({ category: { populate: '*' } }, '* under a relation', 2)
  levels({ category: { populate: { articles: { count: true } } } }, 'a count', 2)
  levels({ cover: true }, 'media', 1)
  levels({ seo: { populate: { og: true, links: true } } }, 'components in a component', 2)
  levels({ sections: { populate: { links: true } } }, 'a repeatable component in one', 2)
  // A dynamic zone's components are the rows of its level; what they populate is the next one.
  levels({ blocks: true }, 'a dynamic zone', 1)
  levels({ blocks: { on: { 'content.cta': { populate: { target: true } } } } }, 'a component inside a dynamic zone\'s component', 2)
  levels({ blocks: { populate: '*' } }, 'a dynamic zone with *', 2)
  levels({ category: { populate: { articles: { populate: { blocks: { on: { 'content.cta': { populate: { target: true } } } } } } } } }, 'all of it', 4)
})

t.test('populate levels: a LimitError naming limits.populateDepth; without limits, a fixed ceiling', async (t) => {
  const registry = createRegistry(relationModels, relationComponents)
  const model = registry.get(ARTICLE)!
  const chain = (n: number): string => Array.from({ length: n }, (_, i) => i % 2 === 0 ? 'category' : 'articles').join('.')
  t.throws(() => parsePopulate(registry, model, chain(7), null, null, false, { max: 6, limited: true }), {
    message: 'populate is nested more than 6 levels deep (limits.populateDepth is 6)',
    details: { limit: 'limits.populateDepth', max: 6 }
  })
  t.doesNotThrow(() => parsePopulate(registry, model, chain(20)), 'application code: 20 levels')
  try {
    parsePopulate(registry, model, chain(21))
    t.fail('expected the ceiling')
  } catch (err) {
    t.ok(err instanceof ValidationError && !(err instanceof LimitError), 'past it, an ordinary ValidationError: no option names it')
    t.equal((err as Error).message, 'Invalid populate: deeper than 20 levels')
  }
})
