// What the backend knows about registered extensions: which app owns one, and the compiled validator of each schema
// version. Both are immutable once registered, so they are cached for the life of the process: every schema
// version is compiled once, not per request. Misses are never cached (a registration may come later). An extension
// ends only with its app, when it holds no record, and a new app under the same slug has the same client id: where a
// cached owner could answer for an extension that is gone (a write that found nothing to change, a version not
// registered), the handler asks `registered`, which reads the table and forgets what is gone.
import type { Knex } from 'knex';
import { compileExtensionSchema, type DataValidator } from '../common/extension-schema.js';

export function extensionRegistry(knex: Knex) {
  const owners = new Map<string, string>();
  const validators = new Map<string, DataValidator>();
  return {
    /** True when `extensionId` is registered and owned by `clientId`. */
    async ownedBy(extensionId: string, clientId: string): Promise<boolean> {
      let owner = owners.get(extensionId);
      if (owner === undefined) {
        owner = (await knex('extensions').where({ id: extensionId }).first('client_id'))?.client_id as
          string | undefined;
        if (owner) owners.set(extensionId, owner);
      }
      return owner === clientId;
    },
    /** Whether `extensionId` is still registered, read from the table; a gone extension's cached owner is forgotten. */
    async registered(extensionId: string): Promise<boolean> {
      const found = (await knex('extensions').where({ id: extensionId }).first('id')) !== undefined;
      if (!found) owners.delete(extensionId);
      return found;
    },
    /** The validator for a registered schema version, or undefined when the version is not registered. */
    async validator(extensionId: string, version: number): Promise<DataValidator | undefined> {
      const key = `${extensionId}@${version}`;
      let validate = validators.get(key);
      if (!validate) {
        const row = await knex('extension_schemas').where({ extension_id: extensionId, version }).first('schema');
        if (!row) return undefined;
        const compiled = compileExtensionSchema(row.schema);
        // refused at registration
        if (!compiled.ok) throw new Error(`registered schema ${key} does not compile: ${compiled.message}`);
        validate = compiled.value;
        validators.set(key, validate);
      }
      return validate;
    },
  };
}
export type ExtensionRegistry = ReturnType<typeof extensionRegistry>;
