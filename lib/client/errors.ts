/** Strapi's error envelope, as the content API answers any refused request. */
export interface ErrorEnvelope {
  data: null
  error: { status: number, name: string, message: string, details: Record<string, unknown> }
}

/**
 * What the client throws when the API answers an error: the envelope's `status`, `name`,
 * `message` and `details`, and the whole `envelope`. An answer that is not in the envelope (a
 * proxy's 502 page) gets `name` 'HttpError' and the HTTP status text. The server's error classes
 * (lib/errors.ts) are not imported here: they need Node, and the client runs in browsers.
 *
 * @example
 * try { await client.collection('articles').create({ title: '' }) } catch (err) {
 *   if (err instanceof ContentApiClientError && err.name === 'ValidationError') console.log(err.details)
 * }
 */
export class ContentApiClientError extends Error {
  readonly status: number
  readonly details: Record<string, unknown>
  readonly envelope: ErrorEnvelope

  constructor (envelope: ErrorEnvelope) {
    super(envelope.error.message)
    this.name = envelope.error.name
    this.status = envelope.error.status
    this.details = envelope.error.details
    this.envelope = envelope
  }
}

/** The envelope of an error answer: the body's own when it has one, otherwise one made from the status. */
export function envelopeOf (status: number, statusText: string, body: unknown): ErrorEnvelope {
  const error = (body as { error?: unknown } | null)?.error
  if (typeof error === 'object' && error !== null && typeof (error as { name?: unknown }).name === 'string') {
    const e = error as { status?: unknown, name: string, message?: unknown, details?: unknown }
    return {
      data: null,
      error: {
        status: typeof e.status === 'number' ? e.status : status,
        name: e.name,
        message: typeof e.message === 'string' ? e.message : statusText,
        details: typeof e.details === 'object' && e.details !== null ? e.details as Record<string, unknown> : {}
      }
    }
  }
  return { data: null, error: { status, name: 'HttpError', message: statusText === '' ? `HTTP ${status}` : statusText, details: {} } }
}
