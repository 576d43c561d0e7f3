import bcrypt from 'bcryptjs'
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import type { Component, ContentType } from '../model/registry.js'

/**
 * Password attributes are stored as scrypt hashes in a PHC-like string:
 * `$scrypt$n=32768,r=8,p=1$<salt, base64>$<key, base64>` (16-byte salt, 64-byte key, unpadded
 * base64), about 140 characters, well within the varchar(255) column.
 */
const COST = 2 ** 15
const BLOCK_SIZE = 8
const PARALLELISM = 1
const SALT_BYTES = 16
const KEY_BYTES = 64
const HASH = /^\$scrypt\$n=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

function derive (plain: string, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(plain.normalize('NFC'), salt, length, options, (err, key) => { if (err === null) resolve(key); else reject(err) })
  })
}

/** Memory scrypt needs is 128 * N * r bytes; Node's default cap (32 MiB) is exactly N=2^15, r=8. */
const maxmem = (n: number, r: number): number => 128 * n * r * 2

const base64 = (bytes: Buffer): string => bytes.toString('base64').replace(/=+$/, '')

/**
 * Hashes a password with scrypt and a random salt; two hashes of the same password differ.
 *
 * @example
 * await hashPassword('Password123!') // '$scrypt$n=32768,r=8,p=1$Hk3...$9a1...'
 */
const BCRYPT = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/

export async function hashPassword (plain: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const key = await derive(plain, salt, KEY_BYTES, { N: COST, r: BLOCK_SIZE, p: PARALLELISM, maxmem: maxmem(COST, BLOCK_SIZE) })
  return `$scrypt$n=${COST},r=${BLOCK_SIZE},p=${PARALLELISM}$${base64(salt)}$${base64(key)}`
}

interface ParsedHash { n: number, r: number, p: number, salt: Buffer, key: Buffer }

/**
 * Cost parameters are bounded so that a tampered stored hash cannot make verification
 * expensive; salt and key must have our exact sizes (a truncated key would otherwise verify).
 */
function parseHash (stored: string): ParsedHash | null {
  const m = HASH.exec(stored)
  if (m === null) return null
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const salt = Buffer.from(m[4], 'base64')
  const key = Buffer.from(m[5], 'base64')
  const powerOfTwo = n >= 2 && n <= 2 ** 20 && (n & (n - 1)) === 0
  if (!powerOfTwo || r < 1 || r > 32 || p < 1 || p > 16 || salt.length !== SALT_BYTES || key.length !== KEY_BYTES) return null
  return { n, r, p, salt, key }
}

/** Whether a string is a hash produced by `hashPassword` (with parameters we would verify). */
export function isPasswordHash (value: unknown): value is string {
  return typeof value === 'string' && parseHash(value) !== null
}

/**
 * Checks a password against a stored hash in constant time. A stored value that is not a
 * valid hash never matches.
 */
export async function verifyPassword (plain: string, stored: string): Promise<boolean> {
  if (typeof plain !== 'string' || typeof stored !== 'string') return false
  // Users migrated from Strapi keep their bcrypt hashes ($2a$/$2b$/$2y$) and can still sign in.
  if (BCRYPT.test(stored)) return await bcrypt.compare(plain, stored)
  const parsed = parseHash(stored)
  if (parsed === null) return false
  const key = await derive(plain, parsed.salt, parsed.key.length, { N: parsed.n, r: parsed.r, p: parsed.p, maxmem: maxmem(parsed.n, parsed.r) })
  return timingSafeEqual(key, parsed.key)
}

/**
 * Whether a stored hash that just verified should be replaced by `hashPassword`'s: a bcrypt hash
 * migrated from Strapi, or a scrypt hash with other cost parameters than today's.
 */
export function needsRehash (stored: string): boolean {
  if (BCRYPT.test(stored)) return true
  const parsed = parseHash(stored)
  return parsed !== null && (parsed.n !== COST || parsed.r !== BLOCK_SIZE || parsed.p !== PARALLELISM)
}

let decoy: Promise<string> | null = null

/**
 * Runs the key derivation `verifyPassword` would run, against a throwaway hash, and answers
 * false: a sign-in for an unknown user then takes as long as one with a wrong password, so the
 * time does not tell which identifiers exist.
 */
export async function verifyNothing (plain: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(SALT_BYTES).toString('hex'))
  await verifyPassword(plain, await decoy)
  return false
}

/**
 * Returns a copy of validated values with every password attribute replaced by its hash
 * (`null` stays `null`). `validateInput` is synchronous and leaves passwords in clear text;
 * the document service calls this before writing. Values that already look like hashes are
 * hashed too: a client must never be able to set a hash directly.
 */
export async function hashPasswords (
  model: ContentType | Component, values: Readonly<Record<string, unknown>>
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { ...values }
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string' && model.attributes[name]?.type === 'password') out[name] = await hashPassword(value)
  }
  return out
}
