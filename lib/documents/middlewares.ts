import { UsageError } from '../errors.js'
import type { ContentType } from '../model/registry.js'

/**
 * Strapi v5's document-service middlewares (`strapi.documents.use`): functions run around every
 * call of every content type's document service, from REST, GraphQL and application code alike,
 * in the order they were added. Each gets the call's context and `next`; it may change
 * `context.params` before calling `next()`, return without calling it (the call is not made),
 * or return another result than `next()`'s.
 */

/** The document service's calls, Strapi's names. */
export type DocumentAction =
  | 'findMany' | 'findFirst' | 'findOne' | 'count' | 'create' | 'update' | 'delete' | 'publish' | 'unpublish' | 'discardDraft'

/** Strapi's middleware context. */
export interface DocumentMiddlewareContext {
  uid: string
  contentType: ContentType
  action: DocumentAction
  /**
   * The call's parameters, as application code passes them. The REST and GraphQL reads, which
   * run an already validated query tree, pass `{ documentId?, tree }` (docs/extending.md).
   */
  params: Record<string, any>
}

export type DocumentMiddleware = (context: DocumentMiddlewareContext, next: () => Promise<unknown>) => unknown

export class DocumentMiddlewares {
  #list: readonly DocumentMiddleware[] = []

  /** Whether any middleware is registered: false is the calls' fast path, one check. */
  get active (): boolean {
    return this.#list.length > 0
  }

  use (middleware: DocumentMiddleware): void {
    if (typeof middleware !== 'function') throw new UsageError('FCA_ERR_DOCUMENT_MIDDLEWARE')
    this.#list = [...this.#list, middleware]
  }

  /**
   * Runs the middlewares around `call`, which makes the call with the params the last one left.
   *
   * @example
   * middlewares.run({ uid, contentType, action: 'findMany', params }, async (params) => await findMany(params))
   */
  async run (context: DocumentMiddlewareContext, call: (params: Record<string, any>) => Promise<unknown>): Promise<unknown> {
    // The list as it was when the call began: a middleware added meanwhile runs from the next call.
    const list = this.#list
    const dispatch = async (index: number): Promise<unknown> => {
      if (index === list.length) return await call(context.params)
      return await list[index](context, async () => await dispatch(index + 1))
    }
    return await dispatch(0)
  }
}
