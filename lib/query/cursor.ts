import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { ValidationError } from '../errors.js'
import type { SortTerm } from './sort.js'

/**
 * A position in a keyset walk: the sort keys of one row, as PostgreSQL's text of each value
 * (null for SQL NULL), and the row's id, the walk's last tie-breaker. The text goes back to SQL
 * as a parameter compared with the sort expression, so PostgreSQL parses it as that expression's
 * type: timestamps, numerics and bigints keep their exact value, which a JSON number would not.
 */
export interface CursorPosition {
  values: Array<string | null>
  id: number
}

/** Bytes of the HMAC kept in a cursor: enough that a forged one is refused. */
const MAC_BYTES = 16
/** Longer cursors are refused before they are decoded: a cursor holds a few keys. */
const MAX_CURSOR_LENGTH = 4096

/**
 * The cursors' opaque text: base64url of `mac || json`, where the JSON is `[signature, [values], id]`
 * and the mac is HMAC-SHA256 of the JSON under a key derived from the plugin's secret
 * (`auth.jwtSecret`), truncated to 16 bytes. Signing stops a client from naming a position the
 * API never gave it (a forged or edited cursor is a 400); the signature of the sort inside it
 * stops a cursor from being used with another sort, where its values would mean other columns.
 */
export class CursorCodec {
  readonly #key: Buffer

  constructor (secret: string) {
    // A key of its own, so that a cursor is never a valid MAC of anything else signed with the secret.
    this.#key = createHmac('sha256', secret).update('fastify-content-api cursor v1').digest()
  }

  encode (signature: string, position: CursorPosition): string {
    const json = Buffer.from(JSON.stringify([signature, position.values, position.id]))
    return Buffer.concat([this.#mac(json), json]).toString('base64url')
  }

  /** The position a cursor names, for the sort whose signature is given; a 400 for anything else. */
  decode (text: string, signature: string): CursorPosition {
    if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalidCursor()
    const bytes = Buffer.from(text, 'base64url')
    if (bytes.length <= MAC_BYTES) throw invalidCursor()
    const json = bytes.subarray(MAC_BYTES)
    if (!timingSafeEqual(bytes.subarray(0, MAC_BYTES), this.#mac(json))) throw invalidCursor()
    const payload = JSON.parse(json.toString()) as [string, Array<string | null>, number]
    if (payload[0] !== signature) {
      throw new ValidationError('Invalid pagination cursor: it was made for another sort', { key: 'pagination', source: 'query', param: 'pagination' })
    }
    return { values: payload[1], id: payload[2] }
  }

  #mac (json: Buffer): Buffer {
    return createHmac('sha256', this.#key).update(json).digest().subarray(0, MAC_BYTES)
  }
}

function invalidCursor (): ValidationError {
  return new ValidationError('Invalid pagination cursor', { key: 'pagination', source: 'query', param: 'pagination' })
}

/**
 * What a cursor is bound to: the model and, per sort term, the relations walked, the field and
 * the direction (the id's ascending tie-breaker is implied). Short: it travels in every cursor.
 */
export function sortSignature (uid: string, terms: readonly SortTerm[]): string {
  const text = JSON.stringify([uid, terms.map((t) => [t.path.map((hop) => [hop.owner, hop.association.name]), t.field.name, t.direction])])
  return createHash('sha256').update(text).digest('base64url').slice(0, 11)
}
