import { Lexer, Source, TokenKind } from 'graphql'
import { LimitError } from '../errors.js'

/**
 * Bounds on a GraphQL request's input, checked before Mercurius parses the document or coerces
 * the variables: graphql-js's parser, its variable coercion and the filter conversion are
 * recursive, so a value nested a few thousand levels deep overflows the stack before any
 * validation rule could see it; and the cost of parsing and validating grows with the document's
 * tokens (graphql-js's overlapping-fields rule is quadratic in fields sharing a name).
 *
 * Both walks here are iterative: any input is measured without recursing.
 */

const OPENING: ReadonlySet<string> = new Set([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L])
const CLOSING: ReadonlySet<string> = new Set([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R])

/** What `scanDocument` read: the tokens counted, and whether the brackets nested too deep. */
export interface DocumentScan {
  tokens: number
  tooDeep: boolean
}

/**
 * Counts a document's tokens (comments do not count, as in graphql-js's own `maxTokens`) and
 * the nesting of its brackets (selection sets, argument lists, lists and input objects alike:
 * `{ a(f: { b: [1] }) }` nests 4 deep), with graphql-js's lexer, which knows strings, block
 * strings and comments. Stops at the first token past `maxTokens` or bracket past `maxDepth`.
 * A document that does not lex is left to the parser, which fails at the same token: every
 * bracket before it was counted.
 */
export function scanDocument (source: string, maxTokens: number, maxDepth: number): DocumentScan {
  const lexer = new Lexer(new Source(source))
  let tokens = 0
  let depth = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF && tokens <= maxTokens; token = lexer.advance()) {
      tokens++
      if (OPENING.has(token.kind)) {
        if (++depth > maxDepth) return { tokens, tooDeep: true }
      } else if (CLOSING.has(token.kind)) {
        depth--
      }
    }
  } catch {
    // A syntax error: the parser reports it.
  }
  return { tokens, tooDeep: false }
}

export function tooManyTokens (max: number): LimitError {
  return new LimitError(`The GraphQL document has more than ${max} tokens, the most graphql.maxTokens allows`, { limit: 'graphql.maxTokens', max })
}

export function tooDeep (what: 'document' | 'variables', max: number): LimitError {
  return new LimitError(`The GraphQL ${what} nest${what === 'document' ? 's' : ''} deeper than ${max} levels, the most limits.inputDepth allows`, { limit: 'limits.inputDepth', max })
}
