// Migrations are imported statically (not discovered on disk) so they run the same under tsx, node and jest.
import type { Knex } from 'knex';
import * as m001 from './001_data_model.js';
import * as m002 from './002_extension_quotas.js';
import * as m003 from './003_one_service_account_per_client.js';
import * as m004 from './004_decision_facts_function.js';
import * as m005 from './005_console_sessions.js';
import * as m006 from './006_admin_audit.js';
import * as m007 from './007_plan_rate_limit_ceilings.js';
import * as m008 from './008_usage_call_ids.js';
import * as m009 from './009_usernames_per_tenant.js';
import * as m010 from './010_records_ceiling_and_folded_usernames.js';
import * as m011 from './011_pdp_fact_revisions.js';
import * as m012 from './012_retained_data_by_token.js';
import * as m013 from './013_pdp_revision_feed.js';
import * as m014 from './014_client_security_settings.js';
import * as m015 from './015_person_search_trigrams.js';
import * as m016 from './016_usage_by_request_id.js';
import * as m017 from './017_admin_key_labels.js';

const MIGRATIONS: Record<string, Knex.Migration> = {
  '001_data_model': m001,
  '002_extension_quotas': m002,
  '003_one_service_account_per_client': m003,
  '004_decision_facts_function': m004,
  '005_console_sessions': m005,
  '006_admin_audit': m006,
  '007_plan_rate_limit_ceilings': m007,
  '008_usage_call_ids': m008,
  '009_usernames_per_tenant': m009,
  '010_records_ceiling_and_folded_usernames': m010,
  '011_pdp_fact_revisions': m011,
  '012_retained_data_by_token': m012,
  '013_pdp_revision_feed': m013,
  '014_client_security_settings': m014,
  '015_person_search_trigrams': m015,
  '016_usage_by_request_id': m016,
  '017_admin_key_labels': m017,
};

/**
 * Each migration runs in its own transaction, without the services' statement and idle-transaction timeouts
 * (DATABASE_STATEMENT_TIMEOUT_MS): a backfill of a big table may take longer than any request should.
 */
const untimed = (run: (knex: Knex) => PromiseLike<unknown>) => async (knex: Knex) => {
  await knex.raw('set local statement_timeout = 0');
  await knex.raw('set local idle_in_transaction_session_timeout = 0');
  await run(knex);
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const { up, down } = MIGRATIONS[name]!;
    return { up: untimed(up), ...(down && { down: untimed(down) }) };
  },
};
