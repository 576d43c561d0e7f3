import { randomBytes } from 'node:crypto'

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'
const ALPHANUMERICS = 'abcdefghijklmnopqrstuvwxyz0123456789'
const LENGTH = 24

/**
 * A new document id in the shape of Strapi v5's (cuid2): 24 characters of `[a-z0-9]`, the first
 * a letter, e.g. `bnox0j42ys5j2i1r7t0s7126`. Every character is drawn uniformly from
 * `crypto.randomBytes` by rejection sampling (bytes past the largest multiple of the alphabet
 * size are discarded), which gives about 123 bits of randomness.
 */
export function createDocumentId (): string {
  let id = ''
  while (id.length < LENGTH) {
    for (const byte of randomBytes(LENGTH * 2)) {
      const alphabet = id.length === 0 ? LETTERS : ALPHANUMERICS
      const limit = 256 - (256 % alphabet.length)
      if (byte >= limit) continue
      id += alphabet[byte % alphabet.length]
      if (id.length === LENGTH) break
    }
  }
  return id
}
