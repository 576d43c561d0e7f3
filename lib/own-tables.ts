import type { ResolvedOptions } from './options/index.js'
import type { TableSpec } from './schema/desired-schema.js'
import { storedSecretsTable, type StoredSecretName } from './schema/stored-secrets.js'
import { webhookOutboxTable } from './schema/webhook-outbox.js'

/** The secrets not given in `auth` (only outside production: options refuse that there). */
export const missingSecrets = (auth: ResolvedOptions['auth']): StoredSecretName[] =>
  (['jwtSecret', 'apiTokenSalt'] as const).filter((key) => auth[key] === undefined)

/**
 * The plugin's own tables that the options ask schema sync for: the webhook outbox, the stored
 * development secrets. Shared by the plugin's start and the CLI's `schema plan|apply`, so both
 * plan the same tables.
 */
export function ownTables (options: ResolvedOptions): TableSpec[] {
  return [
    ...(options.webhooks === null ? [] : [webhookOutboxTable]),
    ...(missingSecrets(options.auth).length === 0 ? [] : [storedSecretsTable])
  ]
}
