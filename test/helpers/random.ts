/**
 * A seeded source of test data (mulberry32: small, fast, and good enough to pick data
 * reproducibly): a failing generated case comes back with the same seed.
 */
export interface Random {
  /** A number in [0, 1). */
  next: () => number
  /** True with probability `p`. */
  chance: (p: number) => boolean
  /** One of `items`. */
  pick: <T>(items: readonly T[]) => T
}

export function seededRandom (seed: number): Random {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]
  }
}
