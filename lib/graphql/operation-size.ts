import { Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql'

/** The size of a selection set with its fragments expanded where they are spread. */
export interface Size {
  /** Field selections, each alias and each repetition counted. */
  selections: number
  /** Aliased field selections. */
  aliases: number
}

const EMPTY: Size = { selections: 0, aliases: 0 }

/**
 * Measures the selection sets of one document. A fragment's size is computed once and reused
 * wherever it is spread, so a document whose fragments spread each other twice over (2^30
 * selections in a few hundred bytes) is measured in time linear in its text, while the sizes
 * still count every expansion (and may grow past `Number.MAX_SAFE_INTEGER`: they are only
 * compared with bounds). A fragment spread inside itself counts as empty: graphql-js's
 * NoFragmentCycles rule reports it.
 *
 * Recursion follows the document's nesting, which the HTTP layer has bounded before parsing
 * (input-bounds.ts), and chains of fragments, bounded by the document's tokens.
 */
export class OperationSizes {
  readonly #fragments = new Map<string, FragmentDefinitionNode>()
  readonly #sizes = new Map<string, Size>()
  readonly #operations = new Map<OperationDefinitionNode, Size>()

  constructor (document: DocumentNode) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.#fragments.set(definition.name.value, definition)
    }
  }

  /** An operation's size, measured once for every check that reads it (aliases, selections). */
  operation (node: OperationDefinitionNode): Size {
    let size = this.#operations.get(node)
    if (size === undefined) {
      size = this.of(node.selectionSet)
      this.#operations.set(node, size)
    }
    return size
  }

  of (selectionSet: SelectionSetNode): Size {
    let selections = 0
    let aliases = 0
    for (const selection of selectionSet.selections) {
      let inner: Size
      if (selection.kind === Kind.FIELD) {
        selections++
        if (selection.alias !== undefined) aliases++
        inner = selection.selectionSet === undefined ? EMPTY : this.of(selection.selectionSet)
      } else {
        inner = selection.kind === Kind.INLINE_FRAGMENT ? this.of(selection.selectionSet) : this.#fragment(selection.name.value)
      }
      selections += inner.selections
      aliases += inner.aliases
    }
    return { selections, aliases }
  }

  #fragment (name: string): Size {
    const known = this.#sizes.get(name)
    if (known !== undefined) return known
    const fragment = this.#fragments.get(name)
    if (fragment === undefined) return EMPTY
    this.#sizes.set(name, EMPTY)
    const size = this.of(fragment.selectionSet)
    this.#sizes.set(name, size)
    return size
  }
}

const measured = new WeakMap<DocumentNode, OperationSizes>()

/** The measures of a document, shared by the validation rules that read them. */
export function operationSizes (document: DocumentNode): OperationSizes {
  let sizes = measured.get(document)
  if (sizes === undefined) {
    sizes = new OperationSizes(document)
    measured.set(document, sizes)
  }
  return sizes
}
