import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import qs from 'qs'
import { BodySyntaxError, PayloadTooLargeError } from '../errors.js'
import { checkInputDepth, type RequestLimits } from '../query/limits.js'
import { checkParameters, qsOptions } from '../query/querystring.js'

/*
 * The body parsers every HTTP surface of the content API shares (REST, auth and upload routes),
 * below all of them so that none imports another for them.
 */

/** co-body's strict mode, as Strapi's koa-body runs it: the top level is an object or an array. */
const STRICT_JSON = /^[ \t\n\r]*[[{]/

/**
 * Strapi's answer for a body that does not parse: JSON.parse's own message, without the quote
 * of the body V8 puts in some (`Unexpected token 'x', "{"a": x}" is not valid JSON`, or with
 * `...` around a part of a longer body, becomes
 * `Unexpected token 'x' is not valid JSON`): an answer never repeats the request. Called on the
 * error path only, so the body is parsed a second time only when it failed once.
 */
function syntaxError (text: string): BodySyntaxError {
  try {
    JSON.parse(text)
  } catch (err) {
    return new BodySyntaxError((err as Error).message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, ' is not valid JSON'))
  }
  // JSON.parse takes it: Fastify's parser refused a `__proto__` or `constructor.prototype` key.
  return new BodySyntaxError('Object contains forbidden prototype property')
}

/**
 * The JSON body parser of the content API's encapsulated contexts (REST, auth and upload routes):
 * at most `limits.bodyBytes` bytes are read (Fastify stops reading there and answers 413), and
 * the parsed value is refused when it nests deeper than `limits.inputDepth`, before anything
 * walks it. An empty body is "no body" (Strapi answers "Missing data payload"), not a parse error;
 * a body that is not JSON, or whose top level is a string, number, boolean or null, is Strapi's
 * 400 `SyntaxError` (see `BodySyntaxError`).
 */
export function addJsonParser (app: FastifyInstance, limits: RequestLimits): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: limits.bodyBytes }, (request, body, done) => {
    const text = body as string
    if (text === '') { done(null, undefined); return }
    if (!STRICT_JSON.test(text)) { done(new BodySyntaxError('invalid JSON, only supports object and array'), undefined); return }
    parseJson(request, text, (err: Error | null, value?: unknown) => {
      if (err !== null) { done(syntaxError(text), undefined); return }
      try {
        checkInputDepth(value, limits.inputDepth, 'The request body')
      } catch (limit) {
        done(limit as Error, undefined)
        return
      }
      done(null, value)
    })
  })
}

/**
 * Form bodies, parsed as a query string is (`qs`, Strapi's settings): within `limits.bodyBytes`,
 * `limits.queryParameters` and `limits.inputDepth`.
 */
export function addUrlencodedParser (app: FastifyInstance, limits: RequestLimits): void {
  const options = qsOptions(limits)
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: limits.bodyBytes }, (_request, body, done) => {
    try {
      checkParameters(body as string, limits, 'The request body')
      const value = qs.parse(body as string, options)
      checkInputDepth(value, limits.inputDepth, 'The request body')
      done(null, value)
    } catch (err) {
      done(err as Error, undefined)
    }
  })
}

/**
 * The body parsers of a content API context: JSON and form bodies as above; `text/plain` and
 * every other type read as text within `limits.bodyBytes` (Fastify's own text/plain parser
 * reads up to the server's bodyLimit), which a handler's `data` check then refuses with Strapi's
 * message.
 */
export function addBodyParsers (app: FastifyInstance, limits: RequestLimits): void {
  addJsonParser(app, limits)
  addUrlencodedParser(app, limits)
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: limits.bodyBytes }, (_request, body, done) => { done(null, body) })
}

/**
 * Fastify's 413 (`FST_ERR_CTP_BODY_TOO_LARGE`) names no limit: an error handler of a context
 * with these parsers answers this one instead, which names `limits.bodyBytes`.
 */
export function namingBodyLimit (
  handler: (err: unknown, request: FastifyRequest, reply: FastifyReply) => void, limits: RequestLimits
): (err: unknown, request: FastifyRequest, reply: FastifyReply) => void {
  return (err, request, reply) => {
    if ((err as FastifyError | null)?.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') { handler(err, request, reply); return }
    const max = limits.bodyBytes
    handler(new PayloadTooLargeError(`The request body is larger than ${max} bytes (limits.bodyBytes is ${max})`, { limit: 'limits.bodyBytes', max }), request, reply)
  }
}
