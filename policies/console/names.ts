// How the console names what the admin API identifies by id, as its lists name it: a person by name and username
// (never by an id the Persons list does not show), a service account and an app by their names. The decisions and
// the audit trail read their subjects and targets through this one lookup.
import type { Knex } from 'knex';
import { isId } from '../../common/ids.js';
import type { ClientView } from '../admin/clients.js';
import { listServiceAccounts } from '../admin/accounts.js';
import { personsAmong } from '../admin/persons.js';
import { personName } from './persons.js';

/** The words for an id, or undefined for one nothing here names (the page shows the id as it is); `kind` says whose. */
export type Namer = ((id: string) => string | undefined) & {
  kind: (id: string) => 'person' | 'service_account' | 'app' | undefined;
};

/** Names `ids` of the tenant: two indexed reads for the persons and one for the service accounts, whatever the page. */
export async function namerFor(
  db: Knex,
  tenantId: string,
  apps: readonly ClientView[],
  ids: Iterable<string>,
): Promise<Namer> {
  const wanted = [...new Set(ids)];
  const [persons, serviceAccounts] = await Promise.all([
    personsAmong(db, tenantId, wanted),
    wanted.some((id) => isId('acc', id)) ? listServiceAccounts(db, tenantId) : [],
  ]);
  const names = new Map<string, string>(apps.map((a) => [a.clientId, a.name]));
  const kinds = new Map<string, 'person' | 'service_account' | 'app'>(apps.map((a) => [a.clientId, 'app']));
  for (const s of serviceAccounts)
    if ('name' in s && s.name) {
      names.set(s.accountId, `${s.name} (service account)`);
      kinds.set(s.accountId, 'service_account');
    }
  for (const p of persons)
    for (const id of [p.personId, p.accountId])
      if (id) {
        names.set(id, personName(p));
        kinds.set(id, 'person');
      }
  return Object.assign((id: string) => names.get(id), { kind: (id: string) => kinds.get(id) });
}
