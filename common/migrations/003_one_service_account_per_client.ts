// A client has at most one service account, so the subject of a client_credentials token is never ambiguous.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `create unique index accounts_one_service_account_per_client on accounts (client_id) where kind = 'service'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists accounts_one_service_account_per_client');
}
