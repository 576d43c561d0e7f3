/**
 * A statement of a sync plan in a few words, for the log line per change and the CLI's plan:
 * `create table articles`, `add column articles.views integer`. The plan's statements are the
 * texts lib/schema/ddl.ts and lib/schema/row-counts.ts build, so their shapes are known; any
 * other text is summarised by its first words.
 */

const IDENT = '"((?:[^"]|"")+)"'
const unquote = (name: string): string => name.replaceAll('""', '"')

/** Each known shape, tried in order, with the summary built from its captures. */
const SHAPES: Array<[RegExp, (...names: string[]) => string]> = [
  [new RegExp(`^create table ${IDENT}`), (t) => `create table ${t}`],
  [new RegExp(`^alter table ${IDENT} add column ${IDENT} (.*)$`, 's'), (t, c, definition) => `add column ${t}.${c} ${definition}`],
  [new RegExp(`^alter table ${IDENT} drop column ${IDENT}`), (t, c) => `drop column ${t}.${c}`],
  [new RegExp(`^alter table ${IDENT} alter column ${IDENT} type (.*?) using `, 's'), (t, c, type) => `alter column ${t}.${c} type ${type}`],
  [new RegExp(`^alter table ${IDENT} alter column ${IDENT} (drop|set) not null`), (t, c, verb) => `alter column ${t}.${c} ${verb} not null`],
  [new RegExp(`^alter table ${IDENT} add constraint ${IDENT} foreign key \\((.*?)\\) references ${IDENT}`), (t, fk, columns, ref) => `add foreign key ${fk} ${t}(${columns.replaceAll('"', '')}) -> ${ref}`],
  [new RegExp(`^alter table ${IDENT} set \\(`), (t) => `tune storage of ${t}`],
  [new RegExp(`^create (unique )?index ${IDENT} on ${IDENT}`), (unique, i, t) => `create ${unique ?? ''}index ${i} on ${t}`],
  [new RegExp(`^drop index ${IDENT}`), (i) => `drop index ${i}`],
  [new RegExp(`^create or replace function ${IDENT}`), (f) => `create function ${f}`],
  [new RegExp(`^create trigger ${IDENT} .*? on ${IDENT}`, 's'), (tr, t) => `create trigger ${tr} on ${t}`],
  [new RegExp(`^drop trigger ${IDENT} on ${IDENT}`), (tr, t) => `drop trigger ${tr} on ${t}`],
  [new RegExp(`^with "gone" as \\(delete from ${IDENT} where "table_name" = '((?:[^']|'')+)'`), (counts, t) => `clear ${counts} of ${t.replaceAll("''", "'")}`],
  [new RegExp(`^insert into ${IDENT} .*? from ${IDENT}`, 's'), (counts, t) => `count rows of ${t} into ${counts}`]
]

/**
 * @example
 * describeStatement('alter table "articles" add column "views" integer') // 'add column articles.views integer'
 * describeStatement('create unique index "articles_version_unique" on "articles" (...)') // 'create unique index articles_version_unique on articles'
 */
export function describeStatement (statement: string): string {
  for (const [shape, describe] of SHAPES) {
    const match = shape.exec(statement)
    if (match !== null) return describe(...match.slice(1).map((name) => name === undefined ? name : unquote(name)))
  }
  const words = statement.split(/\s+/).slice(0, 6).join(' ')
  return words.length < statement.length ? `${words} ...` : words
}
