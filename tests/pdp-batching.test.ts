// The PDP reads the facts of the decisions asked for in the same event-loop turn in one statement (policies/store.ts).
// Each decision must still get its own facts, in the state the database is in when it is read; nothing is kept.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { System } from '../infra/system.js';
import { startTestSystem } from './support/system.js';
import { adminClient, setupTenant, type TenantSetup } from './support/admin.js';
import { knexPolicyStore } from '../policies/store.js';
import type { DecisionInput } from '../policies/decision.js';

let system: System;
let tenants: TenantSetup[];
beforeAll(async () => {
  system = await startTestSystem();
  const admin = adminClient(system);
  tenants = [await setupTenant(admin), await setupTenant(admin, { capabilities: ['svc.tenant.info.read'] })];
});
afterAll(async () => {
  await system?.close();
});

const inputFor = (t: TenantSetup, clientId = t.clientId): DecisionInput => ({
  requestId: 'r-batch',
  token: { sub: t.personId, client_id: clientId, tenant_id: t.tenantId, profile: 'self', scope: 'svc.profile.self.read', actor_account_id: t.accountId },
  capability: 'svc.profile.self.read',
  resource: { type: 'self' },
});

describe('decision facts read together', () => {
  it('answers each of many decisions asked in one turn with the facts of its own input, in any mix', async () => {
    const store = knexPolicyStore(system.db.knex);
    const inputs = Array.from({ length: 150 }, (_, i) => (i % 3 === 2 ? inputFor(tenants[0]!, 'tp_nobody_app') : inputFor(tenants[i % 3]!)));
    const facts = await Promise.all(inputs.map((input) => store.facts(input)));
    facts.forEach((f, i) => {
      const input = inputs[i]!;
      const tenant = tenants.find((t) => t.tenantId === input.token.tenant_id)!;
      expect({ client: f.client?.tenant_id ?? null, tenant: f.tenant?.id, account: f.account?.id, granted: [...f.granted].sort() }).toEqual({
        client: input.token.client_id === tenant.clientId ? tenant.tenantId : null,
        tenant: tenant.tenantId,
        account: tenant.accountId,
        granted: input.token.client_id === tenant.clientId ? (tenant === tenants[0] ? ['svc.profile.self.read', 'svc.tenant.info.read'] : ['svc.tenant.info.read']) : [],
      });
    });
  });

  it('reads the database as it is when the decision is asked for, with nothing kept from an earlier read', async () => {
    const store = knexPolicyStore(system.db.knex);
    const [t] = tenants;
    expect((await store.facts(inputFor(t!))).client?.status).toBe('active');
    await system.db.knex('clients').where({ id: t!.clientId }).update({ status: 'disabled' });
    try {
      expect((await store.facts(inputFor(t!))).client?.status).toBe('disabled');
    } finally {
      await system.db.knex('clients').where({ id: t!.clientId }).update({ status: 'active' });
    }
  });
});
