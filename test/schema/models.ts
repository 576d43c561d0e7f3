import type { ComponentSchema, ContentTypeSchema } from '../../lib/model/types.js'

/**
 * Models shared by the schema tests: one attribute of every scalar type, a localized and a
 * non-localized collection type, a single type and a component.
 */

/** Every scalar type, non-localized, with the PostgreSQL type each must get. */
export const everyType: ContentTypeSchema = {
  kind: 'collectionType',
  info: { singularName: 'kitchen-sink', pluralName: 'kitchen-sinks' },
  options: { draftAndPublish: true },
  attributes: {
    aString: { type: 'string' },
    aLongString: { type: 'string', maxLength: 1000 },
    aText: { type: 'text' },
    aRichtext: { type: 'richtext' },
    aBlocks: { type: 'blocks' },
    anEmail: { type: 'email' },
    aPassword: { type: 'password' },
    aUid: { type: 'uid', unique: true },
    anInteger: { type: 'integer' },
    aBiginteger: { type: 'biginteger' },
    aFloat: { type: 'float' },
    aDecimal: { type: 'decimal' },
    aDate: { type: 'date' },
    aTime: { type: 'time' },
    aDatetime: { type: 'datetime' },
    aTimestamp: { type: 'timestamp' },
    aBoolean: { type: 'boolean' },
    anEnumeration: { type: 'enumeration', enum: ['one', 'two'] },
    aJson: { type: 'json' }
  }
}

export const everyTypeColumns: Record<string, string> = {
  a_string: 'varchar(255)',
  a_long_string: 'varchar(1000)',
  a_text: 'text',
  a_richtext: 'text',
  a_blocks: 'jsonb',
  an_email: 'varchar(255)',
  a_password: 'varchar(255)',
  a_uid: 'varchar(255)',
  an_integer: 'integer',
  a_biginteger: 'bigint',
  a_float: 'double precision',
  a_decimal: 'numeric',
  a_date: 'date',
  a_time: 'time(3) without time zone',
  a_datetime: 'timestamp(3) with time zone',
  a_timestamp: 'timestamp(3) with time zone',
  a_boolean: 'boolean',
  an_enumeration: 'varchar(255)',
  a_json: 'jsonb'
}

/** A localized collection type; `extra` adds or overrides attributes for the evolution tests. */
export function article (extra: ContentTypeSchema['attributes'] = {}, without: string[] = []): ContentTypeSchema {
  const attributes: ContentTypeSchema['attributes'] = {
    title: { type: 'string', required: true },
    slug: { type: 'uid', targetField: 'title', unique: true },
    body: { type: 'richtext' },
    ...extra
  }
  for (const name of without) Reflect.deleteProperty(attributes, name)
  return {
    kind: 'collectionType',
    info: { singularName: 'article', pluralName: 'articles' },
    options: { draftAndPublish: true },
    pluginOptions: { i18n: { localized: true } },
    attributes
  }
}

export const homepage: ContentTypeSchema = {
  kind: 'singleType',
  info: { singularName: 'homepage', pluralName: 'homepages' },
  attributes: { heading: { type: 'string' } }
}

export const components: Record<string, ComponentSchema> = {
  'shared.seo': {
    attributes: { metaTitle: { type: 'string' }, metaDescription: { type: 'text' } }
  }
}
