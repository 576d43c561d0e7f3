import { typeMatcher } from './file-type.js'

/**
 * Types a browser runs, or renders with script, when it opens a file: served as an attachment
 * (`Content-Disposition: attachment`) unless `upload.inlineTypes` lists them, so that an
 * uploaded file never runs as the API's origin. Every other type (images other than SVG, audio,
 * video, PDF, plain text, JSON, CSV, fonts...) is shown inline, as before; `nosniff` keeps
 * browsers to the declared type, so a text file holding HTML stays text.
 *
 * Why each is here:
 * - HTML (`text/html`): a page; its scripts run with the origin's cookies and storage.
 * - XML (`text/xml`, `application/xml` and every `+xml` type: XHTML, SVG, RSS, Atom, MathML,
 *   XSLT, RDF...): browsers render XML documents; elements in the XHTML namespace run their
 *   `<script>`, SVG has its own `<script>` and event attributes, and an `xml-stylesheet`
 *   instruction turns any XML into an HTML page through XSLT. `text/xsl` is a stylesheet
 *   such a document loads.
 * - JavaScript (every JavaScript MIME type of the WHATWG MIME Sniffing standard): not rendered
 *   when opened, but runnable as a script, worker or service worker of a page of the origin.
 *   `Content-Disposition` does not stop `<script src>` (see docs/operations.md).
 * - HTML components (`text/x-component`, `.htc`): script behaviours of old Internet Explorer.
 * - MHTML (`message/rfc822`, `multipart/related`, `application/x-mimearchive`): web archives
 *   that some browsers open as the HTML page they hold.
 * - Flash (`application/x-shockwave-flash`, `application/futuresplash`): ran with the origin's
 *   rights in the plugin; gone from current browsers, refused here for the old ones.
 */
const ACTIVE_TYPES = new Set([
  'text/html',
  'text/xml',
  'application/xml',
  'text/xsl',
  'text/x-component',
  'message/rfc822',
  'multipart/related',
  'application/x-mimearchive',
  'application/x-shockwave-flash',
  'application/futuresplash',
  // JavaScript MIME types (https://mimesniff.spec.whatwg.org/#javascript-mime-type).
  'application/ecmascript',
  'application/javascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/javascript',
  'text/javascript1.0',
  'text/javascript1.1',
  'text/javascript1.2',
  'text/javascript1.3',
  'text/javascript1.4',
  'text/javascript1.5',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript'
])

/** A MIME type's essence: `Text/HTML; charset=utf-8` -> `text/html`. */
export const mimeEssence = (type: string): string => type.split(';')[0].trim().toLowerCase()

/**
 * Whether a browser may run or render `type` with script.
 *
 * @example
 * isActiveType('image/svg+xml')            // true
 * isActiveType('text/html; charset=utf-8') // true
 * isActiveType('image/png')                // false
 */
export function isActiveType (type: string): boolean {
  const essence = mimeEssence(type)
  return ACTIVE_TYPES.has(essence) || essence.endsWith('+xml')
}

/**
 * How files are served under `inlineTypes`, its patterns compiled once (at start-up, not per
 * file): `attachment` for an active type, unless one of the patterns (`image/svg+xml`, `image/*`)
 * lets it be shown inline.
 */
export function dispositionFor (inlineTypes: readonly string[]): (type: string) => 'inline' | 'attachment' {
  const inline = typeMatcher(inlineTypes)
  return (type) => isActiveType(type) && !inline(mimeEssence(type)) ? 'attachment' : 'inline'
}

/** How a file of `type` is served under `inlineTypes` (see `dispositionFor`). */
export function dispositionOf (type: string, inlineTypes: readonly string[]): 'inline' | 'attachment' {
  return dispositionFor(inlineTypes)(type)
}
