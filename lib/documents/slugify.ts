/** Letters that Unicode decomposition does not reduce to ASCII. */
const FOLD: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', þ: 'th', ł: 'l', ı: 'i', ħ: 'h'
}

/**
 * Turns text into a uid value, as the service does when a `uid` attribute with a `targetField`
 * is left out: lower case, accents folded to ASCII (`normalize('NFKD')` then the combining
 * marks dropped), every run of other characters replaced by one `-`, dashes trimmed.
 * The result always matches Strapi's uid pattern `/^[A-Za-z0-9-_.~]*$/`; it may be empty
 * (text with no letters or digits), and it is not truncated.
 *
 * @example
 * slugify('Crème Brûlée: 10 façons!') // 'creme-brulee-10-facons'
 */
export function slugify (text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[ßæœøđðþłıħ]/g, (letter) => FOLD[letter])
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}
