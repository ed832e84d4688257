// After a plan downgrade, a token that carries the retained-data scopes (svc.person.metadata.read/write) keeps reading,
// listing and deleting the app's records, and its writes are 422 quota_exceeded, whether or not the app still holds a
// record (contract §3's last row, "any" state; platform-interfaces "Data ownership": "with any token whose scope
// carries" them). The PDP therefore no longer reads whether the app holds records: the column leaves its cold read,
// and the counters' moves stop advancing its revision. Issuance still reads the records (issuer/scope-policy.ts).
import type { Knex } from 'knex';
import { createRecordCountTriggers, factRowsFunction } from './011_pdp_fact_revisions.js';

const FACT_ROWS = 'pdp_fact_rows(text[], text[], text[], text[], text[], text[])';

export async function up(knex: Knex): Promise<void> {
  for (const name of ['pdp_fact_insert', 'pdp_fact_update', 'pdp_fact_delete', 'pdp_fact_truncated'])
    await knex.raw(`drop trigger ${name} on extension_record_counts`);
  await knex.raw('drop function pdp_record_count_changed()');
  await knex.raw(`drop function ${FACT_ROWS}`);
  await knex.raw(factRowsFunction({ holdsRecords: false }));
  // A PDP that held apps' facts read with the column forgets them.
  await knex.raw(`select pdp_note_change('all')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop function ${FACT_ROWS}`);
  await knex.raw(factRowsFunction({ holdsRecords: true }));
  await createRecordCountTriggers(knex);
}
