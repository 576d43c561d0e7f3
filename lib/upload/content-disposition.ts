/**
 * `Content-Disposition` values (RFC 6266) naming a file, for any file name a client may give:
 * `filename` carries an ASCII fallback in a quoted string, `filename*` the exact name in
 * UTF-8 (RFC 8187, formerly 5987) when the fallback had to change it. The value is ASCII
 * without control characters whatever the name holds, so it can neither break the header nor
 * add another one, and S3 accepts it as object metadata.
 */

/** Characters kept as they are in the quoted fallback: printable ASCII but `"`, `\` and `%`. */
const UNSAFE_IN_FALLBACK = /[^\x20-\x7e]|["\\%]/g

/** Unpaired UTF-16 surrogates (possible in a JSON `fileInfo.name`), which have no UTF-8 form. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** `attr-char` of RFC 8187: what `filename*` may carry without percent-encoding. */
const encodeExtValue = (value: string): string =>
  encodeURIComponent(value.replace(LONE_SURROGATE, '\ufffd')).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * @example
 * contentDisposition('attachment', 'logo.svg')
 * // attachment; filename="logo.svg"
 * contentDisposition('attachment', 'Résumé "final".html')
 * // attachment; filename="R_sum_ _final_.html"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.html
 */
export function contentDisposition (type: 'inline' | 'attachment', filename: string): string {
  // `%` is replaced too: some browsers percent-decode the plain `filename`.
  const fallback = filename.replace(UNSAFE_IN_FALLBACK, '_')
  const value = `${type}; filename="${fallback}"`
  return fallback === filename ? value : `${value}; filename*=UTF-8''${encodeExtValue(filename)}`
}
