import { randomFillSync } from 'node:crypto'

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'
const ALPHANUMERICS = 'abcdefghijklmnopqrstuvwxyz0123456789'
const LENGTH = 24

/**
 * Random bytes drawn ahead, a few ids' worth at a time, as Node's `randomUUID()` keeps its own:
 * one call into the CSPRNG per 4 KiB rather than one per id (a create spent about 15 µs here).
 * Each byte is used once.
 */
const pool = Buffer.alloc(4096)
let next = pool.length

function randomByte (): number {
  if (next === pool.length) {
    randomFillSync(pool)
    next = 0
  }
  return pool[next++]
}

/**
 * A new document id in the shape of Strapi v5's (cuid2): 24 characters of `[a-z0-9]`, the first
 * a letter, e.g. `bnox0j42ys5j2i1r7t0s7126`. Every character is drawn uniformly from
 * `crypto.randomFillSync` bytes by rejection sampling (bytes past the largest multiple of the
 * alphabet size are discarded), which gives about 123 bits of randomness.
 */
export function createDocumentId (): string {
  let id = ''
  while (id.length < LENGTH) {
    const alphabet = id.length === 0 ? LETTERS : ALPHANUMERICS
    const byte = randomByte()
    if (byte >= 256 - (256 % alphabet.length)) continue
    id += alphabet[byte % alphabet.length]
  }
  return id
}
