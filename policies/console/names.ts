// How the console names what the admin API identifies by id, as its lists name it: a person by name and username
// (never by an id the Persons list does not show), a service account and an app by their names. The decisions and
// the audit trail read their subjects and targets through this one lookup.
import type { Knex } from 'knex';
import type { ClientView } from '../admin/clients.js';
import { holdersAmong } from '../admin/persons.js';
import { personName } from './persons.js';

/** The words for an id, or undefined for one nothing here names (the page shows the id as it is); `kind` says whose. */
export type Namer = ((id: string) => string | undefined) & {
  kind: (id: string) => 'person' | 'service_account' | 'app' | undefined;
};

/** Names `ids` of the tenant: the persons and service accounts among them in one read (holdersAmong), whatever the page. */
export async function namerFor(
  db: Knex,
  tenantId: string,
  apps: readonly ClientView[],
  ids: Iterable<string>,
): Promise<Namer> {
  const holders = await holdersAmong(db, tenantId, [...new Set(ids)]);
  const names = new Map<string, string>(apps.map((a) => [a.clientId, a.name]));
  const kinds = new Map<string, 'person' | 'service_account' | 'app'>(apps.map((a) => [a.clientId, 'app']));
  for (const h of holders)
    if (h.kind === 'service_account') {
      names.set(h.accountId, `${h.name} (service account)`);
      kinds.set(h.accountId, 'service_account');
    } else
      for (const id of [h.personId, h.accountId])
        if (id) {
          names.set(id, personName(h));
          kinds.set(id, 'person');
        }
  return Object.assign((id: string) => names.get(id), { kind: (id: string) => kinds.get(id) });
}
