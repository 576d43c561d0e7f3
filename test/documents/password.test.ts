import t from 'tap'
import { hashPassword, hashPasswords, isPasswordHash, verifyPassword } from '../../lib/documents/password.js'
import { models } from './validate-models.js'

const FORMAT = /^\$scrypt\$n=32768,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{86}$/

t.test('hashPassword: scrypt in a self-describing string, never the clear text', async (t) => {
  const hash = await hashPassword('Password123!')
  t.match(hash, FORMAT)
  t.not(hash, 'Password123!')
  t.notOk(hash.includes('Password123!'))
  t.ok(hash.length <= 255, 'fits the varchar(255) column')
  t.ok(isPasswordHash(hash))
})

t.test('two hashes of the same password differ (random salt), both verify', async (t) => {
  const [a, b] = await Promise.all([hashPassword('same'), hashPassword('same')])
  t.not(a, b)
  t.equal(await verifyPassword('same', a), true)
  t.equal(await verifyPassword('same', b), true)
})

t.test('verifyPassword', async (t) => {
  const hash = await hashPassword('correct horse')
  t.equal(await verifyPassword('correct horse', hash), true)
  t.equal(await verifyPassword('correct horsE', hash), false)
  t.equal(await verifyPassword('', hash), false)
  t.equal(await verifyPassword('correct horse', 'correct horse'), false, 'a clear-text stored value never matches')
  t.equal(await verifyPassword('correct horse', ''), false)
  t.equal(await verifyPassword('correct horse', hash.replace('n=32768', 'n=3')), false, 'invalid parameters never match')
  t.equal(await verifyPassword('correct horse', hash.replace('n=32768', 'n=1073741824')), false, 'excessive cost is refused')
  t.equal(await verifyPassword('correct horse', hash.slice(0, -4)), false, 'a truncated key does not match')
})

t.test('passwords are compared after Unicode NFC normalisation', async (t) => {
  const hash = await hashPassword('caf\u00e9')
  t.equal(await verifyPassword('cafe\u0301', hash), true)
})

t.test('isPasswordHash', async (t) => {
  t.equal(isPasswordHash('plain'), false)
  t.equal(isPasswordHash(42), false)
  t.equal(isPasswordHash('$scrypt$n=32768,r=8,p=1$AAAA$BBBB'), false, 'salt and key too short')
  t.equal(isPasswordHash('$2a$10$abcdefghijklmnopqrstuu5J9wR4oG0A2c3q8x4m1b0y7e9O8WbC'), false, 'bcrypt is not ours')
})

t.test('hashPasswords replaces password attributes only, keeps null, does not mutate', async (t) => {
  const values = { plain: 'visible', secret: 'Password123!' }
  const hashed = await hashPasswords(models.sample, values)
  t.equal(hashed.plain, 'visible')
  t.match(hashed.secret, FORMAT)
  t.equal(await verifyPassword('Password123!', hashed.secret as string), true)
  t.same(values, { plain: 'visible', secret: 'Password123!' }, 'input untouched')
  t.same(await hashPasswords(models.sample, { secret: null }), { secret: null })
  t.same(await hashPasswords(models.sample, {}), {})
  const hashedTwice = await hashPasswords(models.sample, { secret: hashed.secret })
  t.not(hashedTwice.secret, hashed.secret, 'a value that looks like a hash is hashed too: clients cannot set a hash')
})
