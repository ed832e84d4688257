// Each plan carries the highest rate limits a tenant admin key may give its own tenant (issue 20: a tenant key lifted
// its limits to a million a second, and the limits protect capacity every tenant shares). The operator is not held
// to them. Same shape as tenants.rate_limit: {tenant: {points, durationS}, account: {points, durationS}}.
import type { Knex } from 'knex';

const CEILINGS: Record<string, object> = {
  // Level 1 may lower the platform defaults (policies/evaluate.ts DEFAULT_RATE_LIMIT), not raise them.
  L1: { tenant: { points: 3000, durationS: 60 }, account: { points: 600, durationS: 60 } },
  L2: { tenant: { points: 30_000, durationS: 60 }, account: { points: 6000, durationS: 60 } },
};

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('plans', (t) => {
    t.jsonb('rate_limit_ceiling');
  });
  for (const [id, ceiling] of Object.entries(CEILINGS))
    await knex('plans')
      .where({ id })
      .update({ rate_limit_ceiling: JSON.stringify(ceiling) });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('plans', (t) => t.dropColumn('rate_limit_ceiling'));
}
